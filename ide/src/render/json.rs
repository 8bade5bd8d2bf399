//! `--format json`: the schema documented in docs/cli.md.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::eval::figures::JsonFigure;

use super::common::counts;
use crate::diagnostics::{Diagnostic, Report};

/// `check --format json`, version 2 (docs/cli.md, "JSON output").
#[derive(Serialize)]
struct Output<'a> {
    version: u32,
    diagnostics: &'a [Diagnostic],
    deployments: Vec<Deployment<'a>>,
    summary: Summary,
}

/// One deployment's figures: numbers under keys that name their unit, and the same
/// figures as the human output prints them.
#[derive(Serialize)]
struct Deployment<'a> {
    name: &'a str,
    file: &'a std::path::Path,
    line: usize,
    figures: &'a BTreeMap<String, JsonFigure>,
    display: &'a BTreeMap<String, String>,
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
        version: 2,
        diagnostics: report.diagnostics,
        deployments: report
            .summaries
            .iter()
            .map(|s| Deployment {
                name: &s.name,
                file: &s.file,
                line: s.line,
                figures: &s.values,
                display: &s.figures,
            })
            .collect(),
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
