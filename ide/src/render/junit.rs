//! `--format junit`: JUnit XML, which CI systems (GitLab, Jenkins, Azure Pipelines, the
//! GitHub test-report actions) show as a test report: one `testcase` per deployment, a
//! `failure` per error on it; errors outside any deployment (a syntax error, a broken
//! catalog entry) are a testcase named after their file. Warnings and infos go to the
//! testcase's `system-out`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use crate::diagnostics::{Diagnostic, Report, Severity};

/// Text for an XML attribute or element: the five special characters escaped, and
/// characters XML 1.0 does not allow (most controls) dropped.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => {}
            c => out.push(c),
        }
    }
    out
}

/// One test case: a deployment (with its start line) or a whole file.
struct Case<'a> {
    name: String,
    file: PathBuf,
    diagnostics: Vec<&'a Diagnostic>,
}

pub fn render(report: &Report<'_>) -> String {
    // Each file's deployments by their lines: a diagnostic belongs to the deployment
    // whose lines hold its first line.
    let mut cases: Vec<Case<'_>> = Vec::new();
    let mut by_file: BTreeMap<&std::path::Path, Vec<(usize, usize, usize)>> = BTreeMap::new();
    for summary in report.summaries {
        by_file.entry(summary.file.as_path()).or_default().push((
            summary.line,
            summary.end_line.max(summary.line),
            cases.len(),
        ));
        cases.push(Case {
            name: summary.name.clone(),
            file: summary.file.clone(),
            diagnostics: Vec::new(),
        });
    }
    let mut file_cases: BTreeMap<PathBuf, usize> = BTreeMap::new();
    for diag in report.diagnostics {
        let owner = by_file
            .get(diag.location.file.as_path())
            .and_then(|spans| {
                spans
                    .iter()
                    .find(|(start, end, _)| (*start..=*end).contains(&diag.location.line))
            })
            .map(|(_, _, index)| *index);
        let index = match owner {
            Some(index) => index,
            None => *file_cases
                .entry(diag.location.file.clone())
                .or_insert_with(|| {
                    cases.push(Case {
                        name: format!("{} (file)", diag.location.file.display()),
                        file: diag.location.file.clone(),
                        diagnostics: Vec::new(),
                    });
                    cases.len() - 1
                }),
        };
        cases[index].diagnostics.push(diag);
    }
    let failures = cases
        .iter()
        .filter(|c| c.diagnostics.iter().any(|d| d.severity == Severity::Error))
        .count();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"deployfit\" tests=\"{}\" failures=\"{failures}\" errors=\"0\">",
        cases.len()
    );
    let _ = writeln!(
        out,
        "  <testsuite name=\"deployfit check\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" skipped=\"0\">",
        cases.len()
    );
    for case in &cases {
        let file = case.file.to_string_lossy().replace('\\', "/");
        let _ = write!(
            out,
            "    <testcase classname=\"{}\" name=\"{}\" file=\"{}\"",
            escape(&file),
            escape(&case.name),
            escape(&file)
        );
        if case.diagnostics.is_empty() {
            out.push_str("/>\n");
            continue;
        }
        out.push_str(">\n");
        let mut other = String::new();
        for diag in &case.diagnostics {
            let place = format!("{}:{}:{}", file, diag.location.line, diag.location.column);
            let help = diag
                .help
                .as_deref()
                .map(|h| format!("\nhelp: {h}"))
                .unwrap_or_default();
            if diag.severity == Severity::Error {
                let _ = writeln!(
                    out,
                    "      <failure type=\"{}\" message=\"{}\">{}: {}{}</failure>",
                    escape(&diag.code),
                    escape(&diag.message),
                    escape(&place),
                    escape(&diag.message),
                    escape(&help)
                );
            } else {
                let level = if diag.severity == Severity::Warning {
                    "warning"
                } else {
                    "info"
                };
                let _ = writeln!(
                    other,
                    "{place}: {level} [{}] {}{help}",
                    diag.code, diag.message
                );
            }
        }
        if !other.is_empty() {
            let _ = writeln!(out, "      <system-out>{}</system-out>", escape(&other));
        }
        out.push_str("    </testcase>\n");
    }
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}
