//! One fixture per diagnostic code (tests/fixtures/diagnostics/AREA.NAME.deploy for
//! `deploy::AREA::NAME`), each checked through the real binary and snapshotted in the
//! human and JSON formats.

mod common;

use common::{deployfit, json, stdout};

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
        insta::assert_snapshot!("json", stdout(&output));

        let human = deployfit(&["check", &relative]);
        insta::assert_snapshot!("human", stdout(&human));
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
