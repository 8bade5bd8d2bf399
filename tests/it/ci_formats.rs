//! `check --format gitlab | junit | rdjson` through the real binary: each output checked
//! against its format's schema (GitLab Code Quality, JUnit XML, reviewdog's rdjson).

use crate::common;

use std::collections::HashSet;
use std::path::Path;

use common::{deployfit, deployfit_in, scratch, stdout};

/// A file with an error, a warning, an info, a deployment without findings, a syntax-level
/// error outside any deployment, two identical findings, and non-ASCII text around spans.
const MIXED: &str = "\
// Déploiements — ünïcödé: 中文 <&> \"quotes\"
deployment trop_grand {
    model   = glm4_32b   // « commentaire »
    quant   = bf16
    context = 32k
    engine  = vllm
    gpu     = rtx_3090
}

deployment serre { // « serré »
    model   = llama_3_1_8b
    quant   = fp16
    context = 8k
    seqs    = 4
    engine  = vllm
    gpu     = l4
}

deployment fine { model = qwen3_8b; quant = Q4_K_M; engine = llamacpp; gpu = rtx_4090; context = 8k }

gpu broken { memory = -1 GiB }
rule r { level = warn; when = fits; message = \"coût — {bogus}\" }
";

fn mixed(dir: &Path) {
    std::fs::write(dir.join("mixed.deploy"), MIXED).unwrap();
}

fn run(dir: &Path, format: &str) -> (String, Option<i32>) {
    let output = deployfit_in(dir, &["check", "mixed.deploy", "--format", format]);
    (stdout(&output), output.status.code())
}

#[test]
fn gitlab_code_quality_report() {
    let dir = scratch("ci_gitlab");
    mixed(&dir);
    let (text, code) = run(&dir, "gitlab");
    assert_eq!(code, Some(1), "errors fail the run in every format");
    let issues: serde_json::Value = serde_json::from_str(&text).expect("a JSON document");
    let issues = issues.as_array().expect("Code Quality is a JSON array");
    assert!(issues.len() >= 3, "{text}");
    let mut fingerprints = HashSet::new();
    let mut severities = HashSet::new();
    for issue in issues {
        for key in ["description", "check_name", "fingerprint", "severity"] {
            assert!(
                issue[key].as_str().is_some_and(|s| !s.is_empty()),
                "{key} in {issue}"
            );
        }
        assert!(
            issue["check_name"]
                .as_str()
                .unwrap()
                .starts_with("deploy::")
        );
        let severity = issue["severity"].as_str().unwrap();
        assert!(
            ["info", "minor", "major", "critical", "blocker"].contains(&severity),
            "{severity}"
        );
        severities.insert(severity.to_string());
        assert!(
            fingerprints.insert(issue["fingerprint"].as_str().unwrap().to_string()),
            "fingerprints are unique: {issue}"
        );
        assert_eq!(issue["location"]["path"], "mixed.deploy");
        let begin = issue["location"]["lines"]["begin"].as_u64().unwrap();
        assert!((1..=22).contains(&begin), "{issue}");
    }
    assert!(severities.contains("major") && severities.contains("minor"));
    // The same finding gets the same fingerprint on the next run, after a line moves.
    let moved = format!("// une ligne de plus\n{MIXED}");
    std::fs::write(dir.join("mixed.deploy"), moved).unwrap();
    let (again, _) = run(&dir, "gitlab");
    let again: serde_json::Value = serde_json::from_str(&again).unwrap();
    let again: HashSet<String> = again
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["fingerprint"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(again, fingerprints);

    // A clean run is an empty array.
    let clean = deployfit(&[
        "check",
        "examples/01-glm4-chat.deploy",
        "--format",
        "gitlab",
    ]);
    let issues: serde_json::Value = serde_json::from_slice(&clean.stdout).unwrap();
    assert!(
        issues
            .as_array()
            .unwrap()
            .iter()
            .all(|i| i["severity"] != "major")
    );
}

#[test]
fn junit_has_a_testcase_per_deployment_and_a_failure_per_error() {
    let dir = scratch("ci_junit");
    mixed(&dir);
    let (text, code) = run(&dir, "junit");
    assert_eq!(code, Some(1));
    let doc = roxmltree::Document::parse(&text).expect("well-formed XML");
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "testsuites");
    let cases: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .collect();
    let names: Vec<&str> = cases.iter().map(|c| c.attribute("name").unwrap()).collect();
    for deployment in ["trop_grand", "serre", "fine"] {
        assert!(names.contains(&deployment), "{names:?}");
    }
    let failures = |name: &str| {
        cases
            .iter()
            .find(|c| c.attribute("name") == Some(name))
            .unwrap()
            .children()
            .filter(|n| n.has_tag_name("failure"))
            .count()
    };
    assert_eq!(failures("trop_grand"), 1, "{text}");
    assert_eq!(failures("fine"), 0);
    assert_eq!(failures("serre"), 0, "a warning is not a failure");
    let tight = cases
        .iter()
        .find(|c| c.attribute("name") == Some("serre"))
        .unwrap();
    let out = tight
        .children()
        .find(|n| n.has_tag_name("system-out"))
        .and_then(|n| n.text())
        .unwrap_or_default();
    assert!(out.contains("deploy::fit::tight_fit"), "{text}");
    // The counts agree with the cases.
    let suite = doc
        .descendants()
        .find(|n| n.has_tag_name("testsuite"))
        .unwrap();
    assert_eq!(
        suite.attribute("tests").unwrap().parse::<usize>().unwrap(),
        cases.len()
    );
    let failed_cases = cases
        .iter()
        .filter(|c| c.children().any(|n| n.has_tag_name("failure")))
        .count();
    assert_eq!(
        suite
            .attribute("failures")
            .unwrap()
            .parse::<usize>()
            .unwrap(),
        failed_cases
    );
    assert!(
        failed_cases >= 2,
        "the broken entry is a failure too: {text}"
    );

    // The failing example: a failure for its one deployment.
    let failing = deployfit(&["check", "examples-failing/", "--format", "junit"]);
    assert_eq!(failing.status.code(), Some(1));
    let text = stdout(&failing);
    let doc = roxmltree::Document::parse(&text).unwrap();
    assert!(doc.descendants().any(|n| n.has_tag_name("failure")));
}

#[test]
fn rdjson_has_byte_columns_and_the_structured_fixes() {
    let dir = scratch("ci_rdjson");
    mixed(&dir);
    let (text, code) = run(&dir, "rdjson");
    assert_eq!(code, Some(1));
    let result: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(result["source"]["name"], "deployfit");
    let diagnostics = result["diagnostics"].as_array().unwrap();
    assert!(!diagnostics.is_empty());
    for d in diagnostics {
        assert!(d["message"].as_str().is_some_and(|m| !m.is_empty()));
        assert!(["ERROR", "WARNING", "INFO"].contains(&d["severity"].as_str().unwrap()));
        assert!(d["code"]["value"].as_str().unwrap().starts_with("deploy::"));
        assert_eq!(d["location"]["path"], "mixed.deploy");
        let start = &d["location"]["range"]["start"];
        assert!(start["line"].as_u64().unwrap() >= 1 && start["column"].as_u64().unwrap() >= 1);
    }
    // Columns are UTF-8 byte columns: the unknown name in the rule's message comes after
    // `û` and `—` on its line (counted from the text).
    let line = MIXED.lines().position(|l| l.starts_with("rule r")).unwrap() + 1;
    let text = MIXED.lines().nth(line - 1).unwrap();
    let prefix = &text[..text.find("bogus").unwrap()];
    let unknown = diagnostics
        .iter()
        .find(|d| d["code"]["value"] == "deploy::name::unknown")
        .expect("an unknown name");
    let range = &unknown["location"]["range"];
    assert_eq!(range["start"]["line"], line as u64);
    assert_eq!(range["start"]["column"], prefix.len() as u64 + 1);
    assert_ne!(
        prefix.len(),
        prefix.chars().count(),
        "the prefix is not ASCII"
    );
    assert_eq!(range["end"]["column"], prefix.len() as u64 + 6);
    let tight = diagnostics
        .iter()
        .find(|d| d["code"]["value"] == "deploy::fit::tight_fit")
        .expect("a tight fit");
    // The structured fix is a suggestion with its replacement text.
    let suggestions = tight["suggestions"].as_array().unwrap();
    assert!(!suggestions.is_empty(), "{tight}");
    assert!(suggestions[0]["text"].as_str().unwrap().ends_with('k'));
}

const FIXABLE: &str = "\
// Réglages — é, 中文
deployment chat {
    model   = llama_3_1_8b
    quant   = fp16
    context = 8k
    seqs    = 4
    engine  = vllm
    gpu     = l4
}
deployment long { model = mistral_small_24b; quant = Q4_K_M; engine = llamacpp; gpu = rtx_4090; context = 128k }
deployment typo { model = qwen3_8b; quant = Q4_K_M; engine = llamacpp; gpu = rtx_4900; context = 8k }
deployment open { model = qwen3_8b; quant = Q4_K_M; engine = llamacpp; gpu = ?; context = 8k }
";

#[test]
fn diff_shows_and_fix_applies_the_unambiguous_fixes() {
    let dir = scratch("ci_fix");
    let path = dir.join("a.deploy");
    std::fs::write(&path, FIXABLE).unwrap();
    let diff = deployfit_in(&dir, &["check", "a.deploy", "--diff"]);
    assert_eq!(diff.status.code(), Some(1), "fixes to apply");
    let text = stdout(&diff);
    assert!(
        text.starts_with("--- a/a.deploy\n+++ b/a.deploy\n"),
        "{text}"
    );
    for line in [
        "-    context = 8k\n+    context = 6k\n",
        "gpu = rtx_4090; context = 32k }\n",
        "+deployment typo { model = qwen3_8b; quant = Q4_K_M; engine = llamacpp; gpu = rtx_4090;",
    ] {
        assert!(text.contains(line), "{line} in {text}");
    }
    // The solver's choice (an info) is not pinned.
    assert!(!text.contains("+deployment open"), "{text}");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        FIXABLE,
        "--diff writes nothing"
    );

    let fix = deployfit_in(&dir, &["check", "a.deploy", "--fix"]);
    assert_eq!(fix.status.code(), Some(0), "nothing left to fail");
    assert!(String::from_utf8_lossy(&fix.stderr).contains("fixed 3 issues in 1 file"));
    let fixed = std::fs::read_to_string(&path).unwrap();
    assert!(fixed.starts_with("// Réglages — é, 中文\n"));
    assert!(fixed.contains("gpu = ?"));
    assert!(fixed.contains("context = 32k }"));
    // Nothing more to do: an empty diff, exit 0.
    let again = deployfit_in(&dir, &["check", "a.deploy", "--diff"]);
    assert_eq!(again.status.code(), Some(0));
    assert_eq!(stdout(&again), "");

    // A file that is not UTF-8 is never rewritten.
    let mut bytes = FIXABLE.as_bytes().to_vec();
    bytes.splice(3..3, [0xff, 0xfe]);
    let binary = dir.join("b.deploy");
    std::fs::write(&binary, &bytes).unwrap();
    let fix = deployfit_in(&dir, &["check", "b.deploy", "--fix"]);
    assert!(String::from_utf8_lossy(&fix.stderr).contains("not fixing"));
    assert_eq!(std::fs::read(&binary).unwrap(), bytes);
}

/// Issue #32: a "closest name" fix that would make an `extends` cycle (the closest name to
/// a mistyped parent is the entry itself) is not applied; the other fix of the file is,
/// and a second `--fix` changes nothing.
#[test]
fn fix_skips_a_fix_that_would_create_a_cycle() {
    let dir = scratch("ci_fix_cycle");
    let text = "// é\ngpu my_card extends my_cardd {\n    price = $1/h\n}\ndeployment d {\n    model = glm4_9b\n    quant = Q4_K_M\n    gpu = rtx_4900\n    context = 8k\n}\n";
    std::fs::write(dir.join("c.deploy"), text).unwrap();
    let diff = deployfit_in(&dir, &["check", "c.deploy", "--diff"]);
    let shown = stdout(&diff);
    assert!(!shown.contains("extends my_card {"), "{shown}");
    assert!(shown.contains("+    gpu = rtx_4090"), "{shown}");
    let fix = deployfit_in(&dir, &["check", "c.deploy", "--fix"]);
    assert!(
        String::from_utf8_lossy(&fix.stderr).contains("fixed 1 issue in 1 file"),
        "{}",
        String::from_utf8_lossy(&fix.stderr)
    );
    let fixed = std::fs::read_to_string(dir.join("c.deploy")).unwrap();
    assert!(fixed.contains("extends my_cardd {"), "{fixed}");
    assert!(fixed.contains("gpu = rtx_4090"), "{fixed}");
    let again = deployfit_in(&dir, &["check", "c.deploy", "--fix"]);
    assert!(String::from_utf8_lossy(&again.stderr).contains("fixed 0 issues"));
    assert_eq!(
        std::fs::read_to_string(dir.join("c.deploy")).unwrap(),
        fixed
    );
}
