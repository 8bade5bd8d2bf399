//! Helpers shared by the end-to-end tests: run the real binary from the repository root.

#![allow(dead_code)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs `deployfit` with `args` in the repository root, without colour.
pub fn deployfit(args: &[&str]) -> Output {
    deployfit_in(&root(), args)
}

pub fn deployfit_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_deployfit"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        // Nothing in the tests reaches the network (docs/hub.md).
        .env("HF_HUB_OFFLINE", "1")
        .output()
        .expect("the deployfit binary runs")
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The codes of a JSON report's diagnostics, in order.
pub fn codes(report: &serde_json::Value) -> Vec<String> {
    report["diagnostics"]
        .as_array()
        .expect("a diagnostics array")
        .iter()
        .map(|d| d["code"].as_str().expect("a code").to_string())
        .collect()
}

/// The first diagnostic of a JSON report with `code`, panicking with the report when none.
pub fn diagnostic(report: &serde_json::Value, code: &str) -> serde_json::Value {
    report["diagnostics"]
        .as_array()
        .expect("a diagnostics array")
        .iter()
        .find(|d| d["code"] == code)
        .unwrap_or_else(|| panic!("no {code} in {report}"))
        .clone()
}

/// The explanation of one deployment in an `explain --format json` report, panicking with
/// the report when it has none.
pub fn explanation<'a>(report: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    report
        .as_array()
        .expect("an array of explanations")
        .iter()
        .find(|d| d["deployment"] == name)
        .unwrap_or_else(|| panic!("no explanation of {name}: {report}"))
}

/// The figures of one deployment in a `check --format json` report, panicking with the
/// report when it has none.
pub fn deployment_figures<'a>(report: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    &report["deployments"]
        .as_array()
        .expect("a deployments array")
        .iter()
        .find(|d| d["name"] == name)
        .unwrap_or_else(|| panic!("no deployment {name}: {report}"))["figures"]
}

/// `deployfit explain --format json` of `text`, written to `file` in a fresh scratch
/// directory `dir`.
pub fn explain_text(dir: &str, file: &str, text: &str) -> serde_json::Value {
    let path = write(&scratch(dir), file, text);
    json(&deployfit(&[
        "explain",
        &path.to_string_lossy(),
        "--format",
        "json",
    ]))
}

pub fn json(output: &Output) -> serde_json::Value {
    serde_json::from_slice(&output.stdout).expect("stdout is JSON")
}

/// A fresh scratch directory under the target directory.
pub fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

/// Every `.deploy` file under a directory of the repository, sorted.
pub fn deploy_files(dir: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
        .expect("directory exists")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "deploy"))
        .collect();
    files.sort();
    files
}

/// Runs the binary in `dir` (stdin an open pipe, never written) and returns its output
/// and how long it ran; a run longer
/// than `limit` is killed and fails the test. Output is read while it runs, so a large
/// report cannot block on a full pipe.
pub fn deployfit_timed(dir: &Path, args: &[&str], limit: Duration) -> (Output, Duration) {
    let start = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_deployfit"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the deployfit binary runs");
    // Held open and never written: a read of standard input blocks, as in a terminal.
    let _stdin = child.stdin.take();
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        out.read_to_end(&mut bytes).unwrap();
        bytes
    });
    let err_reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        err.read_to_end(&mut bytes).unwrap();
        bytes
    });
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("deployfit {args:?} did not finish in {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let elapsed = start.elapsed();
    let output = Output {
        status,
        stdout: reader.join().unwrap(),
        stderr: err_reader.join().unwrap(),
    };
    assert_ne!(
        output.status.code(),
        Some(101),
        "deployfit {args:?} panicked: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    (output, elapsed)
}

/// The value of the first `(pattern, value)` pair whose pattern the lower-cased text contains:
/// the calibration tests' mapping tables from a source's wording to a catalog name or id.
pub fn first_match(table: &[(&str, &'static str)], text: &str) -> Option<&'static str> {
    let text = text.to_lowercase();
    table
        .iter()
        .find(|(pattern, _)| text.contains(pattern))
        .map(|&(_, value)| value)
}

/// A CSV table under tests/fixtures/calibration, one map per row by column name; its first
/// column must be `first` (the header is kept) and every row has every column.
pub fn calibration_table(
    name: &str,
    first: &str,
) -> Vec<std::collections::HashMap<String, String>> {
    let path = root().join("tests/fixtures/calibration").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut records = parse_csv(&text).into_iter();
    let header = records.next().expect("a header");
    assert_eq!(header[0], first, "the CSV keeps its header");
    records
        .map(|r| {
            assert_eq!(r.len(), header.len(), "every row has every column: {r:?}");
            header.iter().cloned().zip(r).collect()
        })
        .collect()
}

/// A small RFC 4180 reader: quoted fields may hold commas, doubled quotes and newlines.
pub fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let mut records = Vec::new();
    let mut record = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') => quoted = true,
            (false, ',') => record.push(std::mem::take(&mut field)),
            (false, '\r') => {}
            (false, '\n') => {
                record.push(std::mem::take(&mut field));
                records.push(std::mem::take(&mut record));
            }
            (false, c) => field.push(c),
        }
    }
    if !field.is_empty() || !record.is_empty() {
        record.push(field);
        records.push(record);
    }
    records
}

/// Bytes of one tensor of `elements` values of ggml type `ty`: elements / block ×
/// block bytes (ggml/src/ggml-common.h: block_q4_K 144 B per 256, block_q6_K 210 B per
/// 256, block_q8_0 34 B per 32, block_mxfp4 17 B per 32; F32 4 B, F16 2 B).
pub fn gguf_tensor_bytes(ty: u32, elements: u64) -> u64 {
    match ty {
        0 => elements * 4,
        1 => elements * 2,
        8 => elements / 32 * 34,
        12 => elements / 256 * 144,
        14 => elements / 256 * 210,
        39 => elements / 32 * 17,
        _ => unreachable!("a type the fixtures do not use"),
    }
}

/// A GGUF v3 file of a small model of architecture `arch` (2 layers, hidden 256) with
/// `general.file_type` when given, the tensors (name, dims, ggml type) and zero-filled data;
/// returns the tensors' bytes, computed here from the block sizes.
pub fn write_gguf(
    path: &std::path::Path,
    arch: &str,
    file_type: Option<u32>,
    tensors: &[(&str, &[u64], u32)],
) -> u64 {
    fn string(out: &mut Vec<u8>, s: &str) {
        out.extend((s.len() as u64).to_le_bytes());
        out.extend(s.as_bytes());
    }
    let mut kv_u32: Vec<(String, u32)> = [
        ("block_count", 2),
        ("embedding_length", 256),
        ("feed_forward_length", 512),
        ("attention.head_count", 4),
        ("attention.head_count_kv", 2),
        ("context_length", 4096),
    ]
    .iter()
    .map(|(k, v)| (format!("{arch}.{k}"), *v))
    .collect();
    if let Some(t) = file_type {
        kv_u32.push(("general.file_type".to_string(), t));
    }
    let mut out = b"GGUF".to_vec();
    out.extend(3u32.to_le_bytes());
    out.extend((tensors.len() as u64).to_le_bytes());
    out.extend(((kv_u32.len() + 1) as u64).to_le_bytes());
    string(&mut out, "general.architecture");
    out.extend(8u32.to_le_bytes()); // string
    string(&mut out, arch);
    for (key, value) in &kv_u32 {
        string(&mut out, key);
        out.extend(4u32.to_le_bytes()); // uint32
        out.extend(value.to_le_bytes());
    }
    let (mut offset, mut total) = (0u64, 0u64);
    for (name, dims, ty) in tensors {
        string(&mut out, name);
        out.extend((dims.len() as u32).to_le_bytes());
        for d in *dims {
            out.extend(d.to_le_bytes());
        }
        out.extend(ty.to_le_bytes());
        out.extend(offset.to_le_bytes());
        let bytes = gguf_tensor_bytes(*ty, dims.iter().product());
        total += bytes;
        offset += bytes.div_ceil(32) * 32;
    }
    while !out.len().is_multiple_of(32) {
        out.push(0);
    }
    out.resize(out.len() + offset as usize, 0);
    std::fs::write(path, out).unwrap();
    total
}

/// Writes `text` as `name` (folders made as needed) under `dir`.
pub fn write(dir: &std::path::Path, name: &str, text: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(&path, text).unwrap();
    path
}
