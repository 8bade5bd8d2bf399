//! `--format json`: the schema documented in docs/cli.md.

use serde::Serialize;

use super::common::counts;
use crate::diagnostics::{Diagnostic, Report};

#[derive(Serialize)]
struct Output<'a> {
    version: u32,
    diagnostics: &'a [Diagnostic],
    deployments: &'a [crate::diagnostics::DeploymentSummary],
    summary: Summary,
}

#[derive(Serialize)]
struct Summary {
    files: usize,
    errors: usize,
    warnings: usize,
    infos: usize,
}

pub fn render(report: &Report<'_>, files: usize) -> String {
    let (errors, warnings, infos) = counts(report.diagnostics);
    let output = Output {
        version: 1,
        diagnostics: report.diagnostics,
        deployments: report.summaries,
        summary: Summary {
            files,
            errors,
            warnings,
            infos,
        },
    };
    let mut text =
        serde_json::to_string_pretty(&output).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    text.push('\n');
    text
}
