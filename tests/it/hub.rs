//! The Hugging Face Hub (docs/hub.md): a model id that neither the catalog nor the registry
//! knows is fetched through `HF_ENDPOINT` into the standard cache. The Hub is a local HTTP
//! server on a `TcpListener` thread that answers as the Hub does (ETag, X-Repo-Commit,
//! ranges, 404 and 401); nothing here reaches the network.

use crate::common;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

use common::{codes, json, scratch, stdout};

fn write(dir: &Path, name: &str, text: &str) {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The commit every served file is at.
const COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";

/// One request the server saw: its path and its Authorization header.
#[derive(Clone, Debug)]
struct Seen {
    path: String,
    authorization: Option<String>,
}

/// A local Hub: files by URL path (`/acme/new-7b/resolve/main/config.json`); anything
/// else is a 404. With `token`, every file needs `Authorization: Bearer TOKEN` (a gated
/// repository: 401 without it).
struct Hub {
    address: String,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Hub {
    fn start(files: &[(&str, Vec<u8>)], token: Option<&str>) -> Hub {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a local port");
        let address = format!("http://{}", listener.local_addr().unwrap());
        let files: Arc<BTreeMap<String, Vec<u8>>> = Arc::new(
            files
                .iter()
                .map(|(path, bytes)| (path.to_string(), bytes.clone()))
                .collect(),
        );
        let seen = Arc::new(Mutex::new(Vec::new()));
        let token = token.map(|t| format!("Bearer {t}"));
        let log = Arc::clone(&seen);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let files = Arc::clone(&files);
                let log = Arc::clone(&log);
                let token = token.clone();
                std::thread::spawn(move || serve(stream, &files, token.as_deref(), &log));
            }
        });
        Hub { address, seen }
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    fn paths(&self) -> Vec<String> {
        self.seen().into_iter().map(|s| s.path).collect()
    }
}

/// Answers one request as the Hub's `resolve` endpoint does, then closes the connection.
fn serve(
    stream: TcpStream,
    files: &BTreeMap<String, Vec<u8>>,
    token: Option<&str>,
    log: &Mutex<Vec<Seen>>,
) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() {
        return;
    }
    let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
    let mut headers = BTreeMap::new();
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).unwrap_or(0) == 0 || header.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            headers.insert(name.trim().to_ascii_lowercase(), value.trim().to_string());
        }
    }
    let authorization = headers.get("authorization").cloned();
    log.lock().unwrap().push(Seen {
        path: path.clone(),
        authorization: authorization.clone(),
    });
    let mut stream = stream;
    let reply = |stream: &mut TcpStream, status: &str, extra: &str, body: &[u8]| {
        let head = format!(
            "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n{extra}\r\n",
            body.len()
        );
        let _ = stream.write_all(head.as_bytes());
        let _ = stream.write_all(body);
    };
    let Some(body) = files.get(&path) else {
        return reply(
            &mut stream,
            "404 Not Found",
            "X-Error-Code: EntryNotFound\r\n",
            b"Entry not found",
        );
    };
    if token.is_some() && authorization.as_deref() != token {
        return reply(
            &mut stream,
            "401 Unauthorized",
            "X-Error-Code: GatedRepo\r\n",
            b"Access to model is restricted",
        );
    }
    let total = body.len();
    let (start, end) = headers
        .get("range")
        .and_then(|r| r.strip_prefix("bytes="))
        .and_then(|r| r.split_once('-'))
        .map(|(a, b)| {
            let start: usize = a.parse().unwrap_or(0);
            let end: usize = b.parse().unwrap_or(total - 1).min(total - 1);
            (start, end)
        })
        .unwrap_or((0, total - 1));
    let etag = format!("\"etag-{}-{total}\"", path.len());
    let extra = format!(
        "ETag: {etag}\r\nX-Repo-Commit: {COMMIT}\r\nContent-Range: bytes {start}-{end}/{total}\r\n"
    );
    reply(
        &mut stream,
        "206 Partial Content",
        &extra,
        &body[start..=end],
    );
}

/// The config.json of a Llama-style model: Llama 3.1 8B's.
fn llama_config() -> Vec<u8> {
    std::fs::read(common::root().join("artifacts/tests/fixtures/configs/llama_3_1_8b.json"))
        .unwrap()
}

/// Runs the binary in `dir` against `hub` with a cache of its own under `dir`, and the
/// Hub allowed (no `HF_HUB_OFFLINE`) unless `env` sets it.
fn deployfit_hub(dir: &Path, hub: &Hub, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_deployfit"));
    command
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("HF_ENDPOINT", &hub.address)
        .env("HF_HOME", dir.join("hf-home"))
        .env_remove("HF_HUB_CACHE")
        .env_remove("HF_HUB_OFFLINE")
        .env_remove("HF_TOKEN");
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().expect("the deployfit binary runs")
}

const DEPLOYMENT: &str = "deployment fresh {\n    model = \"acme/new-7b\"\n    quant = bf16\n    context = 8k\n    gpu = h100_sxm5\n}\n";

#[test]
fn a_model_only_on_the_hub_is_fetched_cached_and_reported_in_source() {
    let dir = scratch("hub_fetch");
    let hub = Hub::start(
        &[("/acme/new-7b/resolve/main/config.json", llama_config())],
        None,
    );
    write(&dir, "fresh.deploy", DEPLOYMENT);
    let checked = deployfit_hub(&dir, &hub, &["check", "fresh.deploy"], &[]);
    assert_eq!(
        checked.status.code(),
        Some(0),
        "{}{}",
        stdout(&checked),
        String::from_utf8_lossy(&checked.stderr)
    );
    // config.json, then the index (a 404: the model is described by its config alone).
    let paths = hub.paths();
    assert!(
        paths.contains(&"/acme/new-7b/resolve/main/config.json".to_string()),
        "{paths:?}"
    );
    assert!(
        paths.contains(&"/acme/new-7b/resolve/main/model.safetensors.index.json".to_string()),
        "{paths:?}"
    );
    // The standard cache layout, where `huggingface_hub` and the next run find it.
    let snapshot = dir.join(format!(
        "hf-home/hub/models--acme--new-7b/snapshots/{COMMIT}/config.json"
    ));
    assert!(snapshot.is_file(), "{}", snapshot.display());

    // The parameters are those the config.json gives (Llama 3.1 8B's, counted from its
    // shapes), and `source` says where the description came from.
    let card = json(&deployfit_hub(
        &dir,
        &hub,
        &["model", "acme/new-7b", "--format", "json"],
        &[],
    ));
    let local = json(&deployfit_hub(
        &dir,
        &hub,
        &[
            "model",
            common::root()
                .join("artifacts/tests/fixtures/configs/llama_3_1_8b.json")
                .to_str()
                .unwrap(),
            "--format",
            "json",
        ],
        &[],
    ));
    assert_eq!(card["params"], 8_030_261_248_u64, "{card}");
    for field in ["params", "layers", "kv_heads", "head_dim", "max_context"] {
        assert_eq!(card[field], local[field], "{field}: {card}");
    }
    let source = card["source"].as_str().unwrap();
    assert!(
        source.contains(&format!(
            "fetched from the Hugging Face Hub ({}, commit {COMMIT}: config.json)",
            hub.address
        )) || source.contains("read from the Hugging Face cache"),
        "{source}"
    );

    // The explanation's weights follow from those parameters at 16 bits.
    let explained = json(&deployfit_hub(
        &dir,
        &hub,
        &["explain", "fresh.deploy", "--format", "json"],
        &[],
    ));
    let fresh = common::explanation(&explained, "fresh");
    assert_eq!(fresh["weights_bytes"], 2 * 8_030_261_248_u64, "{fresh}");

    // A later run, offline, reads the cache: the same figures, without a request.
    let before = hub.seen().len();
    let offline = deployfit_hub(
        &dir,
        &hub,
        &["model", "acme/new-7b", "--format", "json"],
        &[("HF_HUB_OFFLINE", "1")],
    );
    let cached = json(&offline);
    assert_eq!(cached["params"], card["params"]);
    assert!(
        cached["source"]
            .as_str()
            .unwrap()
            .contains("read from the Hugging Face cache"),
        "{cached}"
    );
    assert_eq!(hub.seen().len(), before, "{:?}", hub.paths());
}

#[test]
fn the_first_fetch_reports_the_hub_in_source() {
    let dir = scratch("hub_source");
    let hub = Hub::start(
        &[
            ("/acme/new-7b/resolve/main/config.json", llama_config()),
            (
                "/acme/new-7b/resolve/main/model.safetensors.index.json",
                br#"{"metadata": {"total_size": 16060522496}, "weight_map": {"lm_head.weight": "model-00001-of-00002.safetensors"}}"#.to_vec(),
            ),
        ],
        None,
    );
    let card = deployfit_hub(
        &dir,
        &hub,
        &["model", "acme/new-7b", "--format", "json"],
        &[],
    );
    let card = json(&card);
    let source = card["source"].as_str().unwrap();
    assert!(
        source.contains(&format!(
            "fetched from the Hugging Face Hub ({}, commit {COMMIT}: config.json, model.safetensors.index.json) into the Hugging Face cache",
            hub.address
        )),
        "{source}"
    );
    assert!(
        dir.join(format!(
            "hf-home/hub/models--acme--new-7b/snapshots/{COMMIT}/model.safetensors.index.json"
        ))
        .is_file()
    );
}

#[test]
fn offline_the_error_says_how_to_supply_the_file() {
    let dir = scratch("hub_offline");
    let hub = Hub::start(
        &[("/acme/new-7b/resolve/main/config.json", llama_config())],
        None,
    );
    write(&dir, "fresh.deploy", DEPLOYMENT);
    let output = deployfit_hub(
        &dir,
        &hub,
        &["check", "--format", "json", "fresh.deploy"],
        &[("HF_HUB_OFFLINE", "1")],
    );
    assert_eq!(output.status.code(), Some(1));
    let report = json(&output);
    assert_eq!(codes(&report), vec!["deploy::name::unknown"], "{report}");
    let help = report["diagnostics"][0]["help"].as_str().unwrap();
    for needle in [
        "HF_HUB_OFFLINE is set",
        "hf download acme/new-7b config.json --local-dir models/new-7b",
        "model = \\\"./models/new-7b/config.json\\\"",
        "unset HF_HUB_OFFLINE",
    ] {
        assert!(
            help.contains(needle) || help.contains(&needle.replace("\\\"", "\"")),
            "{needle}: {help}"
        );
    }
    assert!(hub.seen().is_empty(), "{:?}", hub.paths());

    // Done as the help says, the model evaluates.
    write(
        &dir,
        "models/new-7b/config.json",
        &String::from_utf8(llama_config()).unwrap(),
    );
    write(
        &dir,
        "fresh.deploy",
        &DEPLOYMENT.replace("acme/new-7b", "./models/new-7b/config.json"),
    );
    let fixed = deployfit_hub(
        &dir,
        &hub,
        &["check", "fresh.deploy"],
        &[("HF_HUB_OFFLINE", "1")],
    );
    assert_eq!(fixed.status.code(), Some(0), "{}", stdout(&fixed));
}

#[test]
fn a_gated_repository_is_read_with_hf_token_and_refused_without() {
    let dir = scratch("hub_gated");
    let hub = Hub::start(
        &[("/acme/gated-7b/resolve/main/config.json", llama_config())],
        Some("hf_secret"),
    );
    let refused = deployfit_hub(&dir, &hub, &["model", "acme/gated-7b"], &[]);
    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("HTTP 401"), "{stderr}");
    assert!(stderr.contains("set HF_TOKEN"), "{stderr}");
    assert!(!stderr.contains("hf_secret"), "{stderr}");

    let read = deployfit_hub(
        &dir,
        &hub,
        &["model", "acme/gated-7b", "--format", "json"],
        &[("HF_TOKEN", "hf_secret")],
    );
    assert_eq!(json(&read)["params"], 8_030_261_248_u64);
    let last = hub.seen().into_iter().last().unwrap();
    assert_eq!(last.authorization.as_deref(), Some("Bearer hf_secret"));
}

#[test]
fn a_missing_repository_keeps_the_suggestion_and_says_the_hub_has_none() {
    let dir = scratch("hub_missing");
    let hub = Hub::start(&[], None);
    write(
        &dir,
        "typo.deploy",
        &DEPLOYMENT.replace("acme/new-7b", "Qwen/Qwen2.5-72B-Instruc"),
    );
    let report = json(&deployfit_hub(
        &dir,
        &hub,
        &["check", "--format", "json", "typo.deploy"],
        &[],
    ));
    assert_eq!(codes(&report), vec!["deploy::name::unknown"], "{report}");
    let diag = &report["diagnostics"][0];
    let help = diag["help"].as_str().unwrap();
    assert!(help.starts_with("did you mean"), "{help}");
    assert!(
        help.contains("has no model \"Qwen/Qwen2.5-72B-Instruc\""),
        "{help}"
    );
    assert!(
        diag["suggestions"][0]["replacement"]
            .as_str()
            .unwrap()
            .starts_with("\"Qwen/Qwen2.5-72B-Instruct"),
        "{diag}"
    );
}

#[test]
fn ids_are_checked_before_any_request_and_catalog_ids_never_leave() {
    let dir = scratch("hub_ids");
    let hub = Hub::start(&[], None);
    let text = "deployment a {\n    model = \"acme/a..b\"\n    quant = bf16\n    gpu = h100_sxm5\n}\n\
                deployment b {\n    model = \"acme/new 7b\"\n    quant = bf16\n    gpu = h100_sxm5\n}\n\
                deployment c {\n    model = \"THUDM/GLM-4-32B-0414\"\n    quant = bf16\n    gpu = h100_sxm5\n}\n\
                deployment d {\n    model = \"meta-llama/Llama-2-7b-hf\"\n    quant = bf16\n    gpu = h100_sxm5\n}\n\
                model mine extends llama_3_1_8b {\n    hf = \"acme/mine-8b\"\n}\n\
                deployment e {\n    model = \"acme/mine-8b\"\n    quant = bf16\n    gpu = h100_sxm5\n}\n";
    write(&dir, "ids.deploy", text);
    let output = deployfit_hub(
        &dir,
        &hub,
        &["check", "--format", "json", "ids.deploy"],
        &[],
    );
    let report = json(&output);
    let helps: Vec<&str> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d["help"].as_str())
        .collect();
    assert!(
        helps.iter().any(|h| h.contains("is not a Hugging Face id")),
        "{report}"
    );
    // The catalog's ids (and a model the file declares with `hf`) evaluate without a
    // request; the two that are not ids are the only errors.
    assert_eq!(
        codes(&report),
        vec!["deploy::name::unknown", "deploy::name::unknown"],
        "{report}"
    );
    assert!(hub.seen().is_empty(), "{:?}", hub.paths());
}
