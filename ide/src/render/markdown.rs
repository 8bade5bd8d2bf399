//! `--format markdown`: a GitHub-flavoured Markdown summary, as a CI job writes it to
//! `$GITHUB_STEP_SUMMARY`: the counts, one table row per deployment (fit, memory, speed,
//! cost, its errors and warnings) and one row per error and warning.

use std::fmt::Write as _;

use crate::diagnostics::{Report, Severity};
use crate::eval::figures::JsonFigure;

use super::common::{counts, terminal_text};

/// A table cell: no line breaks, `|` and the characters Markdown would read escaped.
fn cell(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in terminal_text(text).chars() {
        match c {
            '\n' | '\r' => out.push(' '),
            '|' | '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '#' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

pub fn render(report: &Report<'_>, files: usize) -> String {
    let (errors, warnings, infos) = counts(report.diagnostics);
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    let mut out = String::from("## deployfit check\n\n");
    let _ = writeln!(
        out,
        "{}: {}, {}, {}\n",
        plural(files, "file"),
        plural(errors, "error"),
        plural(warnings, "warning"),
        plural(infos, "note")
    );
    if !report.summaries.is_empty() {
        out.push_str(
            "| deployment | file | fit | memory per GPU | decode | cost | errors | warnings |\n",
        );
        out.push_str("|---|---|---|---:|---:|---:|---:|---:|\n");
        for s in report.summaries {
            let figure = |name: &str| s.figures.get(name).map(String::as_str).unwrap_or("");
            let fit = match (s.values.get("fits"), s.figures.get("fleet")) {
                (_, Some(fleet)) => format!("mixed fleet {fleet}"),
                (Some(JsonFigure::Flag(true)), _) => match s.values.get("offloaded") {
                    Some(JsonFigure::Flag(true)) => "fits with offload".into(),
                    _ => "fits".into(),
                },
                (Some(JsonFigure::Flag(false)), _) => "does not fit".into(),
                _ => "not evaluated".into(),
            };
            let memory = match (
                s.figures.get("memory_per_gpu"),
                s.figures.get("utilization"),
            ) {
                (Some(need), Some(share)) => format!("{need} ({share})"),
                _ => String::new(),
            };
            let within = |d: &&crate::diagnostics::Diagnostic| {
                d.location.file == s.file
                    && (s.line..=s.end_line.max(s.line)).contains(&d.location.line)
            };
            let count = |severity: Severity| {
                report
                    .diagnostics
                    .iter()
                    .filter(within)
                    .filter(|d| d.severity == severity)
                    .count()
            };
            let _ = writeln!(
                out,
                "| {} | {}:{} | {} | {} | {} | {} | {} | {} |",
                cell(&s.name),
                cell(&s.file.display().to_string()),
                s.line,
                cell(&fit),
                cell(&memory),
                cell(figure("decode_tps")),
                cell(figure("cost_per_hour")),
                count(Severity::Error),
                count(Severity::Warning),
            );
        }
        out.push('\n');
    }
    let problems: Vec<_> = report
        .diagnostics
        .iter()
        .filter(|d| d.severity != Severity::Info)
        .collect();
    if !problems.is_empty() {
        out.push_str("| severity | code | message | where |\n|---|---|---|---|\n");
        for d in problems {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {}:{}:{} |",
                d.severity.as_str(),
                cell(&d.code),
                cell(&d.message),
                cell(&d.location.file.display().to_string()),
                d.location.line,
                d.location.column
            );
        }
    }
    out
}
