//! One fixture per diagnostic code (tests/fixtures/diagnostics/AREA.NAME.deploy for
//! `deploy::AREA::NAME`), each checked through the real binary and snapshotted in the
//! human and JSON formats.

mod common;

use common::{deployfit, json, stdout};

/// `"figures": { ... }` of each deployment in the JSON report, as `"[figures]"`.
fn redact_json_figures(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("\"figures\": {") {
        out.push_str(&rest[..at]);
        out.push_str("\"figures\": \"[figures]\"");
        // Figures are a flat object of strings: it ends at the first `}`.
        let end = rest[at..].find('}').map_or(rest.len(), |i| at + i + 1);
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// The figures of each deployment's summary line in the human report
/// (`d (file.deploy:4): fits, 8.37 GiB ...`), as `[figures]`.
fn redact_summary_figures(text: &str) -> String {
    text.lines()
        .map(|line| {
            let summary = !line.starts_with(' ')
                && !line.starts_with("deploy::")
                && line.contains(".deploy:");
            match line.split_once("): ") {
                Some((head, rest)) if summary && rest != "not evaluated" => {
                    format!("{head}): [figures]\n")
                }
                _ => format!("{line}\n"),
            }
        })
        .collect()
}

#[test]
fn every_fixture_reports_its_code() {
    insta::glob!("fixtures/diagnostics/*.deploy", |path| {
        let name = path.file_stem().unwrap().to_str().unwrap();
        let relative = format!("tests/fixtures/diagnostics/{name}.deploy");
        let expected = match name {
            "rule.NAME" => "deploy::rule::max_four_seqs".to_string(),
            other => format!("deploy::{}", other.replace('.', "::")),
        };

        let output = deployfit(&["check", "--format", "json", &relative]);
        let report = json(&output);
        let codes: Vec<&str> = report["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["code"].as_str().unwrap())
            .collect();
        assert!(
            codes.contains(&expected.as_str()),
            "{relative}: expected {expected}, got {codes:?}"
        );
        for diag in report["diagnostics"].as_array().unwrap() {
            assert!(diag["line"].as_u64().unwrap() >= 1);
            assert!(
                diag["help"].as_str().is_some_and(|h| !h.is_empty()),
                "{relative}: every diagnostic has a help"
            );
        }
        let has_error = report["summary"]["errors"].as_u64().unwrap() > 0;
        assert_eq!(
            output.status.code(),
            Some(if has_error { 1 } else { 0 }),
            "{relative}"
        );
        // A snapshot shows the figures only when its code is about them: a new
        // property or a recalibration does not rewrite the snapshot of a syntax error.
        let about_figures = ["fit", "require", "rule", "solve", "eval"]
            .iter()
            .any(|area| name.starts_with(&format!("{area}.")));
        let redact = |text: String, redact: fn(&str) -> String| {
            if about_figures { text } else { redact(&text) }
        };
        insta::assert_snapshot!("json", redact(stdout(&output), redact_json_figures));

        let human = deployfit(&["check", &relative]);
        insta::assert_snapshot!("human", redact(stdout(&human), redact_summary_figures));
    });
}

#[test]
fn every_documented_code_has_a_fixture() {
    for (code, _) in deployfit_compiler::diagnostics::codes::CODES {
        let stem = code.trim_start_matches("deploy::").replace("::", ".");
        let path = common::root().join(format!("tests/fixtures/diagnostics/{stem}.deploy"));
        if stem == "syntax.limit" {
            // Reaching pest's call limit takes megabytes of input; tests/robustness.rs
            // generates it instead of keeping a fixture.
            continue;
        }
        assert!(path.exists(), "no fixture for {code} at {}", path.display());
    }
}
