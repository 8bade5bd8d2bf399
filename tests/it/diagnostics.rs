//! One fixture per diagnostic code (tests/fixtures/diagnostics/AREA.NAME.deploy for
//! `deploy::AREA::NAME`), each checked through the real binary and snapshotted in the
//! human and JSON formats.

use crate::common;

use common::{deployfit, json, stdout};
use deployfit_host::diagnostics::codes::Code;

/// `"figures": { ... }` and `"display": { ... }` of each deployment in the JSON report, as
/// `"[figures]"`.
fn redact_json_figures(text: &str) -> String {
    ["figures", "display"]
        .iter()
        .fold(text.to_string(), |text, key| redact_object(&text, key))
}

/// Each flat object `"KEY": { ... }` of `text` (no nested braces: figures are numbers,
/// flags and strings without `}`), as `"KEY": "[figures]"`.
fn redact_object(text: &str, key: &str) -> String {
    let open = format!("\"{key}\": {{");
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(&open) {
        out.push_str(&rest[..at]);
        out.push_str(&format!("\"{key}\": \"[figures]\""));
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
    insta::glob!("../fixtures/diagnostics", "*.deploy", |path| {
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
    for code in Code::ALL {
        let stem = code
            .as_str()
            .trim_start_matches("deploy::")
            .replace("::", ".");
        let path = common::root().join(format!("tests/fixtures/diagnostics/{stem}.deploy"));
        if *code == Code::SyntaxLimit {
            // Reaching pest's call limit takes megabytes of input; tests/it/robustness.rs
            // generates it instead of keeping a fixture.
            continue;
        }
        assert!(path.exists(), "no fixture for {code} at {}", path.display());
    }
}

/// Every `.rs` file under `dir`, recursively.
fn rust_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("source directory") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// A source (or stdlib) file's text before its test module, without its comment lines.
fn scanned(text: &str) -> String {
    let text = text.split("#[cfg(test)]").next().unwrap_or_default();
    text.lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The `"deploy::AREA::NAME"` string literals of a source (or stdlib) file outside its
/// test module and comments; an interpolated part (`deploy::rule::{name}`) reads as
/// `NAME`.
fn emitted_codes(text: &str) -> Vec<String> {
    let text = scanned(text);
    let mut out = Vec::new();
    for (at, _) in text.match_indices("\"deploy::") {
        let rest = &text[at + 1..];
        let Some(end) = rest.find('"') else {
            continue;
        };
        let mut code = String::new();
        let mut chars = rest[..end].chars();
        while let Some(c) = chars.next() {
            if c == '{' {
                chars.by_ref().find(|&c| c == '}');
                code.push_str("NAME");
            } else {
                code.push(c);
            }
        }
        out.push(code);
    }
    out
}

/// The codes a Rust source names as `Code::Variant` outside its test module and
/// comments (a variant is spelled as its `Debug` form).
fn named_codes(text: &str) -> Vec<Code> {
    let text = scanned(text);
    let mut out = Vec::new();
    for (at, _) in text.match_indices("Code::") {
        // `Code::X`, not `ErrorCode::X`.
        if text[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            continue;
        }
        let rest = &text[at + "Code::".len()..];
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        if let Some(code) = Code::ALL
            .iter()
            .find(|code| format!("{code:?}") == rest[..end])
        {
            out.push(*code);
        }
    }
    out
}

/// The Rust sources of the compiler, the server and the binary.
fn sources() -> Vec<std::path::PathBuf> {
    let root = common::root();
    let mut files = Vec::new();
    for dir in ["syntax/src", "compiler/src", "lsp/src", "src"] {
        rust_files(&root.join(dir), &mut files);
    }
    files
}

#[test]
fn every_emitted_code_is_listed_documented_and_has_a_fixture() {
    assert_eq!(
        emitted_codes(
            "Diag::error(\"deploy::x::y\", m, at); format!(\"deploy::rule::{name}\");\n\
             // a comment naming \"deploy::c::d\"\n\
             #[cfg(test)] mod tests { const C: &str = \"deploy::test::code\"; }"
        ),
        ["deploy::x::y", "deploy::rule::NAME"]
    );
    assert_eq!(
        named_codes(
            "Diag::error(Code::NameUnknown, m, at); Code::NameUnknownFunction; Code::Nope\n\
             ErrorCode::FieldUnknown;\n\
             /// Code::FieldType\n\
             #[cfg(test)] mod tests { const C: Code = Code::FieldMissing; }"
        ),
        [Code::NameUnknown, Code::NameUnknownFunction]
    );
    let root = common::root();
    let docs = std::fs::read_to_string(root.join("docs/language.md")).unwrap();
    let codes_rs = root.join("syntax/src/codes.rs");
    // (code, where it is emitted)
    let mut emitted = std::collections::BTreeSet::new();
    for file in sources().iter().filter(|f| **f != codes_rs) {
        let text = std::fs::read_to_string(file).unwrap();
        for code in named_codes(&text) {
            emitted.insert((code.as_str().to_string(), file.display().to_string()));
        }
        // Codes made at run time: the rule-code format.
        for code in emitted_codes(&text) {
            emitted.insert((code, file.display().to_string()));
        }
    }
    // The catalog's rules give their codes in `code = "deploy::fit::..."`.
    for file in common::deploy_files("stdlib") {
        let text = std::fs::read_to_string(&file).unwrap();
        for code in emitted_codes(&text) {
            emitted.insert((code, file.display().to_string()));
        }
    }
    // The scan sees the codes the pipeline emits (a guard against a silently empty scan).
    assert!(emitted.len() >= 30, "{emitted:?}");
    for (code, file) in &emitted {
        assert!(
            Code::parse(code).is_some(),
            "{code} (in {file}) is not in syntax/src/codes.rs"
        );
    }
    for code in Code::ALL {
        assert!(
            emitted.iter().any(|(c, _)| c == code.as_str()),
            "{code} is listed in codes.rs but nothing emits it"
        );
        assert!(
            docs.contains(&format!("**`{code}`**")),
            "{code} is not documented in docs/language.md's code list"
        );
        // every_documented_code_has_a_fixture checks the fixture of each listed code.
    }
}

/// The compiler names its codes by `Code` variants: the only `"deploy::...` string
/// literal outside codes.rs and test modules is the code of a rule without its own.
#[test]
fn code_strings_are_written_only_in_codes_rs() {
    let root = common::root();
    let codes_rs = root.join("syntax/src/codes.rs");
    let mut literals = Vec::new();
    for file in sources().iter().filter(|f| **f != codes_rs) {
        let text = std::fs::read_to_string(file).unwrap();
        for code in emitted_codes(&text) {
            let file = file.strip_prefix(&root).unwrap().display().to_string();
            literals.push((file.replace('\\', "/"), code));
        }
    }
    assert_eq!(
        literals,
        [(
            "compiler/src/rules/mod.rs".to_string(),
            "deploy::rule::NAME".to_string()
        )]
    );
    // codes.rs itself spells every code.
    let codes_text = std::fs::read_to_string(&codes_rs).unwrap();
    for code in Code::ALL {
        assert!(codes_text.contains(&format!("\"{code}\"")), "{code}");
    }
}
