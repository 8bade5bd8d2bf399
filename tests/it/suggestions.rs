//! Structured suggestions: the JSON output carries each "did you mean" fix as an edit
//! (file, byte span, replacement), applying the edits fixes the file, and the language
//! server's quick fixes are exactly those edits.

use crate::common;

use crate::lsp_support;

use common::{deployfit_in, json, scratch};
use lsp_support::{Session, position_of, uri_of};
use serde_json::{Value, json};

/// Misspelt GPU and field, after non-ASCII text so that byte and character offsets differ.
const TEXT: &str = "// modèle de démo — ünïcode\ndeployment demo_chat { // “démo”\n    model   = glm4_9b\n    quant   = Q4_K_M\n    engine  = llamacpp\n    gpu     = rtx_3090x\n    contxt  = 8k\n}\n";

fn suggestions_of(report: &Value) -> Vec<(String, usize, usize, String)> {
    let mut out = Vec::new();
    for diag in report["diagnostics"].as_array().unwrap() {
        for s in diag["suggestions"]
            .as_array()
            .expect("suggestions is an array")
        {
            out.push((
                s["title"].as_str().unwrap().to_string(),
                s["span"]["start"].as_u64().unwrap() as usize,
                s["span"]["end"].as_u64().unwrap() as usize,
                s["replacement"].as_str().unwrap().to_string(),
            ));
        }
    }
    out
}

#[test]
fn json_suggestions_are_edits_that_fix_the_file() {
    let dir = scratch("suggestions_json");
    let path = dir.join("demo.deploy");
    std::fs::write(&path, TEXT).unwrap();
    let output = deployfit_in(&dir, &["check", "--format", "json", "demo.deploy"]);
    let report = json(&output);
    assert_eq!(output.status.code(), Some(1), "{report}");
    let suggestions = suggestions_of(&report);
    assert_eq!(suggestions.len(), 2, "{report}");
    let by_text: Vec<(&str, &str, &str)> = suggestions
        .iter()
        .map(|(title, start, end, replacement)| {
            (title.as_str(), &TEXT[*start..*end], replacement.as_str())
        })
        .collect();
    assert!(
        by_text.contains(&("Replace with `rtx_3090`", "rtx_3090x", "rtx_3090")),
        "{by_text:?}"
    );
    assert!(
        by_text.contains(&("Replace with `context`", "contxt", "context")),
        "{by_text:?}"
    );
    // Every diagnostic has the field, empty when there is no single edit.
    for diag in report["diagnostics"].as_array().unwrap() {
        assert!(diag["suggestions"].is_array(), "{diag}");
    }

    // Applying the edits (from the end, so earlier spans stay valid) fixes the file.
    let mut fixed = TEXT.to_string();
    let mut edits = suggestions.clone();
    edits.sort_by_key(|(_, start, _, _)| std::cmp::Reverse(*start));
    for (_, start, end, replacement) in edits {
        fixed.replace_range(start..end, &replacement);
    }
    std::fs::write(&path, &fixed).unwrap();
    let output = deployfit_in(&dir, &["check", "--format", "json", "demo.deploy"]);
    let report = json(&output);
    let codes: Vec<&str> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap())
        .collect();
    assert!(
        !codes
            .iter()
            .any(|c| c.starts_with("deploy::name::") || *c == "deploy::field::unknown"),
        "{fixed}\n{report}"
    );
}

#[test]
fn quick_fixes_are_the_json_suggestions() {
    let dir = scratch("suggestions_lsp");
    let path = dir.join("demo.deploy");
    std::fs::write(&path, TEXT).unwrap();
    let report = json(&deployfit_in(
        &dir,
        &["check", "--format", "json", "demo.deploy"],
    ));
    let suggestions = suggestions_of(&report);
    assert_eq!(suggestions.len(), 2, "{report}");

    let uri = uri_of(&path);
    let mut session = Session::start();
    session.open(&uri, TEXT);
    for (title, start, end, replacement) in suggestions {
        let range = json!({ "start": position_of(TEXT, start), "end": position_of(TEXT, end) });
        let actions = session.request(
            "textDocument/codeAction",
            json!({ "textDocument": { "uri": uri }, "range": range, "context": { "diagnostics": [] } }),
        );
        let action = actions
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["title"] == title.as_str())
            .unwrap_or_else(|| panic!("no quick fix `{title}` in {actions}"));
        let edits = action["edit"]["changes"][&uri].as_array().unwrap();
        assert_eq!(edits.len(), 1, "{action}");
        assert_eq!(edits[0]["range"], range, "{action}");
        assert_eq!(edits[0]["newText"], replacement.as_str(), "{action}");
    }
    session.finish();
}

/// A rule's `fix { FIELD = EXPR }` is a structured suggestion: inserted when the
/// deployment lacks the field, replacing its value otherwise; applying it silences the
/// rule. A fix naming something that is not a deployment field is an error in the rule.
#[test]
fn a_rule_fix_is_an_edit_that_resolves_the_rule() {
    let dir = scratch("suggestions_rule_fix");
    let text = "// règle — ünï\nrule one_sequence {\n    level   = warn\n    when    = seqs > 1\n    message = \"{seqs} sequences\"\n    fix {\n        seqs = 1\n    }\n}\n\nrule short_context {\n    level   = info\n    when    = context > 8k\n    message = \"long\"\n    fix {\n        context = 8k\n    }\n}\n\nrule broken_fix {\n    level   = info\n    when    = fits\n    message = \"x\"\n    fix {\n        colour = 1\n    }\n}\n\ndeployment d {\n    model = glm4_9b\n    quant = Q4_K_M\n    gpu   = rtx_3090\n    seqs  = 4\n    allow = [broken_fix]\n}\n\ndeployment e {\n    model = glm4_9b\n    quant = Q4_K_M\n    gpu   = rtx_3090\n    allow = [broken_fix]\n}\n";
    std::fs::write(dir.join("r.deploy"), text).unwrap();
    let report = json(&deployfit_in(
        &dir,
        &["check", "--format", "json", "r.deploy"],
    ));
    let codes = common::codes(&report);
    assert!(
        codes.contains(&"deploy::field::unknown".to_string()),
        "{report}"
    );
    let fixes = suggestions_of(&report);
    let set = fixes
        .iter()
        .find(|(title, ..)| title == "Set `seqs = 1`")
        .unwrap_or_else(|| panic!("{report}"));
    assert_eq!(&text[set.1..set.2], "4");
    // `e` has no `context`: the fix inserts one at the top of its block.
    let insert = fixes
        .iter()
        .find(|(title, start, ..)| {
            title == "Set `context = 8k`" && *start > text.find("deployment e").unwrap()
        })
        .unwrap_or_else(|| panic!("{report}"));
    assert_eq!(insert.1, insert.2);
    assert_eq!(&text[insert.1 - 1..insert.1], "{");
    assert_eq!(insert.3, "\n    context = 8k");
    // Applying it: the rule no longer fires.
    let mut fixed = text.to_string();
    fixed.replace_range(set.1..set.2, &set.3);
    std::fs::write(dir.join("r.deploy"), &fixed).unwrap();
    let after = json(&deployfit_in(
        &dir,
        &["check", "--format", "json", "r.deploy"],
    ));
    assert!(
        !after["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["code"] == "deploy::rule::one_sequence"),
        "{after}"
    );
}
