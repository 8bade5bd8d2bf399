//! `deployfit mcp` driven by a scripted client over stdio (newline-delimited JSON-RPC, as
//! MCP's stdio transport frames it): the handshake, `tools/list` and `tools/call`, each
//! answer compared with the CLI's own JSON.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{Value, json};

use crate::common;

use common::{deployfit, json as json_of, root};

struct Client {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next: u64,
}

impl Client {
    fn start() -> Client {
        let mut child = Command::new(env!("CARGO_BIN_EXE_deployfit"))
            .arg("mcp")
            .current_dir(root())
            .env("HF_HUB_OFFLINE", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("deployfit mcp starts");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Client {
            child,
            stdin,
            stdout,
            next: 1,
        }
    }

    fn send(&mut self, message: Value) {
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Sends a request and returns its response (notifications before it are skipped).
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        loop {
            let mut line = String::new();
            let read = self.stdout.read_line(&mut line).unwrap();
            assert!(
                read > 0,
                "the server closed its output before answering {method}"
            );
            let message: Value = serde_json::from_str(&line).expect("a JSON-RPC line");
            if message["id"] == id {
                return message;
            }
        }
    }

    fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let response = self.request(
            "tools/call",
            json!({ "name": tool, "arguments": arguments }),
        );
        response["result"].clone()
    }

    fn finish(mut self) {
        drop(self.stdin);
        let status = self.child.wait().unwrap();
        assert!(status.success(), "{status:?}");
    }
}

fn handshake() -> Client {
    let mut client = Client::start();
    let init = client.request(
        "initialize",
        json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": { "name": "deployfit-tests", "version": "1" }
        }),
    );
    assert_eq!(init["result"]["serverInfo"]["name"], "deployfit", "{init}");
    assert!(
        init["result"]["capabilities"]["tools"].is_object(),
        "{init}"
    );
    client.send(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
    client
}

/// The answer's text content as JSON (the CLI's JSON as printed).
fn answer(result: &Value) -> Value {
    assert_eq!(result["isError"], false, "{result}");
    let text = result["content"][0]["text"]
        .as_str()
        .expect("a text answer");
    serde_json::from_str(text).expect("the text is JSON")
}

/// Drops the keys that name the file (`<text>` against the CLI's path).
fn without_files(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| k.as_str() != "file")
                .map(|(k, v)| (k.clone(), without_files(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_files).collect()),
        other => other.clone(),
    }
}

#[test]
fn lists_five_tools_and_explains_as_the_cli_does() {
    let mut client = handshake();
    let tools = client.request("tools/list", json!({}));
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["check", "explain", "solve", "gpus", "model"]);
    for tool in tools["result"]["tools"].as_array().unwrap() {
        assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
        assert!(tool["description"].as_str().unwrap().len() > 40, "{tool}");
    }

    // explain: a file's text, as a user writes it, gives the figures `explain` prints.
    let path = "examples/03-llama-70b-tensor-parallel.deploy";
    let text = std::fs::read_to_string(root().join(path)).unwrap();
    let cli = json_of(&deployfit(&["explain", path, "--format", "json"]));
    let result = client.call("explain", json!({ "text": text }));
    let mcp = answer(&result);
    assert_eq!(without_files(&mcp), without_files(&cli));
    let e = &mcp[0];
    assert_eq!(e["deployment"], "llama70b_tp2");
    assert!(e["decode_tps"].as_f64().unwrap() > 1.0, "{e}");
    // The structured content carries the same answer.
    assert_eq!(result["structuredContent"]["result"], mcp);

    // By path, and one deployment of several; a wrong name suggests the closest.
    let by_path = answer(&client.call(
        "explain",
        json!({ "path": path, "deployment": "llama70b_tp2" }),
    ));
    assert_eq!(by_path, cli);
    let wrong = client.call(
        "explain",
        json!({ "path": path, "deployment": "llama70b_tp3" }),
    );
    assert_eq!(wrong["isError"], true, "{wrong}");
    assert!(
        wrong["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("did you mean `llama70b_tp2`?"),
        "{wrong}"
    );
    client.finish();
}

#[test]
fn check_solve_gpus_and_model_answer_as_the_cli_does() {
    let mut client = handshake();
    // check: diagnostics with codes, spans over non-ASCII text, and the fix.
    let bad = "// Prüfung «中文»\ndeployment chat {\n    model = glm4_9b\n    quant = Q4_K_M\n    gpu   = rtx_4909 // ü\n}\n";
    let report = answer(&client.call("check", json!({ "text": bad })));
    let unknown = common::diagnostic(&report, "deploy::name::unknown");
    let (start, end) = (
        unknown["span"]["start"].as_u64().unwrap() as usize,
        unknown["span"]["end"].as_u64().unwrap() as usize,
    );
    assert_eq!(&bad[start..end], "rtx_4909");
    assert!(unknown["help"].as_str().unwrap().contains("rtx_4090"));
    let cli = json_of(&deployfit(&[
        "check",
        "examples/12-cheapest-gpu.deploy",
        "--format",
        "json",
    ]));
    let mcp = answer(&client.call(
        "check",
        json!({ "path": "examples/12-cheapest-gpu.deploy" }),
    ));
    assert_eq!(mcp, cli);

    // solve: the same ranking as `solve --format json`.
    let cli = json_of(&deployfit(&[
        "solve",
        "examples/12-cheapest-gpu.deploy",
        "--format",
        "json",
        "--top",
        "3",
    ]));
    let mcp = answer(&client.call(
        "solve",
        json!({ "path": "examples/12-cheapest-gpu.deploy", "top": 3 }),
    ));
    assert_eq!(mcp, cli);

    // gpus and model: the catalog queries.
    let cli = json_of(&deployfit(&[
        "gpus",
        "glm4:9b",
        "--context",
        "32k",
        "--format",
        "json",
    ]));
    let mcp = answer(&client.call("gpus", json!({ "model": "glm4:9b", "context": "32k" })));
    assert_eq!(mcp, cli);
    let cli = json_of(&deployfit(&["model", "llama_3_1_8b", "--format", "json"]));
    let mcp = answer(&client.call("model", json!({ "id": "llama_3_1_8b" })));
    assert_eq!(mcp, cli);

    // Bad arguments are the tool's errors, with what to change; an unknown tool is a
    // protocol error.
    for (tool, arguments, says) in [
        ("check", json!({}), "give the .deploy file's `text`"),
        ("check", json!({ "text": "x", "path": "y" }), "not both"),
        (
            "gpus",
            json!({ "model": "glm4:9b", "context": "lots" }),
            "context length",
        ),
        ("solve", json!({ "text": "", "top": 0 }), "`top` must be"),
        (
            "explain",
            json!({ "path": "no/such.deploy" }),
            "cannot read",
        ),
        ("model", json!({ "id": 7 }), "must be a string"),
    ] {
        let result = client.call(tool, arguments);
        assert_eq!(result["isError"], true, "{tool}: {result}");
        let text = result["content"][0]["text"].as_str().unwrap();
        assert!(text.contains(says), "{tool}: {text}");
    }
    let unknown = client.request(
        "tools/call",
        json!({ "name": "format_disk", "arguments": {} }),
    );
    assert!(
        unknown["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no tool"),
        "{unknown}"
    );
    client.finish();
}
