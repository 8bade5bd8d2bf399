//! Golden figures: every number ../shared/design/estimation.md's first section and the
//! seed pages print for GLM-4-9B-0414 and GLM-4-32B-0414, through the real binary.

use crate::common;

use common::{deployfit, json};
use serde_json::Value;

const GIB: f64 = (1u64 << 30) as f64;

/// The seed pages' eight formats, their bpw, and the weights and generic totals they
/// print (GiB, labelled "GB" on the pages) at 8k, 32k and 128k.
type SeedRow = (&'static str, f64, f64, [f64; 3]);

const GLM_9B: [SeedRow; 8] = [
    ("fp16", 16.00, 17.51, [19.49, 20.42, 24.17]),
    ("fp8", 8.50, 9.30, [11.03, 11.97, 15.72]),
    ("Q8_0", 8.50, 9.30, [11.03, 11.97, 15.72]),
    ("Q6_K", 6.56, 7.18, [8.85, 9.78, 13.53]),
    ("Q5_K_M", 5.69, 6.23, [7.87, 8.80, 12.55]),
    ("Q4_K_M", 4.85, 5.31, [6.92, 7.86, 11.61]),
    ("awq_int4", 4.50, 4.92, [6.52, 7.46, 11.21]),
    ("IQ4_XS", 4.25, 4.65, [6.24, 7.18, 10.93]),
];

const GLM_32B: [SeedRow; 8] = [
    ("fp16", 16.00, 59.60, [63.13, 64.56, 70.28]),
    ("fp8", 8.50, 31.66, [34.36, 35.79, 41.50]),
    ("Q8_0", 8.50, 31.66, [34.36, 35.79, 41.50]),
    ("Q6_K", 6.56, 24.44, [26.91, 28.34, 34.06]),
    ("Q5_K_M", 5.69, 21.20, [23.57, 25.00, 30.72]),
    ("Q4_K_M", 4.85, 18.07, [20.35, 21.78, 27.50]),
    ("awq_int4", 4.50, 16.76, [19.01, 20.44, 26.16]),
    ("IQ4_XS", 4.25, 15.83, [18.05, 19.48, 25.20]),
];

fn matrix(args: &[&str]) -> Value {
    let mut full = vec!["matrix"];
    full.extend_from_slice(args);
    let output = deployfit(&full);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    json(&output)
}

fn row<'a>(matrix: &'a Value, quant: &str) -> &'a Value {
    matrix["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["quant"] == quant)
        .unwrap_or_else(|| panic!("no row for {quant}"))
}

fn gib(bytes: &Value) -> f64 {
    bytes.as_i64().unwrap() as f64 / GIB
}

fn check_seed_matrix(model: &str, seed: &[SeedRow], extra: &[&str]) {
    let mut args = vec![
        model,
        "--engine",
        "generic",
        "--weights",
        "params",
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    let m = matrix(&args);
    assert_eq!(m["contexts"], serde_json::json!([8192, 32768, 131072]));
    for (quant, bpw, weights, totals) in seed {
        let r = row(&m, quant);
        assert_eq!(
            format!("{:.2}", r["bpw"].as_f64().unwrap()),
            format!("{bpw:.2}"),
            "{model} {quant} bpw"
        );
        assert_eq!(
            format!("{:.2}", gib(&r["weights_bytes"])),
            format!("{weights:.2}"),
            "{model} {quant} weights"
        );
        for (total, seed_total) in r["totals"].as_array().unwrap().iter().zip(totals) {
            let ours = gib(&total["low_bytes"]);
            let error = (ours - seed_total).abs() / seed_total;
            assert!(
                error < 0.03,
                "{model} {quant} @ {}: {ours:.2} vs seed {seed_total} ({:.1} %)",
                total["context"],
                error * 100.0
            );
        }
    }
}

#[test]
fn seed_000_matrix_glm_4_9b() {
    check_seed_matrix("glm4_9b", &GLM_9B, &[]);
}

#[test]
fn seed_001_matrix_glm_4_32b() {
    // The seed rounds the parameter count to 32e9; the fixture's model does the same.
    let output = common::deployfit(&[
        "matrix",
        "glm4_32b",
        "--engine",
        "generic",
        "--weights",
        "params",
        "--format",
        "json",
    ]);
    assert_eq!(output.status.code(), Some(0));
    let exact = json(&output);
    // With the exact parameter count the weights are 1.77 % larger than the seed's.
    assert_eq!(
        format!("{:.2}", gib(&row(&exact, "fp16")["weights_bytes"])),
        "60.66"
    );
    check_seed_matrix(
        "glm4_32b_seed",
        &GLM_32B,
        &["--file", "tests/fixtures/golden/seed-models.deploy"],
    );
}

fn explain() -> Vec<Value> {
    let output = deployfit(&[
        "explain",
        "tests/fixtures/golden/seed-models.deploy",
        "--format",
        "json",
    ]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    json(&output).as_array().unwrap().clone()
}

fn deployment<'a>(all: &'a [Value], name: &str) -> &'a Value {
    all.iter().find(|d| d["deployment"] == name).unwrap()
}

#[test]
fn raw_kv_cache_and_what_gqa_saves() {
    let all = explain();
    let glm9_8k = deployment(&all, "glm9_8k");
    assert_eq!(glm9_8k["kv_bytes"], 335_544_320);
    let glm9 = deployment(&all, "glm9_32k");
    assert_eq!(glm9["kv_bytes"], 1_342_177_280);
    assert_eq!(format!("{:.2}", gib(&glm9["mha_kv_bytes"])), "20.00");
    assert_eq!(
        format!("{:.1}", glm9["kv_saving"].as_f64().unwrap() * 100.0),
        "93.8"
    );
    let glm32 = deployment(&all, "glm32_32k");
    assert_eq!(format!("{:.2}", gib(&glm32["kv_bytes"])), "1.91");
    assert_eq!(format!("{:.2}", gib(&glm32["mha_kv_bytes"])), "45.75");
    assert_eq!(
        format!("{:.1}", glm32["kv_saving"].as_f64().unwrap() * 100.0),
        "95.8"
    );
}

#[test]
fn real_artifacts_beat_bpw() {
    // Seed 002: the exact files of GLM-4-9B-0414.
    let m = matrix(&["glm4_9b", "--format", "json"]);
    for (quant, bytes) in [
        ("Q4_K_M", 6_166_574_944_i64),
        ("Q5_K_M", 7_050_917_728),
        ("Q6_K", 8_266_643_296),
        ("Q8_0", 9_999_611_744),
        ("bf16", 18_800_558_080),
    ] {
        let r = row(&m, quant);
        assert_eq!(r["weights_bytes"], bytes, "{quant}");
        assert_eq!(r["weights_source"], "files");
    }
    let q4 = row(&m, "Q4_K_M");
    assert_eq!(format!("{:.2}", gib(&q4["weights_bytes"])), "5.74");
    // 5.25 effective bits per weight over 9,400,279,040 parameters.
    assert_eq!(
        format!("{:.2}", 6_166_574_944.0 * 8.0 / 9_400_279_040.0),
        "5.25"
    );
    let explained = explain();
    let glm9 = deployment(&explained, "glm9_32k");
    assert_eq!(glm9["weights_bytes"], 6_166_574_944_i64);
    assert_eq!(glm9["weights_source"], "files");
}

#[test]
fn seed_002_file_based_totals_fall_in_its_engine_range() {
    // Seed 002, GGUF Q4_K_M with llama.cpp or Ollama: 5.95–6.44 GiB at 2,048 tokens,
    // 6.18–6.69 at 8,192, 7.12–7.70 at 32,768. BF16 safetensors with vLLM or SGLang at
    // 8,192: 18.45–20.33. Ollama's totals are its own estimate (placement = ollama): inside
    // at 2k, knowingly above at 8k and 32k, where its fallback graph for an architecture
    // it has no formula for (`glm4`) grows with the context (docs/estimation.md).
    let ollama = matrix(&[
        "glm4_9b",
        "--contexts",
        "2k,8k,32k",
        "--engine",
        "ollama",
        "--format",
        "json",
    ]);
    let totals: Vec<f64> = row(&ollama, "Q4_K_M")["totals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| gib(&t["low_bytes"]))
        .collect();
    assert!(
        (5.95..=6.44).contains(&totals[0]),
        "ollama @ 2k: {:.2}",
        totals[0]
    );
    // The graph at 32k: 16 (heads / kv_heads) × 1.25 GiB of KV / 6 = 3.33 GiB.
    assert!(
        totals[1] > 6.69 && totals[2] > totals[1] + 3.0,
        "{totals:?}"
    );
    for engine in ["llamacpp"] {
        let gguf = matrix(&[
            "glm4_9b",
            "--contexts",
            "2k,8k,32k",
            "--engine",
            engine,
            "--format",
            "json",
        ]);
        let q4 = row(&gguf, "Q4_K_M");
        for (total, (low, high)) in
            q4["totals"]
                .as_array()
                .unwrap()
                .iter()
                .zip([(5.95, 6.44), (6.18, 6.69), (7.12, 7.70)])
        {
            let ours = gib(&total["low_bytes"]);
            assert!(
                (low..=high).contains(&ours),
                "{engine} @ {}: {ours:.2} outside {low}–{high}",
                total["context"]
            );
        }
    }
    // SGLang keeps the seed-derived overhead and lands inside the range. vLLM's overhead
    // is fitted to 37 real vLLM 0.19 startup logs (docs/calibration-vllm.md): 0.59 GiB +
    // 14 kB per vocabulary entry, 2.59 GiB for GLM-4's 151,552 tokens, so the total sits
    // 0.08 GiB (0.4 %) above the seed's upper bound: a documented, measured difference.
    let sglang = matrix(&[
        "glm4_9b",
        "--contexts",
        "8k",
        "--engine",
        "sglang",
        "--format",
        "json",
    ]);
    let total = gib(&row(&sglang, "bf16")["totals"][0]["low_bytes"]);
    assert!((18.45..=20.33).contains(&total), "sglang: {total:.2}");
    let vllm = matrix(&[
        "glm4_9b",
        "--contexts",
        "8k",
        "--engine",
        "vllm",
        "--format",
        "json",
    ]);
    let total = gib(&row(&vllm, "bf16")["totals"][0]["low_bytes"]);
    assert_eq!(format!("{total:.2}"), "20.41");
}
