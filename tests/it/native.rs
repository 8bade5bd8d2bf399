//! What a GPU runs natively (issue #13 part 2): a quant's `tensor` type against the GPU
//! architecture's tensor rates and the engine's `fallback`, through the real binary.

use crate::common;

use std::path::{Path, PathBuf};

use common::{codes, deployfit_in, json, scratch};

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn check(dir: &Path, file: &str) -> serde_json::Value {
    json(&deployfit_in(dir, &["check", file, "--format", "json"]))
}

/// The codes of the diagnostics on one deployment (by its name's line).
fn codes_of(report: &serde_json::Value, deployment: &str) -> Vec<String> {
    let line = report["deployments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["name"] == deployment)
        .unwrap_or_else(|| panic!("no deployment {deployment}: {report}"))["line"]
        .as_u64()
        .unwrap();
    report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["line"].as_u64() == Some(line))
        .map(|d| d["code"].as_str().unwrap().to_string())
        .collect()
}

fn figures<'a>(report: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    &report["deployments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["name"] == name)
        .unwrap_or_else(|| panic!("no deployment {name}: {report}"))["display"]
}

fn bytes(figures: &serde_json::Value, name: &str) -> f64 {
    let text = figures[name]
        .as_str()
        .unwrap_or_else(|| panic!("{name}: {figures}"));
    let (number, unit) = text.split_once(' ').unwrap();
    let n: f64 = number.replace(',', "").parse().unwrap();
    match unit {
        "GiB" => n * (1u64 << 30) as f64,
        "MiB" => n * (1u64 << 20) as f64,
        other => panic!("unit {other} in {text}"),
    }
}

const NOT_NATIVE: &str = "deploy::fit::quant_not_native";
const UNSUPPORTED: &str = "deploy::fit::quant_unsupported_on_gpu";

/// Entries of the user's own, so that the logic is tested apart from the stdlib's data:
/// the behaviour comes from `tensor`, `arch`, `weight_only` and `fallback` alone.
const OWN: &str = "\
// Données à moi — ünïcödé around every span: 中文
arch no_fp8 { name = \"Sans FP8\"; vendor = nvidia; bf16_rate = 1024; weight_only = yes }
arch no_kernels { name = \"Old\"; vendor = nvidia; fp16_rate = 1024; weight_only = no }
arch with_fp8 { name = \"Avec FP8\"; vendor = nvidia; bf16_rate = 1024; fp8_rate = 2048; weight_only = yes }
quant f8 { bits = 8; bpw = 8.5; kind = fp; tensor = fp8 }
gpu old_card { name = \"Ancienne\"; vendor = nvidia; arch = no_fp8; memory = 48 GiB; bandwidth = 700 GB/s; bf16 = 150 TFLOPS; family = workstation; price = $0.50/h }
gpu older_card { name = \"Plus ancienne\"; vendor = nvidia; arch = no_kernels; memory = 48 GiB; bandwidth = 700 GB/s; bf16 = 150 TFLOPS; family = workstation }
gpu new_card { name = \"Nouvelle\"; vendor = nvidia; arch = with_fp8; memory = 48 GiB; bandwidth = 700 GB/s; bf16 = 150 TFLOPS; fp8 = 300 TFLOPS; family = workstation; price = $0.90/h }
gpu no_arch_card { name = \"Inconnue\"; vendor = nvidia; memory = 48 GiB; bandwidth = 700 GB/s; bf16 = 150 TFLOPS; family = workstation }
gpu copy_of_old extends old_card { name = \"Copie — é\" }
engine wo extends vllm { fallback = weight_only; archs = [no_fp8, no_kernels, with_fp8] }
engine up extends vllm { fallback = upcast; archs = [no_fp8, no_kernels, with_fp8] }
engine strict extends vllm { fallback = none; archs = [no_fp8, no_kernels, with_fp8] }

deployment on_old { model = qwen3_8b; quant = f8; engine = wo; gpu = old_card; context = 8k }
deployment on_copy { model = qwen3_8b; quant = f8; engine = wo; gpu = copy_of_old; context = 8k }
deployment on_new { model = qwen3_8b; quant = f8; engine = wo; gpu = new_card; context = 8k }
deployment on_unknown { model = qwen3_8b; quant = f8; engine = wo; gpu = no_arch_card; context = 8k }
deployment no_kernels { model = qwen3_8b; quant = f8; engine = wo; gpu = older_card; context = 8k }
deployment upcast { model = qwen3_8b; quant = f8; engine = up; gpu = old_card; context = 8k }
deployment strict { model = qwen3_8b; quant = f8; engine = strict; gpu = old_card; context = 8k }
deployment bf16_old { model = qwen3_8b; quant = bf16; engine = wo; gpu = old_card; context = 8k }
deployment bf16_new { model = qwen3_8b; quant = bf16; engine = wo; gpu = new_card; context = 8k }
";

#[test]
fn support_follows_architecture_and_engine_fallback() {
    let dir = scratch("native_own");
    write(&dir, "own.deploy", OWN);
    let report = check(&dir, "own.deploy");
    // Weight-only on an architecture without FP8 tensor cores: a warning that says why,
    // and alternatives from the catalog.
    assert_eq!(codes_of(&report, "on_old"), [NOT_NATIVE], "{report}");
    let old = figures(&report, "on_old");
    assert_eq!(old["quant_support"], "weight-only");
    let note = old["quant_support_note"].as_str().unwrap();
    assert!(note.contains("no FP8 tensor cores"), "{note}");
    assert!(
        note.contains("Sans FP8"),
        "the architecture's display name: {note}"
    );
    let advice = old["quant_support_advice"].as_str().unwrap();
    assert!(
        advice.contains("new_card"),
        "a GPU that runs f8 natively: {advice}"
    );
    // An `extends` copy behaves as the original.
    assert_eq!(codes_of(&report, "on_copy"), [NOT_NATIVE]);
    assert_eq!(figures(&report, "on_copy")["quant_support"], "weight-only");
    // Native: no diagnostic.
    assert!(codes_of(&report, "on_new").is_empty(), "{report}");
    assert_eq!(figures(&report, "on_new")["quant_support"], "native");
    // No architecture: no judgement.
    assert!(codes_of(&report, "on_unknown").is_empty(), "{report}");
    // Weight-only fallback without weight-only kernels, or no fallback: an error.
    assert_eq!(codes_of(&report, "no_kernels"), [UNSUPPORTED]);
    assert_eq!(codes_of(&report, "strict"), [UNSUPPORTED]);
    assert_eq!(figures(&report, "strict")["quant_runs_on_gpu"], "false");
    // Upcast: a warning, and the weights take 16 bits per parameter.
    assert_eq!(codes_of(&report, "upcast"), [NOT_NATIVE]);
    let up = figures(&report, "upcast");
    assert_eq!(up["quant_support"], "upcast");
    let ratio = bytes(up, "weights_memory") / bytes(old, "weights_memory");
    assert!(
        (ratio - 16.0 / 8.5).abs() < 0.01,
        "upcast / fp8 weights: {ratio}"
    );
    assert_eq!(
        bytes(up, "weights_memory"),
        bytes(figures(&report, "bf16_old"), "weights_memory")
    );
    // A 16-bit format is native on both.
    assert!(codes_of(&report, "bf16_old").is_empty());
}

#[test]
fn native_fp8_multiplies_at_the_fp8_peak_and_weight_only_at_16_bit() {
    let dir = scratch("native_speed");
    write(&dir, "own.deploy", OWN);
    let report = check(&dir, "own.deploy");
    let prefill = |name: &str| -> f64 {
        let text = figures(&report, name)["prefill_tps"]
            .as_str()
            .unwrap()
            .to_string();
        text.split(' ')
            .next()
            .unwrap()
            .replace(',', "")
            .parse()
            .unwrap()
    };
    // Same card figures except the architecture: native FP8 prefills faster than bf16...
    assert!(
        prefill("on_new") > 1.5 * prefill("bf16_new"),
        "{} vs {}",
        prefill("on_new"),
        prefill("bf16_new")
    );
    // ... while weight-only FP8 multiplies at the 16-bit rate.
    assert_eq!(prefill("on_old"), prefill("bf16_old"));
}

/// The acceptance line, on the stdlib's own data.
#[test]
fn fp8_with_vllm_warns_on_an_a40_and_not_on_an_h100() {
    let dir = scratch("native_catalog");
    write(
        &dir,
        "fp8.deploy",
        "deployment a40 { model = llama_3_1_8b; quant = fp8; engine = vllm; gpu = a40; context = 8k }\n\
         deployment h100 { model = llama_3_1_8b; quant = fp8; engine = vllm; gpu = h100_sxm5; context = 8k }\n\
         deployment t4 { model = llama_3_1_8b; quant = fp8; engine = vllm; gpu = t4; context = 4k }\n",
    );
    let report = check(&dir, "fp8.deploy");
    assert!(
        codes_of(&report, "a40").iter().any(|c| c == NOT_NATIVE),
        "{report}"
    );
    let h100 = codes_of(&report, "h100");
    assert!(
        !h100.iter().any(|c| c == NOT_NATIVE || c == UNSUPPORTED),
        "{h100:?}"
    );
    assert!(codes_of(&report, "t4").iter().any(|c| c == UNSUPPORTED));
    // The whole report's codes include both, once each per deployment.
    let all = codes(&report);
    assert_eq!(all.iter().filter(|c| *c == NOT_NATIVE).count(), 1);
}
