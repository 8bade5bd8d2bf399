//! An engine's `version` selects the catalog's figures for that release (stdlib
//! engines with `release_of`), through the real binary.

use crate::common;

use common::{codes, deployfit, diagnostic, explanation, json, scratch, write};

const FILE: &str = r#"
// «vLLM» as a user pins it: a V0 release, a current one, and one that is not a release
deployment old {
    model   = "meta-llama/Llama-3.1-8B-Instruct"
    quant   = fp16
    gpu     = "RTX 4090"
    engine  = vllm
    version = "v0.6.3.post1"
    context = 4k
    seqs    = 8
    workload { prompt = 1024; output = 256 }
}
deployment current {
    model   = "meta-llama/Llama-3.1-8B-Instruct"
    quant   = fp16
    gpu     = "RTX 4090"
    engine  = vllm
    version = "0.19.1"
    context = 4k
    seqs    = 8
    workload { prompt = 1024; output = 256 }
}
deployment unpinned {
    model   = "meta-llama/Llama-3.1-8B-Instruct"
    quant   = fp16
    gpu     = "RTX 4090"
    engine  = vllm
    context = 4k
    seqs    = 8
    workload { prompt = 1024; output = 256 }
}
deployment wrong {
    model   = "meta-llama/Llama-3.1-8B-Instruct"
    quant   = fp16
    gpu     = "RTX 4090"
    engine  = vllm
    version = "dernière-é"
}
"#;

#[test]
fn a_version_selects_the_release_entry_and_its_behaviour() {
    let dir = scratch("engine_versions");
    let path = write(&dir, "versions.deploy", FILE);
    let path = path.to_string_lossy();
    let all = json(&deployfit(&["explain", &path, "--format", "json"]));
    let (old, current, unpinned) = (
        explanation(&all, "old"),
        explanation(&all, "current"),
        explanation(&all, "unpinned"),
    );
    assert_eq!(old["engine_release"], "vllm_v0", "{old}");
    assert!(current.get("engine_release").is_none(), "{current}");
    // The current release is the engine's own figures.
    assert_eq!(current["ttft_s"], unpinned["ttft_s"]);
    // V0 runs waiting prompts in prefill-only steps with the whole context as its budget
    // and profiles 256 sequences: a different first token and activation peak.
    assert_ne!(old["ttft_s"], current["ttft_s"]);
    assert!(old["assumptions"].to_string().contains("vllm_v0"));
    // Not a release: a diagnostic on the string, with the form to write.
    let report = json(&deployfit(&["check", &path, "--format", "json"]));
    assert!(codes(&report).contains(&"deploy::field::invalid_id".to_string()));
    let diag = diagnostic(&report, "deploy::field::invalid_id");
    assert!(
        diag["help"]
            .as_str()
            .unwrap()
            .contains("version = \"0.6.3\"")
    );
    let span = &diag["span"];
    let (start, end) = (
        span["start"].as_u64().unwrap() as usize,
        span["end"].as_u64().unwrap() as usize,
    );
    assert_eq!(&FILE.as_bytes()[start..end], "\"dernière-é\"".as_bytes());
}
