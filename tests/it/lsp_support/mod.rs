//! A JSON-RPC client for the real `deployfit lsp` over stdio, shared by the hardening
//! and fuzz tests: raw frames can be sent too, and every message is checked as it comes.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

pub struct Session {
    pub child: Child,
    pub stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    pub next_id: i64,
}

/// How to start the server.
#[derive(Default)]
pub struct Options<'a> {
    pub env: Vec<(&'a str, &'a Path)>,
    pub env_remove: Vec<&'a str>,
    /// Where stderr goes (a file), else nowhere.
    pub stderr: Option<&'a Path>,
    /// Arguments after `lsp` (`--stdio`).
    pub args: Vec<&'a str>,
}

impl Session {
    pub fn start() -> Session {
        Session::start_with(Options::default())
    }

    pub fn start_with(options: Options<'_>) -> Session {
        let mut command = Command::new(env!("CARGO_BIN_EXE_deployfit"));
        command
            .arg("lsp")
            .args(&options.args)
            // Nothing in the tests reaches the network (docs/hub.md).
            .env("HF_HUB_OFFLINE", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(match options.stderr {
                Some(path) => Stdio::from(std::fs::File::create(path).unwrap()),
                None => Stdio::null(),
            });
        for (name, value) in options.env {
            command.env(name, value);
        }
        for name in options.env_remove {
            command.env_remove(name);
        }
        let mut child = command.spawn().expect("deployfit lsp starts");
        let stdin = child.stdin.take();
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

    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(bytes).expect("the server reads its input");
        stdin.flush().unwrap();
    }

    pub fn send(&mut self, message: Value) {
        let body = serde_json::to_vec(&message).unwrap();
        let mut frame = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
        frame.extend(body);
        self.send_raw(&frame);
    }

    /// The next message; panics if the server closed its output.
    pub fn receive(&mut self) -> Value {
        let mut length = None;
        loop {
            let mut line = String::new();
            self.stdout.read_line(&mut line).expect("a header line");
            assert!(!line.is_empty(), "the server closed its output");
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            let (name, value) = line.split_once(": ").expect("a header");
            assert_eq!(name, "Content-Length", "the only header sent");
            length = Some(value.parse::<usize>().unwrap());
        }
        let mut body = vec![0; length.expect("a Content-Length header")];
        self.stdout.read_exact(&mut body).unwrap();
        let message: Value = serde_json::from_slice(&body).expect("every frame is JSON");
        assert_eq!(message["jsonrpc"], "2.0", "{message}");
        message
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({ "jsonrpc": "2.0", "method": method, "params": params }));
    }

    /// Sends a request and returns the whole response (result or error), setting aside
    /// notifications.
    pub fn request_message(&mut self, method: &str, params: Value) -> Value {
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

    /// Sends a request and returns its result; an error response fails the test.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let message = self.request_message(method, params);
        assert!(message.get("error").is_none(), "{message}");
        message["result"].clone()
    }

    /// The next error response without an id (the answer to a malformed frame).
    pub fn next_null_id_error(&mut self) -> Value {
        loop {
            let message = self.receive();
            if message["id"].is_null() && message.get("error").is_some() {
                return message["error"].clone();
            }
        }
    }

    /// The next publishDiagnostics for `uri` at `version` (any version with `None`).
    pub fn diagnostics(&mut self, uri: &str, version: Option<i64>) -> Vec<Value> {
        loop {
            let message = self.receive();
            if message["method"] == "textDocument/publishDiagnostics"
                && message["params"]["uri"] == uri
                && version.is_none_or(|v| message["params"]["version"] == v)
            {
                return message["params"]["diagnostics"].as_array().unwrap().clone();
            }
        }
    }

    pub fn open(&mut self, uri: &str, text: &str) -> Vec<Value> {
        self.notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": uri, "languageId": "deploy", "version": 1, "text": text } }),
        );
        self.diagnostics(uri, Some(1))
    }

    /// A request every live server answers correctly.
    pub fn assert_alive(&mut self) {
        let error = self.request_message("deployfit/ping", json!({}));
        assert_eq!(error["error"]["code"], -32601, "{error}");
    }

    /// Kills the server (by its id) if it is still running after `limit`, so that a
    /// hang ends the test with "the server closed its output" instead of blocking it.
    /// Dropping the guard disarms it.
    pub fn watchdog(&self, limit: Duration) -> Watchdog {
        let done = Arc::new(AtomicBool::new(false));
        let pid = self.child.id();
        let flag = done.clone();
        std::thread::spawn(move || {
            let deadline = Instant::now() + limit;
            while Instant::now() < deadline {
                if flag.load(Ordering::Relaxed) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            if !flag.load(Ordering::Relaxed) {
                eprintln!("the server is still busy after {limit:?}: killing it");
                let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            }
        });
        Watchdog(done)
    }

    pub fn finish(mut self) {
        assert_eq!(self.request("shutdown", Value::Null), Value::Null);
        self.notify("exit", Value::Null);
        let status = self.child.wait().unwrap();
        assert_eq!(status.code(), Some(0));
    }
}

pub fn at(uri: &str, line: u64, character: u64) -> Value {
    json!({ "textDocument": { "uri": uri }, "position": { "line": line, "character": character } })
}

/// The LSP position (UTF-16) of a byte offset, computed the slow, obvious way.
pub fn position_of(text: &str, offset: usize) -> Value {
    let before = &text[..offset];
    let line = before.matches('\n').count();
    let start = before.rfind('\n').map(|i| i + 1).unwrap_or(0);
    let character: usize = before[start..].chars().map(char::len_utf16).sum();
    json!({ "line": line, "character": character })
}

/// Asserts that published diagnostics equal a fresh check of `text` (codes and start
/// positions): the server holds the text the client believes it has.
pub fn assert_fresh_check(published: &[Value], path: &str, text: &str, context: &str) {
    let mut fresh = deployfit_host::Workspace::new();
    let file = fresh.set_file(Path::new(path), text.to_string());
    let expected: Vec<(String, Value)> = fresh
        .check(file)
        .into_iter()
        .map(|d| {
            (
                d.code.clone(),
                position_of(text, d.location.span.start as usize),
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
    assert_eq!(got, expected, "{context}:\n{text}");
}

/// A file URI for a path.
pub fn uri_of(path: &Path) -> String {
    format!("file://{}", path.display())
}

pub struct Watchdog(Arc<AtomicBool>);

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}
