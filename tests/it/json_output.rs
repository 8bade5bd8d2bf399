//! The JSON outputs are their own shapes (issue 33): quantities are numbers under keys that
//! name their unit (`memory_per_gpu_bytes`), never formatted strings; the display text sits
//! beside them (`display`, `*_display`). Checked through the binary on files written the
//! way a user writes them.

use crate::common;

use common::{deployfit, deployfit_in, json, root, scratch};
use deployfit_host::eval::figures::{PROPERTIES, json_key};
use deployfit_host::eval::schema::FieldTy;

/// A string that reads like a formatted quantity: `"7.42 GiB"`, `"$0.43/h"`, `"90.1 tok/s"`,
/// `"32k"`, `"67.5%"`.
fn formatted_quantity(text: &str) -> bool {
    let text = text.trim_start_matches(['$', '~']);
    let digits = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == ','))
        .unwrap_or(text.len());
    if digits == 0 {
        return false;
    }
    let unit = text[digits..].trim_start();
    [
        "GiB", "MiB", "KiB", "GB", "MB", "B", "tok/s", "ms", "s", "%", "/h", "/Mtok", "k", "M",
    ]
    .contains(&unit)
}

/// Every string value of `value` outside `display` objects and `*_display` keys that reads
/// like a formatted quantity, with its path.
fn formatted_strings(value: &serde_json::Value, path: &str, out: &mut Vec<String>) {
    match value {
        serde_json::Value::Object(map) => {
            for (key, item) in map {
                if key == "display" || key.ends_with("_display") {
                    continue;
                }
                formatted_strings(item, &format!("{path}.{key}"), out);
            }
        }
        serde_json::Value::Array(items) => {
            for item in items {
                formatted_strings(item, &format!("{path}[]"), out);
            }
        }
        serde_json::Value::String(text) if formatted_quantity(text) => {
            out.push(format!("{path} = {text:?}"))
        }
        _ => {}
    }
}

const CHAT: &str = "// Équipe « chat » — a file as a user writes it, quoted ids and all.\n\
deployment chat {\n    model  = glm4_9b\n    quant  = Q4_K_M\n    engine = llamacpp\n    \
gpu    = rtx_3090\n    context = 16k\n}\n";

#[test]
fn check_json_gives_numbers_under_unit_keys_beside_the_display_text() {
    let dir = scratch("json_output_check");
    std::fs::write(dir.join("chat.deploy"), CHAT).unwrap();
    let output = deployfit_in(&dir, &["check", "--format", "json", "chat.deploy"]);
    assert_eq!(output.status.code(), Some(0));
    let report = json(&output);
    assert_eq!(report["version"], 2);
    let deployment = &report["deployments"][0];
    let figures = deployment["figures"].as_object().expect("figures");
    let display = deployment["display"].as_object().expect("display");
    assert!(figures.len() > 40, "{deployment}");
    // Every property printed is there as a number, flag or word under its unit key.
    for prop in PROPERTIES {
        let Some(shown) = display.get(prop.name) else {
            continue;
        };
        let (key, _) = json_key(prop.name, prop.ty);
        let value = figures
            .get(&key)
            .unwrap_or_else(|| panic!("{key} missing for {}", prop.name));
        match prop.ty {
            FieldTy::Q(_) | FieldTy::Number | FieldTy::Ratio => {
                assert!(value.is_number(), "{key} = {value} ({shown})")
            }
            FieldTy::Predicate => assert!(value.is_boolean(), "{key} = {value}"),
            _ => assert!(value.is_string(), "{key} = {value}"),
        }
    }
    // Exact bytes, in agreement with the display text.
    let bytes = figures["memory_per_gpu_bytes"]
        .as_i64()
        .expect("integer bytes");
    let gib: f64 = display["memory_per_gpu"]
        .as_str()
        .and_then(|t| t.strip_suffix(" GiB"))
        .and_then(|t| t.parse().ok())
        .expect("GiB display");
    assert!(
        (bytes as f64 / (1u64 << 30) as f64 - gib).abs() < 0.006,
        "{bytes} vs {gib}"
    );
    // The largest context that fits: whole tokens, at least the 16k asked for.
    let max_context = figures["max_context_tokens"]
        .as_u64()
        .expect("whole tokens");
    assert!(max_context >= 16384, "{deployment}");
    assert_eq!(figures["fits"], true);
    let cost = figures["cost_per_hour_usd"].as_f64().expect("a number");
    assert_eq!(display["cost_per_hour"], format!("${cost:.2}/h"));
    let mut strings = Vec::new();
    formatted_strings(&report, "", &mut strings);
    assert!(
        strings.is_empty(),
        "formatted quantities:\n{}",
        strings.join("\n")
    );
}

/// The keys docs/cli.md's table gives as examples are the ones `json_key` makes.
#[test]
fn the_documented_json_keys_are_the_ones_printed() {
    let docs = std::fs::read_to_string(root().join("docs/cli.md")).unwrap();
    for (name, key) in [
        ("memory_per_gpu", "memory_per_gpu_bytes"),
        ("max_context", "max_context_tokens"),
        ("kv_capacity", "kv_capacity_tokens"),
        ("ttft", "ttft_seconds"),
        ("tpot_p99", "tpot_p99_seconds"),
        ("decode_tps", "decode_tps"),
        ("prefill_tps_low", "prefill_tps_low"),
        ("throughput", "throughput_tps"),
        ("cost_per_hour", "cost_per_hour_usd"),
        ("cost_per_mtok", "cost_per_mtok_usd"),
        ("utilization", "utilization"),
        ("gpu_layers", "gpu_layers"),
        ("fits", "fits"),
    ] {
        let prop = PROPERTIES
            .iter()
            .find(|p| p.name == name)
            .unwrap_or_else(|| panic!("no property {name}"));
        assert_eq!(json_key(prop.name, prop.ty).0, key);
        assert!(
            docs.contains(&format!("`{key}`")),
            "docs/cli.md lacks `{key}`"
        );
    }
}

/// No JSON output prints a quantity as a formatted string outside its display text.
#[test]
fn no_json_output_prints_a_formatted_quantity() {
    let example = |name: &str| {
        root()
            .join("examples")
            .join(name)
            .to_string_lossy()
            .into_owned()
    };
    let runs: Vec<Vec<String>> = vec![
        vec!["explain".into(), example("01-glm4-chat.deploy")],
        vec!["explain".into(), example("13-mixed-fleet.deploy")],
        vec!["solve".into(), example("12-cheapest-gpu.deploy")],
        vec!["solve".into(), example("13-mixed-fleet.deploy")],
        vec!["gpus".into(), "glm4_9b".into()],
        vec!["models".into(), "--gpu".into(), "rtx_4090".into()],
        vec!["models".into(), "--search".into(), "qwen".into()],
        vec!["model".into(), "google/gemma-3-27b-pt".into()],
        vec!["matrix".into(), "glm4_9b".into()],
    ];
    for args in runs {
        let mut args: Vec<&str> = args.iter().map(String::as_str).collect();
        args.extend(["--format", "json"]);
        let output = deployfit(&args);
        assert!(output.status.success(), "{args:?}");
        let mut strings = Vec::new();
        formatted_strings(&json(&output), "", &mut strings);
        assert!(
            strings.is_empty(),
            "{args:?} prints formatted quantities:\n{}",
            strings.join("\n")
        );
    }
}
