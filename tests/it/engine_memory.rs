//! Engine memory beyond weights and KV cache, through the real binary: the components of
//! `explain`, CUDA graphs on top of the share and `enforce_eager`, the startup rules, and
//! engines whose fields put the graphs inside the share (docs/estimation.md, "Engine memory").

use crate::common;

use common::{codes, deployfit_in, explanation, json, scratch, stdout};

const FILE: &str = r#"
// 70B in FP8 on one H100 at 98 %: the CUDA graphs do not fit in the 2 % left.
deployment graphs_oom {
    model    = llama_3_1_70b
    quant    = fp8
    context  = 2k
    engine   = vllm
    gpu      = h100_sxm5
    memory_utilization = 98%
}

// The same without CUDA graphs starts.
deployment eager {
    model    = llama_3_1_70b
    quant    = fp8
    context  = 2k
    engine   = vllm
    gpu      = h100_sxm5
    memory_utilization = 98%
    enforce_eager = yes
}

// An engine that counts its graphs inside its share: no OOM, a larger overhead.
engine vllm_graphs_inside extends vllm {
    graphs_in_budget = yes
}

deployment inside {
    model    = llama_3_1_70b
    quant    = fp8
    context  = 2k
    engine   = vllm_graphs_inside
    gpu      = h100_sxm5
    memory_utilization = 98%
}

// LMDeploy counts the weights inside its share: 70B in BF16 on one H100 is still a plain
// misfit (does_not_fit), not an engine that runs out of KV budget.
deployment lmdeploy_too_big {
    model    = llama_3_1_70b
    quant    = bf16
    context  = 2k
    engine   = lmdeploy
    gpu      = h100_sxm5
}

// llama.cpp has no startup check: a context its KV cache cannot hold is does_not_fit.
deployment llamacpp_long {
    model    = llama_3_1_8b
    quant    = Q4_K_M
    context  = 128k
    seqs     = 4
    engine   = llamacpp
    gpu      = rtx_3060_12gb
}
"#;

#[test]
fn engine_memory_components_and_startup_rules() {
    let dir = scratch("engine-memory");
    std::fs::write(dir.join("engine.deploy"), FILE).unwrap();

    let explained = json(&deployfit_in(
        &dir,
        &["explain", "engine.deploy", "--format", "json"],
    ));
    let by_name = |name: &str| explanation(&explained, name).clone();
    let oom = by_name("graphs_oom");
    assert_eq!(oom["startup_failure"], "cuda_graphs_oom");
    assert_eq!(oom["verdict"], "does_not_fit");
    let graphs = oom["engine_memory"]["cuda_graph_bytes"].as_i64().unwrap();
    // 0.325 GiB + 80 layers × 17,749,054 B
    assert_eq!(graphs, 348_966_093 + 80 * 17_749_054);
    assert!(
        oom["peak_per_gpu_bytes"].as_i64().unwrap()
            == oom["usable_bytes"].as_i64().unwrap() + graphs
    );

    let eager = by_name("eager");
    assert_eq!(eager["engine_memory"]["cuda_graph_bytes"], 0);
    assert!(eager["startup_failure"].is_null());
    assert_ne!(eager["verdict"], "does_not_fit");
    assert_eq!(eager["overhead_bytes"], oom["overhead_bytes"]);

    let inside = by_name("inside");
    assert!(inside["startup_failure"].is_null());
    assert_eq!(inside["engine_memory"]["cuda_graphs_in_budget"], true);
    assert_eq!(
        inside["overhead_bytes"].as_i64().unwrap(),
        oom["overhead_bytes"].as_i64().unwrap() + graphs
    );

    assert_eq!(
        by_name("lmdeploy_too_big")["startup_failure"],
        "weights_exceed_usable"
    );
    let llamacpp = by_name("llamacpp_long");
    assert!(llamacpp["startup_failure"].is_null());
    assert_eq!(llamacpp["verdict"], "does_not_fit");

    // The diagnostics: one per deployment that fails, each with its own code.
    let report = json(&deployfit_in(
        &dir,
        &["check", "engine.deploy", "--format", "json"],
    ));
    let codes = codes(&report);
    let count = |code: &str| codes.iter().filter(|c| *c == code).count();
    assert_eq!(count("deploy::fit::cuda_graphs_oom"), 1, "{codes:?}");
    assert_eq!(count("deploy::fit::does_not_fit"), 2, "{codes:?}");
    assert_eq!(count("deploy::fit::no_kv_budget"), 0, "{codes:?}");
    let oom_diag = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "deploy::fit::cuda_graphs_oom")
        .unwrap();
    let help = oom_diag["help"].as_str().unwrap();
    assert!(
        help.contains("memory_utilization = 97%") && help.contains("enforce_eager = yes"),
        "{help}"
    );

    // The table names the components.
    let table = stdout(&deployfit_in(
        &dir,
        &["explain", "engine.deploy", "--deployment", "graphs_oom"],
    ));
    for part in [
        "CUDA context 256.00 MiB",
        "activation peak 1.69 GiB (sampler over 1024 sequences)",
        "CUDA graphs      1.65 GiB   per GPU, on top of the usable share",
        "out of memory capturing CUDA graphs",
    ] {
        assert!(table.contains(part), "{part:?} in\n{table}");
    }
}
