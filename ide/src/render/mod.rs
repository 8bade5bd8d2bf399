//! One renderer per output format of `deployfit check`, selected by [`OutputFormat`]: the
//! finished diagnostics and deployment summaries (`diagnostics::Report`) as text.

mod common;
mod github;
mod gitlab;
mod human;
mod json;
mod junit;
mod markdown;
mod rdjson;
mod sarif;

pub use common::{HumanOptions, counts, terminal_text};

use crate::diagnostics::Report;

/// The formats `deployfit check --format` offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputFormat {
    Human,
    Json,
    Github,
    Sarif,
    /// GitLab Code Quality JSON.
    Gitlab,
    /// JUnit XML: a test case per deployment.
    Junit,
    /// reviewdog's Diagnostic Format.
    Rdjson,
    /// A Markdown summary (a CI job's step summary).
    Markdown,
}

/// Renders a report in a format; `files` is the number of files checked.
pub fn render(
    format: OutputFormat,
    report: &Report<'_>,
    files: usize,
    human: HumanOptions,
) -> String {
    match format {
        OutputFormat::Human => human::render(report, files, human),
        OutputFormat::Json => json::render(report, files),
        OutputFormat::Github => github::render(report),
        OutputFormat::Sarif => sarif::render(report),
        OutputFormat::Gitlab => gitlab::render(report),
        OutputFormat::Junit => junit::render(report),
        OutputFormat::Rdjson => rdjson::render(report),
        OutputFormat::Markdown => markdown::render(report, files),
    }
}
