//! A stable fuzz harness (no nightly, no new dependencies): mutates the corpus (examples,
//! fixtures, stdlib, every regression file) and runs each input in-process through the
//! public compiler API the way the CLI does: check (human, json, github and sarif
//! output), fmt (idempotent and meaning-preserving), explain, solve (top 3) and export
//! (every deployment, every engine). Each input must not panic, must stay under a time
//! bound, and every diagnostic must be well-formed (stable code, help, spans inside the
//! text and on character boundaries). docs/fuzzing.md explains how to run and extend it.
//!
//! - `fuzz_ci_slice`: a fixed seed and count, part of `cargo test`.
//! - `fuzz_long` (ignored): `DEPLOYFIT_FUZZ_SEED`, `DEPLOYFIT_FUZZ_COUNT`, `DEPLOYFIT_FUZZ_START`.
//! - `fuzz_reproduce` (ignored): `DEPLOYFIT_FUZZ_INPUT=path` runs one saved input.
//! - `regressions_do_not_panic`: every file of tests/fixtures/regressions, plus its
//!   `// expect:` lines.
//! - `regressions_generated`: the reproducers too large to keep as files.
//! - `regressions_device_imports_through_binary`: imports of devices and FIFOs, through the
//!   real binary in a child process with a timeout and a memory limit.
//!
//! Failing inputs are written to `target/fuzz-failures/`, with their path and the panic
//! message (and its location) printed.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Read as _;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, Once};
use std::time::{Duration, Instant};

use deployfit_host::diagnostics::Report;
use deployfit_host::diagnostics::codes::Code;
use deployfit_host::export::Target;
use deployfit_host::render::{self, HumanOptions, OutputFormat};
use deployfit_host::{Diagnostic, Severity, Workspace, fmt};

/// The seed of the CI slice. Changing it changes which inputs CI runs.
const CI_SEED: u64 = 0x0de9_10f1_2026_0010;
/// Executions of the CI slice: about 20-40 s in a debug build (docs/fuzzing.md).
const CI_COUNT: usize = 800;
/// Each step of an input (check, one render, fmt, explain, solve, export; each kind of
/// editor query, summed over its offsets) may take this long in a debug build, plus
/// [`TIME_PER_64K`] per 64 KiB of input; the whole input [`TOTAL_FACTOR`] times that.
/// A full `gpu = ?` search of the design fixtures over the 817-GPU catalog takes about
/// 5 s of a debug build on a loaded 2-core machine: legitimate work, linear in the
/// catalog; the bound is there for the super-linear blow-ups, which take minutes.
const TIME_BOUND: Duration = Duration::from_secs(10);
const TIME_PER_64K: Duration = Duration::from_secs(1);
const TOTAL_FACTOR: u32 = 4;
/// Past this the worker thread is given up on (it cannot be killed; it is leaked and the
/// input reported as a hang).
const HANG_LIMIT: Duration = Duration::from_secs(60);
/// Mutated inputs stay below this size.
const MAX_INPUT: usize = 256 * 1024;
/// A run stops early after this many failing inputs, or this many hangs.
const MAX_FAILURES: usize = 40;
const MAX_HANGS: usize = 2;
/// The worker's stack: the size of the CLI's main thread.
const WORKER_STACK: usize = 8 * 1024 * 1024;
/// The folder name of fuzzed inputs: a space and a non-ASCII letter, so that paths in
/// SARIF, GitHub and human output are exercised too.
const FUZZ_DIR: &str = "fuzz dir é";

// ---------------------------------------------------------------------------------------
// A small PRNG (splitmix64): deterministic, no dependency.

#[derive(Clone)]
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        let mut rng = Rng(seed);
        rng.next();
        rng
    }

    /// The generator of input `n` of a run: inputs are independent of each other, so one
    /// can be replayed alone (`DEPLOYFIT_FUZZ_START=n DEPLOYFIT_FUZZ_COUNT=1`).
    fn for_input(seed: u64, n: usize) -> Rng {
        Rng::new(seed ^ (n as u64).wrapping_mul(0xA24B_AED4_963E_E407))
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (0 when `n` is 0).
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

// ---------------------------------------------------------------------------------------
// The corpus.

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn target_dir() -> PathBuf {
    // CARGO_TARGET_TMPDIR is `<target>/tmp`.
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| root().join("target"))
}

fn failures_dir() -> PathBuf {
    target_dir().join("fuzz-failures")
}

fn regressions_dir() -> PathBuf {
    root().join("tests/fixtures/regressions")
}

fn deploy_files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            deploy_files_under(&path, out);
        } else if kind.is_file() && path.extension().is_some_and(|e| e == "deploy") {
            out.push(path);
        }
    }
}

struct Seed {
    name: String,
    bytes: Vec<u8>,
}

/// examples/**, examples-failing/**, tests/fixtures/** (regressions included), stdlib/.
fn corpus() -> Vec<Seed> {
    let mut paths = Vec::new();
    for dir in ["examples", "examples-failing", "tests/fixtures", "stdlib"] {
        deploy_files_under(&root().join(dir), &mut paths);
    }
    paths.sort();
    paths.dedup();
    let seeds: Vec<Seed> = paths
        .iter()
        .filter_map(|path| {
            let bytes = std::fs::read(path).ok()?;
            // A seed larger than any input the generator makes (the generated
            // stdlib/gpus_bulk.deploy, 600 KiB) is left out: every input stays within
            // MAX_INPUT.
            if bytes.len() > MAX_INPUT {
                return None;
            }
            let name = path
                .strip_prefix(root())
                .unwrap_or(path)
                .display()
                .to_string();
            Some(Seed { name, bytes })
        })
        .collect();
    assert!(seeds.len() >= 50, "corpus of {} files", seeds.len());
    seeds
}

// ---------------------------------------------------------------------------------------
// Mutators. They work on bytes; most keep UTF-8 valid by inserting at character
// boundaries, some break it on purpose.

const NON_ASCII: &[&str] = &[
    "é",
    "naïve",
    "中文",
    "日本語",
    "😀",
    "👩‍💻",
    "e\u{301}",
    "\u{301}",
    "\u{202E}",
    "\u{200F}",
    "עברית",
    "العربية",
    "ß",
    "\u{FEFF}",
    "𝔘",
    "\u{2028}",
    "\u{85}",
    "\u{A0}",
    "Ω",
    "ǅ",
];

const HUGE_NUMBERS: &[&str] = &[
    "1e308",
    "1e400",
    "-1e400",
    "1e-400",
    "9e99999",
    "99999999999999999999",
    "18446744073709551616",
    "340282366920938463463374607431768211456",
    "1_000_000_000_000_000_000_000",
    "-0",
    "0",
    "-1",
    "-4",
    "0.0",
    "0.0000000001",
    "NaN",
    "nan",
    "inf",
    "-inf",
    "1e308 * 10",
    "(1e308 * 10 - 1e308 * 10)",
    "0 / 0",
    "1 / 0",
    "4294967296",
    "2147483648",
    "65536",
];

const TOKENS: &[&str] = &[
    "?",
    "one_of [",
    "one_of []",
    "]",
    "[",
    "{",
    "}",
    "(",
    ")",
    "\"",
    "{x}",
    "\"{fits}{fits}\"",
    " extends ",
    "import \"",
    ".deploy\"",
    "import \"examples/01-glm4-chat.deploy\"\n",
    "require ",
    " else ",
    "minimize ",
    "maximize ",
    "deployment ",
    "model ",
    "gpu ",
    "quant ",
    "kv ",
    "engine ",
    "rule ",
    "=",
    "==",
    "\n",
    "//",
    "///",
    "%",
    "k",
    "M",
    "$",
    "/h",
    " GiB",
    " tok/s",
    " req/s",
    "not ",
    " and ",
    " or ",
    "-",
    "*",
    "/",
    ".",
    ",",
    "seqs",
    "count = ?\n",
    "replicas = ?\n",
    "gpu = ?\n",
    "quant = ?\n",
    "engine = ?\n",
    "kv_cache = ?\n",
    "workload {\n rate = 1 req/s\n prompt = 1k\n output = 1\n}\n",
    "files {\n Q4_K_M = 1 B\n}\n",
    "@",
    "#",
    "\\",
    "\\n",
    "\t",
    "max(",
    "min(",
    "gpu.",
    "model.",
];

/// Values for the `field-value` mutator: catalog names, holes, units, edge numbers.
const VALUES: &[&str] = &[
    "?",
    "one_of [rtx_3090, h100_sxm5, l4]",
    "one_of [1, 2, 4, 8]",
    "one_of [Q4_K_M, fp8, bf16]",
    "one_of []",
    "0",
    "-1",
    "1e308",
    "1e400",
    "8k",
    "1M",
    "128k",
    "0 GiB",
    "-4 GiB",
    "1e308 GiB",
    "$0/h",
    "$-1/h",
    "$1e308/h",
    "fp8",
    "Q2_K",
    "bf16",
    "rtx_4090",
    "mac_studio_192gb",
    "h200_sxm",
    "vllm",
    "ollama",
    "llamacpp",
    "glm4_9b",
    "deepseek_v3",
    "\"THUDM/GLM-4-9B-0414\"",
    "\"glm4:9b\"",
    "\"a/b; rm -rf /\"",
    "\"$(id)\"",
    "\"--x\"",
    "\"\"",
    "true",
    "0 req/s",
    "-5 req/s",
    "1e308 req/s",
    "99999 tok/s",
    "0 s",
    "1 ms",
    "50%",
    "1k%",
    "[vllm, llamacpp]",
    "[]",
    "max(1, 2)",
    "1 / 0",
];

/// Requirements for the `require` mutator: figures, edge numbers and operators.
const REQUIRES: &[&str] = &[
    "fits",
    "not fits",
    "fits and not fits",
    "ttft / 0 > 1 s",
    "ttft <= 1 s",
    "max_context >= 1e400",
    "cost_per_hour * 1e308 * 10 > $1/h",
    "(1e308 * 10 - 1e308 * 10) > 0",
    "decode_tps == decode_tps",
    "headroom >= 10%",
    "utilization < 1k%",
    "kv_memory <= 0.5 * usable_memory",
    "weights_memory / gpu.bandwidth < 30 ms",
    "replicas >= replicas_needed else \"needs {replicas_needed} {gpu} {no_such}\"",
    "cost_per_mtok <= $2/Mtok",
    "no_such_figure > 1",
    "max(ttft, 1 s) <= 5 s",
    "gpu.memory > 1 GiB",
    "model.params > 0",
    "context + seqs > 0",
    "1 GiB + 1 s > 0",
];

const INVALID_UTF8: &[&[u8]] = &[
    &[0xff],
    &[0xfe, 0xff],
    &[0xc3],
    &[0xe4, 0xb8],
    &[0xed, 0xa0, 0x80],
    &[0xf4, 0x90, 0x80, 0x80],
    &[0x80],
    &[0xc0, 0xaf],
    &[0xf8, 0x88, 0x80, 0x80, 0x80],
];

/// `at`, moved back to the start of its UTF-8 sequence.
fn boundary(bytes: &[u8], mut at: usize) -> usize {
    at = at.min(bytes.len());
    while at > 0 && at < bytes.len() && (bytes[at] & 0xC0) == 0x80 {
        at -= 1;
    }
    at
}

fn random_boundary(rng: &mut Rng, bytes: &[u8]) -> usize {
    let at = rng.below(bytes.len() + 1);
    boundary(bytes, at)
}

fn insert(bytes: &[u8], at: usize, what: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len() + what.len());
    out.extend_from_slice(&bytes[..at]);
    out.extend_from_slice(what);
    out.extend_from_slice(&bytes[at..]);
    out
}

fn replace_all(bytes: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i..].starts_with(from) {
            out.extend_from_slice(to);
            i += from.len();
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    out
}

/// Starts of runs of bytes for which `class` holds (a digit run, an identifier).
fn run_starts(bytes: &[u8], class: impl Fn(u8) -> bool) -> Vec<usize> {
    (0..bytes.len())
        .filter(|&i| class(bytes[i]) && (i == 0 || !class(bytes[i - 1])))
        .collect()
}

fn run_end(bytes: &[u8], start: usize, class: impl Fn(u8) -> bool) -> usize {
    let mut end = start;
    while end < bytes.len() && class(bytes[end]) {
        end += 1;
    }
    end
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

fn is_number(b: u8) -> bool {
    b.is_ascii_digit() || b == b'_' || b == b'.'
}

const MUTATORS: &[&str] = &[
    "flip",
    "insert-byte",
    "insert-token",
    "delete",
    "splice",
    "duplicate",
    "nesting",
    "non-ascii",
    "huge-number",
    "invalid-utf8",
    "long-identifier",
    "long-line",
    "line-ends",
    "nul",
    "truncate",
    "lines",
    "field-value",
    "require",
];

/// One mutation by name; `None` when it does not apply or would exceed [`MAX_INPUT`].
fn mutate_once(rng: &mut Rng, corpus: &[Seed], bytes: &[u8], kind: &str) -> Option<Vec<u8>> {
    let out = match kind {
        "flip" => {
            let mut out = bytes.to_vec();
            if out.is_empty() {
                return None;
            }
            for _ in 0..1 + rng.below(8) {
                let at = rng.below(out.len());
                // Mostly ASCII-preserving flips; sometimes the high bit.
                let bit = if rng.chance(90) { rng.below(7) } else { 7 };
                out[at] ^= 1 << bit;
            }
            out
        }
        "insert-byte" => {
            let interesting = b"{}[]()\"=?<>%$/\\\n\t#.,-+*_0123456789aZ ";
            let mut out = bytes.to_vec();
            for _ in 0..1 + rng.below(4) {
                let byte = if rng.chance(80) {
                    *rng.pick(interesting)
                } else {
                    rng.below(128) as u8
                };
                let at = random_boundary(rng, &out);
                out.insert(at, byte);
            }
            out
        }
        "insert-token" => {
            let token = rng.pick(TOKENS).as_bytes();
            let at = random_boundary(rng, bytes);
            insert(bytes, at, token)
        }
        "delete" => {
            if bytes.is_empty() {
                return None;
            }
            let mut start = rng.below(bytes.len());
            let mut end = (start + 1 + rng.below(64)).min(bytes.len());
            if rng.chance(80) {
                start = boundary(bytes, start);
                end = boundary(bytes, end);
            }
            let mut out = bytes[..start].to_vec();
            out.extend_from_slice(&bytes[end..]);
            out
        }
        "splice" => {
            let other = &rng.pick(corpus).bytes;
            let a = random_boundary(rng, bytes);
            let b = random_boundary(rng, other);
            let mut out = bytes[..a].to_vec();
            out.extend_from_slice(&other[b..]);
            out
        }
        "duplicate" => {
            if bytes.is_empty() {
                return None;
            }
            let start = random_boundary(rng, bytes);
            let end = boundary(bytes, (start + 1 + rng.below(256)).min(bytes.len()));
            if end <= start {
                return None;
            }
            let slice = &bytes[start..end];
            let room = MAX_INPUT.saturating_sub(bytes.len()) / slice.len();
            let times = match rng.below(3) {
                0 => 2 + rng.below(8),
                1 => 10 + rng.below(200),
                _ => 200 + rng.below(5000),
            }
            .min(room);
            if times == 0 {
                return None;
            }
            let mut out = bytes[..end].to_vec();
            for _ in 0..times {
                out.extend_from_slice(slice);
            }
            out.extend_from_slice(&bytes[end..]);
            out
        }
        "nesting" => {
            let depth = *rng.pick(&[16, 63, 64, 65, 200, 5_000, 100_000]);
            let (open, close) = *rng.pick(&[("(", ")"), ("[", "]"), ("{", "}"), ("(", "]")]);
            let mut what = open.repeat(depth);
            if rng.chance(50) {
                let inner = *rng.pick(&["fits", "1", "gpu", "one_of [1, 2]", ""]);
                what.push_str(inner);
                what.push_str(&close.repeat(depth));
            }
            let at = random_boundary(rng, bytes);
            insert(bytes, at, what.as_bytes())
        }
        "non-ascii" => {
            let mut out = bytes.to_vec();
            for _ in 0..1 + rng.below(3) {
                let what = *rng.pick(NON_ASCII);
                // Often inside or right after an identifier, or as the issue's
                // "comment with a non-ASCII word, then a syntax error" shape.
                let idents = run_starts(&out, is_ident);
                let at = match rng.below(3) {
                    0 if !idents.is_empty() => {
                        let start = *rng.pick(&idents);
                        start + rng.below(run_end(&out, start, is_ident) - start + 1)
                    }
                    1 => {
                        let at = random_boundary(rng, &out);
                        let line = format!("// {what}\nx\n");
                        out = insert(&out, at, line.as_bytes());
                        continue;
                    }
                    _ => random_boundary(rng, &out),
                };
                out = insert(&out, at, what.as_bytes());
            }
            out
        }
        "huge-number" => {
            let number = rng.pick(HUGE_NUMBERS).as_bytes();
            let starts: Vec<usize> = run_starts(bytes, is_number)
                .into_iter()
                .filter(|&i| bytes[i].is_ascii_digit())
                .collect();
            if starts.is_empty() || rng.chance(10) {
                let at = random_boundary(rng, bytes);
                insert(bytes, at, number)
            } else {
                let start = *rng.pick(&starts);
                let end = run_end(bytes, start, is_number);
                let mut out = bytes[..start].to_vec();
                out.extend_from_slice(number);
                out.extend_from_slice(&bytes[end..]);
                out
            }
        }
        "invalid-utf8" => {
            let non_ascii: Vec<usize> = (0..bytes.len()).filter(|&i| bytes[i] >= 0x80).collect();
            if !non_ascii.is_empty() && rng.chance(30) {
                // Cut a multi-byte character in half.
                let mut out = bytes.to_vec();
                out.remove(*rng.pick(&non_ascii));
                out
            } else {
                let at = random_boundary(rng, bytes);
                let bad = *rng.pick(INVALID_UTF8);
                insert(bytes, at, bad)
            }
        }
        "long-identifier" => {
            let length = *rng.pick(&[255, 256, 4_096, 65_535, 65_536, 70_000]);
            let what = if rng.chance(80) {
                "a".repeat(length)
            } else {
                "é".repeat(length / 2)
            };
            let idents = run_starts(bytes, |b| b.is_ascii_alphabetic() || b == b'_');
            let at = if idents.is_empty() {
                random_boundary(rng, bytes)
            } else {
                *rng.pick(&idents)
            };
            insert(bytes, at, what.as_bytes())
        }
        "long-line" => match rng.below(3) {
            0 => replace_all(bytes, b"\n", b" "),
            1 => {
                let spaces = " ".repeat(*rng.pick(&[1_000, 65_536, 70_000]));
                let at = random_boundary(rng, bytes);
                insert(bytes, at, spaces.as_bytes())
            }
            _ => {
                let comment = format!("// {}\n", "x".repeat(70_000));
                let at = random_boundary(rng, bytes);
                insert(bytes, at, comment.as_bytes())
            }
        },
        "line-ends" => match rng.below(4) {
            0 => replace_all(bytes, b"\n", b"\r\n"),
            1 => replace_all(bytes, b"\n", b"\r"),
            2 => {
                let at = random_boundary(rng, bytes);
                insert(bytes, at, b"\r")
            }
            _ => {
                let mut out = Vec::with_capacity(bytes.len());
                for &b in bytes {
                    if b == b'\n' && rng.chance(50) {
                        let ends: [&[u8]; 3] = [b"\r\n", b"\r", b"\n\r"];
                        let end = *rng.pick(&ends);
                        out.extend_from_slice(end);
                    } else {
                        out.push(b);
                    }
                }
                out
            }
        },
        "nul" => {
            let mut out = bytes.to_vec();
            for _ in 0..1 + rng.below(4) {
                if !out.is_empty() && rng.chance(30) {
                    let at = rng.below(out.len());
                    out[at] = 0;
                } else {
                    let at = random_boundary(rng, &out);
                    out.insert(at, 0);
                }
            }
            out
        }
        "truncate" => {
            let at = rng.below(bytes.len() + 1);
            bytes[..at].to_vec()
        }
        "lines" => {
            let mut lines: Vec<&[u8]> = bytes.split(|b| *b == b'\n').collect();
            if lines.len() < 2 {
                return None;
            }
            let a = rng.below(lines.len());
            let b = rng.below(lines.len());
            match rng.below(3) {
                0 => lines.swap(a, b),
                1 => {
                    let line = lines[a];
                    lines.insert(b, line);
                }
                _ => {
                    lines.remove(a);
                }
            }
            lines.join(&b'\n')
        }
        "field-value" => {
            // A `name = value` line: another value (keeps most files parseable, so
            // evaluation, the solver and export get fuzzed too).
            let text = String::from_utf8_lossy(bytes);
            let mut starts = Vec::new();
            let mut offset = 0;
            for line in text.split_inclusive('\n') {
                if let Some(eq) = line.find(" = ")
                    && line[..eq]
                        .trim()
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_')
                    && !line.trim_start().starts_with("//")
                {
                    let value_start = offset + eq + 3;
                    let value_end = offset + line.trim_end().len();
                    if value_end > value_start {
                        starts.push((value_start, value_end));
                    }
                }
                offset += line.len();
            }
            if starts.is_empty() || std::str::from_utf8(bytes).is_err() {
                return None;
            }
            let (start, end) = *rng.pick(&starts);
            // Keep a trailing comment out of the replaced value.
            let end = text[start..end].find("//").map_or(end, |c| start + c);
            let mut out = bytes[..start].to_vec();
            out.extend_from_slice(rng.pick(VALUES).as_bytes());
            out.push(b' ');
            out.extend_from_slice(&bytes[end..]);
            out
        }
        "require" => {
            // A `require` inside a deployment block (or at the end of the file).
            let line = format!("\n    require {}\n", rng.pick(REQUIRES));
            let blocks: Vec<usize> = bytes
                .windows(b"deployment ".len())
                .enumerate()
                .filter(|(_, w)| *w == b"deployment ")
                .filter_map(|(i, _)| {
                    bytes[i..]
                        .iter()
                        .position(|b| *b == b'{')
                        .map(|p| i + p + 1)
                })
                .collect();
            let at = if blocks.is_empty() {
                bytes.len()
            } else {
                *rng.pick(&blocks)
            };
            insert(bytes, at, line.as_bytes())
        }
        other => panic!("no mutator `{other}`"),
    };
    (out.len() <= MAX_INPUT).then_some(out)
}

/// One fuzz input: a corpus file, with 1 to 4 mutations stacked (one input in 16 is a
/// corpus file as it is, one in 16 the splice of two).
fn generate(rng: &mut Rng, corpus: &[Seed]) -> (Vec<u8>, String) {
    let seed = rng.pick(corpus);
    let mut bytes = seed.bytes.clone();
    let mut recipe = seed.name.clone();
    if rng.chance(6) {
        return (bytes, recipe);
    }
    let count = 1 + rng.below(4);
    for _ in 0..count {
        let kind = *rng.pick(MUTATORS);
        if let Some(out) = mutate_once(rng, corpus, &bytes, kind) {
            bytes = out;
            recipe.push_str(" + ");
            recipe.push_str(kind);
        }
    }
    (bytes, recipe)
}

// ---------------------------------------------------------------------------------------
// Panics: a hook records the message and where it happened; the worker thread stays quiet
// (each failure is printed once, with its input's path).

thread_local! {
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
    static QUIET: Cell<bool> = const { Cell::new(false) };
}

fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let default = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            let payload = info.payload();
            let message = payload
                .downcast_ref::<&str>()
                .copied()
                .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
                .unwrap_or("(a non-string panic payload)");
            let location = info
                .location()
                .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()))
                .unwrap_or_else(|| "an unknown location".into());
            LAST_PANIC.with(|last| *last.borrow_mut() = Some(format!("{message} at {location}")));
            if !QUIET.with(Cell::get) {
                default(info);
            }
        }));
    });
}

fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    let recorded = LAST_PANIC.with(|last| last.borrow_mut().take());
    recorded.unwrap_or_else(|| {
        payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "(a non-string panic payload)".into())
    })
}

// ---------------------------------------------------------------------------------------
// Running one input.

/// What a regression file asks for beyond the invariants, from its `// expect:` lines.
#[derive(Clone, Debug, Default)]
struct Expect {
    /// `// expect: error`: at least one diagnostic is an error.
    error: bool,
    /// `// expect: export-refused ENGINE...`: `export` refuses every deployment for these
    /// engines (`vllm`, `ollama`, `llamacpp`).
    export_refused: Vec<String>,
    /// `// expect: no-output-of FILE`: no output (any format, explain, solve, export)
    /// contains a line of this file (beside the regression file).
    no_output: Vec<String>,
}

impl Expect {
    fn parse(bytes: &[u8], dir: &Path) -> Expect {
        let mut expect = Expect::default();
        for line in String::from_utf8_lossy(bytes).lines() {
            let Some(rest) = line.trim().strip_prefix("// expect:") else {
                continue;
            };
            let rest = rest.trim();
            if rest == "error" {
                expect.error = true;
            } else if let Some(engines) = rest.strip_prefix("export-refused") {
                for engine in engines.split_whitespace() {
                    assert!(
                        ["vllm", "ollama", "llamacpp"].contains(&engine),
                        "`// expect: export-refused`: unknown engine `{engine}`"
                    );
                    expect.export_refused.push(engine.to_string());
                }
            } else if let Some(file) = rest.strip_prefix("no-output-of ") {
                let secret = std::fs::read_to_string(dir.join(file.trim()))
                    .unwrap_or_else(|e| panic!("`// expect: no-output-of {file}`: {e}"));
                expect.no_output.extend(
                    secret
                        .lines()
                        .map(str::trim)
                        .filter(|l| !l.is_empty())
                        .map(String::from),
                );
            } else {
                panic!("unknown `// expect: {rest}`");
            }
        }
        expect
    }
}

struct Input {
    /// `<seed>-<n>`, or a regression's name.
    id: String,
    /// How it was made (corpus file + mutators), for the report.
    recipe: String,
    bytes: Vec<u8>,
    /// Loaded from this file with `Workspace::load` (imports read from disk) instead of
    /// `Workspace::set_file`.
    disk: Option<PathBuf>,
    expect: Expect,
}

#[derive(Clone, Debug)]
struct Problem {
    step: &'static str,
    what: String,
}

#[derive(Default)]
struct Outcome {
    elapsed: Duration,
    steps: Vec<(&'static str, Duration)>,
    problems: Vec<Problem>,
    /// Coverage: fmt accepted it (no syntax error), deployments, solutions, exports.
    formatted: bool,
    deployments: usize,
    solved: bool,
    exported: usize,
}

struct WorkerState {
    workspace: Workspace,
    scratch: PathBuf,
    /// The step running now, for naming the step of a hang.
    current: Arc<Mutex<&'static str>>,
}

fn mark(current: &Mutex<&'static str>, name: &'static str) {
    if let Ok(mut current) = current.lock() {
        *current = name;
    }
}

impl WorkerState {
    fn reset(&mut self) {
        self.workspace = Workspace::new();
    }
}

/// Runs `f`, catching a panic; records it as a problem of `step` and resets the
/// workspace (salsa's state after a panic is not trusted).
fn step<T>(
    state: &mut WorkerState,
    outcome: &mut Outcome,
    name: &'static str,
    f: impl FnOnce(&mut Workspace) -> T,
) -> Option<T> {
    mark(&state.current, name);
    let start = Instant::now();
    let result = panic::catch_unwind(AssertUnwindSafe(|| f(&mut state.workspace)));
    outcome.steps.push((name, start.elapsed()));
    match result {
        Ok(value) => Some(value),
        Err(payload) => {
            outcome.problems.push(Problem {
                step: name,
                what: format!("panicked: {}", panic_text(payload.as_ref())),
            });
            state.reset();
            None
        }
    }
}

fn has_import(text: &str) -> bool {
    text.contains("import")
}

/// The paths of the `import "..."` lines of a text (a plain scan, for deciding what may
/// be read from disk; the parser decides what is an import).
fn import_strings(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("import") {
        rest = &rest[at + "import".len()..];
        let trimmed = rest.trim_start();
        if let Some(body) = trimmed.strip_prefix('"') {
            let end = body.find(['"', '\n']).unwrap_or(body.len());
            out.push(body[..end].to_string());
        }
    }
    out
}

/// Whether every import of a regression file is a regular file inside the regressions
/// folder (else it is not loaded in-process: /dev/zero, /dev/stdin, FIFOs).
fn imports_stay_inside(text: &str, dir: &Path) -> bool {
    let Ok(dir) = dir.canonicalize() else {
        return false;
    };
    import_strings(text).iter().all(|import| {
        let path = dir.join(import);
        match (path.canonicalize(), std::fs::symlink_metadata(&path)) {
            (Ok(real), Ok(meta)) => real.starts_with(&dir) && meta.is_file(),
            // A missing file is an ordinary missing import.
            (Err(_), Err(_)) => !import.contains("..") && !Path::new(import).is_absolute(),
            _ => false,
        }
    })
}

const FIGURES_NEVER_NEGATIVE: &[&str] = &[
    "weights_memory",
    "kv_memory",
    "overhead_memory",
    "total_memory",
    "memory_per_gpu",
    "usable_memory",
    "decode_tps",
    "decode_tps_low",
    "decode_tps_high",
    "prefill_tps",
    "prefill_tps_low",
    "prefill_tps_high",
    "throughput",
    "required_throughput",
    "ttft",
    "cost_per_hour",
    "cost_per_mtok",
    "utilization",
    "load",
    "replicas_needed",
    "max_context",
];

/// A figure that prints a non-finite number (`$inf/h`, `NaN GiB`).
fn non_finite(value: &str) -> bool {
    value.split_whitespace().any(|token| {
        let token = token.trim_start_matches(['$', '-', '+', '~', '(']);
        let head: String = token
            .chars()
            .take_while(|c| c.is_ascii_alphabetic())
            .collect();
        matches!(head.as_str(), "inf" | "NaN" | "nan" | "infinity")
            && (head.len() == token.len() || !token[head.len()..].starts_with('_'))
    })
}

fn code_is_stable(code: &str) -> bool {
    if Code::parse(code).is_some() {
        return true;
    }
    code.strip_prefix("deploy::rule::").is_some_and(|name| {
        !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_')
    })
}

/// Checks one location: a span inside its file's text and on character boundaries, lines
/// and columns from 1, a `.deploy` file.
fn check_location(
    workspace: &Workspace,
    input_path: &Path,
    input_bytes: usize,
    invalid_utf8: bool,
    what: &str,
    location: &deployfit_host::diagnostics::Location,
    problems: &mut Vec<String>,
) {
    let span = location.span;
    let file = &location.file;
    if file.extension().is_none_or(|e| e != "deploy") {
        problems.push(format!(
            "{what} points into `{}`, which is not a .deploy file",
            file.display()
        ));
    }
    if location.line == 0 || location.column == 0 || location.end_line < location.line {
        problems.push(format!(
            "{what} has line/column {}:{}-{}:{}",
            location.line, location.column, location.end_line, location.end_column
        ));
    }
    if span.start > span.end {
        problems.push(format!("{what} has span {}..{}", span.start, span.end));
    }
    let (start, end) = (span.start as usize, span.end as usize);
    if file == input_path && invalid_utf8 {
        // Docs: byte offsets into the file (not into the text with U+FFFD replacements).
        if end > input_bytes {
            problems.push(format!(
                "{what} span {start}..{end} is past the end of the file ({input_bytes} bytes; invalid UTF-8)"
            ));
        }
        return;
    }
    let Some(text) = workspace.source(file) else {
        problems.push(format!(
            "{what} points into `{}`, whose text is unknown",
            file.display()
        ));
        return;
    };
    if end > text.len() {
        problems.push(format!(
            "{what} span {start}..{end} is past the end of `{}` ({} bytes)",
            file.display(),
            text.len()
        ));
    } else if !text.is_char_boundary(start) || !text.is_char_boundary(end) {
        problems.push(format!(
            "{what} span {start}..{end} is not on character boundaries of `{}`",
            file.display()
        ));
    }
}

fn check_diagnostics(
    workspace: &Workspace,
    input_path: &Path,
    input_bytes: usize,
    invalid_utf8: bool,
    diagnostics: &[Diagnostic],
) -> Vec<String> {
    let mut problems = Vec::new();
    for diag in diagnostics {
        let what = format!("`{}`", diag.code);
        if !code_is_stable(&diag.code) {
            problems.push(format!(
                "{what} is not a stable code (diagnostics/codes.rs)"
            ));
        }
        if diag.message.trim().is_empty() {
            problems.push(format!("{what} has no message"));
        }
        if diag.help.as_deref().is_none_or(|h| h.trim().is_empty()) {
            problems.push(format!("{what} has no help"));
        }
        check_location(
            workspace,
            input_path,
            input_bytes,
            invalid_utf8,
            &what,
            &diag.location,
            &mut problems,
        );
        for label in &diag.labels {
            check_location(
                workspace,
                input_path,
                input_bytes,
                invalid_utf8,
                &format!("a label of {what}"),
                &label.location,
                &mut problems,
            );
        }
    }
    problems
}

fn check_figures(summaries: &[deployfit_host::diagnostics::DeploymentSummary]) -> Vec<String> {
    let mut problems = Vec::new();
    for summary in summaries {
        for (name, value) in &summary.figures {
            if non_finite(value) {
                problems.push(format!(
                    "`{}`: figure `{name}` is `{value}` (not finite, and no diagnostic stops it)",
                    summary.name
                ));
            } else if FIGURES_NEVER_NEGATIVE.contains(&name.as_str())
                && value.trim_start_matches(['$', '~']).starts_with('-')
                && value
                    .trim_start_matches(['$', '~', '-'])
                    .chars()
                    .any(|c| c.is_ascii_digit() && c != '0')
            {
                problems.push(format!(
                    "`{}`: figure `{name}` is negative: `{value}`",
                    summary.name
                ));
            }
        }
    }
    problems
}

/// Every `uri` in a SARIF log is a valid URI reference (percent-encoded).
fn check_sarif_uris(value: &serde_json::Value, problems: &mut Vec<String>) {
    match value {
        serde_json::Value::Object(map) => {
            for (key, value) in map {
                if key == "uri"
                    && let Some(uri) = value.as_str()
                    && let Some(bad) = uri.chars().find(|c| {
                        !(c.is_ascii_alphanumeric() || "-._~:/?#[]@!$&'()*+,;=%".contains(*c))
                    })
                {
                    problems.push(format!(
                        "SARIF uri `{uri}` is not percent-encoded (`{bad}`)"
                    ));
                }
                check_sarif_uris(value, problems);
            }
        }
        serde_json::Value::Array(items) => {
            for item in items {
                check_sarif_uris(item, problems);
            }
        }
        _ => {}
    }
}

type Meaning = (Vec<String>, Vec<(String, BTreeMap<String, String>)>);

/// What fmt must preserve: the sorted diagnostic codes and each deployment's figures.
fn meaning(
    diagnostics: &[Diagnostic],
    summaries: &[deployfit_host::diagnostics::DeploymentSummary],
) -> Meaning {
    let mut codes: Vec<String> = diagnostics.iter().map(|d| d.code.clone()).collect();
    codes.sort();
    let figures = summaries
        .iter()
        .map(|s| (s.name.clone(), s.figures.clone()))
        .collect();
    (codes, figures)
}

fn describe_meaning_change(before: &Meaning, after: &Meaning) -> String {
    let mut out = String::new();
    if before.0 != after.0 {
        let _ = write!(out, "codes {:?} became {:?}", before.0, after.0);
    }
    if before.1 != after.1 {
        for ((name, a), (_, b)) in before.1.iter().zip(&after.1) {
            for (key, value) in a {
                if b.get(key) != Some(value) {
                    let _ = write!(
                        out,
                        "; `{name}`.{key} `{value}` became `{}`",
                        b.get(key).map(String::as_str).unwrap_or("(absent)")
                    );
                }
            }
            for key in b.keys().filter(|k| !a.contains_key(*k)) {
                let _ = write!(out, "; `{name}`.{key} appeared");
            }
        }
        if before.1.len() != after.1.len() {
            let _ = write!(
                out,
                "; {} deployments became {}",
                before.1.len(),
                after.1.len()
            );
        }
    }
    out
}

/// Offsets for the editor queries: spread over the text, around non-ASCII characters and
/// at diagnostics, all on character boundaries (as the language server converts them).
fn ide_offsets(text: &str, diagnostics: &[Diagnostic], path: &Path) -> Vec<usize> {
    let mut offsets = vec![0, text.len()];
    let boundaries: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
    let step = (boundaries.len() / 6).max(1);
    offsets.extend(boundaries.iter().step_by(step).copied());
    for (i, c) in text.char_indices().filter(|(_, c)| !c.is_ascii()).take(3) {
        offsets.push(i);
        offsets.push(i + c.len_utf8());
        if let Some(before) = text[..i].char_indices().next_back() {
            offsets.push(before.0);
        }
    }
    for diag in diagnostics
        .iter()
        .filter(|d| d.location.file == path)
        .take(3)
    {
        offsets.push(diag.location.span.start as usize);
        offsets.push(diag.location.span.end as usize);
    }
    offsets.retain(|&o| o <= text.len() && text.is_char_boundary(o));
    offsets.sort_unstable();
    offsets.dedup();
    offsets
}

/// Runs the editor queries of `deployfit_host::ide` and checks their spans.
#[allow(clippy::too_many_arguments)] // one call site; the inputs of one step
fn ide_checks(
    ws: &Workspace,
    file: deployfit_host::db::SourceFile,
    path: &Path,
    text: &str,
    offsets: &[usize],
    diag_spans: &[deployfit_host::span::Span],
    deployments: &[String],
    deadline: Instant,
    current: &Mutex<&'static str>,
) -> (Vec<String>, BTreeMap<&'static str, Duration>) {
    use deployfit_host::ide;
    let db: &dyn deployfit_host::db::Db = ws.db();
    let mut timings: BTreeMap<&'static str, Duration> = BTreeMap::new();
    let mut timed = |name: &'static str, since: Instant| {
        *timings.entry(name).or_default() += since.elapsed();
    };
    let mut problems = Vec::new();
    let mut refused = Vec::new();
    let mut span_in = |what: &str, file_path: &Path, start: usize, end: usize| {
        let source: Option<std::sync::Arc<str>> = if file_path == path {
            Some(std::sync::Arc::from(text))
        } else {
            ws.source(file_path)
        };
        let Some(source) = source else {
            problems.push(format!(
                "{what} points into `{}`, whose text is unknown",
                file_path.display()
            ));
            return;
        };
        if start > end
            || end > source.len()
            || !source.is_char_boundary(start)
            || !source.is_char_boundary(end)
        {
            problems.push(format!(
                "{what} span {start}..{end} is outside `{}` ({} bytes) or not on character boundaries",
                file_path.display(),
                source.len()
            ));
        }
    };
    mark(current, "ide:semantic_tokens");
    let t = Instant::now();
    let tokens = ide::semantic_tokens(db, file);
    timed("ide:semantic_tokens", t);
    for token in tokens {
        let start = token.start as usize;
        span_in("a semantic token", path, start, start + token.len as usize);
    }
    mark(current, "ide:inlay_hints");
    let t = Instant::now();
    let hints = ide::inlay_hints(db, file);
    timed("ide:inlay_hints", t);
    for hint in hints {
        let at = hint.offset as usize;
        span_in("an inlay hint", path, at, at);
    }
    mark(current, "ide:symbols");
    let t = Instant::now();
    let symbols = ide::symbols(db, file);
    timed("ide:symbols", t);
    for symbol in &symbols {
        span_in(
            "a symbol",
            path,
            symbol.span.start as usize,
            symbol.span.end as usize,
        );
        span_in(
            "a symbol name",
            path,
            symbol.name_span.start as usize,
            symbol.name_span.end as usize,
        );
    }
    mark(current, "ide:deployments");
    let t = Instant::now();
    let lenses = ide::deployments(db, file);
    timed("ide:deployments", t);
    for (_, span, _) in lenses {
        span_in(
            "a deployment lens",
            path,
            span.start as usize,
            span.end as usize,
        );
    }
    for span in diag_spans {
        mark(current, "ide:code_actions");
        let t = Instant::now();
        let fixes = ide::code_actions(db, file, *span);
        timed("ide:code_actions", t);
        for fix in fixes {
            for (edit, _) in &fix.edits {
                span_in(
                    "a quick fix edit",
                    path,
                    edit.start as usize,
                    edit.end as usize,
                );
            }
        }
    }
    for name in deployments.iter().take(5) {
        mark(current, "ide:explain_markdown");
        let t = Instant::now();
        let _ = ide::explain_markdown(db, file, name);
        let _ = ide::solve_summary(db, file, name);
        timed("ide:explain_solve_markdown", t);
    }
    // Also at the names of the first declarations: definition, references and rename
    // get a name to work on in every input that declares one.
    let mut offsets = offsets.to_vec();
    offsets.extend(symbols.iter().take(3).map(|s| s.name_span.start as usize));
    offsets.sort_unstable();
    offsets.dedup();
    for offset in offsets {
        if Instant::now() > deadline {
            // Already over the time bound (reported): stop spending CPU on it.
            break;
        }
        mark(current, "ide:hover");
        let t = Instant::now();
        let hover = ide::hover(db, file, offset);
        timed("ide:hover", t);
        if let Some(hover) = hover {
            span_in(
                "a hover",
                path,
                hover.span.start as usize,
                hover.span.end as usize,
            );
        }
        mark(current, "ide:completions");
        let t = Instant::now();
        let _ = ide::completions(db, file, offset);
        timed("ide:completions", t);
        mark(current, "ide:definition");
        let t = Instant::now();
        let definition = ide::definition(db, file, offset);
        timed("ide:definition", t);
        mark(current, "ide:references");
        let t = Instant::now();
        let references = ide::references(db, file, offset);
        timed("ide:references", t);
        let targets = definition.into_iter().chain(references);
        for target in targets {
            span_in(
                "a definition or reference",
                &target.path,
                target.span.start as usize,
                target.span.end as usize,
            );
        }
        mark(current, "ide:prepare_rename");
        let t = Instant::now();
        let prepared = ide::prepare_rename(db, file, offset);
        timed("ide:prepare_rename", t);
        if let Ok(span) = prepared {
            span_in(
                "a rename range",
                path,
                span.start as usize,
                span.end as usize,
            );
            mark(current, "ide:rename");
            let t = Instant::now();
            let renamed = ide::rename(db, file, offset, "renamed_by_fuzz");
            timed("ide:rename", t);
            if let Ok(edits) = renamed {
                for edit in edits {
                    span_in(
                        "a rename edit",
                        &edit.path,
                        edit.span.start as usize,
                        edit.span.end as usize,
                    );
                }
            }
            for bad in ["not", "deployment", "1abc", "a b", "", "é"] {
                if ide::rename(db, file, offset, bad).is_ok() {
                    refused.push(format!("rename to `{bad}` was accepted"));
                }
            }
        }
    }
    problems.extend(refused);
    problems.sort();
    problems.dedup();
    (problems, timings)
}

fn target_name(target: Target) -> &'static str {
    target.name()
}

fn time_bound(bytes: usize) -> Duration {
    TIME_BOUND + TIME_PER_64K * (bytes / (64 * 1024)) as u32
}

fn run_one(state: &mut WorkerState, input: &Input) -> Outcome {
    let started = Instant::now();
    let bound = time_bound(input.bytes.len());
    // Past this the remaining work is skipped (the input fails its bound anyway).
    let deadline = started + bound * TOTAL_FACTOR;
    let mut outcome = Outcome::default();
    let bytes_invalid = std::str::from_utf8(&input.bytes).is_err();
    let lossy = String::from_utf8_lossy(&input.bytes).into_owned();
    let from_disk = input.disk.is_some() || (bytes_invalid && !has_import(&lossy));
    // Whether the compiler saw the invalid bytes (and reports spans into them); an input
    // given to `set_file` is its lossy text, valid UTF-8.
    let invalid_utf8 = bytes_invalid && from_disk;

    // Load: regression files from disk (imports too); fuzzed text with `set_file`, except
    // invalid UTF-8 without imports, written to a scratch file and loaded, so that the
    // `invalid_utf8` path (and its spans) is the real one.
    let (path, loaded) = match &input.disk {
        Some(path) => {
            let path = path.clone();
            let file = step(state, &mut outcome, "load", |ws| ws.load(&path));
            (path, file.map(|r| r.map_err(|e| e.to_string())))
        }
        None if from_disk => {
            let path = state.scratch.join("input.deploy");
            std::fs::write(&path, &input.bytes).expect("write the scratch input");
            let file = step(state, &mut outcome, "load", |ws| ws.load(&path));
            (path, file.map(|r| r.map_err(|e| e.to_string())))
        }
        None => {
            let path = Path::new(FUZZ_DIR).join("input.deploy");
            let text = lossy.clone();
            let file = step(state, &mut outcome, "load", |ws| ws.set_file(&path, text));
            (path, file.map(Ok))
        }
    };
    let file = match loaded {
        Some(Ok(file)) => file,
        Some(Err(error)) => {
            outcome.problems.push(Problem {
                step: "load",
                what: format!("the input could not be loaded: {error}"),
            });
            outcome.elapsed = started.elapsed();
            return outcome;
        }
        // A panic, already recorded.
        None => {
            outcome.elapsed = started.elapsed();
            return outcome;
        }
    };
    // The path as the workspace stores it (normalized), for comparing with diagnostics.
    let stored_path = deployfit_host::db::normalize(&path);
    // The text the compiler sees (stdlib replacements aside).
    let text: String = state
        .workspace
        .source(&stored_path)
        .map(|t| t.to_string())
        .unwrap_or_else(|| lossy.clone());

    let checked = step(state, &mut outcome, "check", |ws| {
        (ws.check(file), ws.summaries(file))
    });
    let Some((diagnostics, summaries)) = checked else {
        outcome.elapsed = started.elapsed();
        return outcome;
    };
    outcome.deployments = summaries.len();
    for what in check_diagnostics(
        &state.workspace,
        &stored_path,
        input.bytes.len(),
        invalid_utf8,
        &diagnostics,
    ) {
        outcome.problems.push(Problem {
            step: "check",
            what,
        });
    }
    for what in check_figures(&summaries) {
        outcome.problems.push(Problem {
            step: "check",
            what,
        });
    }
    if input.expect.error && !diagnostics.iter().any(|d| d.severity == Severity::Error) {
        outcome.problems.push(Problem {
            step: "expect",
            what: format!(
                "expected an error diagnostic; got {:?}",
                diagnostics.iter().map(|d| &d.code).collect::<Vec<_>>()
            ),
        });
    }

    let mut outputs: Vec<(&'static str, String)> = Vec::new();
    for (name, format) in [
        ("render-human", OutputFormat::Human),
        ("render-json", OutputFormat::Json),
        ("render-github", OutputFormat::Github),
        ("render-sarif", OutputFormat::Sarif),
    ] {
        let rendered = step(state, &mut outcome, name, |ws| {
            let source = |p: &Path| ws.source(p);
            let report = Report {
                diagnostics: &diagnostics,
                summaries: &summaries,
                source: &source,
            };
            render::render(
                format,
                &report,
                1,
                HumanOptions {
                    color: false,
                    width: 100,
                    quiet: false,
                },
            )
        });
        let Some(rendered) = rendered else {
            continue;
        };
        if matches!(format, OutputFormat::Json | OutputFormat::Sarif) {
            match serde_json::from_str::<serde_json::Value>(&rendered) {
                Ok(value) => {
                    if matches!(format, OutputFormat::Sarif) {
                        let mut problems = Vec::new();
                        check_sarif_uris(&value, &mut problems);
                        problems.dedup();
                        for what in problems {
                            outcome.problems.push(Problem { step: name, what });
                        }
                    }
                }
                Err(e) => outcome.problems.push(Problem {
                    step: name,
                    what: format!("not JSON: {e}"),
                }),
            }
        }
        outputs.push((name, rendered));
    }

    // fmt: idempotent, and what it prints means the same (codes and figures).
    if !invalid_utf8 {
        let once = step(state, &mut outcome, "fmt", |_| fmt::format(&text));
        match once {
            Some(Ok(once)) => {
                outcome.formatted = true;
                match step(state, &mut outcome, "fmt-twice", |_| fmt::format(&once)) {
                    Some(Ok(twice)) if twice == once => {}
                    Some(Ok(_)) => outcome.problems.push(Problem {
                        step: "fmt-twice",
                        what: "fmt is not idempotent: fmt(fmt(x)) != fmt(x)".into(),
                    }),
                    Some(Err(e)) => outcome.problems.push(Problem {
                        step: "fmt-twice",
                        what: format!("fmt's own output does not parse: {}", e.message),
                    }),
                    None => {}
                }
                let before = meaning(&diagnostics, &summaries);
                let path = stored_path.clone();
                let reformatted = once.clone();
                let after = step(state, &mut outcome, "fmt-recheck", |ws| {
                    let file = ws.set_file(&path, reformatted);
                    let after = meaning(&ws.check(file), &ws.summaries(file));
                    // Put the original back for explain, solve and export.
                    ws.set_file(&path, text.clone());
                    after
                });
                if let Some(after) = after
                    && after != before
                {
                    outcome.problems.push(Problem {
                        step: "fmt-recheck",
                        what: format!(
                            "fmt changed the meaning: {}",
                            describe_meaning_change(&before, &after)
                        ),
                    });
                }
            }
            Some(Err(error)) => {
                let (start, end) = (error.span.start as usize, error.span.end as usize);
                if end > text.len() || !text.is_char_boundary(start) || !text.is_char_boundary(end)
                {
                    outcome.problems.push(Problem {
                        step: "fmt",
                        what: format!(
                            "fmt's error span {start}..{end} is outside the text or not on a character boundary"
                        ),
                    });
                }
                if !diagnostics
                    .iter()
                    .any(|d| d.code.starts_with("deploy::syntax::"))
                {
                    outcome.problems.push(Problem {
                        step: "fmt",
                        what: format!(
                            "fmt refused a file that check finds no syntax error in: {}",
                            error.message
                        ),
                    });
                }
            }
            None => {}
        }
        if outcome
            .problems
            .iter()
            .any(|p| p.what.starts_with("panicked"))
        {
            // The workspace was reset: load the input again for the remaining steps.
            let path = stored_path.clone();
            let text = text.clone();
            if step(state, &mut outcome, "reload", |ws| ws.set_file(&path, text)).is_none() {
                outcome.elapsed = started.elapsed();
                return outcome;
            }
        }
    }
    let file = match state.workspace.file(&stored_path) {
        Some(file) => file,
        None => {
            let path = stored_path.clone();
            let text = text.clone();
            match step(state, &mut outcome, "reload", |ws| ws.set_file(&path, text)) {
                Some(file) => file,
                None => {
                    outcome.elapsed = started.elapsed();
                    return outcome;
                }
            }
        }
    };

    let names: Vec<String> = summaries.iter().map(|s| s.name.clone()).collect();
    let offsets = ide_offsets(&text, &diagnostics, &stored_path);
    let diag_spans: Vec<deployfit_host::span::Span> = diagnostics
        .iter()
        .filter(|d| d.location.file == stored_path)
        .take(10)
        .map(|d| d.location.span)
        .collect();
    let current = Arc::clone(&state.current);
    if let Some(problems) = step(state, &mut outcome, "ide", |ws| {
        ide_checks(
            ws,
            file,
            &stored_path,
            &text,
            &offsets,
            &diag_spans,
            &names,
            deadline,
            &current,
        )
    }) {
        let (problems, timings) = problems;
        outcome.steps.extend(timings);
        for what in problems {
            outcome.problems.push(Problem { step: "ide", what });
        }
    }
    // Over the time bound already (reported below): the remaining steps would only add
    // CPU time to an input that fails anyway.
    let over_bound = |outcome: &Outcome| {
        outcome
            .steps
            .iter()
            .any(|(name, d)| *name != "ide" && *d > bound)
    };
    let run_rest = Instant::now() <= deadline && !over_bound(&outcome);
    if run_rest
        && let Some(json) = step(state, &mut outcome, "explain", |ws| {
            let explained = ws.explain(file);
            let ok: Vec<_> = explained.iter().filter_map(|r| r.as_ref().ok()).collect();
            serde_json::to_string_pretty(&ok).unwrap_or_default()
        })
    {
        outputs.push(("explain", json));
    }
    if run_rest
        && let Some((solved, json)) = step(state, &mut outcome, "solve", |ws| {
            let results = ws.solve(file, 3);
            let solved = results
                .iter()
                .any(|(_, r)| r.as_ref().is_ok_and(|s| !s.ranked.is_empty()));
            let json: Vec<serde_json::Value> = results
                .iter()
                .map(|(name, r)| match r {
                    Ok(solution) => serde_json::to_value(solution).unwrap_or_default(),
                    Err(message) => serde_json::json!({ "deployment": name, "error": message }),
                })
                .collect();
            (
                solved,
                serde_json::to_string_pretty(&json).unwrap_or_default(),
            )
        })
    {
        outcome.solved = solved;
        outputs.push(("solve", json));
    }
    let mut names = names;
    names.push("no_such_deployment".into());
    if run_rest
        && let Some(exports) = step(state, &mut outcome, "export", |ws| {
            let mut exports = Vec::new();
            for name in &names {
                for target in Target::ALL {
                    let result = ws.export(file, name, target);
                    exports.push((name.clone(), target, result));
                }
            }
            exports
        })
    {
        for (name, target, result) in exports {
            match result {
                Ok(text) => {
                    outcome.exported += 1;
                    if input
                        .expect
                        .export_refused
                        .iter()
                        .any(|e| e == target_name(target))
                        && name != "no_such_deployment"
                    {
                        outcome.problems.push(Problem {
                            step: "expect",
                            what: format!(
                                "expected export of `{name}` for {} to be refused; it printed:\n{}",
                                target_name(target),
                                text.lines().take(3).collect::<Vec<_>>().join("\n")
                            ),
                        });
                    }
                    outputs.push(("export", text));
                }
                Err(error) => {
                    if name == "no_such_deployment" && !error.usage {
                        outcome.problems.push(Problem {
                            step: "export",
                            what: format!(
                                "an unknown deployment is not a usage error: {}",
                                error.message
                            ),
                        });
                    }
                    outputs.push(("export", format!("{}\n{}", error.message, error.help)));
                }
            }
        }
    }
    for secret in &input.expect.no_output {
        for (name, text) in &outputs {
            if text.contains(secret.as_str()) {
                outcome.problems.push(Problem {
                    step: "expect",
                    what: format!("`{secret}` appears in the {name} output"),
                });
            }
        }
    }

    outcome.elapsed = started.elapsed();
    if over_bound(&outcome) || outcome.elapsed > bound * TOTAL_FACTOR {
        let mut slowest: Vec<(&str, Duration)> = outcome
            .steps
            .iter()
            .filter(|(name, _)| *name != "ide")
            .copied()
            .collect();
        slowest.sort_by_key(|(_, d)| std::cmp::Reverse(*d));
        let steps: Vec<String> = slowest
            .iter()
            .take(3)
            .map(|(name, d)| format!("{name} {:.2} s", d.as_secs_f64()))
            .collect();
        outcome.problems.push(Problem {
            step: "time",
            what: format!(
                "took {:.2} s (bound {:.0} s per step, {:.0} s in all, for {} bytes; slowest: {}){}",
                outcome.elapsed.as_secs_f64(),
                bound.as_secs_f64(),
                (bound * TOTAL_FACTOR).as_secs_f64(),
                input.bytes.len(),
                steps.join(", "),
                if run_rest {
                    ""
                } else {
                    "; the remaining steps were skipped"
                }
            ),
        });
    }
    outcome
}

// ---------------------------------------------------------------------------------------
// The runner: a worker thread per run (a fresh one after a hang), failures written out.

struct Worker {
    jobs: Sender<Arc<Input>>,
    results: Receiver<Outcome>,
    current: Arc<Mutex<&'static str>>,
}

fn spawn_worker(tag: &str) -> Worker {
    install_panic_hook();
    let (jobs, job_rx) = mpsc::channel::<Arc<Input>>();
    let (result_tx, results) = mpsc::channel();
    let scratch = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("fuzz-scratch")
        .join(format!("{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).expect("scratch folder");
    let current = Arc::new(Mutex::new("start"));
    let worker_current = Arc::clone(&current);
    std::thread::Builder::new()
        .name(format!("fuzz-worker-{tag}"))
        .stack_size(WORKER_STACK)
        .spawn(move || {
            QUIET.with(|q| q.set(true));
            let mut state = WorkerState {
                workspace: Workspace::new(),
                scratch,
                current: worker_current,
            };
            for input in job_rx {
                let outcome = run_one(&mut state, &input);
                if result_tx.send(outcome).is_err() {
                    break;
                }
            }
        })
        .expect("spawn the fuzz worker");
    Worker {
        jobs,
        results,
        current,
    }
}

struct Failure {
    id: String,
    recipe: String,
    saved: PathBuf,
    problems: Vec<Problem>,
}

struct Runner {
    tag: String,
    worker: Option<Worker>,
    executions: usize,
    total: Duration,
    /// The time of the inputs that passed (what a run costs once the bugs are fixed).
    total_passing: Duration,
    longest: (Duration, String),
    failures: Vec<Failure>,
    hangs: usize,
    /// Print every input's time and slowest steps (the regression runs).
    verbose: bool,
    formatted: usize,
    with_deployments: usize,
    solved: usize,
    exported: usize,
}

impl Runner {
    fn new(tag: &str) -> Runner {
        Runner {
            tag: tag.to_string(),
            worker: None,
            executions: 0,
            total: Duration::ZERO,
            total_passing: Duration::ZERO,
            longest: (Duration::ZERO, String::new()),
            failures: Vec::new(),
            hangs: 0,
            verbose: false,
            formatted: 0,
            with_deployments: 0,
            solved: 0,
            exported: 0,
        }
    }

    fn inflight_path(&self) -> PathBuf {
        failures_dir().join(format!("{}-inflight.deploy", self.tag))
    }

    fn should_stop(&self) -> bool {
        self.failures.len() >= MAX_FAILURES || self.hangs >= MAX_HANGS
    }

    fn run(&mut self, input: Input) {
        let _ = std::fs::create_dir_all(failures_dir());
        // Written before the run: a stack overflow or an abort cannot be caught, and
        // then this file is the input that killed the process.
        let _ = std::fs::write(self.inflight_path(), &input.bytes);
        let tag = self.tag.clone();
        let worker = self.worker.get_or_insert_with(|| spawn_worker(&tag));
        let input = Arc::new(input);
        worker.jobs.send(Arc::clone(&input)).expect("worker alive");
        let outcome = match worker.results.recv_timeout(HANG_LIMIT) {
            Ok(outcome) => outcome,
            Err(RecvTimeoutError::Timeout) => {
                let hung_in = worker.current.lock().map(|c| *c).unwrap_or("?");
                // The thread cannot be stopped: leave it and start a fresh worker.
                self.worker = None;
                self.hangs += 1;
                Outcome {
                    elapsed: HANG_LIMIT,
                    problems: vec![Problem {
                        step: "time",
                        what: format!(
                            "no answer after {} s (hang in {hung_in}); the worker thread was abandoned",
                            HANG_LIMIT.as_secs()
                        ),
                    }],
                    ..Outcome::default()
                }
            }
            Err(RecvTimeoutError::Disconnected) => {
                self.worker = None;
                Outcome {
                    problems: vec![Problem {
                        step: "worker",
                        what: "the worker thread died".into(),
                    }],
                    ..Outcome::default()
                }
            }
        };
        self.executions += 1;
        self.total += outcome.elapsed;
        if outcome.elapsed > self.longest.0 {
            self.longest = (
                outcome.elapsed,
                format!("{} ({} bytes)", input.id, input.bytes.len()),
            );
        }
        self.formatted += usize::from(outcome.formatted);
        self.with_deployments += usize::from(outcome.deployments > 0);
        self.solved += usize::from(outcome.solved);
        self.exported += outcome.exported;
        if self.verbose {
            let mut steps = outcome.steps.clone();
            steps.sort_by_key(|(_, d)| std::cmp::Reverse(*d));
            let slowest: Vec<String> = steps
                .iter()
                .take(2)
                .map(|(name, d)| format!("{name} {:.2} s", d.as_secs_f64()))
                .collect();
            eprintln!(
                "{}: {} bytes, {:.2} s ({})",
                input.id,
                input.bytes.len(),
                outcome.elapsed.as_secs_f64(),
                slowest.join(", ")
            );
        }
        if outcome.problems.is_empty() {
            self.total_passing += outcome.elapsed;
        } else {
            let saved = failures_dir().join(format!("{}.deploy", input.id.replace('/', "_")));
            let _ = std::fs::write(&saved, &input.bytes);
            eprintln!(
                "FUZZ FAILURE {} [{}]\n  input: {}",
                input.id,
                input.recipe,
                saved.display()
            );
            for problem in &outcome.problems {
                eprintln!("  {}: {}", problem.step, problem.what);
            }
            self.failures.push(Failure {
                id: input.id.clone(),
                recipe: input.recipe.clone(),
                saved,
                problems: outcome.problems,
            });
        }
    }

    /// Prints the figures and the failures grouped by cause; fails the test if any.
    fn finish(self) {
        let _ = std::fs::remove_file(self.inflight_path());
        eprintln!(
            "fuzz {}: {} executions in {:.1} s ({} passing inputs in {:.1} s); longest input {:.3} s: {}",
            self.tag,
            self.executions,
            self.total.as_secs_f64(),
            self.executions - self.failures.len(),
            self.total_passing.as_secs_f64(),
            self.longest.0.as_secs_f64(),
            self.longest.1
        );
        eprintln!(
            "fuzz {}: coverage: {} formatted (no syntax error), {} with deployments, {} solved, {} exports printed",
            self.tag, self.formatted, self.with_deployments, self.solved, self.exported
        );
        if self.failures.is_empty() {
            return;
        }
        // Group by step and cause (a panic's location, else the message without figures).
        let mut groups: BTreeMap<String, Vec<&Failure>> = BTreeMap::new();
        for failure in &self.failures {
            let mut keys: Vec<String> = failure
                .problems
                .iter()
                .map(|p| format!("{}: {}", p.step, cause(&p.what)))
                .collect();
            keys.sort();
            keys.dedup();
            for key in keys {
                groups.entry(key).or_default().push(failure);
            }
        }
        let mut report = format!(
            "{} of {} inputs failed ({} hangs); by cause:\n",
            self.failures.len(),
            self.executions,
            self.hangs
        );
        for (cause, failures) in &groups {
            let first = failures[0];
            let _ = writeln!(
                report,
                "- {cause}\n    {} input(s); first: {} [{}] {}",
                failures.len(),
                first.id,
                first.recipe,
                first.saved.display()
            );
        }
        panic!("{report}");
    }
}

/// A failure's cause for grouping: a panic's message and location without the numbers
/// that vary between inputs (byte indices, sizes).
fn cause(what: &str) -> String {
    let mut out = String::new();
    let mut last_digit = false;
    for c in what.chars().take(200) {
        if c.is_ascii_digit() {
            if !last_digit {
                out.push('N');
            }
            last_digit = true;
        } else {
            out.push(c);
            last_digit = false;
        }
    }
    // Keep panic locations exact: they identify the bug.
    if let Some(at) = what.rfind(" at ")
        && what.starts_with("panicked")
    {
        let location = &what[at..];
        let message: String = cause(&what[..at]).chars().take(80).collect();
        return format!("{message}{location}");
    }
    out.lines().next().unwrap_or("").to_string()
}

fn fuzz(tag: &str, seed: u64, start: usize, count: usize) {
    let corpus = corpus();
    let mut runner = Runner::new(tag);
    eprintln!(
        "fuzz {tag}: seed {seed:#x}, inputs {start}..{}, corpus of {} files; a crash leaves its input in {}",
        start + count,
        corpus.len(),
        runner.inflight_path().display()
    );
    for n in start..start + count {
        let mut rng = Rng::for_input(seed, n);
        let (bytes, recipe) = generate(&mut rng, &corpus);
        runner.run(Input {
            id: format!("{seed:x}-{n}"),
            recipe,
            bytes,
            disk: None,
            expect: Expect::default(),
        });
        if runner.should_stop() {
            eprintln!(
                "fuzz {tag}: stopping early after {} failures",
                runner.failures.len()
            );
            break;
        }
    }
    runner.finish();
}

fn env_number(name: &str) -> Option<u64> {
    let value = std::env::var(name).ok()?;
    let value = value.trim();
    let parsed = match value.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => value.parse(),
    };
    Some(parsed.unwrap_or_else(|_| panic!("{name}={value} is not a number")))
}

// ---------------------------------------------------------------------------------------
// Tests.

/// The CI slice: a fixed seed, a fixed count, deterministic.
#[test]
fn fuzz_ci_slice() {
    fuzz("ci", CI_SEED, 0, CI_COUNT);
}

/// A long run: `DEPLOYFIT_FUZZ_SEED` (default: from the clock, printed),
/// `DEPLOYFIT_FUZZ_COUNT` (default 10,000), `DEPLOYFIT_FUZZ_START` (default 0).
#[test]
#[ignore = "long; set DEPLOYFIT_FUZZ_SEED and DEPLOYFIT_FUZZ_COUNT"]
fn fuzz_long() {
    let seed = env_number("DEPLOYFIT_FUZZ_SEED").unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1)
    });
    let count = env_number("DEPLOYFIT_FUZZ_COUNT").unwrap_or(10_000) as usize;
    let start = env_number("DEPLOYFIT_FUZZ_START").unwrap_or(0) as usize;
    fuzz(&format!("long-{seed:x}"), seed, start, count);
}

/// Runs saved inputs again: `DEPLOYFIT_FUZZ_INPUT=target/fuzz-failures/x.deploy`, or a
/// folder (every `.deploy` file in it, e.g. all of `target/fuzz-failures/` after a fix).
#[test]
#[ignore = "set DEPLOYFIT_FUZZ_INPUT to a saved input or a folder of them"]
fn fuzz_reproduce() {
    let path = PathBuf::from(std::env::var("DEPLOYFIT_FUZZ_INPUT").expect("DEPLOYFIT_FUZZ_INPUT"));
    let mut paths = Vec::new();
    if path.is_dir() {
        deploy_files_under(&path, &mut paths);
        paths.retain(|p| !p.to_string_lossy().ends_with("-inflight.deploy"));
        paths.sort();
    } else {
        paths.push(path);
    }
    let mut runner = Runner::new("reproduce");
    runner.verbose = true;
    for path in paths {
        let bytes = std::fs::read(&path).expect("read the input");
        runner.run(Input {
            id: format!(
                "reproduce-{}",
                path.file_stem().unwrap_or_default().to_string_lossy()
            ),
            recipe: path.display().to_string(),
            bytes,
            disk: None,
            expect: Expect::default(),
        });
    }
    runner.finish();
}

fn regression_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    deploy_files_under(&regressions_dir(), &mut files);
    files.sort();
    files
}

/// Every regression file: no panic, the time bound, well-formed diagnostics, fmt
/// idempotent and meaning-preserving, and its `// expect:` lines.
#[test]
fn regressions_do_not_panic() {
    let files = regression_files();
    assert!(files.len() >= 20, "{} regression files", files.len());
    let mut runner = Runner::new("regressions");
    runner.verbose = true;
    for path in files {
        let bytes = std::fs::read(&path).unwrap();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let text = String::from_utf8_lossy(&bytes);
        let expect = Expect::parse(&bytes, &regressions_dir());
        // Imports that leave tests/fixtures/regressions (devices, FIFOs) are not read
        // in-process, where they could hang or exhaust memory:
        // `regressions_device_imports_through_binary` runs them in a child process.
        let disk = imports_stay_inside(&text, &regressions_dir()).then(|| path.clone());
        let recipe = if disk.is_some() {
            "loaded from disk".to_string()
        } else {
            "set_file: imports outside the fixtures folder are not read in-process".to_string()
        };
        runner.run(Input {
            id: format!("regression-{name}"),
            recipe,
            bytes,
            disk,
            expect,
        });
    }
    runner.finish();
}

/// The reproducers of issue #10 that are too large to keep as files.
fn generated_regressions() -> Vec<(&'static str, String)> {
    let deployment = |name: &str, extra: &str| {
        format!(
            "deployment {name} {{\n    model   = glm4_9b\n    quant   = Q4_K_M\n    context = 8k\n    engine  = llamacpp\n    gpu     = rtx_3090\n{extra}}}\n"
        )
    };
    let mut out = Vec::new();

    // A 1 MB file with ~1,800 diagnostics: the human format was quadratic in
    // diagnostics x file size (6.7 s, JSON 0.18 s).
    let mut big = String::from("// 1 MB, many diagnostics\n");
    let mut i = 0;
    while big.len() < 1024 * 1024 {
        if i % 4 == 0 {
            big.push_str(&deployment(
                &format!("d{i}"),
                "    require no_such_figure > 1\n",
            ));
        } else {
            let _ = writeln!(big, "// {} filler line {i}", "lorem ipsum ".repeat(20));
        }
        i += 1;
    }
    out.push(("one-megabyte-many-diagnostics", big));

    // 65k string interpolations (4.8 s).
    let interpolations = "{fits}".repeat(65_536);
    out.push((
        "sixty-five-thousand-interpolations",
        deployment(
            "interp",
            &format!("    require fits else \"{interpolations}\"\n"),
        ),
    ));

    // An `extends` chain of 8,000 links (over a minute).
    let mut chain = String::from("gpu g0 extends rtx_3090 {\n    price = $1/h\n}\n");
    for n in 1..8_000 {
        let _ = writeln!(chain, "gpu g{n} extends g{} {{}}", n - 1);
    }
    chain.push_str(&deployment("chained", "").replace("rtx_3090", "g7999"));
    out.push(("extends-chain-8000", chain));

    // A `one_of` of 30,000 values (3.4 s).
    let values: Vec<String> = (1..=30_000).map(|n| n.to_string()).collect();
    out.push((
        "one-of-30000",
        deployment("wide", "").replace(
            "context = 8k",
            &format!("context = one_of [{}]", values.join(", ")),
        ),
    ));

    // A field name of 70,000 characters: fmt panicked past 65,535.
    out.push((
        "field-name-70000",
        deployment("long_field", &format!("    {} = 1\n", "f".repeat(70_000))),
    ));

    // A label past column 65,535: the human renderer (miette) panicked.
    out.push((
        "label-past-column-65535",
        deployment(
            "wide_line",
            &format!(
                "    require fits and{} no_such_figure > 1\n",
                " ".repeat(70_000)
            ),
        ),
    ));

    // A name used 10,000 times (here in comments): find-references and rename looked up
    // each occurrence with a scan of the file (found by the fuzzer: 26 KB, 5.4 s in debug;
    // 183 KB, over 30 s).
    out.push((
        "references-to-a-name-used-10000-times",
        format!(
            "gpu mine extends rtx_3090 {{\n    price = $1/h\n}}\n{}{}",
            deployment("d", "").replace("rtx_3090", "mine"),
            "// mine mine mine mine mine mine mine mine mine mine\n".repeat(1_000)
        ),
    ));

    // A 70,000-character non-ASCII comment before a syntax error.
    out.push((
        "long-non-ascii-comment",
        format!("// {}\nx\n", "é".repeat(35_000)),
    ));

    // Nesting far past the limit, in expressions and in lists.
    out.push((
        "deep-nesting",
        deployment(
            "deep",
            &format!(
                "    require {}fits{}\n    quant = one_of {}Q4_K_M{}\n",
                "(".repeat(50_000),
                ")".repeat(50_000),
                "[".repeat(50_000),
                "]".repeat(50_000)
            ),
        ),
    ));
    out
}

#[test]
fn regressions_generated() {
    let mut runner = Runner::new("generated");
    runner.verbose = true;
    for (name, text) in generated_regressions() {
        runner.run(Input {
            id: format!("generated-{name}"),
            recipe: format!("generated {name}"),
            bytes: text.into_bytes(),
            disk: None,
            expect: Expect::default(),
        });
    }
    runner.finish();
}

/// Runs the real binary with a timeout and a memory limit (`ulimit -v`), stdin an open
/// pipe that is never written; kills it at the timeout.
fn run_bounded(dir: &Path, args: &[&str], timeout: Duration) -> Result<(i32, String), String> {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 4194304 && exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_deployfit"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("HF_HUB_OFFLINE", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start: {e}"))?;
    let _stdin = child.stdin.take();
    let mut stdout = child.stdout.take().expect("stdout");
    let mut stderr = child.stderr.take().expect("stderr");
    let out_reader = std::thread::spawn(move || {
        let mut text = Vec::new();
        let _ = stdout.read_to_end(&mut text);
        text
    });
    let err_reader = std::thread::spawn(move || {
        let mut text = Vec::new();
        let _ = stderr.read_to_end(&mut text);
        text
    });
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() > timeout => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "still running after {} s: killed",
                    timeout.as_secs()
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => return Err(format!("cannot wait: {e}")),
        }
    };
    let stdout = String::from_utf8_lossy(&out_reader.join().unwrap_or_default()).into_owned();
    let stderr = String::from_utf8_lossy(&err_reader.join().unwrap_or_default()).into_owned();
    match status.code() {
        Some(code) => Ok((code, stdout)),
        None => Err(format!(
            "killed by a signal ({status}); stderr: {}",
            stderr.lines().take(3).collect::<Vec<_>>().join(" | ")
        )),
    }
}

fn mkfifo(path: &Path) -> bool {
    Command::new("mkfifo")
        .arg(path)
        .status()
        .is_ok_and(|s| s.success())
}

/// Imports of `/dev/zero`, `/dev/stdin` and a FIFO, and a FIFO inside a checked folder:
/// through the real binary, each finishes in time, within 4 GiB, with exit code 1 and an
/// error diagnostic.
#[test]
fn regressions_device_imports_through_binary() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fuzz-device-imports");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("folder")).unwrap();
    for name in ["import-dev-zero", "import-dev-stdin", "import-fifo"] {
        std::fs::copy(
            regressions_dir().join(format!("{name}.deploy")),
            dir.join(format!("{name}.deploy")),
        )
        .unwrap();
    }
    let have_fifo = mkfifo(&dir.join("fifo.deploy")) && mkfifo(&dir.join("folder/pipe.deploy"));
    std::fs::write(
        dir.join("folder/ok.deploy"),
        std::fs::read(root().join("examples/01-glm4-chat.deploy")).unwrap(),
    )
    .unwrap();
    let mut cases = vec![
        ("import-dev-zero.deploy", true),
        ("import-dev-stdin.deploy", true),
    ];
    if have_fifo {
        cases.push(("import-fifo.deploy", true));
        cases.push(("folder", false));
    } else {
        eprintln!("mkfifo is not available: the FIFO cases are skipped");
    }
    let mut failures = Vec::new();
    for (target, expect_error) in cases {
        let started = Instant::now();
        match run_bounded(
            &dir,
            &["check", "--format", "json", target],
            Duration::from_secs(20),
        ) {
            Err(why) => failures.push(format!("check {target}: {why}")),
            Ok((code, stdout)) => {
                let errors = serde_json::from_str::<serde_json::Value>(&stdout)
                    .ok()
                    .and_then(|v| v["summary"]["errors"].as_u64());
                eprintln!(
                    "check {target}: exit {code}, {errors:?} errors, {:.2} s",
                    started.elapsed().as_secs_f64()
                );
                if !matches!(code, 0..=2) {
                    failures.push(format!("check {target}: exit code {code}"));
                } else if expect_error && (code != 1 || errors.unwrap_or(0) == 0) {
                    failures.push(format!(
                        "check {target}: exit {code} with {errors:?} errors; expected exit 1 and an error diagnostic on the import"
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_generator_is_deterministic_and_mutates() {
    let corpus = corpus();
    let first: Vec<(Vec<u8>, String)> = (0..50)
        .map(|n| generate(&mut Rng::for_input(7, n), &corpus))
        .collect();
    let again: Vec<(Vec<u8>, String)> = (0..50)
        .map(|n| generate(&mut Rng::for_input(7, n), &corpus))
        .collect();
    assert!(first == again, "same seed, same inputs");
    let mutated = first
        .iter()
        .filter(|(_, recipe)| recipe.contains(" + "))
        .count();
    assert!(mutated >= 40, "{mutated} of 50 inputs mutated");
    assert!(first.iter().all(|(bytes, _)| bytes.len() <= MAX_INPUT));
    // Every mutator applies to an ordinary file.
    let text = std::fs::read(root().join("examples/11-workload.deploy")).unwrap();
    let mut rng = Rng::new(1);
    for kind in MUTATORS {
        let changed = (0..20)
            .any(|_| mutate_once(&mut rng, &corpus, &text, kind).is_some_and(|out| out != text));
        assert!(changed, "mutator {kind} never changed the file");
    }
}

#[test]
fn the_invariant_checks_catch_what_they_should() {
    assert!(non_finite("$inf/h"));
    assert!(non_finite("NaN GiB"));
    assert!(non_finite("-inf ms"));
    assert!(!non_finite("inference_card"));
    assert!(!non_finite("$0.43/h"));
    assert!(code_is_stable("deploy::syntax::unexpected"));
    assert!(code_is_stable("deploy::rule::max_four_seqs"));
    assert!(!code_is_stable("deploy::made_up::thing"));
    assert_eq!(
        import_strings("import \"a.deploy\"\n// import\nimport  \"/dev/zero\""),
        vec!["a.deploy".to_string(), "/dev/zero".to_string()]
    );
    assert!(!imports_stay_inside(
        "import \"/dev/zero\"",
        &regressions_dir()
    ));
    assert!(!imports_stay_inside(
        "import \"../diagnostics/x.deploy\"",
        &regressions_dir()
    ));
    assert!(imports_stay_inside(
        "import \"secret.txt\"",
        &regressions_dir()
    ));
    assert!(imports_stay_inside(
        "import \"missing.deploy\"",
        &regressions_dir()
    ));
    let mut problems = Vec::new();
    check_sarif_uris(
        &serde_json::json!({"runs": [{"uri": "fuzz dir é/input.deploy"}, {"uri": "a%20b.deploy"}]}),
        &mut problems,
    );
    assert_eq!(problems.len(), 1, "{problems:?}");
    // A panic inside a step is caught, with its message and location.
    install_panic_hook();
    QUIET.with(|q| q.set(true));
    let mut state = WorkerState {
        workspace: Workspace::new(),
        scratch: PathBuf::new(),
        current: Arc::new(Mutex::new("start")),
    };
    let mut outcome = Outcome::default();
    let result: Option<()> = step(&mut state, &mut outcome, "check", |_| {
        let text = "naïve";
        let _ = &text[..3];
    });
    QUIET.with(|q| q.set(false));
    assert!(result.is_none());
    assert_eq!(outcome.problems.len(), 1);
    let what = &outcome.problems[0].what;
    assert!(
        what.starts_with("panicked: end byte index 3 is not a char boundary")
            && what.contains("tests/it/fuzz.rs:"),
        "{what}"
    );
    assert_eq!(
        cause(
            "panicked: byte index 12 is not a char boundary at compiler/src/syntax/errors.rs:40:9"
        ),
        "panicked: byte index N is not a char boundary at compiler/src/syntax/errors.rs:40:9"
    );
}

// ---------------------------------------------------------------------------------------
// `check --fix` (issue #32): fixes that would make a file worse are never applied.

/// The seed of the `--fix` slice, and its inputs.
const FIX_SEED: u64 = 0x0de9_10f1_2026_0032;
const FIX_COUNT: usize = 48;
/// Inputs of the slice also run through the binary (`check --fix` twice).
const FIX_THROUGH_BINARY: usize = 6;

/// A near-miss name, as a user mistypes one: a letter dropped, doubled or two swapped.
fn typo(rng: &mut Rng, word: &[u8]) -> Vec<u8> {
    let mut word = word.to_vec();
    let at = rng.below(word.len());
    match rng.below(3) {
        0 if word.len() > 2 => {
            word.remove(at);
        }
        1 if at + 1 < word.len() => word.swap(at, at + 1),
        _ => word.insert(at, word[at]),
    }
    word
}

/// An input for the `--fix` slice: a corpus file with 1 to 4 mistyped names (the fixes
/// offer the closest name: into `extends` cycles, duplicates ...), and now and then a
/// field given twice or a declaration copied.
fn fix_input(rng: &mut Rng, seeds: &[&Seed]) -> Vec<u8> {
    let mut bytes = rng.pick(seeds).bytes.clone();
    for _ in 0..1 + rng.below(4) {
        let starts: Vec<usize> = run_starts(&bytes, is_ident)
            .into_iter()
            .filter(|&s| !bytes[s].is_ascii_digit())
            .collect();
        if starts.is_empty() {
            break;
        }
        let start = *rng.pick(&starts);
        let end = run_end(&bytes, start, is_ident);
        let word = typo(rng, &bytes[start..end]);
        bytes.splice(start..end, word);
    }
    if rng.chance(30) {
        // A line given twice.
        let lines: Vec<usize> = (0..bytes.len()).filter(|&i| bytes[i] == b'\n').collect();
        if lines.len() > 2 {
            let i = rng.below(lines.len() - 1);
            let line = bytes[lines[i] + 1..=lines[i + 1]].to_vec();
            let at = lines[i + 1] + 1;
            bytes.splice(at..at, line);
        }
    }
    bytes
}

/// Errors, and each (code, severity) of errors and warnings, counted.
fn fix_tally(diagnostics: &[Diagnostic]) -> (usize, BTreeMap<(String, bool), usize>) {
    let mut counts = BTreeMap::new();
    let mut errors = 0;
    for d in diagnostics {
        let error = match d.severity {
            Severity::Error => true,
            Severity::Warning => false,
            _ => continue,
        };
        errors += usize::from(error);
        *counts.entry((d.code.clone(), error)).or_insert(0) += 1;
    }
    (errors, counts)
}

/// The oracle, over inputs from the corpus with mistyped names: `--fix` either leaves a
/// file as it is or gives it fewer errors and no new error or warning; a second `--fix`
/// changes nothing. In-process for every input, and through the binary (`check --fix`
/// twice, the file compared) for the first few that a fix changed.
#[test]
fn fix_never_makes_a_file_worse() {
    let corpus = corpus();
    // Files without holes or fleets (their checks run the solver, many times per input
    // here) and without imports (resolved against their own folders).
    let seeds: Vec<&Seed> = corpus
        .iter()
        .filter(|s| !s.name.starts_with("stdlib"))
        .filter(|s| {
            let text = String::from_utf8_lossy(&s.bytes);
            std::str::from_utf8(&s.bytes).is_ok()
                && !text.contains('?')
                && !text.contains("one_of")
                && !text.contains("fleet")
                && !text.contains("import")
                && text.len() < 8 * 1024
        })
        .collect();
    assert!(seeds.len() >= 20, "{} seeds", seeds.len());
    let dir = target_dir().join("fuzz-fix").join(FUZZ_DIR);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut changed = 0;
    let mut through_binary = 0;
    let mut problems = Vec::new();
    for n in 0..FIX_COUNT {
        let mut rng = Rng::for_input(FIX_SEED, n);
        let bytes = fix_input(&mut rng, &seeds);
        let Ok(text) = String::from_utf8(bytes) else {
            continue;
        };
        let path = dir.join(format!("fix-{n}.deploy"));
        let mut ws = Workspace::new();
        let file = ws.set_file(&path, text.clone());
        let before = ws.check(file);
        let fixed = ws.fix(file);
        let file = ws.set_file(&path, fixed.text.clone());
        let after = ws.check(file);
        let again = ws.fix(file);
        let (errors_before, codes_before) = fix_tally(&before);
        let (errors_after, codes_after) = fix_tally(&after);
        if fixed.text != text {
            changed += 1;
            if errors_after >= errors_before {
                problems.push(format!(
                    "input {n}: {errors_before} errors before the fix, {errors_after} after"
                ));
            }
            for (key, count) in &codes_after {
                if codes_before.get(key).is_none_or(|c| count > c) {
                    problems.push(format!("input {n}: the fix added {key:?}"));
                }
            }
        } else if !fixed.applied.is_empty() {
            problems.push(format!("input {n}: fixes reported, text unchanged"));
        }
        if again.text != fixed.text {
            problems.push(format!("input {n}: a second --fix changed the file again"));
        }
        if fixed.text != text && through_binary < FIX_THROUGH_BINARY {
            through_binary += 1;
            std::fs::write(&path, &text).unwrap();
            for round in 0..2 {
                let output = Command::new(env!("CARGO_BIN_EXE_deployfit"))
                    .args(["check", "--fix"])
                    .arg(&path)
                    .env("NO_COLOR", "1")
                    .env("HF_HUB_OFFLINE", "1")
                    .output()
                    .unwrap();
                assert_ne!(output.status.code(), Some(101), "input {n}");
                let on_disk = std::fs::read_to_string(&path).unwrap();
                if on_disk != fixed.text {
                    problems.push(format!(
                        "input {n}: `check --fix` (run {}) wrote another text than Workspace::fix",
                        round + 1
                    ));
                }
            }
        }
    }
    assert!(
        problems.is_empty(),
        "{} problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
    // The slice exercises fixes, not only files without any.
    assert!(changed >= 5, "only {changed} inputs were changed by --fix");
    assert!(through_binary >= 3, "{through_binary}");
}
