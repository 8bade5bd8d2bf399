//! `offload = auto`, `host` declarations and `gpu = cpu`, through the real binary.

use crate::common;

use common::{codes, deployfit, json, scratch, stdout};
use serde_json::Value;

const GIB: f64 = (1u64 << 30) as f64;

/// Writes `text` to a scratch file and returns its path.
fn file(dir: &str, text: &str) -> String {
    let dir = scratch(dir);
    let path = dir.join("offload.deploy");
    std::fs::write(&path, text).expect("scratch file");
    path.to_string_lossy().into_owned()
}

fn explain_json(path: &str) -> Vec<Value> {
    let output = deployfit(&["explain", path, "--format", "json"]);
    json(&output).as_array().expect("an array").clone()
}

fn check_json(path: &str) -> (Option<i32>, Value) {
    let output = deployfit(&["check", path, "--format", "json"]);
    (output.status.code(), json(&output))
}

fn number(d: &Value, field: &str) -> f64 {
    d[field]
        .as_f64()
        .unwrap_or_else(|| panic!("{field} missing: {d}"))
}

const ACCEPTANCE: &str = r#"
deployment big_on_one_card {
    model   = llama_3_1_70b
    quant   = Q4_K_M
    context = 8k
    engine  = llamacpp
    gpu     = rtx_4090
    offload = auto
}
"#;

#[test]
fn llama_70b_on_a_4090_fits_with_offload_at_single_digit_speed() {
    let path = file("offload_acceptance", ACCEPTANCE);
    let (code, report) = check_json(&path);
    assert_eq!(code, Some(0), "{report}");
    assert!(
        !codes(&report).contains(&"deploy::fit::does_not_fit".to_string()),
        "{report}"
    );
    // Offload fills the GPU by design: no tight-fit warning about it.
    assert!(
        !codes(&report).contains(&"deploy::fit::tight_fit".to_string()),
        "{report}"
    );
    let all = explain_json(&path);
    let d = &all[0];
    assert_eq!(d["verdict"], "fits_with_offload", "{d}");
    assert_eq!(d["offload"], "auto");
    assert_eq!(d["layers"], 80);
    let gpu_layers = number(d, "gpu_layers");
    assert!(
        (20.0..60.0).contains(&gpu_layers),
        "a 24 GB card holds about half of 80 layers of a 40 GiB model: {gpu_layers}"
    );
    let host = number(d, "host_bytes");
    let weights = number(d, "weights_bytes");
    assert!(
        host > 0.3 * weights && host < 0.8 * weights,
        "{host} of {weights}"
    );
    assert_eq!(number(d, "host_memory_bytes"), 64.0 * GIB);
    assert_eq!(d["host"], "desktop_ddr5");
    // The GPU part fits the usable memory.
    assert!(
        number(d, "per_gpu_bytes") <= number(d, "usable_bytes"),
        "{d}"
    );
    let (decode, low, high) = (
        number(d, "decode_tps"),
        number(d, "decode_tps_low"),
        number(d, "decode_tps_high"),
    );
    assert!(
        (1.0..10.0).contains(&decode),
        "single-digit decode: {decode}"
    );
    assert!(
        low < decode && decode < high,
        "[{low}, {high}] around {decode}"
    );
    assert!(high < 10.0, "{high}");
    let table = stdout(&deployfit(&["explain", &path]));
    assert!(table.contains("fits with offload"), "{table}");
    assert!(
        table.contains(&format!(
            "gpu_layers   {:>12}",
            format!("{gpu_layers} of 80")
        )),
        "{table}"
    );
    assert!(table.contains("host RAM"), "{table}");
    assert!(
        table.contains(&format!("llama.cpp -ngl {gpu_layers}")),
        "{table}"
    );
}

#[test]
fn without_offload_the_same_deployment_does_not_fit() {
    let path = file(
        "offload_none",
        &ACCEPTANCE.replace("    offload = auto\n", ""),
    );
    let (code, report) = check_json(&path);
    assert_eq!(code, Some(1));
    assert!(codes(&report).contains(&"deploy::fit::does_not_fit".to_string()));
    let d = &explain_json(&path)[0];
    assert_eq!(d["verdict"], "does_not_fit");
    // No offload, no host figures in the JSON.
    assert!(d.get("gpu_layers").is_none(), "{d}");
    assert!(d.get("host_bytes").is_none(), "{d}");
}

#[test]
fn a_model_that_fits_keeps_every_layer_on_the_gpu() {
    let path = file(
        "offload_fits",
        &ACCEPTANCE.replace("llama_3_1_70b", "llama_3_1_8b"),
    );
    let (code, _) = check_json(&path);
    assert_eq!(code, Some(0));
    let d = &explain_json(&path)[0];
    assert_eq!(d["gpu_layers"], 32);
    assert_eq!(d["layers"], 32);
    assert_eq!(d["host_bytes"], 0);
    assert_ne!(d["verdict"], "fits_with_offload");
    assert_ne!(d["verdict"], "does_not_fit");
    // The speed is the GPU's: the range is the GPU model's, not the host's.
    let without = file(
        "offload_fits_without",
        &ACCEPTANCE
            .replace("llama_3_1_70b", "llama_3_1_8b")
            .replace("    offload = auto\n", ""),
    );
    let plain = &explain_json(&without)[0];
    assert_eq!(d["decode_tps"], plain["decode_tps"]);
    assert_eq!(d["per_gpu_bytes"], plain["per_gpu_bytes"]);
}

#[test]
fn a_host_too_small_does_not_fit_and_the_help_names_host_memory() {
    let path = file(
        "offload_small_host",
        &ACCEPTANCE.replace("offload = auto", "offload = auto\n    host_memory = 8 GiB"),
    );
    let (code, report) = check_json(&path);
    assert_eq!(code, Some(1), "{report}");
    let diag = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "deploy::fit::does_not_fit")
        .unwrap_or_else(|| panic!("no does_not_fit: {report}"))
        .clone();
    let help = diag["help"].as_str().unwrap_or_default();
    assert!(help.contains("host memory"), "{help}");
    assert!(help.contains("host_memory = "), "{help}");
    let d = &explain_json(&path)[0];
    assert_eq!(d["verdict"], "does_not_fit");
    assert_eq!(number(d, "host_memory_bytes"), 8.0 * GIB);
    assert!(number(d, "host_bytes") > 8.0 * GIB);
}

#[test]
fn offload_on_an_engine_that_cannot_is_its_own_diagnostic() {
    let path = file(
        "offload_vllm",
        &ACCEPTANCE
            .replace("llamacpp", "vllm")
            .replace("Q4_K_M", "awq_int4"),
    );
    let (code, report) = check_json(&path);
    assert_eq!(code, Some(1));
    assert_eq!(
        codes(&report),
        vec!["deploy::fit::offload_unsupported".to_string()],
        "{report}"
    );
    let help = report["diagnostics"][0]["help"].as_str().unwrap();
    assert!(
        help.contains("`llamacpp`") && help.contains("`ollama`"),
        "{help}"
    );
    assert!(!help.contains("`vllm`"), "{help}");
}

#[test]
fn cpu_only_decodes_from_the_host() {
    let text = r#"
deployment on_the_cpu {
    model   = llama_3_1_8b
    quant   = Q4_K_M
    context = 8k
    engine  = llamacpp
    gpu     = cpu
}
"#;
    let path = file("offload_cpu", text);
    let (code, report) = check_json(&path);
    assert_eq!(code, Some(0), "{report}");
    let d = &explain_json(&path)[0];
    assert_eq!(d["gpu_layers"], 0);
    assert_eq!(d["verdict"], "comfortable", "{d}");
    // Everything is in host memory, and the host's memory is what is usable.
    assert_eq!(d["host_bytes"], d["per_gpu_bytes"]);
    assert_eq!(number(d, "usable_bytes"), 64.0 * GIB);
    // Decode reads the weights at the host's bandwidth: DDR5-5200 dual channel, about
    // 83 GB/s at the fitted efficiency, on a 4.6 GiB file: 10–16 tok/s.
    let decode = number(d, "decode_tps");
    assert!((8.0..16.0).contains(&decode), "{decode}");
    // A faster host decodes faster.
    let fast = file(
        "offload_cpu_fast",
        &text.replace(
            "gpu     = cpu",
            "gpu     = cpu\n    host    = server_ddr5_12ch",
        ),
    );
    let server = &explain_json(&fast)[0];
    assert!(number(server, "decode_tps") > 4.0 * decode, "{server}");
    // The same deployment without enough RAM does not fit.
    let small = file(
        "offload_cpu_small",
        &text.replace("gpu     = cpu", "gpu     = cpu\n    host_memory = 4 GiB"),
    );
    let (code, report) = check_json(&small);
    assert_eq!(code, Some(1));
    assert!(codes(&report).contains(&"deploy::fit::does_not_fit".to_string()));
}

#[test]
fn an_extends_copy_of_a_host_behaves_the_same() {
    let original = file(
        "offload_host_original",
        &ACCEPTANCE.replace(
            "offload = auto",
            "offload = auto\n    host    = desktop_ddr4",
        ),
    );
    let copy = file(
        "offload_host_copy",
        &format!(
            "host my_box extends desktop_ddr4 {{ name = \"Büro-PC ☃\" }}\n{}",
            ACCEPTANCE.replace("offload = auto", "offload = auto\n    host    = my_box")
        ),
    );
    let (a, b) = (&explain_json(&original)[0], &explain_json(&copy)[0]);
    for field in [
        "verdict",
        "gpu_layers",
        "host_bytes",
        "host_memory_bytes",
        "per_gpu_bytes",
        "decode_tps",
        "decode_tps_low",
        "decode_tps_high",
    ] {
        assert_eq!(a[field], b[field], "{field}");
    }
    assert_eq!(b["host"], "my_box");
    // DDR4 is slower than the default DDR5 host.
    let default = &explain_json(&file("offload_host_default", ACCEPTANCE))[0];
    assert!(number(a, "decode_tps") < number(default, "decode_tps"));
    // A bandwidth override is used as written.
    let faster = file(
        "offload_host_bandwidth",
        &ACCEPTANCE.replace(
            "offload = auto",
            "offload = auto\n    host_bandwidth = 400 GB/s",
        ),
    );
    assert!(number(&explain_json(&faster)[0], "decode_tps") > 2.0 * number(default, "decode_tps"));
}

#[test]
fn properties_and_non_ascii_text_around_the_new_fields() {
    let text = r#"
// Größe — 70B auf einer Karte ✓
host büro_ok {
}
"#;
    // A non-ASCII identifier is a syntax error, reported without a panic.
    let path = file("offload_non_ascii_ident", text);
    let output = deployfit(&["check", &path]);
    assert_eq!(output.status.code(), Some(1));
    assert!(!String::from_utf8_lossy(&output.stderr).contains("panicked"));

    let text = r#"
/// Ein Rechner — 32 GiB ☃
host klein {
    name      = "Kleiner Rechner ☃"
    memory    = 32 GiB // 记忆
    bandwidth = 51.2 GB/s
}

deployment mit_auslagerung {
    model   = llama_3_1_70b // 七十亿 × 10
    quant   = Q4_K_M
    context = 8k
    engine  = llamacpp
    gpu     = rtx_4090
    offload = auto // ☃ auto
    host    = klein
    require gpu_layers >= 20
    require host_memory < 30 GiB else "host RAM ☃ over budget"
    require offloaded
}
"#;
    let path = file("offload_non_ascii", text);
    let output = deployfit(&["check", &path, "--format", "json"]);
    let report = json(&output);
    assert!(
        !codes(&report).contains(&"deploy::require::failed".to_string()),
        "{report}"
    );
    // The human renderer draws spans over the multibyte text without a panic.
    let human = deployfit(&["check", &path]);
    assert!(!String::from_utf8_lossy(&human.stderr).contains("panicked"));
    let all = explain_json(&path);
    let d = all
        .iter()
        .find(|d| d["deployment"] == "mit_auslagerung")
        .expect("explained");
    assert_eq!(d["verdict"], "fits_with_offload");
    assert_eq!(number(d, "host_memory_bytes"), 32.0 * GIB);
    // A require that fails names its own message.
    let failing = file(
        "offload_require",
        &text.replace("host_memory < 30 GiB", "host_memory < 1 GiB"),
    );
    let report = json(&deployfit(&["check", &failing, "--format", "json"]));
    let failed: Vec<&Value> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "deploy::require::failed")
        .collect();
    assert_eq!(failed.len(), 1, "{report}");
    assert!(failed[0]["message"].as_str().unwrap().contains("☃"));
}

#[test]
fn the_editor_shows_fits_with_offload() {
    let mut workspace = deployfit_host::Workspace::new();
    let file = workspace.set_file(
        std::path::Path::new("/offload/editor.deploy"),
        ACCEPTANCE.to_string(),
    );
    let db = workspace.db();
    let hints = deployfit_host::ide::inlay_hints(db, file);
    assert_eq!(hints.len(), 1);
    let label = &hints[0].label;
    assert!(label.contains("fits with offload"), "{label}");
    assert!(label.contains("/80 layers on GPU"), "{label}");
    // Hovering the deployment's name shows the verdict in its breakdown.
    let offset = ACCEPTANCE.find("big_on_one_card").unwrap() + 3;
    let hover = deployfit_host::ide::hover(db, file, offset).expect("a hover");
    assert!(
        hover.markdown.contains("fits with offload"),
        "{}",
        hover.markdown
    );
    // A deployment that fits without offload has no offload hint.
    let file = workspace.set_file(
        std::path::Path::new("/offload/fits.deploy"),
        ACCEPTANCE.replace("llama_3_1_70b", "llama_3_1_8b"),
    );
    let hints = deployfit_host::ide::inlay_hints(workspace.db(), file);
    assert!(!hints[0].label.contains("offload"), "{}", hints[0].label);
}

#[test]
fn export_places_the_layers_it_explains() {
    let path = file("offload_export", ACCEPTANCE);
    let d = &explain_json(&path)[0];
    let gpu_layers = d["gpu_layers"].as_u64().expect("gpu_layers");
    let output = deployfit(&[
        "export",
        &path,
        "--deployment",
        "big_on_one_card",
        "--engine",
        "llamacpp",
    ]);
    assert_eq!(output.status.code(), Some(0));
    let command = stdout(&output);
    assert!(
        command.contains(&format!("--n-gpu-layers {gpu_layers} ")),
        "{command}"
    );
    // Without offload every layer goes to the GPU, as before.
    let fits = file(
        "offload_export_fits",
        &ACCEPTANCE.replace("llama_3_1_70b", "llama_3_1_8b"),
    );
    let output = deployfit(&[
        "export",
        &fits,
        "--deployment",
        "big_on_one_card",
        "--engine",
        "llamacpp",
    ]);
    assert!(
        stdout(&output).contains("--n-gpu-layers 999 "),
        "{}",
        stdout(&output)
    );
}
