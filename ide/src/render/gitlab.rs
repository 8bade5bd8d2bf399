//! `--format gitlab`: a GitLab Code Quality report (a JSON array of issues), which a
//! merge request shows beside the changed lines (docs.gitlab.com, "Code Quality":
//! `description`, `check_name`, `fingerprint`, `severity`, `location.path`,
//! `location.lines.begin`).

use serde::Serialize;

use super::common::fingerprint;
use crate::diagnostics::{Report, Severity};

#[derive(Serialize)]
struct Issue<'a> {
    description: String,
    check_name: &'a str,
    fingerprint: String,
    /// One of `info`, `minor`, `major`, `critical`, `blocker`.
    severity: &'static str,
    location: Location,
}

#[derive(Serialize)]
struct Location {
    path: String,
    lines: Lines,
}

#[derive(Serialize)]
struct Lines {
    begin: usize,
    end: usize,
}

pub fn render(report: &Report<'_>) -> String {
    // Fingerprints must be unique in a report: a repeat gets its occurrence number.
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let issues: Vec<Issue<'_>> = report
        .diagnostics
        .iter()
        .map(|diag| {
            let base = fingerprint(diag);
            let n = seen.entry(base.clone()).or_insert(0);
            *n += 1;
            let fingerprint = if *n == 1 { base } else { format!("{base}-{n}") };
            let mut description = diag.message.clone();
            if let Some(help) = &diag.help {
                description.push_str(" (help: ");
                description.push_str(help);
                description.push(')');
            }
            Issue {
                description,
                check_name: &diag.code,
                fingerprint,
                severity: match diag.severity {
                    Severity::Error => "major",
                    Severity::Warning => "minor",
                    Severity::Info => "info",
                },
                location: Location {
                    path: diag.location.file.to_string_lossy().replace('\\', "/"),
                    lines: Lines {
                        begin: diag.location.line,
                        end: diag.location.end_line.max(diag.location.line),
                    },
                },
            }
        })
        .collect();
    let mut text = serde_json::to_string_pretty(&issues).unwrap_or_else(|_| "[]".into());
    text.push('\n');
    text
}
