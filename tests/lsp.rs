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

    let completion = session.request("textDocument/completion", at(10, 13, uri));
    let labels: Vec<&str> = completion
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["label"].as_str().unwrap())
        .collect();
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

    let fields = session.request("textDocument/completion", at(8, 4, uri));
    let labels: Vec<&str> = fields
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["label"].as_str().unwrap())
        .collect();
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
