//! Issue #10, the language server: hostile text, positions, frames and files never
//! crash or mislead the real `deployfit lsp`.

use crate::common;
use crate::lsp_support;

use std::time::{Duration, Instant};

use lsp_support::{Options, Session, at, position_of, uri_of};
use serde_json::json;

const CARD: &str = "gpu my_card extends rtx_3090 {\n    price = $0.20/h\n}\n";
const USES_CARD: &str = "import \"a.deploy\"\n\ndeployment uses_card {\n    model  = glm4_9b\n    quant  = Q4_K_M\n    engine = llamacpp\n    gpu    = my_card\n}\n";

/// Hover, definition, references, rename, prepareRename and completion at every UTF-16
/// position of lines with non-ASCII words (and inside surrogate pairs, and past the ends
/// of lines): no request kills the server.
#[test]
fn non_ascii_words_do_not_crash_the_server() {
    let uri = "file:///tmp/deployfit-lsp-hardening/naive.deploy";
    let text = "// naïve café comment, 中文 😀x\ngpu naïve_card extends rtx_3090 {\n    price = $0.20/h // ü\n}\n\ndeployment dé {\n    model  = glm4_9b\n    quant  = Q4_K_M\n    engine = llamacpp\n    gpu    = rtx_3090 // naïve\n}\n";
    let mut session = Session::start();
    session.open(uri, text);
    let mut requests = 0;
    for (line, content) in text.lines().enumerate() {
        if content.is_ascii() {
            continue;
        }
        let units: u64 = content.chars().map(|c| c.len_utf16() as u64).sum();
        for character in 0..=units + 2 {
            let position = at(uri, line as u64, character);
            for method in [
                "textDocument/hover",
                "textDocument/definition",
                "textDocument/completion",
                "textDocument/prepareRename",
            ] {
                let response = session.request_message(method, position.clone());
                assert!(response.get("result").is_some() || response.get("error").is_some());
                requests += 1;
            }
            let mut references = position.clone();
            references["context"] = json!({ "includeDeclaration": true });
            assert!(
                session
                    .request("textDocument/references", references)
                    .is_array()
            );
            let mut rename = position.clone();
            rename["newName"] = json!("renamed_thing");
            let response = session.request_message("textDocument/rename", rename);
            assert!(response.get("result").is_some() || response.get("error").is_some());
            requests += 2;
        }
    }
    assert!(requests > 300, "{requests}");
    // The word after `naïve_` is found, not a slice of the `ï`.
    let hover = session.request(
        "textDocument/hover",
        at(uri, 9, 14), // `rtx_3090` on the line that ends with `// naïve`
    );
    assert!(
        hover["contents"]["value"]
            .as_str()
            .unwrap()
            .contains("rtx_3090"),
        "{hover}"
    );
    session.assert_alive();
    session.finish();
}

/// Edits whose ranges are past the end of the text, inside a surrogate pair or reversed
/// are clamped: the server keeps the text consistent and keeps answering.
#[test]
fn hostile_edit_ranges_are_clamped() {
    let uri = "file:///tmp/deployfit-lsp-hardening/ranges.deploy";
    let mut session = Session::start();
    session.open(uri, "// 😀😀\n");
    let ranges = [
        json!({ "start": { "line": 0, "character": 4 }, "end": { "line": 0, "character": 4 } }),
        json!({ "start": { "line": 0, "character": 999 }, "end": { "line": 99, "character": 0 } }),
        json!({ "start": { "line": 0, "character": 5 }, "end": { "line": 0, "character": 2 } }),
        json!({ "start": { "line": 4294967295u32, "character": 4294967295u32 }, "end": { "line": 4294967295u32, "character": 4294967295u32 } }),
    ];
    for (i, range) in ranges.into_iter().enumerate() {
        session.notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": uri, "version": i + 2 }, "contentChanges": [{ "range": range, "text": "é" }] }),
        );
        session.diagnostics(uri, Some(i as i64 + 2));
    }
    let tokens = session.request(
        "textDocument/semanticTokens/full",
        json!({ "textDocument": { "uri": uri } }),
    );
    assert!(tokens["data"].is_array());
    let formatted = session.request(
        "textDocument/formatting",
        json!({ "textDocument": { "uri": uri }, "options": { "tabSize": 4, "insertSpaces": true } }),
    );
    assert!(formatted.is_array() || formatted.is_null());
    session.finish();
}

/// A frame that is not JSON, is truncated, has a bad or huge Content-Length, is a batch
/// or not a JSON-RPC message gets a JSON-RPC error, a line on stderr, and the server
/// keeps serving.
#[test]
fn malformed_frames_are_answered_and_the_server_keeps_serving() {
    let dir = common::scratch("lsp-malformed-frames");
    let stderr = dir.join("stderr.txt");
    let mut session = Session::start_with(Options {
        stderr: Some(&stderr),
        ..Options::default()
    });
    let uri = "file:///tmp/deployfit-lsp-hardening/frames.deploy";
    session.open(uri, CARD);

    // Not JSON.
    session.send_raw(b"Content-Length: 9\r\n\r\nnot json!");
    let error = session.next_null_id_error();
    assert_eq!(error["code"], -32700, "{error}");
    session.assert_alive();

    // A batch.
    session.send_raw(b"Content-Length: 2\r\n\r\n[]");
    let error = session.next_null_id_error();
    assert_eq!(error["code"], -32600, "{error}");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("batches are not supported")
    );
    session.assert_alive();

    // JSON, but not a JSON-RPC message: the error names its id.
    session.send_raw(b"Content-Length: 17\r\n\r\n{\"id\":41,\"x\":[]}\n");
    loop {
        let message = session.receive();
        if message["id"] == 41 {
            assert_eq!(message["error"]["code"], -32600, "{message}");
            break;
        }
    }
    session.assert_alive();

    // A bad Content-Length, then garbage headers: resynchronized at the next frame.
    session.send_raw(b"Content-Length: twelve\r\n\r\n");
    let error = session.next_null_id_error();
    assert_eq!(error["code"], -32700, "{error}");
    session.send_raw(b"{\"jsonrpc\":\"2.0\" this is skipped\r\nX: y\r\n");
    session.assert_alive();
    // A frame without headers at all: one error, then the next frame is served.
    session.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":99,\"method\":\"shutdown\"}\r\n");
    let error = session.next_null_id_error();
    assert_eq!(error["code"], -32700, "{error}");
    session.assert_alive();

    // A Content-Length over the limit.
    session.send_raw(b"Content-Length: 99999999999\r\n\r\n");
    let error = session.next_null_id_error();
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("over the limit"),
        "{error}"
    );
    session.assert_alive();

    // A truncated frame (its Content-Length overstates the body) followed by a request:
    // the first is answered with an error, the request is served.
    let id = session.next_id;
    session.next_id += 1;
    let request = json!({ "jsonrpc": "2.0", "id": id, "method": "textDocument/hover", "params": at(uri, 0, 5) }).to_string();
    let mut bytes = b"Content-Length: 60\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":".to_vec();
    bytes.extend(format!("Content-Length: {}\r\n\r\n{request}", request.len()).as_bytes());
    session.send_raw(&bytes);
    let (mut answered, mut refused) = (false, false);
    while !(answered && refused) {
        let message = session.receive();
        if message["id"] == id {
            assert!(
                message["result"]["contents"]["value"]
                    .as_str()
                    .unwrap()
                    .contains("my_card"),
                "{message}"
            );
            answered = true;
        } else if message["id"].is_null() && message.get("error").is_some() {
            assert_eq!(message["error"]["code"], -32700);
            refused = true;
        }
    }
    session.assert_alive();
    session.finish();
    let log = std::fs::read_to_string(&stderr).unwrap();
    assert!(log.contains("malformed frame"), "{log}");
    assert!(log.contains("batch"), "{log}");
}

/// The input ends in the middle of a frame: the server answers what it can and exits.
#[test]
fn a_frame_cut_by_the_end_of_input_ends_the_server_cleanly() {
    let mut session = Session::start();
    session.send_raw(b"Content-Length: 500\r\n\r\n{\"jsonrpc\":");
    drop(session.stdin.take());
    let error = session.next_null_id_error();
    assert_eq!(error["code"], -32700);
    let status = session.child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
}

/// Diagnostics, semantic tokens, inlay hints and symbols of a 265 KB file convert in
/// linear time (they were quadratic: 6.7 s for the tokens in release). The bound is
/// generous (debug build, shared machine); the quadratic version took minutes in debug.
#[test]
fn large_files_convert_in_linear_time() {
    let mut clean = String::new();
    let mut broken = String::new();
    let mut n = 0;
    while clean.len() < 265_000 {
        let block = |gpu: &str| {
            format!(
                "deployment d{n} {{ // café ☕\n    model    = glm4_9b\n    quant    = Q4_K_M\n    context  = 8k\n    engine   = llamacpp\n    gpu      = {gpu}\n\n    require fits\n}}\n\n"
            )
        };
        clean.push_str(&block("rtx_3090"));
        broken.push_str(&block("rtx_9999"));
        n += 1;
    }
    let mut session = Session::start();
    let started = Instant::now();
    let clean_uri = "file:///tmp/deployfit-lsp-hardening/clean.deploy";
    assert!(session.open(clean_uri, &clean).is_empty());
    let document = json!({ "textDocument": { "uri": clean_uri } });
    let tokens = session.request("textDocument/semanticTokens/full", document.clone());
    assert!(tokens["data"].as_array().unwrap().len() > 5 * 10 * n);
    let mut hints = document.clone();
    hints["range"] = json!({ "start": { "line": 0, "character": 0 }, "end": { "line": 1000000, "character": 0 } });
    assert_eq!(
        session
            .request("textDocument/inlayHint", hints)
            .as_array()
            .unwrap()
            .len(),
        n
    );
    let symbols = session.request("textDocument/documentSymbol", document);
    assert_eq!(symbols.as_array().unwrap().len(), n);
    // The last deployment's name is placed right (UTF-16 columns after `☕`).
    let last = clean.rfind("deployment").unwrap();
    assert_eq!(
        symbols[n - 1]["selectionRange"]["start"]["line"],
        position_of(&clean, last)["line"]
    );

    let broken_uri = "file:///tmp/deployfit-lsp-hardening/broken.deploy";
    let diagnostics = session.open(broken_uri, &broken);
    assert_eq!(diagnostics.len(), n);
    let last = broken.rfind("rtx_9999").unwrap();
    assert_eq!(
        diagnostics[n - 1]["range"]["start"],
        position_of(&broken, last)
    );
    // And a hover does not wait behind minutes of conversion.
    let hover = session.request("textDocument/hover", at(broken_uri, 0, 12));
    assert!(hover.is_object() || hover.is_null());
    let elapsed = started.elapsed();
    assert!(
        elapsed < Duration::from_secs(60),
        "{n} deployments took {elapsed:?}"
    );
    session.finish();
}

/// Closing an edited, unsaved buffer that another open document imports reverts the
/// file to what is on disk, and the importer is re-published.
#[test]
fn closing_an_unsaved_import_reverts_it_to_disk() {
    let dir = common::scratch("lsp-close-revert");
    std::fs::write(dir.join("a.deploy"), CARD).unwrap();
    let (a, b) = (uri_of(&dir.join("a.deploy")), uri_of(&dir.join("b.deploy")));
    let mut session = Session::start();
    assert!(
        session.open(&b, USES_CARD).is_empty(),
        "a.deploy is read from disk"
    );
    session.open(&a, CARD);
    assert!(session.diagnostics(&b, Some(1)).is_empty());
    // An unsaved edit renames the card: the importer breaks.
    session.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": a, "version": 2 }, "contentChanges": [{ "text": "gpu other_card extends rtx_3090 {\n}\n" }] }),
    );
    let broken = session.diagnostics(&b, Some(1));
    assert_eq!(broken[0]["code"], "deploy::name::unknown", "{broken:?}");
    // Closed without saving: the importer sees the file on disk again.
    session.notify(
        "textDocument/didClose",
        json!({ "textDocument": { "uri": a } }),
    );
    let reverted = session.diagnostics(&b, Some(1));
    assert!(reverted.is_empty(), "{reverted:?}");
    session.finish();
}

/// A buffer that never existed on disk: closing it makes its importers' import missing.
#[test]
fn closing_a_buffer_absent_from_disk_forgets_it() {
    let dir = common::scratch("lsp-close-forget");
    let (a, b) = (uri_of(&dir.join("a.deploy")), uri_of(&dir.join("b.deploy")));
    let mut session = Session::start();
    session.open(&b, USES_CARD);
    session.open(&a, CARD);
    assert!(session.diagnostics(&b, Some(1)).is_empty());
    session.notify(
        "textDocument/didClose",
        json!({ "textDocument": { "uri": a } }),
    );
    let after = session.diagnostics(&b, Some(1));
    let codes: Vec<&str> = after.iter().map(|d| d["code"].as_str().unwrap()).collect();
    assert!(codes.contains(&"deploy::name::import_missing"), "{codes:?}");
    session.finish();
}

/// Rename refuses reserved words and non-identifiers with an error; prepareRename gives
/// the range of a user name and refuses stdlib entries and places without a name.
#[test]
fn rename_refuses_reserved_words_and_non_names() {
    let uri = "file:///tmp/deployfit-lsp-hardening/rename.deploy";
    let mut session = Session::start();
    session.open(uri, CARD);
    for bad in [
        "not",
        "and",
        "or",
        "one_of",
        "require",
        "import",
        "extends",
        "else",
        "minimize",
        "deployment",
        "gpu",
        "true",
        "false",
        "9lives",
        "has space",
        "",
        "naïve",
        "a-b",
    ] {
        let mut params = at(uri, 0, 6);
        params["newName"] = json!(bad);
        let response = session.request_message("textDocument/rename", params);
        let message = response["error"]["message"].as_str();
        assert!(
            message.is_some_and(|m| m.contains("reserved") || m.contains("not a name")),
            "{bad:?}: {response}"
        );
    }
    let mut params = at(uri, 0, 6);
    params["newName"] = json!("notable_card");
    let edit = session.request("textDocument/rename", params);
    assert_eq!(edit["changes"][uri].as_array().unwrap().len(), 1);

    let range = session.request("textDocument/prepareRename", at(uri, 0, 6));
    assert_eq!(
        range,
        json!({ "start": { "line": 0, "character": 4 }, "end": { "line": 0, "character": 11 } })
    );
    let stdlib = session.request_message("textDocument/prepareRename", at(uri, 0, 24));
    assert!(
        stdlib["error"]["message"]
            .as_str()
            .unwrap()
            .contains("stdlib entry"),
        "{stdlib}"
    );
    let nothing = session.request_message("textDocument/prepareRename", at(uri, 1, 14));
    assert!(nothing.get("error").is_some(), "{nothing}");
    session.finish();
}

/// The definition of a stdlib entry: its folder and file, checked.
fn stdlib_definition(session: &mut Session, uri: &str) -> std::path::PathBuf {
    let definition = session.request("textDocument/definition", at(uri, 0, 24));
    let target = definition["uri"].as_str().unwrap();
    std::path::PathBuf::from(target.strip_prefix("file://").unwrap())
}

/// The stdlib files served for go-to-definition live in a private per-user folder: a
/// link or foreign file planted at the old shared location or in the folder itself is
/// neither followed nor served.
#[cfg(unix)]
#[test]
fn stdlib_files_are_private_and_checked() {
    use std::os::unix::fs::{PermissionsExt, symlink};

    let scratch = common::scratch("lsp-stdlib-private");
    let runtime = scratch.join("runtime");
    std::fs::create_dir(&runtime).unwrap();
    let victim = scratch.join("victim.txt");
    std::fs::write(&victim, "do not touch").unwrap();
    let gpus = std::fs::read_to_string(common::root().join("stdlib/gpus.deploy")).unwrap();

    // The old fixed location in the shared temp folder, planted with a link.
    let old = std::env::temp_dir().join(format!("deployfit-stdlib-{}", env!("CARGO_PKG_VERSION")));
    let created_old = !old.exists();
    let _ = std::fs::create_dir_all(&old);
    let old_planted =
        !old.join("gpus.deploy").exists() && symlink(&victim, old.join("gpus.deploy")).is_ok();

    let options = || Options {
        env: vec![("XDG_RUNTIME_DIR", runtime.as_path())],
        ..Options::default()
    };
    let uri = "file:///tmp/deployfit-lsp-hardening/stdlib.deploy";
    let mut session = Session::start_with(options());
    session.open(uri, CARD);
    let served = stdlib_definition(&mut session, uri);
    session.finish();
    assert!(served.starts_with(runtime.join("deployfit")), "{served:?}");
    assert!(!served.starts_with(&old));
    assert_eq!(std::fs::read_to_string(&served).unwrap(), gpus);
    let folder = served.parent().unwrap();
    let mode = std::fs::metadata(folder).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700, "{mode:o}");
    if old_planted {
        std::fs::remove_file(old.join("gpus.deploy")).unwrap();
    }
    if created_old {
        let _ = std::fs::remove_dir(&old);
    }

    // A link planted in place of the file, and foreign content in another: neither is
    // followed nor served; the victim is untouched.
    std::fs::remove_file(&served).unwrap();
    symlink(&victim, &served).unwrap();
    session = Session::start_with(options());
    session.open(uri, CARD);
    let again = stdlib_definition(&mut session, uri);
    assert_eq!(again, served);
    assert!(
        !std::fs::symlink_metadata(&again)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::read_to_string(&again).unwrap(), gpus);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "do not touch");
    std::fs::write(&again, "gpu rtx_3090 { memory = 1 GiB }\n").unwrap();
    let third = stdlib_definition(&mut session, uri);
    assert_eq!(std::fs::read_to_string(&third).unwrap(), gpus);
    session.finish();

    // A folder others may write to is not used: a fresh private one in the temp folder.
    let ours = runtime.join("deployfit");
    std::fs::set_permissions(&ours, std::fs::Permissions::from_mode(0o777)).unwrap();
    session = Session::start_with(Options {
        env: vec![("XDG_RUNTIME_DIR", runtime.as_path())],
        env_remove: vec!["XDG_CACHE_HOME", "HOME"],
        ..Options::default()
    });
    session.open(uri, CARD);
    let fallback = stdlib_definition(&mut session, uri);
    session.finish();
    assert!(!fallback.starts_with(&runtime), "{fallback:?}");
    assert!(fallback.starts_with(std::env::temp_dir()), "{fallback:?}");
    let mode = std::fs::metadata(fallback.parent().unwrap())
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o700, "{mode:o}");
    assert_eq!(std::fs::read_to_string(&fallback).unwrap(), gpus);
    let _ = std::fs::remove_dir_all(fallback.parent().unwrap());

    // The folder itself replaced by a link to a folder someone else controls.
    std::fs::remove_dir_all(&ours).unwrap();
    let elsewhere = scratch.join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    symlink(&elsewhere, &ours).unwrap();
    session = Session::start_with(Options {
        env: vec![("XDG_RUNTIME_DIR", runtime.as_path())],
        env_remove: vec!["XDG_CACHE_HOME", "HOME"],
        ..Options::default()
    });
    session.open(uri, CARD);
    let fallback = stdlib_definition(&mut session, uri);
    session.finish();
    assert!(!fallback.starts_with(&runtime), "{fallback:?}");
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    let _ = std::fs::remove_dir_all(fallback.parent().unwrap());
}

/// Issue #32: a document whose model paths are a FIFO, a link to /dev/stdin (which, in the
/// server, is the JSON-RPC stream) and a config holding a secret where a number belongs:
/// the server publishes coded diagnostics without the secret, and answers a hover, inlay
/// hints and symbols on that document (a hang is killed by the watchdog and fails).
#[cfg(unix)]
#[test]
fn model_paths_that_block_or_leak_never_freeze_the_server() {
    let dir = common::scratch("lsp_model_paths");
    let status = std::process::Command::new("mkfifo")
        .arg(dir.join("pipe.json"))
        .status()
        .unwrap();
    assert!(status.success());
    std::os::unix::fs::symlink("/dev/stdin", dir.join("stdin.json")).unwrap();
    std::fs::create_dir_all(dir.join("secret")).unwrap();
    std::fs::write(
        dir.join("secret/config.json"),
        r#"{"model_type": "llama", "hidden_size": "hunter2", "num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 10}"#,
    )
    .unwrap();
    let path = dir.join("models.deploy");
    let text = "// café ☕\ndeployment a {\n    model = \"./pipe.json\"\n    quant = Q4_K_M\n    gpu = rtx_4090\n}\n\ndeployment b {\n    model = \"./stdin.json\"\n    quant = Q4_K_M\n    gpu = rtx_4090\n}\n\nmodel mine from \"./secret\"\n\ndeployment c {\n    model = mine\n    quant = Q4_K_M\n    gpu = rtx_4090\n}\n";
    std::fs::write(&path, text).unwrap();
    let uri = uri_of(&path);
    let mut session = Session::start();
    let _watchdog = session.watchdog(Duration::from_secs(30));
    let published = session.open(&uri, text);
    let unreadable = published
        .iter()
        .filter(|d| d["code"] == "deploy::model::unreadable")
        .count();
    assert_eq!(unreadable, 3, "{published:?}");
    assert!(
        !serde_json::to_string(&published)
            .unwrap()
            .contains("hunter2"),
        "{published:?}"
    );
    let started = Instant::now();
    let hover = session.request("textDocument/hover", at(&uri, 2, 16));
    assert!(hover.is_object() || hover.is_null(), "{hover}");
    let document = json!({ "textDocument": { "uri": uri } });
    let symbols = session.request("textDocument/documentSymbol", document.clone());
    assert!(symbols.is_array(), "{symbols}");
    let mut range = document.clone();
    range["range"] =
        json!({ "start": { "line": 0, "character": 0 }, "end": { "line": 20, "character": 0 } });
    let hints = session.request("textDocument/inlayHint", range.clone());
    assert!(hints.is_array() || hints.is_null(), "{hints}");
    let lenses = session.request("textDocument/codeLens", document.clone());
    assert!(lenses.is_array() || lenses.is_null(), "{lenses}");
    let completion = session.request("textDocument/completion", at(&uri, 3, 12));
    assert!(completion.is_object() || completion.is_array() || completion.is_null());
    let mut actions = range;
    actions["context"] = json!({ "diagnostics": published });
    let actions = session.request("textDocument/codeAction", actions);
    assert!(actions.is_array() || actions.is_null(), "{actions}");
    let mut formatting = document.clone();
    formatting["options"] = json!({ "tabSize": 4, "insertSpaces": true });
    let edits = session.request("textDocument/formatting", formatting);
    assert!(edits.is_array() || edits.is_null(), "{edits}");
    eprintln!(
        "hover, symbols, hints, lenses, completion, actions and formatting answered in {:?}",
        started.elapsed()
    );
    session.assert_alive();
    session.finish();
}
