//! `--format rdjson`: reviewdog's Diagnostic Format (`rdjson`), which `reviewdog -f=rdjson`
//! posts as review comments, with the structured fixes as suggestions
//! (reviewdog/reviewdog: proto/rdf/jsonschema/DiagnosticResult.jsonschema). Columns are
//! 1-based UTF-8 byte offsets within the line, as the format defines them.

use serde::Serialize;

use crate::diagnostics::{Location as Place, Report, Severity};

#[derive(Serialize)]
struct Output<'a> {
    source: Source,
    diagnostics: Vec<Diagnostic<'a>>,
}

#[derive(Serialize)]
struct Source {
    name: &'static str,
    url: &'static str,
}

#[derive(Serialize)]
struct Diagnostic<'a> {
    message: String,
    location: Location,
    severity: &'static str,
    source: Source,
    code: Code<'a>,
    suggestions: Vec<Suggestion<'a>>,
}

#[derive(Serialize)]
struct Code<'a> {
    value: &'a str,
}

#[derive(Serialize)]
struct Location {
    path: String,
    range: Range,
}

#[derive(Serialize)]
struct Range {
    start: Position,
    end: Position,
}

#[derive(Serialize)]
struct Position {
    line: usize,
    column: usize,
}

#[derive(Serialize)]
struct Suggestion<'a> {
    range: Range,
    text: &'a str,
}

fn source() -> Source {
    Source {
        name: "deployfit",
        url: "https://github.com/deployfit/deployfit",
    }
}

/// The 1-based byte column of a byte offset in its line; the character column when the
/// text is not at hand or the offset is not a character boundary of it.
fn byte_column(text: Option<&str>, offset: usize, fallback: usize) -> usize {
    match text.and_then(|t| t.get(..offset)) {
        Some(before) => before.len() - before.rfind('\n').map_or(0, |n| n + 1) + 1,
        None => fallback,
    }
}

fn range(report: &Report<'_>, place: &Place) -> Range {
    let text = (report.source)(&place.file);
    let text = text.as_deref();
    Range {
        start: Position {
            line: place.line,
            column: byte_column(text, place.span.start as usize, place.column),
        },
        end: Position {
            line: place.end_line,
            column: byte_column(text, place.span.end as usize, place.end_column),
        },
    }
}

pub fn render(report: &Report<'_>) -> String {
    let diagnostics = report
        .diagnostics
        .iter()
        .map(|diag| {
            let mut message = diag.message.clone();
            if let Some(help) = &diag.help {
                message.push_str("\nhelp: ");
                message.push_str(help);
            }
            Diagnostic {
                message,
                location: Location {
                    path: diag.location.file.to_string_lossy().replace('\\', "/"),
                    range: range(report, &diag.location),
                },
                severity: match diag.severity {
                    Severity::Error => "ERROR",
                    Severity::Warning => "WARNING",
                    Severity::Info => "INFO",
                },
                source: source(),
                code: Code { value: &diag.code },
                suggestions: diag
                    .suggestions
                    .iter()
                    .filter(|s| s.location.file == diag.location.file)
                    .map(|s| Suggestion {
                        range: range(report, &s.location),
                        text: &s.replacement,
                    })
                    .collect(),
            }
        })
        .collect();
    let output = Output {
        source: source(),
        diagnostics,
    };
    let mut text = serde_json::to_string_pretty(&output).unwrap_or_else(|_| "{}".into());
    text.push('\n');
    text
}
