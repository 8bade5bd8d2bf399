//! `--format github`: GitHub Actions workflow commands, one annotation per diagnostic.

use crate::diagnostics::{Report, Severity};

/// Escapes the message part of a workflow command.
fn escape_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a property value of a workflow command.
fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

pub fn render(report: &Report<'_>) -> String {
    let mut out = String::new();
    for diag in report.diagnostics {
        let command = match diag.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "notice",
        };
        let mut message = diag.message.clone();
        if let Some(help) = &diag.help {
            message.push_str("\nhelp: ");
            message.push_str(help);
        }
        out.push_str(&format!(
            "::{command} file={},line={},col={},endLine={},endColumn={},title={}::{}\n",
            escape_property(&diag.location.file.display().to_string()),
            diag.location.line,
            diag.location.column,
            diag.location.end_line,
            diag.location.end_column,
            escape_property(&diag.code),
            escape_data(&message),
        ));
    }
    out
}
