//! The real `deployfit lsp` over stdio, driven with JSON-RPC as an editor would.

use crate::lsp_support;

use lsp_support::{Session, assert_fresh_check, position_of};
use serde_json::{Value, json};

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
            let published = session.diagnostics(uri, Some(version));
            assert_fresh_check(
                &published,
                "/tmp/deployfit-lsp-test/edits.deploy",
                &text,
                &format!("after {} edits", round + 1),
            );
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
    let diagnostics = session.diagnostics(uri, Some(2));
    assert!(!diagnostics.is_empty());
    let completion = session.request("textDocument/completion", at(2, 10, uri));
    let labels = labels_of(&completion);
    assert!(labels.contains(&"rtx_4090"), "{labels:?}");
    session.finish();
}

#[test]
fn a_client_that_disconnects_ends_the_server() {
    let mut session = Session::start();
    drop(session.stdin.take());
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
    let after = session.diagnostics(b, Some(1));
    assert!(after.is_empty(), "{after:?}");
    // Renaming the card in the imported buffer breaks the importer, which is re-published.
    session.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": a, "version": 2 }, "contentChanges": [{ "text": "gpu other_card extends rtx_3090 {\n}\n" }] }),
    );
    let broken = session.diagnostics(b, Some(1));
    assert_eq!(broken[0]["code"], "deploy::name::unknown");
    session.finish();
}
