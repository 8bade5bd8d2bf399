//! The real `deployfit lsp` over stdio, driven with JSON-RPC as an editor would.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{Value, json};

struct Session {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: i64,
}

impl Session {
    fn start() -> Session {
        let mut child = Command::new(env!("CARGO_BIN_EXE_deployfit"))
            .arg("lsp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("deployfit lsp starts");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut session = Session {
            child,
            stdin,
            stdout,
            next_id: 1,
        };
        let init = session.request("initialize", json!({ "capabilities": {} }));
        assert!(init["capabilities"]["hoverProvider"].as_bool().unwrap());
        session.notify("initialized", json!({}));
        session
    }

    fn send(&mut self, message: Value) {
        let body = serde_json::to_vec(&message).unwrap();
        write!(self.stdin, "Content-Length: {}\r\n\r\n", body.len()).unwrap();
        self.stdin.write_all(&body).unwrap();
        self.stdin.flush().unwrap();
    }

    fn receive(&mut self) -> Value {
        let mut length = 0;
        loop {
            let mut line = String::new();
            self.stdout.read_line(&mut line).expect("a header line");
            assert!(!line.is_empty(), "the server closed its output");
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some(value) = line.strip_prefix("Content-Length: ") {
                length = value.parse().unwrap();
            }
        }
        let mut body = vec![0; length];
        self.stdout.read_exact(&mut body).unwrap();
        serde_json::from_slice(&body).unwrap()
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({ "jsonrpc": "2.0", "method": method, "params": params }));
    }

    /// Sends a request and returns its result, setting aside notifications.
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        loop {
            let message = self.receive();
            if message["id"] == id {
                assert!(message.get("error").is_none(), "{message}");
                return message["result"].clone();
            }
        }
    }

    /// Sends a request and returns the whole response, error included.
    fn request_message(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        loop {
            let message = self.receive();
            if message["id"] == id {
                return message;
            }
        }
    }

    /// The next publishDiagnostics for `uri` at `version`.
    fn diagnostics(&mut self, uri: &str, version: i64) -> Vec<Value> {
        loop {
            let message = self.receive();
            if message["method"] == "textDocument/publishDiagnostics"
                && message["params"]["uri"] == uri
                && message["params"]["version"] == version
            {
                return message["params"]["diagnostics"].as_array().unwrap().clone();
            }
        }
    }

    fn open(&mut self, uri: &str, text: &str) -> Vec<Value> {
        self.notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": uri, "languageId": "deploy", "version": 1, "text": text } }),
        );
        self.diagnostics(uri, 1)
    }

    fn finish(mut self) {
        assert_eq!(self.request("shutdown", Value::Null), Value::Null);
        self.notify("exit", Value::Null);
        let status = self.child.wait().unwrap();
        assert_eq!(status.code(), Some(0));
    }
}

/// The labels of a completion response.
fn labels_of(completion: &Value) -> Vec<&str> {
    completion
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["label"].as_str().unwrap())
        .collect()
}

const TEXT: &str = "deployment chat {\n    model = glm4_9b\n    quant = Q4_K_M\n    gpu   = rtx_9999\n}\n\ndeployment ok {\n    model  = glm4_9b\n    quant  = Q4_K_M\n    engine = llamacpp\n    gpu    = rtx_3090\n}\n";

fn at(line: u32, character: u32, uri: &str) -> Value {
    json!({ "textDocument": { "uri": uri }, "position": { "line": line, "character": character } })
}

#[test]
fn acceptance_session() {
    let uri = "file:///tmp/deployfit-lsp-test/a.deploy";
    let mut session = Session::start();
    let diagnostics = session.open(uri, TEXT);
    assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
    assert_eq!(diagnostics[0]["code"], "deploy::name::unknown");
    assert_eq!(
        diagnostics[0]["range"]["start"],
        json!({ "line": 3, "character": 12 })
    );
    assert!(
        diagnostics[0]["message"]
            .as_str()
            .unwrap()
            .contains("did you mean `rtx_3090`?")
    );

    let hover = session.request("textDocument/hover", at(6, 12, uri));
    let markdown = hover["contents"]["value"].as_str().unwrap();
    assert!(
        markdown.contains("**deployment `ok`**")
            && markdown.contains("weights")
            && markdown.contains("KV cache"),
        "{markdown}"
    );
    insta::assert_snapshot!("hover_deployment", markdown);

    let completion = session.request("textDocument/completion", at(10, 13, uri));
    let labels = labels_of(&completion);
    assert!(
        labels.contains(&"rtx_3090") && labels.contains(&"h100_sxm5"),
        "{labels:?}"
    );
    assert!(!labels.contains(&"glm4_9b"), "only GPUs after `gpu =`");

    let definition = session.request("textDocument/definition", at(10, 16, uri));
    assert!(
        definition["uri"].as_str().unwrap().ends_with("gpus.deploy"),
        "{definition}"
    );
    let target = std::fs::read_to_string(
        definition["uri"]
            .as_str()
            .unwrap()
            .trim_start_matches("file://"),
    )
    .unwrap();
    let line = target
        .lines()
        .nth(definition["range"]["start"]["line"].as_u64().unwrap() as usize)
        .unwrap();
    assert_eq!(line, "gpu rtx_3090 {");

    let hints = session.request(
        "textDocument/inlayHint",
        json!({ "textDocument": { "uri": uri }, "range": { "start": { "line": 0, "character": 0 }, "end": { "line": 20, "character": 0 } } }),
    );
    let hints = hints.as_array().unwrap();
    assert_eq!(hints.len(), 2, "one hint per deployment");
    assert!(
        hints[1]["label"].as_str().unwrap().contains("GiB"),
        "{hints:?}"
    );
    insta::assert_json_snapshot!("inlay_hints", hints);

    let fields = session.request("textDocument/completion", at(8, 4, uri));
    let labels = labels_of(&fields);
    assert!(
        labels.contains(&"context") && labels.contains(&"require"),
        "{labels:?}"
    );
    session.finish();
}

/// A tiny deterministic generator, so that failures reproduce.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, bound: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % bound.max(1)
    }
}

fn position_of(text: &str, offset: usize) -> Value {
    let before = &text[..offset];
    let line = before.matches('\n').count();
    let start = before.rfind('\n').map(|i| i + 1).unwrap_or(0);
    let character: usize = before[start..].chars().map(char::len_utf16).sum();
    json!({ "line": line, "character": character })
}

/// After any sequence of incremental edits, the published diagnostics equal a check of
/// the final text from scratch.
#[test]
fn edits_converge_to_a_fresh_check() {
    let uri = "file:///tmp/deployfit-lsp-test/edits.deploy";
    let snippets = [
        "",
        "x",
        "}",
        "{",
        " = ",
        "rtx_3090",
        "\n",
        "require fits\n",
        "é",
        "gpu = ?",
        "//",
    ];
    let mut session = Session::start();
    let mut text = TEXT.to_string();
    session.open(uri, &text);
    let mut random = Lcg(7);
    let mut version = 1;
    for round in 0..120 {
        let boundaries: Vec<usize> = (0..=text.len())
            .filter(|i| text.is_char_boundary(*i))
            .collect();
        let a = boundaries[random.next(boundaries.len())];
        let b = boundaries[random.next(boundaries.len())];
        let (start, end) = (a.min(b), a.max(b).min(a.min(b) + 8));
        let end = (start..=end)
            .rev()
            .find(|i| text.is_char_boundary(*i))
            .unwrap();
        let insert = snippets[random.next(snippets.len())];
        let range = json!({ "start": position_of(&text, start), "end": position_of(&text, end) });
        text.replace_range(start..end, insert);
        version += 1;
        session.notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": uri, "version": version }, "contentChanges": [{ "range": range, "text": insert }] }),
        );
        if round % 40 == 39 {
            let published = session.diagnostics(uri, version);
            let mut fresh = deployfit_compiler::Workspace::new();
            let file = fresh.set_file(
                std::path::Path::new("/tmp/deployfit-lsp-test/edits.deploy"),
                text.clone(),
            );
            let expected: Vec<(String, Value)> = fresh
                .check(file)
                .into_iter()
                .map(|d| {
                    (
                        d.code.clone(),
                        position_of(&text, d.location.span.start as usize),
                    )
                })
                .collect();
            let got: Vec<(String, Value)> = published
                .iter()
                .map(|d| {
                    (
                        d["code"].as_str().unwrap().to_string(),
                        d["range"]["start"].clone(),
                    )
                })
                .collect();
            assert_eq!(got, expected, "after {} edits:\n{text}", round + 1);
        }
    }
    session.finish();
}

#[test]
fn references_rename_tokens_actions_and_lenses() {
    let uri = "file:///tmp/deployfit-lsp-test/b.deploy";
    let text = "gpu lab_card extends rtx_3090 {\n    price = $0.30/h\n}\n\ndeployment one {\n    model  = glm4_9b\n    quant  = Q4_K_M\n    engine = llamacpp\n    gpu    = lab_card\n}\n\ndeployment two {\n    model  = glm4_9b\n    quant  = Q4_K_M\n    engine = llamacpp\n    gpu    = lab_crd\n    context = 32k\n}\n\ndeployment three {\n    model  = glm4_9b\n    quant  = Q4_K_M\n    engine = llamacpp\n    gpu    = ?\n}\n";
    let mut session = Session::start();
    let diagnostics = session.open(uri, text);
    let unknown = diagnostics
        .iter()
        .find(|d| d["code"] == "deploy::name::unknown")
        .expect("lab_crd is unknown");

    // References of lab_card: its definition and its use in `one`.
    let references = session.request(
        "textDocument/references",
        json!({ "textDocument": { "uri": uri }, "position": { "line": 8, "character": 15 }, "context": { "includeDeclaration": true } }),
    );
    let lines: Vec<u64> = references
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["range"]["start"]["line"].as_u64().unwrap())
        .collect();
    assert_eq!(lines, [0, 8]);

    let rename = session.request(
        "textDocument/rename",
        json!({ "textDocument": { "uri": uri }, "position": { "line": 0, "character": 6 }, "newName": "lab_gpu" }),
    );
    assert_eq!(rename["changes"][uri].as_array().unwrap().len(), 2);
    // Renaming a stdlib entry is refused with a reason.
    let refused = session.request_message(
        "textDocument/rename",
        json!({ "textDocument": { "uri": uri }, "position": { "line": 0, "character": 24 }, "newName": "x" }),
    );
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("stdlib entry"),
        "{refused}"
    );

    // The quick fix for the unknown GPU.
    let actions = session.request(
        "textDocument/codeAction",
        json!({ "textDocument": { "uri": uri }, "range": unknown["range"], "context": { "diagnostics": [unknown] } }),
    );
    let titles: Vec<&str> = actions
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["title"].as_str().unwrap())
        .collect();
    assert!(titles.contains(&"Replace with `lab_card`"), "{titles:?}");

    let tokens = session.request(
        "textDocument/semanticTokens/full",
        json!({ "textDocument": { "uri": uri } }),
    );
    let data = tokens["data"].as_array().unwrap();
    assert_eq!(data.len() % 5, 0);
    assert_eq!(data[0].as_u64(), Some(0), "the first token is on line 0");

    let lenses = session.request(
        "textDocument/codeLens",
        json!({ "textDocument": { "uri": uri } }),
    );
    let commands: Vec<&str> = lenses
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["command"]["command"].as_str().unwrap())
        .collect();
    assert_eq!(
        commands
            .iter()
            .filter(|c| **c == "deployfit.explain")
            .count(),
        3
    );
    assert_eq!(
        commands.iter().filter(|c| **c == "deployfit.solve").count(),
        1
    );
    let solved = session.request(
        "workspace/executeCommand",
        json!({ "command": "deployfit.solve", "arguments": [uri, "three"] }),
    );
    assert!(
        solved.as_str().unwrap().starts_with("three: 1. gpu = "),
        "{solved}"
    );
    let explained = session.request(
        "workspace/executeCommand",
        json!({ "command": "deployfit.explain", "arguments": [uri, "one"] }),
    );
    assert!(explained.as_str().unwrap().contains("lab_card"));
    session.finish();
}

#[test]
fn hostile_requests_do_not_crash_the_server() {
    let uri = "file:///tmp/deployfit-lsp-test/c.deploy";
    let mut session = Session::start();
    session.open(uri, TEXT);
    // Positions past the end of the document.
    let hover = session.request("textDocument/hover", at(900, 900, uri));
    assert!(hover.is_null() || hover.is_object());
    let completion = session.request("textDocument/completion", at(3, 9999, uri));
    assert!(completion.is_array());
    // Requests for a document that was never opened.
    let none = session.request("textDocument/hover", at(0, 0, "file:///nowhere.deploy"));
    assert!(none.is_null());
    // An unknown method gets a JSON-RPC error, and the server keeps serving.
    let error = session.request_message("deployfit/unknown", json!({}));
    assert_eq!(error["error"]["code"], -32601);
    // Half-typed code: completion inside a broken block still offers GPUs.
    session.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": uri, "version": 2 }, "contentChanges": [{ "text": "deployment half {\n    model = glm4_9b\n    gpu = " }] }),
    );
    let diagnostics = session.diagnostics(uri, 2);
    assert!(!diagnostics.is_empty());
    let completion = session.request("textDocument/completion", at(2, 10, uri));
    let labels = labels_of(&completion);
    assert!(labels.contains(&"rtx_4090"), "{labels:?}");
    session.finish();
}

#[test]
fn a_client_that_disconnects_ends_the_server() {
    let mut session = Session::start();
    drop(session.stdin);
    let status = session.child.wait().unwrap();
    assert!(
        status.code().is_some(),
        "the server exits instead of hanging"
    );
}

#[test]
fn imports_across_open_buffers() {
    let a = "file:///tmp/deployfit-lsp-multi/a.deploy";
    let b = "file:///tmp/deployfit-lsp-multi/b.deploy";
    let mut session = Session::start();
    let importer = "import \"a.deploy\"\n\ndeployment uses_card {\n    model  = glm4_9b\n    quant  = Q4_K_M\n    engine = llamacpp\n    gpu    = my_card\n}\n";
    let before = session.open(b, importer);
    let codes: Vec<&str> = before.iter().map(|d| d["code"].as_str().unwrap()).collect();
    assert!(codes.contains(&"deploy::name::import_missing"), "{codes:?}");
    // Opening the imported buffer re-checks the importer: the card is now known.
    session.notify(
        "textDocument/didOpen",
        json!({ "textDocument": { "uri": a, "languageId": "deploy", "version": 1, "text": "gpu my_card extends rtx_3090 {\n    price = $0.20/h\n}\n" } }),
    );
    let after = session.diagnostics(b, 1);
    assert!(after.is_empty(), "{after:?}");
    // Renaming the card in the imported buffer breaks the importer, which is re-published.
    session.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": a, "version": 2 }, "contentChanges": [{ "text": "gpu other_card extends rtx_3090 {\n}\n" }] }),
    );
    let broken = session.diagnostics(b, 1);
    assert_eq!(broken[0]["code"], "deploy::name::unknown");
    session.finish();
}
