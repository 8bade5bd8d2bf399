//! Calibration against real vLLM startup logs: every usable row of
//! tests/fixtures/calibration/vllm_logs.csv (a verbatim copy of
//! ../shared/calibration/vllm_logs.csv, so that a clean clone can run this test) becomes one
//! deployment, `deployfit explain --format json` runs once over all of them through the real
//! binary, and the predicted weights per GPU and KV-cache token capacity are compared with what
//! vLLM printed. docs/calibration-vllm.md is the analysis behind the vLLM engine's constants; the
//! mapping below is its mapping table.
//!
//! The bounds at the end are regression bounds, set just above the figures the model met when
//! they were written: a change that makes the vLLM estimate worse fails here.

use crate::common;

use common::{deployfit_in, json, scratch};
use serde_json::Value;
use std::collections::HashMap;
use std::fmt::Write as _;

const GIB: f64 = (1u64 << 30) as f64;

/// Logged model id (lower-cased substring) → catalog model, as docs/calibration-vllm.md's
/// mapping table. The first match wins. 49 of the 65 rows map; of the rest, eight rows on
/// gemma-2-2b, Granite, Llama-4-Scout, phi-2, Kimi-VL and Qwen2.5-0.5B are read from the
/// registry (`REGISTRY`), and Llama-3.2-Vision, Llama-2, GLM-4-9B-Chat, Gemma 4, Qwen3.6/3.8
/// and Qwen3-4B are in neither or lack the GPU's memory (tests/it/models.rs checks Qwen3.6/3.8
/// against their logs).
const MAPPING: &[(&str, &str)] = &[
    // Llama-3.3-70B reuses the Llama-3.1-70B architecture (80 layers, 8 KV heads, vocab 128256).
    ("llama-3.3-70b", "llama_3_1_70b"),
    ("llama-3.1-70b", "llama_3_1_70b"),
    ("llama-3.1-405b", "llama_3_1_405b"),
    ("llama-3.1-8b", "llama_3_1_8b"),
    // Llama-3-8B has Llama-3.1-8B's dims (32 L, 4096/14336, 32/8 heads, vocab 128256); only the
    // RoPE scaling and the context differ.
    ("meta-llama-3-8b", "llama_3_1_8b"),
    // Instruct and quantized (fp8-dynamic, w8a8, bnb-4bit) variants of Qwen2.5-7B.
    ("qwen2.5-7b-instruct", "qwen2_5_7b"),
    // QwQ-32B is a Qwen2.5-32B fine-tune (same Qwen2 dims).
    ("qwq-32b", "qwen2_5_32b"),
    // Kimi-Dev-72B is a Qwen2.5-72B fine-tune (the doc's KV ratios and weights confirm the dims).
    ("kimi-dev-72b", "qwen2_5_72b"),
    ("qwen3-30b-a3b", "qwen3_30b_a3b"),
    ("qwen3-235b-a22b", "qwen3_235b_a22b"),
    ("qwen/qwen3-8b", "qwen3_8b"),
    ("mixtral-8x7b", "mixtral_8x7b"),
    // Mistral-Small-3.1 is Mistral-Small-3 (2501)'s text decoder plus a vision encoder: the KV
    // dims are identical, the logged weights include the vision tower.
    ("mistral-small-3.1-24b", "mistral_small_24b"),
    ("gemma-2-27b", "gemma_2_27b"),
    // gemma-3 -it checkpoints: the -pt text decoder plus the SigLIP vision tower, which the
    // catalog's params exclude (so the weights are under-predicted).
    ("gemma-3-4b-it", "gemma_3_4b"),
    ("gemma-3-12b-it", "gemma_3_12b"),
    ("gemma-3-27b-it", "gemma_3_27b"),
];

/// Logged model id (lower-cased substring) → Hugging Face id in the bundled registry, for the
/// rows on models outside the catalog: they run through the registry as a user who names
/// the model by id gets it, and are reported apart from the catalog rows (their bounds are
/// at the end of `vllm_startup_logs`). Llama-3.2-11B-Vision (row 49) is left out: its base
/// checkpoint is not in the registry, and its V0 run profiled the vision encoder (36.6 GiB of
/// activations), which the engine model does not.
const REGISTRY: &[(&str, &str)] = &[
    ("gemma-2-2b-it", "google/gemma-2-2b-it"),
    (
        "granite-3.1-2b-instruct",
        "ibm-granite/granite-3.1-2b-instruct",
    ),
    (
        "granite-3.1-8b-instruct",
        "ibm-granite/granite-3.1-8b-instruct",
    ),
    (
        "llama-4-scout-17b-16e-instruct",
        "meta-llama/Llama-4-Scout-17B-16E-Instruct",
    ),
    ("microsoft/phi-2", "microsoft/phi-2"),
    ("kimi-vl-a3b-instruct", "moonshotai/Kimi-VL-A3B-Instruct"),
    ("qwen2.5-0.5b-instruct", "Gensyn/Qwen2.5-0.5B-Instruct"),
];

fn registry_id(model: &str) -> Option<&'static str> {
    common::first_match(REGISTRY, model)
}

fn catalog_name(model: &str) -> Option<&'static str> {
    common::first_match(MAPPING, model)
}

/// One CSV row, by column name.
type Row = HashMap<String, String>;

fn load_rows() -> Vec<Row> {
    common::calibration_table("vllm_logs.csv", "source")
}

fn number(row: &Row, column: &str) -> Option<f64> {
    row[column].trim().parse().ok()
}

/// The pipeline-parallel size the notes give (`pp=N` or `pipeline_parallel_size=N`), else 1.
fn pipeline_parallel(notes: &str) -> u64 {
    for key in ["pipeline_parallel_size=", "pp="] {
        if let Some(at) = notes.find(key) {
            let digits: String = notes[at + key.len()..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            if let Ok(n) = digits.parse() {
                return n;
            }
        }
    }
    1
}

/// The deployfit weight format for a row (`Err` = why the row is skipped): 8-bit checkpoints
/// (compressed-tensors fp8-dynamic / w8a8, vLLM runtime `quantization=fp8`, FP8 checkpoints)
/// → fp8; 16-bit → bf16 or fp16 as the row's dtype says; fp32 and 4-bit are neither.
fn weight_format(row: &Row) -> Result<&'static str, String> {
    let full = row["dtype_or_quant"].to_lowercase();
    // The weight format must not see the KV dtype (`kv_cache_dtype=fp8`).
    let dq = full
        .replace("kv_cache_dtype=fp8", "")
        .replace("kv_cache_dtype=auto", "");
    let model = row["model"].to_lowercase();
    if dq.contains("float32") {
        return Err("fp32 weights (neither 16-bit nor 8-bit)".into());
    }
    if dq.contains("bitsandbytes")
        || dq.contains("4-bit")
        || dq.contains("nvfp4")
        || model.contains("bnb-4bit")
    {
        return Err("4-bit weights (neither 16-bit nor 8-bit)".into());
    }
    let eight_bit = dq.contains("quantization=fp8")
        || dq.contains("fp8")
        || dq.contains("w8a8")
        || (dq.contains("compressed-tensors") && (model.contains("fp8") || model.contains("w8a8")));
    if eight_bit {
        Ok("fp8")
    } else if dq.contains("dtype=float16") {
        Ok("fp16")
    } else {
        Ok("bf16")
    }
}

/// A row that becomes a deployment.
struct Case {
    index: usize,
    /// The catalog name, or the registry id in quotes.
    model: String,
    /// Whether the model is read from the registry (not the catalog).
    registry: bool,
    quant: &'static str,
    kv_cache: &'static str,
    tp: u64,
    gpu_mem: String,
    util_percent: f64,
    context: u64,
    weights_gib: f64,
    kv_tokens: f64,
    /// vLLM 0.19.0 V1 on H100, the set the overhead constants were fitted on.
    v1: bool,
    /// vLLM V0, which profiles a whole max_model_len in one pass (no chunked prefill).
    v0: bool,
    /// vLLM's default max_num_seqs on that GPU (the logs do not set it): 1024 from 70 GiB,
    /// 256 below (tests/engine/test_arg_utils.py; V0's default was 256 everywhere).
    seqs: u64,
    /// The logged CUDA-graph memory, GiB, where the notes give it.
    graphs_gib: Option<f64>,
}

/// Whether a row is a vLLM V0 run: its notes say so, or quote V0's memory-profiling words
/// (`peak_torch_memory`, vllm/worker/worker.py determine_num_available_blocks; row 53 is the
/// same V0 run as row 52, vllm-project/vllm#10517).
fn v0(notes: &str) -> bool {
    notes.contains("V0") || notes.contains("peak_torch_memory")
}

/// The number after `key` in the notes (`CUDA graph memory 1.79 GiB`).
fn note_number(notes: &str, key: &str) -> Option<f64> {
    let at = notes.find(key)? + key.len();
    let digits: String = notes[at..]
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    digits.parse().ok()
}

fn case(index: usize, row: &Row) -> Result<Case, String> {
    let logged = &row["model"];
    let (model, registry) = match (catalog_name(logged), registry_id(logged)) {
        (Some(name), _) => (name.to_string(), false),
        (None, Some(id)) => (format!("\"{id}\""), true),
        (None, None) => return Err("not in the catalog or the registry".into()),
    };
    let notes = &row["notes"];
    let pp = pipeline_parallel(notes);
    if pp > 1 {
        return Err(format!("pipeline parallel (pp={pp})"));
    }
    let quant = weight_format(row)?;
    let missing = |column: &str| format!("no {column}");
    let tp = number(row, "tp").ok_or_else(|| missing("tp"))?;
    let gpu_mem = number(row, "gpu_mem_gib").ok_or_else(|| missing("gpu_mem_gib"))?;
    let util = number(row, "gpu_mem_util").ok_or_else(|| missing("gpu_mem_util"))?;
    let context = number(row, "max_model_len").ok_or_else(|| missing("max_model_len"))?;
    let weights_gib = number(row, "weights_gib").ok_or_else(|| missing("weights_gib"))?;
    // vLLM V0 prints only the block count; its block size was 16 (docs/calibration-vllm.md).
    let kv_tokens = match (number(row, "kv_tokens"), number(row, "gpu_blocks")) {
        (Some(tokens), _) => tokens,
        (None, Some(blocks)) if notes.contains("V0") => blocks * 16.0,
        _ => return Err(missing("kv_tokens")),
    };
    // `auto` stores the KV cache in the model dtype, 16-bit for every row that gets here.
    let kv_cache = if row["dtype_or_quant"].contains("kv_cache_dtype=fp8") {
        "fp8"
    } else {
        "fp16"
    };
    assert!(
        gpu_mem > 0.0 && util > 0.0 && tp >= 1.0,
        "row {index}: {row:?}"
    );
    Ok(Case {
        index,
        model,
        registry,
        quant,
        kv_cache,
        tp: tp as u64,
        gpu_mem: row["gpu_mem_gib"].trim().to_string(),
        util_percent: (util * 1e4).round() / 1e2,
        context: context as u64,
        weights_gib,
        kv_tokens,
        v1: notes.contains("v0.19.0 V1"),
        v0: v0(notes),
        seqs: if gpu_mem >= 70.0 && !v0(notes) {
            1024
        } else {
            256
        },
        graphs_gib: note_number(notes, "CUDA graph memory"),
    })
}

fn deploy_file(cases: &[Case]) -> String {
    let mut out = String::from(
        "// Generated by tests/it/calibration.rs from tests/fixtures/calibration/vllm_logs.csv.\n\n\
         // vLLM V0 ran without chunked prefill: its profiling pass is a whole max_model_len.\n\
         engine vllm_v0 extends vllm {\n    chunked_prefill = no\n}\n",
    );
    for c in cases {
        let i = c.index;
        write!(
            out,
            "\ngpu gpu_row_{i} {{\n    memory    = {mem} GiB\n    bandwidth = 1000 GB/s\n}}\n\n\
             deployment row_{i} {{\n    model    = {model}\n    quant    = {quant}\n    context  = {ctx}\n    \
             seqs     = {seqs}\n    kv_cache = {kv}\n    engine   = {engine}\n    gpu      = gpu_row_{i}\n    count    = {tp}\n    \
             memory_utilization = {util}%\n}}\n",
            seqs = c.seqs,
            engine = if c.v0 { "vllm_v0" } else { "vllm" },
            mem = c.gpu_mem,
            model = c.model,
            quant = c.quant,
            ctx = c.context,
            kv = c.kv_cache,
            tp = c.tp,
            util = c.util_percent,
        )
        .unwrap();
    }
    out
}

/// `deployfit explain --format json` of `text`, written to a scratch folder `dir`.
fn explain_file(dir: &str, text: &str) -> Value {
    let dir = scratch(dir);
    std::fs::write(dir.join("calibration.deploy"), text).unwrap();
    let output = deployfit_in(&dir, &["explain", "calibration.deploy", "--format", "json"]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}\n{text}",
        String::from_utf8_lossy(&output.stderr)
    );
    json(&output)
}

/// An explanation list by deployment name.
fn by_deployment(explained: &Value) -> HashMap<&str, &Value> {
    explained
        .as_array()
        .expect("an array of deployments")
        .iter()
        .map(|d| (d["deployment"].as_str().unwrap(), d))
        .collect()
}

fn bytes(deployment: &Value, field: &str) -> f64 {
    deployment[field]
        .as_f64()
        .unwrap_or_else(|| panic!("{field} in {deployment}"))
}

fn percent_error(predicted: f64, measured: f64) -> f64 {
    (predicted - measured) / measured * 100.0
}

/// (median, worst) absolute value.
fn summary(errors: &[f64]) -> (f64, f64) {
    let mut abs: Vec<f64> = errors.iter().map(|e| e.abs()).collect();
    abs.sort_by(f64::total_cmp);
    let n = abs.len();
    assert!(n > 0);
    let median = if n % 2 == 1 {
        abs[n / 2]
    } else {
        (abs[n / 2 - 1] + abs[n / 2]) / 2.0
    };
    (median, abs[n - 1])
}

#[test]
fn vllm_startup_logs() {
    let rows = load_rows();
    assert_eq!(rows.len(), 65, "the calibration CSV has 65 rows");
    let mapped = rows
        .iter()
        .filter(|r| catalog_name(&r["model"]).is_some())
        .count();
    assert_eq!(
        mapped, 49,
        "docs/calibration-vllm.md maps 49 of the 65 rows"
    );

    let mut cases = Vec::new();
    let mut skipped = Vec::new();
    for (index, row) in rows.iter().enumerate() {
        match case(index, row) {
            Ok(c) => cases.push(c),
            Err(why) => skipped.push((index, row["model"].clone(), why)),
        }
    }

    let (registry_cases, cases): (Vec<Case>, Vec<Case>) =
        cases.into_iter().partition(|c| c.registry);
    let explained = explain_file("calibration-vllm", &deploy_file(&cases));
    let by_name = by_deployment(&explained);

    println!(
        "\nvLLM calibration: predicted vs measured per GPU (error = (predicted - measured) / measured)\n"
    );
    println!(
        "{:>3}  {:<46} {:<5} {:<4} {:>2} {:>6}  {:>8} {:>8} {:>7}  {:>10} {:>10} {:>7}",
        "row",
        "model",
        "quant",
        "kv",
        "tp",
        "ctx",
        "W pred",
        "W meas",
        "err %",
        "KV pred",
        "KV meas",
        "err %"
    );
    let (mut weights_err, mut kv_err, mut kv_err_v1) = (Vec::new(), Vec::new(), Vec::new());
    let mut graph_err = Vec::new();
    for c in &cases {
        let d = by_name[format!("row_{}", c.index).as_str()];
        assert_eq!(d["count"].as_u64(), Some(c.tp));
        assert_eq!(d["context_tokens"].as_u64(), Some(c.context));
        if let Some(graphs) = c.graphs_gib {
            let predicted = bytes(&d["engine_memory"], "cuda_graph_bytes") / GIB;
            graph_err.push(predicted - graphs);
        }
        let (w_err, k_err) = row_errors(c, d);
        weights_err.push(w_err);
        kv_err.push(k_err);
        if c.v1 {
            kv_err_v1.push(k_err);
        }
    }
    println!("\nskipped {} rows:", skipped.len());
    for (index, model, why) in &skipped {
        println!("{index:>3}  {model:<60} {why}");
    }

    let (w_median, w_worst) = summary(&weights_err);
    let (kv_median, kv_worst) = summary(&kv_err);
    let (kv_v1_median, kv_v1_worst) = summary(&kv_err_v1);
    println!(
        "\nrows used: {} ({} vLLM 0.19 V1), skipped: {}",
        cases.len(),
        kv_err_v1.len(),
        skipped.len()
    );
    println!("weights per GPU, |error|: median {w_median:.2} %, worst {w_worst:.2} %");
    println!("KV token capacity, |error|: median {kv_median:.2} %, worst {kv_worst:.2} %");
    println!(
        "KV token capacity, vLLM 0.19 V1 rows only, |error|: median {kv_v1_median:.2} %, worst {kv_v1_worst:.2} %"
    );

    // Regression bounds, set just above what the model met when they were written (vLLM engine
    // overhead 0.587 GiB + 14,184 B × vocab + 1.827 GiB when count > 1, sliding-window layers
    // full-context, fp8 at 8.5 bpw): 38 rows used (36 of them vLLM 0.19 V1), 27 skipped;
    // weights per GPU median 0.45 %, worst 15.76 % (gemma-3-4b-it: the vision tower is not in
    // the catalog's params); KV capacity median 0.20 %, worst 37.98 % (row 53, a vLLM V0 run
    // whose activation peak the V1 constants do not cover), and over the v0.19 V1 rows median
    // 0.20 %, worst 20.69 % (gemma-3-27b-it: vLLM pads the layer groups to 70 layers' worth of
    // KV where deployfit counts 62, and its weights are under-predicted).
    assert!(
        w_median < 0.6,
        "weights per GPU: median error {w_median:.2} % (bound 0.6 %, was 0.45 %)"
    );
    assert!(
        w_worst < 16.5,
        "weights per GPU: worst error {w_worst:.2} % (bound 16.5 %, was 15.76 %)"
    );
    assert!(
        kv_median < 0.3,
        "KV capacity: median error {kv_median:.2} % (bound 0.3 %, was 0.20 %)"
    );
    // Engine memory by component (docs/calibration-vllm.md section 4): the V0 rows profile a
    // whole max_model_len (`chunked_prefill = no`), which brought row 53 from +37.98 % to
    // -6.8 %; the worst is now gemma-3-27b-it's 20.69 %.
    assert!(
        kv_worst < 22.0,
        "KV capacity: worst error {kv_worst:.2} % (bound 22 %, was 20.69 %)"
    );
    assert!(
        kv_v1_median < 0.3,
        "KV capacity, v0.19 V1: median error {kv_v1_median:.2} % (bound 0.3 %, was 0.20 %)"
    );
    assert!(
        kv_v1_worst < 22.0,
        "KV capacity, v0.19 V1: worst error {kv_v1_worst:.2} % (bound 22 %, was 20.69 %)"
    );
    assert!(cases.len() >= 30, "only {} rows used", cases.len());

    // The CUDA-graph pool (engine memory outside the KV budget) against the logs' "CUDA graph
    // memory": 0.325 GiB + 1.653 GiB × layers / 100 (docs/calibration-vllm.md section 2).
    let (g_median, g_worst) = summary(&graph_err);
    println!(
        "CUDA graph memory, |error| over {} rows: median {g_median:.3} GiB, worst {g_worst:.3} GiB",
        graph_err.len()
    );
    assert!(
        graph_err.len() >= 30,
        "{} rows log graph memory",
        graph_err.len()
    );
    assert!(
        g_median < 0.12,
        "CUDA graph memory: median error {g_median:.3} GiB (bound 0.12 GiB)"
    );
    assert!(
        g_worst < 0.45,
        "CUDA graph memory: worst error {g_worst:.3} GiB (bound 0.45 GiB)"
    );

    registry_rows(&registry_cases);
}

/// One row's weights-per-GPU and KV-capacity errors, in percent, printed as a table line.
fn row_errors(c: &Case, d: &Value) -> (f64, f64) {
    let weights_per_gpu = bytes(d, "weights_bytes") / c.tp as f64;
    // What vLLM logs as "GPU KV cache size: N tokens" (up to its 16-token blocks).
    let kv_capacity = bytes(d, "kv_capacity_tokens");
    let w_err = percent_error(weights_per_gpu / GIB, c.weights_gib);
    let k_err = percent_error(kv_capacity, c.kv_tokens);
    println!(
        "{:>3}  {:<46} {:<5} {:<4} {:>2} {:>6}  {:>8.2} {:>8.2} {:>+7.1}  {:>10.0} {:>10.0} {:>+7.1}{}",
        c.index,
        c.model,
        c.quant,
        c.kv_cache,
        c.tp,
        c.context,
        weights_per_gpu / GIB,
        c.weights_gib,
        w_err,
        kv_capacity,
        c.kv_tokens,
        k_err,
        if c.v1 { "" } else { "  (not v0.19 V1)" },
    );
    (w_err, k_err)
}

/// The rows on models outside the catalog, named by Hugging Face id and read from the
/// bundled registry: weights per GPU and KV capacity against the logs, like the catalog rows.
fn registry_rows(cases: &[Case]) {
    let dir = scratch("calibration-vllm-registry");
    let text = deploy_file(cases);
    std::fs::write(dir.join("calibration.deploy"), &text).unwrap();
    let output = deployfit_in(&dir, &["explain", "calibration.deploy", "--format", "json"]);
    // A deployment whose model lacks a fact the estimate needs is left out of the list (and
    // the exit code is 1); every other one is explained.
    assert!(
        matches!(output.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let explained = json(&output);
    let by_name = by_deployment(&explained);
    println!("\nModels read from the registry (named by Hugging Face id):\n");
    let (mut weights_err, mut kv_err, mut not_evaluated) = (Vec::new(), Vec::new(), Vec::new());
    for c in cases {
        let Some(d) = by_name.get(format!("row_{}", c.index).as_str()) else {
            println!("{:>3}  {:<46} not evaluated", c.index, c.model);
            not_evaluated.push(c.model.as_str());
            continue;
        };
        let (w_err, k_err) = row_errors(c, d);
        weights_err.push(w_err);
        kv_err.push(k_err);
    }
    let (w_median, w_worst) = summary(&weights_err);
    let (kv_median, kv_worst) = summary(&kv_err);
    println!(
        "registry rows: {} evaluated, {} not; weights per GPU |error| median {w_median:.2} %, worst {w_worst:.2} %; KV capacity median {kv_median:.2} %, worst {kv_worst:.2} %",
        weights_err.len(),
        not_evaluated.len()
    );
    // Gemma-2-2B, both Granite 3.1 models, phi-2, Llama-4-Scout (TP 4) and Qwen2.5-0.5B (a
    // V0 log) are evaluated: KV capacity median 0.2 %, worst +16.7 % (Llama-4-Scout, whose
    // logged weights, 53.12 GiB per GPU, carry the vision tower the registry's 108.6 B
    // parameters leave out), weights median 0.5 %, worst 4.8 % (the same).
    assert_eq!(weights_err.len(), 6, "{not_evaluated:?}");
    assert!(
        kv_median < 0.5,
        "registry KV capacity: median error {kv_median:.2} %"
    );
    assert!(
        kv_worst < 18.0,
        "registry KV capacity: worst error {kv_worst:.2} %"
    );
    assert!(
        w_median < 1.0,
        "registry weights: median error {w_median:.2} %"
    );
    assert!(
        w_worst < 6.0,
        "registry weights: worst error {w_worst:.2} %"
    );
    // Kimi-VL's language model uses multi-head latent attention whose sizes the bulk table
    // lacks: the estimate stops with a missing fact rather than pricing 16 full KV heads
    // (7.1× the latent the logs imply, 1,426,368 tokens predicted as about 200,000).
    assert_eq!(
        not_evaluated,
        [
            "\"moonshotai/Kimi-VL-A3B-Instruct\"",
            "\"moonshotai/Kimi-VL-A3B-Instruct\""
        ]
    );
}

/// A row's stated outcome: the engine started (it logged a KV cache) or failed at startup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    Starts,
    Fails,
}

fn outcome(row: &Row) -> Option<Outcome> {
    let notes = row["notes"].to_lowercase();
    if notes.contains("fail") || notes.contains("ooms") || notes.contains("error:") {
        return Some(Outcome::Fails);
    }
    let logged_kv = !row["kv_tokens"].trim().is_empty()
        || !row["gpu_blocks"].trim().is_empty()
        || notes.contains("kv cache memory")
        || notes.contains("kv_cache_size")
        || notes.contains("available_kv_cache_memory")
        || notes.contains("kv cache ");
    logged_kv.then_some(Outcome::Starts)
}

/// Catalog GPUs for rows that name the GPU but not its memory (lower-cased substring →
/// catalog entry).
const GPUS: &[(&str, &str)] = &[
    ("a10 ", "a10"),
    ("rtx 4090", "rtx_4090"),
    ("rtx 5090", "rtx_5090"),
    ("h100", "h100_sxm5"),
];

/// vLLM's default max_model_len is the model's max_position_embeddings; for the rows that
/// do not set it and whose catalog entry has a different window.
// source: meta-llama/Meta-Llama-3-8B config.json max_position_embeddings 8192;
// Qwen/Qwen3-235B-A22B config.json max_position_embeddings 40960
const DEFAULT_CONTEXT: &[(&str, u64)] = &[("meta-llama-3-8b", 8192), ("qwen3-235b-a22b", 40960)];

/// A row with a stated outcome, as a deployment (`Err`: why it cannot be predicted).
struct OutcomeCase {
    index: usize,
    outcome: Outcome,
    text: String,
    /// The row's configuration, to count distinct ones (duplicate log rows repeat it).
    key: String,
}

fn outcome_case(index: usize, row: &Row, outcome: Outcome) -> Result<OutcomeCase, String> {
    let model_id = row["model"].to_lowercase();
    let notes = &row["notes"];
    let lower_notes = notes.to_lowercase();
    // GLM-4-9B-Chat is the ChatGLM-architecture release of the catalog's glm4_9b dims.
    // source: THUDM/glm-4-9b-chat config.json: num_layers 40, hidden_size 4096,
    // multi_query_group_num 2, kv_channels 128, padded_vocab_size 151552, seq_length 131072
    let (catalog, extra_model) = if model_id.contains("glm4-chat") {
        (
            "glm4_9b",
            "    max_context = 131072\n    hf = \"THUDM/glm-4-9b-chat\"\n".to_string(),
        )
    } else {
        (
            catalog_name(&row["model"]).ok_or("not in the catalog")?,
            String::new(),
        )
    };
    let pp = pipeline_parallel(notes);
    if pp > 1 {
        return Err(format!("pipeline parallel (pp={pp}): not modelled"));
    }
    if lower_notes.contains("gpu not stated") {
        return Err("GPU not stated".into());
    }
    let tp = match number(row, "tp") {
        Some(tp) => tp as u64,
        None => {
            // "on each of 4 worker ranks"
            let at = lower_notes.find("of ").and_then(|at| {
                lower_notes[at + 3..]
                    .split_whitespace()
                    .next()
                    .and_then(|n| n.parse::<u64>().ok())
                    .filter(|_| lower_notes.contains("worker ranks"))
            });
            at.ok_or("tp not stated")?
        }
    };
    let gpu_name = row["gpu"].to_lowercase();
    let gpu = match number(row, "gpu_mem_gib") {
        Some(_) => format!("gpu_out_{index}"),
        None => GPUS
            .iter()
            .find(|(pattern, _)| gpu_name.contains(pattern))
            .map(|(_, name)| name.to_string())
            .ok_or("GPU memory not stated")?,
    };
    // vLLM's default gpu_memory_utilization where the row does not state one.
    let util = number(row, "gpu_mem_util").unwrap_or(0.9);
    let flag_context = lower_notes.find("--max-model-len ").and_then(|at| {
        lower_notes[at + "--max-model-len ".len()..]
            .split(|c: char| !c.is_ascii_digit())
            .next()
            .and_then(|n| n.parse::<u64>().ok())
    });
    let context = match number(row, "max_model_len") {
        Some(context) => context as u64,
        None if flag_context.is_some() => flag_context.unwrap_or_default(),
        None => DEFAULT_CONTEXT
            .iter()
            .find(|(pattern, _)| model_id.contains(pattern))
            .map(|&(_, context)| context)
            .ok_or("max_model_len not stated")?,
    };
    let v0 = v0(notes);
    let gpu_mem = number(row, "gpu_mem_gib");
    let large = gpu_mem.map_or(gpu == "h100_sxm5", |m| m >= 70.0);
    // --max-num-seqs where the log sets it, else vLLM's default on that GPU.
    let seqs = if lower_notes.contains("max-num-seqs 1") || lower_notes.contains("max_num_seqs=1") {
        1
    } else if large && !v0 {
        1024
    } else {
        256
    };
    let eager = lower_notes.contains("--enforce-eager") && !lower_notes.contains("works with");
    // Weight formats the catalog lacks (bitsandbytes 4-bit) take the logged weights.
    let (quant, model_block) = match weight_format(row) {
        Ok(quant) => (
            quant.to_string(),
            format!("model model_out_{index} extends {catalog} {{\n{extra_model}}}\n"),
        ),
        Err(_) if model_id.contains("bnb") || row["dtype_or_quant"].contains("bitsandbytes") => {
            let weights = number(row, "weights_gib").ok_or("4-bit weights not logged")?;
            let bytes = (weights * GIB * tp as f64).round() as u64;
            (
                "bnb_4bit".to_string(),
                format!(
                    "model model_out_{index} extends {catalog} {{\n{extra_model}    files {{\n        bnb_4bit = {bytes} B\n    }}\n}}\n"
                ),
            )
        }
        Err(why) => return Err(why),
    };
    let kv_cache = if row["dtype_or_quant"].contains("kv_cache_dtype=fp8") {
        "fp8"
    } else {
        "fp16"
    };
    let mut text = model_block;
    if let Some(mem) = gpu_mem {
        write!(
            text,
            "gpu gpu_out_{index} {{\n    memory    = {mem} GiB\n    bandwidth = 1000 GB/s\n}}\n"
        )
        .unwrap();
    }
    for (suffix, engine) in [
        ("", if v0 { "vllm_v0" } else { "vllm" }),
        ("_before", "vllm_before"),
    ] {
        write!(
            text,
            "deployment out_{index}{suffix} {{\n    model    = model_out_{index}\n    quant    = {quant}\n    \
             context  = {context}\n    seqs     = {seqs}\n    kv_cache = {kv_cache}\n    engine   = {engine}\n    \
             gpu      = {gpu}\n    count    = {tp}\n    memory_utilization = {util}%\n{eager}}}\n",
            util = (util * 1e4).round() / 1e2,
            eager = if eager { "    enforce_eager = yes\n" } else { "" },
        )
        .unwrap();
    }
    Ok(OutcomeCase {
        index,
        outcome,
        key: format!("{catalog} {quant} {kv_cache} tp{tp} ctx{context} {gpu_name} {util} {seqs}"),
        text,
    })
}

/// Every row of vllm_logs.csv that states an outcome (the engine started and logged its KV
/// cache, or it failed at startup) predicted through the real binary: `startup_failure` from
/// `explain --format json` against what happened. `vllm_before` is the vLLM entry as it was
/// before engine memory had components (0.587 GiB + 14,184 B × vocab + 1.827 GiB when
/// count > 1, no CUDA graphs, no profiling pass), judged by the same startup rule.
#[test]
fn vllm_startup_outcomes() {
    let rows = load_rows();
    let mut cases = Vec::new();
    let mut skipped = Vec::new();
    for (index, row) in rows.iter().enumerate() {
        let Some(outcome) = outcome(row) else {
            continue;
        };
        match outcome_case(index, row, outcome) {
            Ok(case) => cases.push(case),
            Err(why) => skipped.push((index, row["model"].clone(), outcome, why)),
        }
    }
    let mut file = String::from(
        "// Generated by tests/it/calibration.rs (vllm_startup_outcomes) from vllm_logs.csv.\n\n\
         // vLLM V0 ran without chunked prefill: its profiling pass is a whole max_model_len.\n\
         engine vllm_v0 extends vllm {\n    chunked_prefill = no\n}\n\n\
         // The vLLM entry before engine memory had components.\n\
         engine vllm_before extends vllm {\n    overhead = 0.587 GiB\n    overhead_per_vocab = 14_184 B\n    \
         context_memory = 0 B\n    sampler_per_logit = 0 B\n    activation_per_hidden = 0 B\n    \
         graph_memory = 0 B\n    graph_memory_per_layer = 0 B\n}\n\n\
         // bitsandbytes 4-bit: runs on vLLM like the other 4-bit formats; its size is logged.\n\
         quant bnb_4bit extends awq_int4 {\n}\n\n",
    );
    for case in &cases {
        file.push_str(&case.text);
        file.push('\n');
    }
    let explained = explain_file("calibration-outcomes", &file);
    let by_name = by_deployment(&explained);
    let predicted = |name: &str| -> Option<String> {
        let d = by_name
            .get(name)
            .unwrap_or_else(|| panic!("{name} explained\n{file}"));
        d["startup_failure"].as_str().map(str::to_string)
    };

    println!("\nvLLM startup outcomes: logged vs predicted (startup_failure)\n");
    let (mut right, mut right_before) = (0, 0);
    let (mut failures, mut caught, mut caught_before) = (0, 0, 0);
    let mut failure_kinds = HashMap::new();
    // configuration → (right now, right before)
    let mut distinct: HashMap<&str, (bool, bool)> = HashMap::new();
    for case in &cases {
        let now = predicted(&format!("out_{}", case.index));
        let before = predicted(&format!("out_{}_before", case.index));
        let ok = (now.is_none()) == (case.outcome == Outcome::Starts);
        let ok_before = (before.is_none()) == (case.outcome == Outcome::Starts);
        right += usize::from(ok);
        right_before += usize::from(ok_before);
        distinct.insert(&case.key, (ok, ok_before));
        if case.outcome == Outcome::Fails {
            failures += 1;
            caught += usize::from(ok);
            caught_before += usize::from(ok_before);
            failure_kinds.insert(case.index, now.clone());
        }
        println!(
            "{:>3}  {:<45} {:<7} now {:<28} before {:<28} {}",
            case.index,
            rows[case.index]["model"]
                .chars()
                .take(45)
                .collect::<String>(),
            format!("{:?}", case.outcome),
            now.as_deref().unwrap_or("starts"),
            before.as_deref().unwrap_or("starts"),
            if ok { "right" } else { "WRONG" }
        );
    }
    println!("\nnot predicted ({}):", skipped.len());
    for (index, model, outcome, why) in &skipped {
        println!("{index:>3}  {model:<50} {outcome:?}: {why}");
    }
    let n = cases.len();
    println!(
        "\nverdicts right: {right} of {n} (before: {right_before}); failures caught: {caught} of {failures} (before: {caught_before})"
    );
    let distinct_right = distinct.values().filter(|(now, _)| *now).count();
    let distinct_before = distinct.values().filter(|(_, before)| *before).count();
    println!(
        "distinct configurations: {} ({distinct_right} right, before {distinct_before})",
        distinct.len()
    );
    assert!(
        distinct_right * 10 >= distinct.len() * 9,
        "distinct configurations right: {distinct_right} of {}",
        distinct.len()
    );

    // Rows 53 and 60 (max_model_len above the KV cache) and 54 (no KV budget) are failures
    // the model names; row 58 (Qwen3-30B-A3B on 4 × A10, an OOM while compiling and capturing
    // CUDA graphs that --enforce-eager avoids) is not caught: its ranks hold ~6 GiB outside
    // PyTorch (QwenLM/Qwen3#1387), which no logged row measures (docs/calibration-vllm.md §4).
    assert_eq!(
        failure_kinds.get(&53),
        Some(&Some("context_exceeds_kv_capacity".to_string()))
    );
    assert_eq!(
        failure_kinds.get(&54),
        Some(&Some("no_kv_budget".to_string()))
    );
    assert_eq!(
        failure_kinds.get(&60),
        Some(&Some("context_exceeds_kv_capacity".to_string()))
    );
    assert!(failures >= 4, "{failures} failure rows predicted");
    assert!(
        caught * 4 >= failures * 3,
        "failures caught: {caught} of {failures}"
    );
    assert!(
        right * 10 >= n * 9,
        "verdicts right: {right} of {n} (bound 90 %)"
    );
    assert!(n >= 40, "only {n} rows with an outcome predicted");
}
