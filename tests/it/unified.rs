//! Unified memory the system shares (GB10 / DGX Spark): an engine that allocates its share
//! at startup holds all of it, and the system keeps its own part (stdlib gpus.deploy
//! `gb10`: `visible_memory`, `system_reserved`), through the real binary.

use crate::common;

use common::{codes, deployfit, deployment_figures, json, scratch, write};

#[test]
fn a_spark_share_that_leaves_the_system_too_little_is_not_comfortable() {
    let dir = scratch("unified_spark");
    let path = write(
        &dir,
        "spark.deploy",
        r#"
// «DGX Spark» as people write it
deployment at_80 {
    model              = "Qwen/Qwen3-30B-A3B"
    quant              = fp8
    gpu                = "DGX Spark"
    engine             = vllm
    context            = 32k
    memory_utilization = 80%
}
deployment vllm_default {
    model   = "Qwen/Qwen3-30B-A3B"
    quant   = fp8
    gpu     = "DGX Spark"
    engine  = vllm
    context = 32k
}
deployment llama {
    model   = "Qwen/Qwen3-30B-A3B"
    quant   = Q8_0
    gpu     = "DGX Spark"
    engine  = llamacpp
    context = 32k
}
"#,
    );
    let report = json(&deployfit(&[
        "check",
        &path.to_string_lossy(),
        "--format",
        "json",
    ]));
    let figures = |name: &str| deployment_figures(&report, name).clone();
    // 80 % of the 121.69 GiB CUDA reports is 97.35 GiB held from startup, of the 105.19 GiB
    // the system leaves: tight, whatever the model needs.
    let at_80 = figures("at_80");
    assert_eq!(at_80["fits"], true);
    assert_eq!(at_80["engine_holds_share"], true);
    assert!(at_80["utilization"].as_f64().unwrap() > 0.9, "{at_80}");
    // vLLM's default 90 % asks for more than the system leaves.
    let default = figures("vllm_default");
    assert_eq!(default["fits"], false);
    assert!(
        default["fit_advice"]
            .as_str()
            .unwrap()
            .starts_with("memory_utilization = 85% or less"),
        "{default}"
    );
    // llama.cpp allocates what the context needs.
    let llama = figures("llama");
    assert_eq!(llama["fits"], true);
    assert_eq!(llama["engine_holds_share"], false);
    assert!(llama["utilization"].as_f64().unwrap() < 0.5);
    let codes = codes(&report);
    assert!(codes.contains(&"deploy::fit::unified_memory_tight".to_string()));
    assert!(codes.contains(&"deploy::fit::does_not_fit".to_string()));
    assert!(!codes.contains(&"deploy::fit::tight_fit".to_string()));
}
