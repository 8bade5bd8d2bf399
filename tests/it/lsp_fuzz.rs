//! A fuzz session against the real `deployfit lsp`: random valid and invalid incremental
//! edits (random ranges, non-ASCII text, stale versions), random requests at random and
//! hostile positions, and malformed frames, pipelined a few at a time. Every request
//! must get a response (an error only where the method may refuse), every malformed
//! frame exactly one error, and at the end the server answers correctly and its
//! diagnostics equal a fresh check of the text the client believes it has.
//!
//! The CI slice runs a fixed seed; `cargo test --test it lsp_fuzz:: -- --ignored` runs a long
//! one, with `DEPLOYFIT_FUZZ_SEED` and `DEPLOYFIT_FUZZ_COUNT` (steps).

use crate::common;
use crate::lsp_support;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use lsp_support::{Session, assert_fresh_check, position_of};
use serde_json::{Value, json};

/// xorshift64*: tiny, deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545F4914F6CDD1D)
    }

    fn below(&mut self, bound: usize) -> usize {
        (self.next() % bound.max(1) as u64) as usize
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// The byte offset the server clamps an LSP position to (the documented behaviour:
/// past the last line → the end; past a line's end → the line's end; inside a
/// surrogate pair → the character's start), computed the slow way.
fn offset_of(text: &str, line: u64, character: u64) -> usize {
    let mut start = 0;
    for _ in 0..line {
        match text[start..].find('\n') {
            Some(i) => start += i + 1,
            None => return text.len(),
        }
    }
    let end = text[start..]
        .find('\n')
        .map(|i| start + i)
        .unwrap_or(text.len());
    let mut units = 0u64;
    for (i, c) in text[start..end].char_indices() {
        if units >= character || units + c.len_utf16() as u64 > character {
            return start + i;
        }
        units += c.len_utf16() as u64;
    }
    end
}

const SNIPPETS: &[&str] = &[
    "",
    "x",
    "}",
    "{",
    "\n",
    " = ",
    "rtx_3090",
    "gpu = ?",
    "require fits\n",
    "é",
    "naïve",
    "中文",
    "😀",
    "𝄞x",
    "// ü comment\n",
    "\"str {1 + }\"",
    "one_of [rtx_3090, rtx_4090]",
    "deployment z {\n",
    "import \"nowhere.deploy\"\n",
    "1e308",
    "$1/h",
    "not ",
    "and",
    "context = 32k\n",
    "\r\n",
    "\t",
    "\\",
    "\"",
];

const NAMES: &[&str] = &[
    "fresh_name",
    "not",
    "naïve",
    "",
    "9x",
    "a b",
    "gpu",
    "x",
    "_",
    "one_of",
];

const METHODS: &[&str] = &[
    "textDocument/hover",
    "textDocument/completion",
    "textDocument/definition",
    "textDocument/references",
    "textDocument/rename",
    "textDocument/prepareRename",
    "textDocument/inlayHint",
    "textDocument/semanticTokens/full",
    "textDocument/codeAction",
    "textDocument/codeLens",
    "textDocument/formatting",
    "textDocument/documentSymbol",
    "workspace/executeCommand",
];

/// Malformed frames and whether the error names an id (`"bad"`) or not.
const MALFORMED: &[(&[u8], bool)] = &[
    (b"Content-Length: 5\r\n\r\nhello", false),
    (b"Content-Length: 2\r\n\r\n[]", false),
    (b"Content-Length: 3\r\n\r\n[1]", false),
    (b"Content-Length: nope\r\n\r\n", false),
    (b"garbage header line\r\n", false),
    (b"Content-Length: 99999999999999\r\n\r\n", false),
    (
        b"Content-Length: 22\r\n\r\n{\"id\":\"bad\",\"foo\":[1]}",
        true,
    ),
    // A length two bytes too long: the next frame's header is cut, and recovered.
    (b"Content-Length: 13\r\n\r\n{\"jsonrpc\"}", false),
    // Truncated: the declared length runs into the next frame.
    (b"Content-Length: 40\r\n\r\n{\"jsonrpc\"", false),
    (b"Content-Length: 4\r\n\r\n\xff\xfe\x00\x01", false),
];

struct Stats {
    requests: usize,
    edits: usize,
    malformed: usize,
    /// Requests answered `ContentModified` (-32801): an edit cancelled their snapshot.
    modified: usize,
    slowest: (Duration, String),
}

/// A random LSP position: usually inside the text, sometimes hostile.
fn random_position(rng: &mut Rng, text: &str) -> Value {
    if rng.chance(15) {
        let line = *rng.pick(&[0u64, 1, 7, 500, u32::MAX as u64]);
        let character = *rng.pick(&[0u64, 1, 3, 999, u32::MAX as u64]);
        return json!({ "line": line, "character": character });
    }
    let boundaries: Vec<usize> = (0..=text.len())
        .filter(|i| text.is_char_boundary(*i))
        .collect();
    let mut position = position_of(text, *rng.pick(&boundaries));
    if rng.chance(10) {
        // One unit further: possibly inside a surrogate pair or past the line's end.
        position["character"] = json!(
            position["character"]
                .as_u64()
                .unwrap()
                .saturating_add(1)
                .min(u32::MAX as u64)
        );
    }
    position
}

fn request_params(rng: &mut Rng, method: &str, uri: &str, text: &str) -> Value {
    let document = json!({ "uri": uri });
    let position = random_position(rng, text);
    let range = || json!({ "start": { "line": 0, "character": 0 }, "end": { "line": 1000, "character": 0 } });
    match method {
        "textDocument/references" => {
            json!({ "textDocument": document, "position": position, "context": { "includeDeclaration": true } })
        }
        "textDocument/rename" => {
            json!({ "textDocument": document, "position": position, "newName": rng.pick(NAMES) })
        }
        "textDocument/inlayHint" => json!({ "textDocument": document, "range": range() }),
        "textDocument/codeAction" => {
            let end = random_position(rng, text);
            json!({ "textDocument": document, "range": { "start": position, "end": end }, "context": { "diagnostics": [] } })
        }
        "textDocument/formatting" => {
            json!({ "textDocument": document, "options": { "tabSize": 4, "insertSpaces": true } })
        }
        "textDocument/semanticTokens/full"
        | "textDocument/codeLens"
        | "textDocument/documentSymbol" => json!({ "textDocument": document }),
        "workspace/executeCommand" => {
            let command = rng.pick(&["deployfit.explain", "deployfit.solve"]);
            json!({ "command": command, "arguments": [uri, rng.pick(&["chat", "x", "naïve"])] })
        }
        _ => json!({ "textDocument": document, "position": position }),
    }
}

fn fuzz(seed: u64, steps: usize) -> Stats {
    let corpus: Vec<String> = common::deploy_files("examples")
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    let mut rng = Rng::new(seed);
    let uri = "file:///tmp/deployfit-lsp-fuzz/fuzz.deploy";
    let mut text = rng.pick(&corpus).clone();
    let mut session = Session::start();
    // A hang fails the test instead of blocking it: the server is killed after a while.
    let _watchdog = session.watchdog(Duration::from_secs(60 + steps as u64 / 10));
    session.open(uri, &text);
    let mut version = 1i64;
    let mut stats = Stats {
        requests: 0,
        edits: 0,
        malformed: 0,
        modified: 0,
        slowest: (Duration::ZERO, String::new()),
    };
    // Requests in flight: id → (method, sent at).
    let mut pending: HashMap<i64, (String, Instant)> = HashMap::new();
    let (mut expected_null_errors, mut expected_bad_id_errors) = (0usize, 0usize);
    let (mut null_errors, mut bad_id_errors) = (0usize, 0usize);

    let mut step = 0;
    while step < steps {
        // A burst of up to four messages, then every response is collected.
        for _ in 0..1 + rng.below(4) {
            step += 1;
            let roll = rng.below(100);
            if roll < 35 {
                // An edit: one to three incremental changes, or a whole new text; now and
                // then with a stale version, which the server ignores.
                let stale = rng.chance(5);
                let mut changes = Vec::new();
                let mut edited = text.clone();
                if rng.chance(5) {
                    edited = rng.pick(&corpus).clone();
                    changes.push(json!({ "text": edited }));
                } else {
                    for _ in 0..1 + rng.below(3) {
                        let start = random_position(&mut rng, &edited);
                        let end = if rng.chance(70) {
                            let mut end = start.clone();
                            end["character"] = json!(
                                (start["character"].as_u64().unwrap() + rng.below(6) as u64)
                                    .min(u32::MAX as u64)
                            );
                            end
                        } else {
                            random_position(&mut rng, &edited)
                        };
                        let insert = if rng.chance(10) {
                            let source = rng.pick(&corpus);
                            let from = rng.below(source.len());
                            let from = (0..=from)
                                .rev()
                                .find(|i| source.is_char_boundary(*i))
                                .unwrap();
                            let to = (from + rng.below(80)).min(source.len());
                            let to = (from..=to)
                                .rev()
                                .find(|i| source.is_char_boundary(*i))
                                .unwrap();
                            source[from..to].to_string()
                        } else {
                            rng.pick(SNIPPETS).to_string()
                        };
                        let a = offset_of(
                            &edited,
                            start["line"].as_u64().unwrap(),
                            start["character"].as_u64().unwrap(),
                        );
                        let b = offset_of(
                            &edited,
                            end["line"].as_u64().unwrap(),
                            end["character"].as_u64().unwrap(),
                        )
                        .max(a);
                        edited.replace_range(a..b, &insert);
                        changes.push(
                            json!({ "range": { "start": start, "end": end }, "text": insert }),
                        );
                    }
                }
                let sent_version = if stale { version } else { version + 1 };
                if !stale {
                    version += 1;
                    text = edited;
                }
                session.notify(
                    "textDocument/didChange",
                    json!({ "textDocument": { "uri": uri, "version": sent_version }, "contentChanges": changes }),
                );
                stats.edits += 1;
            } else if roll < 92 {
                let method = *rng.pick(METHODS);
                let params = request_params(&mut rng, method, uri, &text);
                let id = session.next_id;
                session.next_id += 1;
                session.send(
                    json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }),
                );
                pending.insert(id, (method.to_string(), Instant::now()));
                stats.requests += 1;
            } else {
                let (frame, names_id) = *rng.pick(MALFORMED);
                session.send_raw(frame);
                if names_id {
                    expected_bad_id_errors += 1;
                } else {
                    expected_null_errors += 1;
                }
                stats.malformed += 1;
                // A well-formed request right after, so that the filter resynchronizes on
                // it and each malformed frame gets exactly one error.
                let id = session.next_id;
                session.next_id += 1;
                session.send(json!({ "jsonrpc": "2.0", "id": id, "method": "textDocument/hover", "params": { "textDocument": { "uri": uri }, "position": { "line": 0, "character": 0 } } }));
                pending.insert(id, ("textDocument/hover".into(), Instant::now()));
                stats.requests += 1;
            }
        }
        while !pending.is_empty() {
            let message = session.receive();
            if message.get("method").is_some() {
                continue; // a notification (diagnostics, messages)
            }
            if message["id"].is_null() {
                assert!(message["error"]["code"].is_i64(), "{message}");
                null_errors += 1;
                continue;
            }
            if message["id"] == "bad" {
                assert_eq!(message["error"]["code"], -32600, "{message}");
                bad_id_errors += 1;
                continue;
            }
            let id = message["id"].as_i64().expect("a numeric id");
            let (method, sent) = pending
                .remove(&id)
                .expect("a response to a pending request");
            let elapsed = sent.elapsed();
            if elapsed > stats.slowest.0 {
                stats.slowest = (elapsed, method.clone());
            }
            if let Some(error) = message.get("error")
                && error["code"] == -32801
            {
                // An edit cancelled the request's snapshot: the documented answer, and
                // only possible once the document has really changed.
                assert!(
                    version > 1,
                    "seed {seed}: {method} cancelled without an edit"
                );
                stats.modified += 1;
            } else if let Some(error) = message.get("error") {
                let may_refuse = matches!(
                    method.as_str(),
                    "textDocument/rename"
                        | "textDocument/prepareRename"
                        | "workspace/executeCommand"
                );
                assert!(
                    may_refuse && error["code"] == -32602,
                    "seed {seed}: {method} failed: {message}\ntext:\n{text}"
                );
            } else {
                assert!(message.get("result").is_some(), "{message}");
            }
        }
    }
    assert_eq!(null_errors, expected_null_errors, "seed {seed}");
    assert_eq!(bad_id_errors, expected_bad_id_errors, "seed {seed}");

    // The server is up, and holds the text the client believes it has: its diagnostics
    // equal a fresh check of that text.
    version += 1;
    session.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": uri, "version": version }, "contentChanges": [{ "range": { "start": { "line": 0, "character": 0 }, "end": { "line": 0, "character": 0 } }, "text": "" }] }),
    );
    let published = session.diagnostics(uri, Some(version));
    assert_fresh_check(
        &published,
        "/tmp/deployfit-lsp-fuzz/fuzz.deploy",
        &text,
        &format!("seed {seed}: the server's text diverged"),
    );
    let symbols = session.request(
        "textDocument/documentSymbol",
        json!({ "textDocument": { "uri": uri } }),
    );
    assert!(symbols.is_array());
    session.assert_alive();
    session.finish();
    stats
}

fn report(seed: u64, stats: &Stats) {
    println!(
        "lsp fuzz seed {seed}: {} requests ({} cancelled by an edit), {} edits, {} malformed frames; slowest response {:?} ({})",
        stats.requests,
        stats.modified,
        stats.edits,
        stats.malformed,
        stats.slowest.0,
        stats.slowest.1
    );
}

/// The CI slice: a fixed seed, a few hundred steps.
#[test]
fn fuzz_session_fixed_seed() {
    for seed in [1, 0xdeadbeef] {
        let stats = fuzz(seed, 2_000);
        report(seed, &stats);
        assert!(stats.requests > 1_000 && stats.edits > 500 && stats.malformed > 100);
    }
}

/// The long run: `DEPLOYFIT_FUZZ_SEED` (default: from the clock) and
/// `DEPLOYFIT_FUZZ_COUNT` steps (default 20,000).
#[test]
#[ignore]
fn fuzz_session_long() {
    let seed = std::env::var("DEPLOYFIT_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        });
    let count = std::env::var("DEPLOYFIT_FUZZ_COUNT")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_000);
    println!("DEPLOYFIT_FUZZ_SEED={seed} DEPLOYFIT_FUZZ_COUNT={count}");
    let stats = fuzz(seed, count);
    report(seed, &stats);
}
