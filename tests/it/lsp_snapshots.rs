//! Issue #11 part 4: every request runs on an analysis snapshot, off the state lock and
//! on a blocking pool, so a slow solve does not hold up a hover; an edit cancels the slow
//! work (`ContentModified`) instead of letting it finish stale. Through the real
//! `deployfit lsp`.

use crate::lsp_support;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use lsp_support::{Session, at};
use serde_json::{Value, json};

/// The GPUs the slow solve tries: the 77 of the hand-written catalog (stdlib/gpus.deploy
/// before the generated one joined it), so the candidate count stays what it was: with
/// `gpu = ?` over the whole catalog it passes the solver's limit and is refused at once.
const SLOW_GPUS: &[&str] = &[
    "rtx_3060_12gb",
    "rtx_3080",
    "rtx_3080_ti",
    "rtx_3090",
    "rtx_3090_ti",
    "rtx_4060_ti_16gb",
    "rtx_4070",
    "rtx_4080",
    "rtx_4090",
    "rtx_5070_ti",
    "rtx_5080",
    "rtx_5090",
    "rtx_5090_d_v2",
    "rtx_a4000",
    "rtx_a5000",
    "rtx_a6000",
    "rtx_6000_ada",
    "rtx_pro_6000",
    "t4",
    "v100_pcie_16gb",
    "v100_sxm2_16gb",
    "v100_pcie_32gb",
    "v100_sxm2_32gb",
    "a10",
    "a10g",
    "l4",
    "l40s",
    "a100_pcie_40gb",
    "a100_pcie_80gb",
    "a100_sxm4_40gb",
    "a100_sxm4_80gb",
    "h100_pcie",
    "h100_sxm5",
    "h100_nvl",
    "h100_pcie_96gb",
    "h100_sxm5_94gb",
    "h100_sxm5_96gb",
    "h200_sxm",
    "h200_nvl",
    "gh200",
    "b200",
    "b300",
    "gb200",
    "gb300",
    "mi210",
    "mi250x",
    "mi300x",
    "mi300",
    "mi325x",
    "mi355x",
    "rx_7900_xtx",
    "m1_max",
    "m1_ultra_128gb",
    "m2_max_96gb",
    "m2_ultra_192gb",
    "m3_max",
    "m3_ultra_512gb",
    "m4_max_128gb",
    "m4_pro_64gb",
    "m4_pro_48gb",
    "apple_m_max_64gb",
    "mac_studio_128gb",
    "mac_studio_192gb",
    "quadro_rtx_6000",
    "quadro_6000",
    "cmp_170hx_8gb",
    "cmp_170hx_10gb",
    "a100x",
    "h800_sxm5",
    "h800_pcie",
    "gh200_144gb",
    "max_1550",
    "max_subsystem",
    "mi250",
    "mi300a",
    "mi308x",
    "mi350x",
];

/// The `gpu` value of the slow deployment (line 13, from character 15).
fn slow_gpus() -> String {
    format!("one_of [{}]", SLOW_GPUS.join(", "))
}

/// A small deployment (line 0) and one whose holes make a solve of 32,340 candidates
/// with a non-default objective, so each is evaluated: about 2.7 s in a debug build.
fn slow() -> String {
    format!(
        "deployment small {{\n    model    = glm4_9b\n    quant    = fp8\n    context  = 8k\n    engine   = vllm\n    gpu      = h100_sxm5\n}}\n\ndeployment big {{\n    model    = glm4_9b\n    quant    = ?\n    kv_cache = ?\n    engine   = ?\n    gpu      = {}\n    maximize decode_tps\n}}\n",
        slow_gpus()
    )
}

/// Sends a request without waiting for its answer; returns its id.
fn send(session: &mut Session, method: &str, params: Value) -> i64 {
    let id = session.next_id;
    session.next_id += 1;
    session.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
    id
}

/// Reads messages until every id in `ids` is answered; the answers in arrival order.
fn answers(session: &mut Session, ids: &[i64]) -> Vec<(i64, Value, Duration)> {
    let start = Instant::now();
    let mut pending: Vec<i64> = ids.to_vec();
    let mut arrived = Vec::new();
    while !pending.is_empty() {
        let message = session.receive();
        let Some(id) = message["id"].as_i64() else {
            continue; // a notification
        };
        if let Some(at) = pending.iter().position(|p| *p == id) {
            pending.remove(at);
            arrived.push((id, message, start.elapsed()));
        }
    }
    arrived
}

fn solve_command(uri: &str) -> Value {
    json!({ "command": "deployfit.solve", "arguments": [uri, "big"] })
}

#[test]
fn a_hover_answers_while_a_slow_solve_runs() {
    let uri = "file:///tmp/deployfit-lsp-snapshots/slow.deploy";
    let mut session = Session::start();
    let _watchdog = session.watchdog(Duration::from_secs(300));
    // The open starts the slow diagnostics; the command, the inlay hints and the hover
    // come right after, in this order.
    session.notify(
        "textDocument/didOpen",
        json!({ "textDocument": { "uri": uri, "languageId": "deploy", "version": 1, "text": slow() } }),
    );
    let solve = send(&mut session, "workspace/executeCommand", solve_command(uri));
    let hints = send(
        &mut session,
        "textDocument/inlayHint",
        json!({ "textDocument": { "uri": uri }, "range": { "start": { "line": 0, "character": 0 }, "end": { "line": 17, "character": 0 } } }),
    );
    // `glm4_9b` in the small deployment.
    let hover = send(&mut session, "textDocument/hover", at(uri, 1, 17));
    let arrived = answers(&mut session, &[solve, hints, hover]);
    for (id, _, elapsed) in &arrived {
        eprintln!("answer to request {id} after {elapsed:?}");
    }
    let order: Vec<i64> = arrived.iter().map(|(id, _, _)| *id).collect();
    let by_id: HashMap<i64, &Value> = arrived.iter().map(|(id, m, _)| (*id, m)).collect();
    // Nothing was edited: every request is answered with its result.
    let markdown = by_id[&hover]["result"]["contents"]["value"]
        .as_str()
        .unwrap_or_else(|| panic!("a hover: {}", by_id[&hover]));
    assert!(markdown.starts_with("**model"), "{markdown}");
    let summary = by_id[&solve]["result"]
        .as_str()
        .expect("the solve's summary");
    assert!(summary.starts_with("big: 1."), "{summary}");
    assert!(by_id[&hints]["result"].is_array(), "{}", by_id[&hints]);
    // The hover does not wait for the solve that was asked first.
    let position = |id: i64| order.iter().position(|o| *o == id).unwrap();
    assert!(
        position(hover) < position(solve),
        "the hover waited for the slow solve: {order:?}"
    );
    session.finish();
}

#[test]
fn an_edit_cancels_a_slow_request() {
    let uri = "file:///tmp/deployfit-lsp-snapshots/cancel.deploy";
    let mut session = Session::start();
    let _watchdog = session.watchdog(Duration::from_secs(300));
    session.notify(
        "textDocument/didOpen",
        json!({ "textDocument": { "uri": uri, "languageId": "deploy", "version": 1, "text": slow() } }),
    );
    let solve = send(&mut session, "workspace/executeCommand", solve_command(uri));
    // Once a hover sent after it is answered, the solve is running (it takes seconds).
    let hover = session.request("textDocument/hover", at(uri, 1, 17));
    assert!(hover["contents"]["value"].is_string(), "{hover}");
    // Pinning the GPU: 420 candidates instead of 32,340.
    session.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": uri, "version": 2 }, "contentChanges": [
            { "range": { "start": { "line": 13, "character": 15 }, "end": { "line": 13, "character": 15 + slow_gpus().len() } }, "text": "h100_sxm5" }
        ] }),
    );
    let arrived = answers(&mut session, &[solve]);
    let (_, message, _) = &arrived[0];
    let code = &message["error"]["code"];
    assert!(
        *code == -32801 || *code == -32800,
        "the edit cancels the stale solve: {message}"
    );
    // The newer text is what a new request computes on, and it is quick to solve.
    let summary = session.request("workspace/executeCommand", solve_command(uri));
    let summary = summary.as_str().expect("a summary");
    assert!(
        summary.starts_with("big: 1.") && !summary.contains("gpu ="),
        "the GPU is pinned now: {summary}"
    );
    session.finish();
}
