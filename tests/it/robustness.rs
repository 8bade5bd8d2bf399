//! Hostile and broken input: never a panic, always exit code 0 or 1 and a diagnostic.

use crate::common;

use std::path::Path;

use common::{codes, deploy_files, deployfit_in, json, scratch};
use deployfit_host::{Severity, Workspace};

/// Runs the binary on a file with these bytes and returns the JSON report.
fn check_bytes(name: &str, bytes: &[u8]) -> serde_json::Value {
    let dir = scratch(name);
    std::fs::write(dir.join("input.deploy"), bytes).unwrap();
    let output = deployfit_in(&dir, &["check", "--format", "json", "input.deploy"]);
    let code = output.status.code();
    assert!(
        matches!(code, Some(0) | Some(1)),
        "{name}: exit code {code:?}, stderr {}",
        String::from_utf8_lossy(&output.stderr)
    );
    json(&output)
}

#[test]
fn every_prefix_of_every_example_checks_without_panicking() {
    let mut files = deploy_files("examples");
    files.extend(deploy_files("tests/fixtures/design"));
    let mut workspace = Workspace::new();
    let mut checked = 0;
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let name = Path::new("prefix.deploy");
        for end in (0..=text.len()).filter(|i| text.is_char_boundary(*i)) {
            let file = workspace.set_file(name, text[..end].to_string());
            let diagnostics = workspace.check(file);
            for diag in &diagnostics {
                assert!(
                    !diag.code.is_empty() && diag.help.is_some(),
                    "{}: {diag:?}",
                    path.display()
                );
                assert!(
                    diag.location.span.end as usize <= end.max(1),
                    "span inside the text"
                );
            }
            checked += 1;
        }
    }
    assert!(checked > 3000, "checked {checked} prefixes");
}

#[test]
fn empty_file_is_clean() {
    let report = check_bytes("empty", b"");
    assert!(codes(&report).is_empty());
}

#[test]
fn non_utf8_bytes_are_reported() {
    let report = check_bytes(
        "latin1",
        b"deployment d {\n    model = glm4_9b // caf\xe9\n}\n// \xff\xfe\n",
    );
    let codes = codes(&report);
    assert!(
        codes.contains(&"deploy::syntax::invalid_utf8".to_string()),
        "{codes:?}"
    );
    assert!(
        codes.contains(&"deploy::field::missing".to_string()),
        "the rest is still checked: {codes:?}"
    );
}

#[test]
fn ten_thousand_nested_parentheses_are_refused_with_a_diagnostic() {
    let text = format!(
        "deployment deep {{\n    model = glm4_9b\n    quant = Q4_K_M\n    gpu = rtx_3090\n    require {}fits{}\n}}\n",
        "(".repeat(10_000),
        ")".repeat(10_000)
    );
    let report = check_bytes("nested", text.as_bytes());
    assert_eq!(codes(&report), ["deploy::syntax::too_deep"]);
    let inside_string = format!(
        "rule r {{\n    level = warn\n    when = fits\n    message = \"{{{}fits{}}}\"\n}}\n",
        "(".repeat(10_000),
        ")".repeat(10_000)
    );
    let report = check_bytes("nested_interpolation", inside_string.as_bytes());
    assert!(codes(&report).contains(&"deploy::syntax::too_deep".to_string()));
}

#[test]
fn a_five_megabyte_file_is_checked() {
    let block = "deployment d_N {\n    model    = glm4_9b\n    quant    = Q4_K_M\n    context  = 8k\n    engine   = llamacpp\n    gpu      = rtx_3090\n    require fits\n}\n\n";
    let mut text = String::new();
    let mut n = 0;
    while text.len() < 5 * 1024 * 1024 {
        text.push_str(&block.replace('N', &n.to_string()));
        n += 1;
    }
    let report = check_bytes("five_mb", text.as_bytes());
    assert!(codes(&report).is_empty());
    assert_eq!(report["deployments"].as_array().unwrap().len(), n);
}

#[test]
fn garbage_gets_diagnostics_not_panics() {
    let inputs: &[&[u8]] = &[
        b"}}}}{{{{",
        b"deployment",
        b"deployment x",
        b"deployment x {",
        b"deployment x { model = }",
        b"gpu g { memory = 1e999999 GiB }",
        b"gpu g { memory = 99999999999999999999999999999999999999999 GiB }",
        b"gpu g { memory = -5 GiB }\ndeployment d { model = glm4_9b\n quant = Q4_K_M\n gpu = g }",
        b"deployment d { model = glm4_9b\n quant = Q4_K_M\n gpu = rtx_3090\n seqs = 0 }",
        b"deployment d { model = glm4_9b\n quant = Q4_K_M\n gpu = rtx_3090\n count = 1000000000000 }",
        b"deployment d { model = glm4_9b\n quant = Q4_K_M\n gpu = rtx_3090\n require 1 / 0 > 1 }",
        b"rule r { level = warn\n when = context / 0 > 1 tokens\n message = \"x\" }\ndeployment d { model = glm4_9b\n quant = Q4_K_M\n gpu = rtx_3090 }",
        b"import \"input.deploy\"\nimport \"../../../../../../etc/passwd\"",
        b"model m extends m {}\n",
        b"deployment d { workload { rate = 5 } }",
        b"\"unterminated",
        b"///",
        b"\xef\xbb\xbfdeployment bom {}",
        b"deployment d { allow = [no_such_rule, tight_fit] }",
    ];
    for (i, input) in inputs.iter().enumerate() {
        let report = check_bytes(&format!("garbage_{i}"), input);
        for diag in report["diagnostics"].as_array().unwrap() {
            assert!(
                diag["help"].is_string(),
                "{}: {diag}",
                String::from_utf8_lossy(input)
            );
        }
    }
}

#[test]
fn pest_call_limit_is_a_diagnostic() {
    // One huge block: hundreds of thousands of entries in a single declaration.
    let mut text = String::from("deployment huge {\n");
    while text.len() < 6 * 1024 * 1024 {
        text.push_str("    require fits and fits and fits\n");
    }
    text.push_str("}\n");
    let parsed = deployfit_host::syntax::parse(&text);
    assert!(
        parsed
            .errors
            .iter()
            .any(|e| e.code.as_str() == "deploy::syntax::limit"),
        "{:?}",
        parsed.errors.first()
    );
    let mut workspace = Workspace::new();
    let file = workspace.set_file(Path::new("huge.deploy"), text);
    let diagnostics = workspace.check(file);
    assert!(diagnostics.iter().any(|d| d.severity == Severity::Error));
}

#[test]
fn every_design_example_parses() {
    for path in deploy_files("tests/fixtures/design") {
        let text = std::fs::read_to_string(&path).unwrap();
        let parsed = deployfit_host::syntax::parse(&text);
        assert!(
            parsed.errors.is_empty(),
            "{}: {:?}",
            path.display(),
            parsed.errors
        );
        assert!(!parsed.decls.is_empty());
    }
}
