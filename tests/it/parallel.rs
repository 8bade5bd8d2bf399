//! Pipeline stages, expert parallelism, nodes and speculative decoding through the real
//! binary (`deployfit explain --format json`, `deployfit export`): the direction and the
//! size of each effect (docs/calibration-serving.md, "Pipeline and expert parallelism"
//! and "Speculative decoding").

use crate::common;

use std::path::Path;

use common::{deployfit_in, json, scratch, stdout};
use serde_json::Value;

/// `explain --format json` of a file written in a scratch directory: deployment → report.
fn explain(dir: &Path, text: &str) -> std::collections::HashMap<String, Value> {
    std::fs::write(dir.join("plan.deploy"), text).unwrap();
    let output = deployfit_in(dir, &["explain", "plan.deploy", "--format", "json"]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}{}",
        stdout(&output),
        String::from_utf8_lossy(&output.stderr)
    );
    let report = json(&output);
    report
        .as_array()
        .expect("one report per deployment")
        .iter()
        .map(|d| (d["deployment"].as_str().unwrap().to_string(), d.clone()))
        .collect()
}

fn number(d: &Value, key: &str) -> f64 {
    d[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} in {}", d["deployment"]))
}

/// A serving deployment of `model` on H100 SXM5s with extra fields.
fn deployment(name: &str, model: &str, quant: &str, seqs: u64, extra: &str) -> String {
    format!(
        "// Prüfung · テスト\ndeployment {name} {{\n    model    = {model}\n    quant    = {quant}\n    engine   = vllm\n    gpu      = h100_sxm5\n    seqs     = {seqs}\n    context  = 4k\n{extra}    workload {{\n        prompt = 1000\n        output = 200\n    }}\n}}\n"
    )
}

#[test]
fn pipeline_across_nodes_is_slower_than_tensor_parallel_in_a_node() {
    let dir = scratch("parallel-pipeline");
    let text = [
        deployment("tp8", "llama_3_1_405b", "fp8", 1, "    count = 8\n"),
        deployment(
            "pp2",
            "llama_3_1_405b",
            "fp8",
            1,
            "    count = 8\n    pipeline = 2\n",
        ),
        deployment("tp8_busy", "llama_3_1_405b", "fp8", 64, "    count = 8\n"),
        deployment(
            "pp2_busy",
            "llama_3_1_405b",
            "fp8",
            64,
            "    count = 8\n    pipeline = 2\n",
        ),
    ]
    .concat();
    let r = explain(&dir, &text);
    let (tp, pp) = (&r["tp8"], &r["pp2"]);
    assert_eq!(pp["pipeline"], 2);
    assert_eq!(pp["gpus_per_replica"], 16);
    // Each of the 16 GPUs holds half of what one of 8 holds of the weights and KV.
    let tp_gpu = number(tp, "per_gpu_bytes") - number(tp, "overhead_bytes");
    let pp_gpu = number(pp, "per_gpu_bytes") - number(pp, "overhead_bytes");
    assert!(
        (pp_gpu / tp_gpu - 0.5).abs() < 0.01,
        "per GPU {pp_gpu} vs {tp_gpu}"
    );
    // A single stream passes both stages in turn: no faster than the 8-GPU group, plus
    // the activation send between the nodes.
    let (tp_tpot, pp_tpot) = (number(tp, "tpot_s"), number(pp, "tpot_s"));
    assert!(pp_tpot > tp_tpot, "PP {pp_tpot} s vs TP {tp_tpot} s");
    assert!(pp_tpot < tp_tpot * 1.1, "PP {pp_tpot} s vs TP {tp_tpot} s");
    // Twice the GPUs cost twice as much.
    assert!(
        (number(pp, "cost_per_hour_usd") / number(tp, "cost_per_hour_usd") - 2.0).abs() < 1e-9,
        "{} vs {}",
        pp["cost_per_hour_usd"],
        tp["cost_per_hour_usd"]
    );
    // With many requests the stages work on different micro-batches: more throughput
    // than one 8-GPU group, less than twice.
    let (tp_busy, pp_busy) = (
        number(&r["tp8_busy"], "throughput_tps"),
        number(&r["pp2_busy"], "throughput_tps"),
    );
    assert!(
        pp_busy > tp_busy && pp_busy < 2.0 * tp_busy,
        "{pp_busy} vs {tp_busy}"
    );
}

#[test]
fn tensor_parallel_across_nodes_pays_the_network() {
    let dir = scratch("parallel-nodes");
    // The same GPU in a 16-GPU node: only where the all-reduces run differs. Owned GPUs:
    // a cloud rental of 16 would span two 8-GPU instances over their stated network for
    // both (tests/it/pricing.rs).
    let mut text = String::from("gpu big_node extends h100_sxm5 {\n    gpus_per_node = 16\n}\n");
    let extra = "    count = 16\n    pricing = owned\n";
    text.push_str(&deployment("across", "llama_3_1_405b", "bf16", 8, extra));
    text.push_str(
        &deployment("inside", "llama_3_1_405b", "bf16", 8, extra).replace("h100_sxm5", "big_node"),
    );
    std::fs::write(dir.join("plan.deploy"), &text).unwrap();
    let check = deployfit_in(&dir, &["check", "plan.deploy", "--format", "json"]);
    let codes = common::codes(&json(&check));
    assert_eq!(
        codes
            .iter()
            .filter(|c| *c == "deploy::parallel::tensor_across_nodes")
            .count(),
        1,
        "{codes:?}"
    );
    let r = explain(&dir, &text);
    let (across, inside) = (
        number(&r["across"], "tpot_s"),
        number(&r["inside"], "tpot_s"),
    );
    // 126 layers × 2 all-reduces × the added latency at least, and the 50 GB/s link.
    let added = across - inside;
    assert!(
        added > 126.0 * 2.0 * 25e-6,
        "across nodes adds {added} s per token"
    );
}

#[test]
fn expert_parallel_memory_per_gpu() {
    let dir = scratch("parallel-experts");
    let text = [
        deployment("tp4", "qwen3_30b_a3b", "bf16", 1, "    count = 4\n"),
        deployment(
            "ep4",
            "qwen3_30b_a3b",
            "bf16",
            1,
            "    count = 4\n    expert_parallel = true\n",
        ),
        deployment("tp3", "qwen3_30b_a3b", "bf16", 1, "    count = 3\n"),
        deployment(
            "ep3",
            "qwen3_30b_a3b",
            "bf16",
            1,
            "    count = 3\n    expert_parallel = true\n",
        ),
    ]
    .concat();
    let r = explain(&dir, &text);
    // 128 experts over 4 GPUs: 32 each, the same bytes as tensor parallelism's slices.
    assert_eq!(r["ep4"]["per_gpu_bytes"], r["tp4"]["per_gpu_bytes"]);
    assert_eq!(r["ep4"]["expert_parallel"], true);
    // Over 3 GPUs the busiest holds ceil(128 / 3) = 43 whole experts, not 42.67.
    let params = 30_532_122_624.0_f64;
    let active = 3_353_032_704.0_f64;
    let per_expert = (params - active) / (128.0 - 8.0);
    let expert_share = 128.0 * per_expert / params;
    let weights = number(&r["tp3"], "weights_bytes");
    let expected = weights * expert_share * (43.0 / 128.0 - 1.0 / 3.0);
    let extra = number(&r["ep3"], "per_gpu_bytes") - number(&r["tp3"], "per_gpu_bytes");
    assert!(
        (extra - expected).abs() <= 1.0 + expected * 1e-9,
        "extra {extra} B, expected {expected} B"
    );
    // Two all-to-alls per MoE layer replace its all-reduce: the time differs.
    assert_ne!(r["ep4"]["tpot_s"], r["tp4"]["tpot_s"]);
}

#[test]
fn speculative_decoding_helps_one_stream_not_a_full_batch() {
    let dir = scratch("parallel-speculative");
    let spec = "    speculative {\n        method = eagle3\n        tokens = 3\n        acceptance = 0.7\n    }\n";
    let short = |text: String| text.replace("prompt = 1000", "prompt = 200");
    let text = [
        deployment("base1", "llama_3_1_8b", "bf16", 1, ""),
        deployment("spec1", "llama_3_1_8b", "bf16", 1, spec),
        short(deployment("base_full", "llama_3_1_8b", "bf16", 1024, "")),
        short(deployment("spec_full", "llama_3_1_8b", "bf16", 1024, spec)),
    ]
    .concat();
    let r = explain(&dir, &text);
    let s = &r["spec1"]["speculative"];
    assert_eq!(s["method"], "eagle3");
    assert_eq!(s["tokens"], 3);
    // (1 − 0.7⁴) / (1 − 0.7) = 2.533
    let expected = s["expected_tokens_per_step"].as_f64().unwrap();
    assert!((expected - 2.533).abs() < 1e-9, "{expected}");
    // One stream is bandwidth-bound: verifying 4 tokens costs about one step, so decode
    // speeds up by most of the 2.53 expected tokens (less the head's 3 forward passes).
    let gain = number(&r["spec1"], "decode_tps") / number(&r["base1"], "decode_tps");
    assert!(gain > 1.8 && gain < expected, "single-stream gain {gain}");
    // 1024 sequences are compute-bound: 4 verified tokens per sequence cost 4× the
    // matmuls for 2.53 tokens, so speculation loses throughput.
    let (base, spec) = (&r["base_full"], &r["spec_full"]);
    assert_eq!(spec["bound"], "compute-bound");
    let full = number(spec, "throughput_tps") / number(base, "throughput_tps");
    assert!(
        full < 1.0,
        "throughput with speculation at 1024 sequences: ×{full}"
    );
    // The head's weights and KV are in memory.
    assert!(number(&r["spec1"], "per_gpu_bytes") > number(&r["base1"], "per_gpu_bytes"));
    // The text report prints the expected tokens per step.
    let text_report = deployfit_in(&dir, &["explain", "plan.deploy"]);
    assert!(
        stdout(&text_report).contains("speculative      2.53 tokens per step  eagle3, 3 drafted"),
        "{}",
        stdout(&text_report)
    );
}

#[test]
fn a_draft_model_costs_its_weights_and_its_steps() {
    let dir = scratch("parallel-draft");
    let draft = "    count = 2\n    speculative {\n        method = draft\n        draft = llama_3_2_1b\n        tokens = 4\n    }\n";
    let ngram = "    count = 2\n    speculative {\n        method = ngram\n        tokens = 4\n        acceptance = 0.6\n    }\n";
    let text = [
        deployment("base", "llama_3_1_70b", "fp8", 1, "    count = 2\n"),
        deployment("draft", "llama_3_1_70b", "fp8", 1, draft),
        deployment("ngram", "llama_3_1_70b", "fp8", 1, ngram),
    ]
    .concat();
    let r = explain(&dir, &text);
    // Llama 3.2 1B in 16 bit, split over the 2 GPUs, plus its KV.
    let extra = number(&r["draft"], "per_gpu_bytes") - number(&r["base"], "per_gpu_bytes");
    let draft_weights = 1_235_814_400.0 * 2.0 / 2.0;
    assert!(
        extra > draft_weights && extra < draft_weights * 1.2,
        "draft adds {extra} B per GPU"
    );
    // n-gram lookup has no model: no memory, and at the same acceptance it is faster than
    // a drafter that runs 4 forward passes.
    assert_eq!(r["ngram"]["per_gpu_bytes"], r["base"]["per_gpu_bytes"]);
    let default = r["draft"]["speculative"]["acceptance"].as_f64().unwrap();
    assert!((default - 0.6).abs() < 1e-12);
    assert!(number(&r["ngram"], "tpot_s") < number(&r["draft"], "tpot_s"));
    assert!(number(&r["draft"], "tpot_s") < number(&r["base"], "tpot_s"));
}

#[test]
fn export_writes_the_plan_for_vllm_and_refuses_it_elsewhere() {
    let dir = scratch("parallel-export");
    let text = deployment(
        "big",
        "qwen3_235b_a22b",
        "fp8",
        16,
        "    count = 4\n    pipeline = 2\n    expert_parallel = true\n    speculative {\n        method = ngram\n        tokens = 3\n    }\n",
    );
    std::fs::write(dir.join("plan.deploy"), &text).unwrap();
    let output = deployfit_in(&dir, &["export", "plan.deploy", "--deployment", "big"]);
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    let command = stdout(&output);
    for flag in [
        "--tensor-parallel-size 4",
        "--pipeline-parallel-size 2",
        "--enable-expert-parallel",
        r#"--speculative-config '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_max":4}'"#,
    ] {
        assert!(command.contains(flag), "{flag} missing from {command}");
    }
    // LMDeploy's command has no pipeline flag here: refused, with the fix.
    let refused = deployfit_in(
        &dir,
        &[
            "export",
            "plan.deploy",
            "--deployment",
            "big",
            "--engine",
            "lmdeploy",
        ],
    );
    assert_ne!(refused.status.code(), Some(0));
    let message = String::from_utf8_lossy(&refused.stderr);
    assert!(
        message.contains("writes no flag for pipeline stages") && message.contains("vLLM"),
        "{message}"
    );
    // TGI speculates by n-gram lookup with `--speculate`.
    let ngram = deployment(
        "small",
        "llama_3_1_8b",
        "bf16",
        1,
        "    speculative {\n        method = ngram\n        tokens = 5\n    }\n",
    );
    std::fs::write(dir.join("ngram.deploy"), ngram).unwrap();
    let tgi = deployfit_in(
        &dir,
        &[
            "export",
            "ngram.deploy",
            "--deployment",
            "small",
            "--engine",
            "tgi",
        ],
    );
    assert_eq!(
        tgi.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&tgi.stderr)
    );
    assert!(stdout(&tgi).contains("--speculate 5"), "{}", stdout(&tgi));
}

/// NVLink figures are per direction (an all-reduce sends and receives at once): the H100
/// SXM5's catalog figure is 450 GB/s (NVLink 4's 900 GB/s counts both directions), the same
/// as the H200 SXM's; and the link sets the all-reduce time of a prompt's prefill: 2 × 80
/// all-reduces of 1000 tokens × 8192 × 2 B × 2 × 7/8 = 28.7 MB each take 5.1 ms longer at
/// 450 GB/s than at 900 GB/s.
#[test]
fn nvlink_link_bandwidth_is_per_direction() {
    let dir = scratch("parallel-nvlink");
    let gpus = "// Verbindung · リンク\ngpu h100_one_way extends h100_sxm5 {\n    link_bandwidth = 450 GB/s\n}\n\ngpu h100_both_ways extends h100_sxm5 {\n    link_bandwidth = 900 GB/s\n}\n\ngpu h200_one_way extends h200_sxm {\n    link_bandwidth = 450 GB/s\n}\n\n";
    let on = |name: &str, gpu: &str| {
        deployment(name, "llama_3_1_70b", "bf16", 1, "    count = 8\n")
            .replace("gpu      = h100_sxm5", &format!("gpu      = {gpu}"))
    };
    let text = [
        gpus.to_string(),
        on("h100", "h100_sxm5"),
        on("one_way", "h100_one_way"),
        on("both_ways", "h100_both_ways"),
        on("h200", "h200_sxm"),
        on("h200_one_way", "h200_one_way"),
    ]
    .concat();
    let r = explain(&dir, &text);
    for key in ["ttft_s", "tpot_s", "throughput_tps"] {
        assert_eq!(r["h100"][key], r["one_way"][key], "{key}");
        assert_eq!(r["h200"][key], r["h200_one_way"][key], "{key}");
    }
    let slower = number(&r["one_way"], "ttft_s") - number(&r["both_ways"], "ttft_s");
    let expected = 160.0 * 1000.0 * 8192.0 * 2.0 * 2.0 * 7.0 / 8.0 * (1.0 / 450e9 - 1.0 / 900e9);
    assert!(
        (slower - expected).abs() < 0.1 * expected,
        "prefill {slower} s slower at 450 GB/s, expected {expected} s"
    );
    assert!(number(&r["one_way"], "tpot_s") > number(&r["both_ways"], "tpot_s"));
}
