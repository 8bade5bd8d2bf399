//! Real-world decode: the decode speeds of tests/fixtures/calibration/other_tps.csv (a
//! verbatim copy of ../shared/calibration/other_tps.csv: llama.cpp benches on GeForce and
//! Radeon cards, and a serving sweep on two H100s whose engine the source does not name),
//! each written as the deployment a user would write for it and predicted through the real
//! binary (`deployfit explain --format json`). Nothing here is fitted on these rows.
//!
//! The row → deployment mapping is the table below; where the source leaves a fact out, the
//! deployment leaves it out too, so the catalog's default decides: no engine line where the
//! engine is not stated (the generic engine), the model's published dtype (BF16) where a
//! serving row states no format. Where a llama.cpp row states no format, Q4_K_M, the format
//! the same README states for its other rows. docs/calibration-speed.md ("Real-world decode through the binary")
//! prints the table this test prints.

use crate::common;

use common::{deployfit_in, json, scratch};
use serde_json::Value;
use std::collections::HashMap;
use std::fmt::Write as _;

/// Device (lower-cased substring) → catalog GPU; the first match wins.
const GPUS: &[(&str, &str)] = &[
    // The source says "H100" and nothing of the variant: the SXM5 part, which the
    // tensor-parallel pair implies (NVLink).
    ("h100", "h100_sxm5"),
    ("rtx 2080 ti", "rtx_2080_ti"),
    ("rtx 2080", "rtx_2080"),
    ("rtx 3080 ti", "rtx_3080_ti"),
    ("rtx 4090", "rtx_4090"),
    ("radeon ai pro r9700", "radeon_ai_pro_r9700"),
];

/// Model (lower-cased) → what the deployment names: a catalog model, or a Hugging Face id
/// (quoted) that the registry resolves.
const MODELS: &[(&str, &str)] = &[
    ("qwen2.5-72b-instruct", "qwen2_5_72b"),
    ("meta-llama-3.1-8b-instruct", "llama_3_1_8b"),
    // Llama-3-8B has Llama-3.1-8B's dimensions (32 layers, 4096/14336, 32/8 heads, vocab
    // 128,256).
    ("llama-3-8b", "llama_3_1_8b"),
    ("llama-3.2-3b-instruct", "llama_3_2_3b"),
    // DeepSeek-R1-Distill-Qwen-14B is a Qwen2.5-14B fine-tune (same Qwen2 dimensions).
    ("deepseek-r1-distill-qwen-14b", "qwen2_5_14b"),
    ("qwen3-8b", "qwen3_8b"),
    ("qwen3-4b", "\"Qwen/Qwen3-4B\""),
    ("gpt-oss-20b", "gpt_oss_20b"),
];

type Row = HashMap<String, String>;

fn rows() -> Vec<Row> {
    common::calibration_table("other_tps.csv", "source")
}

/// What a row measured.
#[derive(Clone, Copy, PartialEq)]
enum Quantity {
    /// Tokens per second per sequence.
    Decode,
    /// Seconds to the first token of one request (report only: the acceptance is on decode).
    FirstToken,
}

/// One measured speed, as a deployment.
struct Case {
    index: usize,
    label: String,
    quantity: Quantity,
    measured: f64,
    deployment: String,
}

/// The deployment a row describes, or why it has none.
fn case(index: usize, row: &Row) -> Result<Option<Case>, String> {
    let metric = row["metric"].as_str();
    let value: f64 = row["value"].trim().parse().map_err(|_| "no value")?;
    // Decode speeds per sequence, and one request's first token; prompt speeds are left out
    // (the serving sweep's are prompt / TTFT, the same figures again).
    let (quantity, measured) = match metric {
        "decode_tps" | "decode_tps_per_user" | "avg decode tok/s (3 runs)" => {
            (Quantity::Decode, value)
        }
        "tpot_ms" => (Quantity::Decode, 1000.0 / value),
        "ttft_ms" => (Quantity::FirstToken, value / 1000.0),
        _ => return Ok(None),
    };
    let device = row["device"].as_str();
    let gpu = common::first_match(GPUS, device).ok_or("GPU not in the catalog")?;
    let count: u64 = device
        .split_once("x ")
        .and_then(|(n, _)| n.trim().parse().ok())
        .unwrap_or(1);
    let model = common::first_match(MODELS, &row["model"])
        .ok_or("model in neither the catalog nor the registry")?;
    let engine = row["engine"].to_lowercase();
    let llamacpp = engine.starts_with("llama.cpp");
    let quant = row["quant"].to_lowercase();
    let quant = if quant.starts_with("q4_k") {
        "Q4_K_M"
    } else if quant.contains("q6_k") {
        "Q6_K"
    } else if quant.is_empty() && !llamacpp {
        "bf16"
    } else if row["model"].to_lowercase().contains("gpt-oss") {
        // gpt-oss's GGUF keeps its experts in MXFP4, as released (llama.cpp's MXFP4_MOE).
        "mxfp4"
    } else if quant.starts_with("(not stated") {
        "Q4_K_M"
    } else {
        return Err(format!("format `{quant}` not mapped"));
    };
    // A serving sweep's prompt and output lengths, one request at a time; a llama.cpp bench
    // decodes 128 tokens (tg128) or at the context it states.
    let ctx = row["ctx"].as_str();
    let length = |key: &str| {
        ctx.split_whitespace()
            .find_map(|w| w.strip_prefix(key))
            .and_then(|n| n.parse::<u64>().ok())
    };
    let mut text = format!(
        "deployment row_{index} {{\n    model = {model}\n    quant = {quant}\n    gpu = {gpu}\n    count = {count}\n"
    );
    if llamacpp {
        text.push_str("    engine = llamacpp\n");
    }
    match (length("ISL="), length("OSL=")) {
        (Some(prompt), Some(output)) => {
            let _ = write!(
                text,
                "    context = {}\n    seqs = 1\n    workload {{ prompt = {prompt}; output = {output} }}\n",
                prompt + output
            );
        }
        _ => {
            let context = ctx
                .strip_prefix("ctx ")
                .and_then(|n| n.trim().parse::<u64>().ok())
                .unwrap_or(512);
            let _ = writeln!(text, "    context = {context}");
        }
    }
    text.push_str("}\n");
    Ok(Some(Case {
        index,
        label: format!(
            "{} | {} | {} | {}",
            truncate(device, 30),
            truncate(&row["model"], 28),
            truncate(&row["engine"], 24),
            metric
        ),
        quantity,
        measured,
        deployment: text,
    }))
}

fn truncate(text: &str, chars: usize) -> String {
    text.chars().take(chars).collect()
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

#[test]
fn real_world_decode() {
    let mut cases = Vec::new();
    let mut skipped: Vec<(usize, String)> = Vec::new();
    for (n, row) in rows().iter().enumerate() {
        match case(n + 2, row) {
            Ok(Some(c)) => cases.push(c),
            Ok(None) => {}
            Err(why) => skipped.push((n + 2, why)),
        }
    }
    let dir = scratch("real-world-decode");
    // A comment with non-ASCII text, as a user's file has.
    let mut text = String::from("// Décodage mesuré — other_tps.csv, ligne par ligne\n");
    for c in &cases {
        text.push_str(&c.deployment);
    }
    std::fs::write(dir.join("decode.deploy"), &text).unwrap();
    let output = deployfit_in(&dir, &["explain", "decode.deploy", "--format", "json"]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let explained = json(&output);
    let by_name: HashMap<&str, &Value> = explained
        .as_array()
        .expect("a list of deployments")
        .iter()
        .map(|d| (d["deployment"].as_str().unwrap(), d))
        .collect();
    let mut decode = Summary::default();
    let mut first_token = Summary::default();
    for quantity in [Quantity::Decode, Quantity::FirstToken] {
        let (title, field, summary) = match quantity {
            Quantity::Decode => ("decode, tok/s per sequence", "decode_tps", &mut decode),
            Quantity::FirstToken => ("one request's first token, s", "ttft_s", &mut first_token),
        };
        println!("\nReal-world {title} (error = predicted / measured - 1):\n");
        for c in cases.iter().filter(|c| c.quantity == quantity) {
            let d = by_name[format!("row_{}", c.index).as_str()];
            let predicted = d[field]
                .as_f64()
                .unwrap_or_else(|| panic!("{field}: {d:#}"));
            let (low, high) = (
                d[format!("{field}_low")].as_f64().unwrap_or(predicted),
                d[format!("{field}_high")].as_f64().unwrap_or(predicted),
            );
            let error = (predicted / c.measured - 1.0) * 100.0;
            let within = (low..=high).contains(&c.measured);
            summary.inside += usize::from(within);
            summary.errors.push(error.abs());
            println!(
                "{:>3}  {:<118} {:>8.3} {:>8.3} {:>+7.1}% {}",
                c.index,
                c.label,
                c.measured,
                predicted,
                error,
                if within { "in" } else { "out" }
            );
        }
    }
    for (index, why) in &skipped {
        println!("{index:>3}  not mapped: {why}");
    }
    let (count, median_error, worst, inside) = decode.report("decode");
    let (ttft_count, ttft_median, _, _) = first_token.report("first token (report only)");
    // 28 of the 29 decode rows map: Ministral-8B-2410 is in neither the catalog nor the
    // registry. Regression bounds just above what the model met when they were written:
    // median 8.6 % (32.8 % when the generic engine took llama.cpp's fit on the H100s: 21.7
    // tok/s against 32.4), worst 34.1 % (Llama-3.2-3B on the RTX 4090: llama.cpp's fitted
    // fixed cost per step, 2.9 ms per 32 layers, is more than this newer build pays), 23 of
    // 28 inside. gpt-oss-20b's MXFP4 GGUF: -19.4 % on the RTX 4090, +0.2 % on the R9700.
    assert_eq!(count, 28, "{skipped:?}");
    assert!(median_error <= 10.0, "median |error| {median_error:.1} %");
    assert!(worst <= 36.0, "worst |error| {worst:.1} %");
    assert!(inside >= 21, "{inside} of {count} inside the printed range");
    // The serving sweep's seven first tokens (ISL 128 to 8192 on two H100s).
    assert_eq!(ttft_count, 7);
    assert!(
        ttft_median <= TTFT_BOUND,
        "first token: median |error| {ttft_median:.1} %"
    );
}

/// The regression bound on the first tokens' median |error| (report only otherwise).
const TTFT_BOUND: f64 = 12.0;

/// Absolute percentage errors and how many measurements the printed range held.
#[derive(Default)]
struct Summary {
    errors: Vec<f64>,
    inside: usize,
}

impl Summary {
    /// Prints and returns the count, median and worst |error| and the count inside.
    fn report(&self, what: &str) -> (usize, f64, f64, usize) {
        let count = self.errors.len();
        let median_error = median(self.errors.clone());
        let worst = self.errors.iter().copied().fold(0.0, f64::max);
        println!(
            "real-world {what}: {count} rows, |error| median {median_error:.1} %, worst {worst:.1} %, {} inside the printed range",
            self.inside
        );
        (count, median_error, worst, self.inside)
    }
}
