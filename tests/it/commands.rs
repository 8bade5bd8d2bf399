//! `explain`, `matrix` and `export` through the real binary.

use crate::common;

use common::{deployfit, json, stdout};

#[test]
fn explain_table_of_an_example() {
    let output = deployfit(&["explain", "examples/01-glm4-chat.deploy"]);
    assert_eq!(output.status.code(), Some(0));
    insta::assert_snapshot!(stdout(&output));
}

#[test]
fn explain_json_has_the_documented_fields() {
    let output = deployfit(&[
        "explain",
        "examples/03-llama-70b-tensor-parallel.deploy",
        "--format",
        "json",
    ]);
    assert_eq!(output.status.code(), Some(0));
    let all = json(&output);
    let d = &all[0];
    for field in [
        "deployment",
        "model",
        "quant",
        "gpu",
        "count",
        "context_tokens",
        "seqs",
        "weights_bytes",
        "kv_bytes",
        "overhead_bytes",
        "total_bytes",
        "per_gpu_bytes",
        "usable_bytes",
        "utilization",
        "verdict",
        "max_context_tokens",
        "model_max_context_tokens",
    ] {
        assert!(!d[field].is_null(), "{field} missing: {d}");
    }
    assert_eq!(d["count"], 2);
    // Tensor parallel: each GPU holds half the weights and half the KV heads.
    let per_gpu = d["per_gpu_bytes"].as_i64().unwrap();
    let expected = d["weights_bytes"].as_i64().unwrap() / 2
        + d["kv_bytes"].as_i64().unwrap() / 2
        + d["overhead_bytes"].as_i64().unwrap();
    assert!((per_gpu - expected).abs() <= 2, "{per_gpu} vs {expected}");
    assert_eq!(d["kv_heads_per_gpu"], 4);
    // Engine memory by component: the in-budget parts add up to overhead_bytes (vLLM: base,
    // CUDA context, communication at count 2, the larger of the two profiling passes); its
    // CUDA graphs come on top of the usable share.
    let m = &d["engine_memory"];
    let part = |f: &str| m[f].as_i64().unwrap_or_else(|| panic!("{f}: {m}"));
    assert!(part("communication_bytes") > 0);
    assert!(part("cuda_graph_bytes") > 0);
    assert_eq!(m["cuda_graphs_in_budget"], false);
    let sum = part("base_bytes")
        + part("cuda_context_bytes")
        + part("communication_bytes")
        + part("activation_bytes").max(part("sampler_bytes"));
    let overhead = d["overhead_bytes"].as_i64().unwrap();
    assert!((sum - overhead).abs() <= 2, "{sum} vs {overhead}");
    let budget = d["kv_budget_bytes"].as_i64().unwrap();
    let usable = d["usable_bytes"].as_i64().unwrap();
    assert!((budget - (usable - d["weights_bytes"].as_i64().unwrap() / 2 - overhead)).abs() <= 2);
    assert!(d["kv_capacity_tokens"].as_u64().unwrap() >= d["context_tokens"].as_u64().unwrap());
    assert!(d["startup_failure"].is_null());
    assert_eq!(
        d["peak_per_gpu_bytes"].as_i64().unwrap(),
        usable + part("cuda_graph_bytes")
    );
}

#[test]
fn explain_one_deployment_and_unknown_names() {
    let output = deployfit(&[
        "explain",
        "tests/fixtures/golden/seed-models.deploy",
        "--deployment",
        "glm9_32k",
        "--format",
        "json",
    ]);
    assert_eq!(json(&output).as_array().unwrap().len(), 1);
    let unknown = deployfit(&[
        "explain",
        "tests/fixtures/golden/seed-models.deploy",
        "--deployment",
        "glm9_32",
    ]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("did you mean `glm9_32k`?"));
}

#[test]
fn explain_mla_and_sliding_window() {
    let mla = json(&deployfit(&[
        "explain",
        "examples/04-deepseek-v3-mla-moe.deploy",
        "--format",
        "json",
    ]));
    let d = &mla[0];
    // MLA: 61 layers × (512 + 64) × 1 byte (fp8) × 65,536 tokens × 8 sequences.
    assert_eq!(d["kv_bytes"], 61_i64 * 576 * 65_536 * 8);
    assert_eq!(d["kv_heads_replicated"], true);
    assert!(
        d["assumptions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a.as_str().unwrap().contains("MoE experts stay resident"))
    );
    let gemma = json(&deployfit(&[
        "explain",
        "examples/05-gemma-sliding-window.deploy",
        "--format",
        "json",
    ]));
    let g = &gemma[0];
    // 10 global layers hold 131,072 tokens, 52 local layers hold the 1,024-token window:
    // 2 × 16 KV heads × 128 × 34/32 bytes (q8_0) per layer and token.
    let per_layer_token: f64 = 2.0 * 16.0 * 128.0 * 34.0 / 32.0;
    let expected = per_layer_token * (10.0 * 131_072.0 + 52.0 * 1_024.0);
    assert_eq!(g["kv_bytes"].as_f64().unwrap(), expected.round());
}

#[test]
fn matrix_table_with_engine_ranges() {
    let output = deployfit(&["matrix", "THUDM/GLM-4-9B-0414"]);
    assert_eq!(output.status.code(), Some(0));
    insta::assert_snapshot!(stdout(&output));
    let unknown = deployfit(&["matrix", "glm5_9b"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("did you mean `glm4_9b`?"));
    let bad = deployfit(&["matrix", "glm4_9b", "--contexts", "8q"]);
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn export_launch_commands() {
    let vllm = deployfit(&[
        "export",
        "examples/03-llama-70b-tensor-parallel.deploy",
        "--deployment",
        "llama70b_tp2",
        "--engine",
        "vllm",
    ]);
    assert_eq!(vllm.status.code(), Some(0));
    insta::assert_snapshot!("vllm", stdout(&vllm));
    let ollama = deployfit(&[
        "export",
        "examples/02-glm4-32b-at-the-limit.deploy",
        "--deployment",
        "glm32_on_3090",
        "--engine",
        "ollama",
    ]);
    insta::assert_snapshot!("ollama", stdout(&ollama));
    let llamacpp = deployfit(&[
        "export",
        "examples/01-glm4-chat.deploy",
        "--deployment",
        "team_chat",
        "--engine",
        "llamacpp",
    ]);
    insta::assert_snapshot!("llamacpp", stdout(&llamacpp));
    let refused = deployfit(&[
        "export",
        "examples/03-llama-70b-tensor-parallel.deploy",
        "--deployment",
        "llama70b_tp2",
        "--engine",
        "ollama",
    ]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("fp8 weights do not run on ollama"));
}
