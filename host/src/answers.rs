//! The JSON answers of `check`, `explain` and `solve`, built once for every front end: the
//! CLI's `--format json` and the MCP server's tools return the same values.

use serde_json::Value;

use crate::Workspace;
use crate::db::SourceFile;
use crate::diagnostics::Report;
use crate::explain::{Explanation, NotEvaluated};
use crate::render::{self, HumanOptions, OutputFormat};
use crate::solve::Solution;

/// `explain --format json` (pretty, with a final newline): each explanation as it
/// serializes, its fields in declaration order; a mixed fleet's object is its fleet with
/// the deployment's name; a deployment that could not be evaluated is left out (`check`
/// says why).
pub fn explain_json(results: &[Result<Explanation, NotEvaluated>]) -> String {
    #[derive(serde::Serialize)]
    #[serde(untagged)]
    enum Item<'a> {
        Explained(&'a Explanation),
        Fleet(Value),
    }
    let items: Vec<Item<'_>> = results
        .iter()
        .filter_map(|r| match r {
            Ok(e) => Some(Item::Explained(e)),
            Err(n) => n.fleet.as_ref().and_then(|fleet| {
                let mut value = serde_json::to_value(fleet).ok()?;
                value
                    .as_object_mut()?
                    .insert("deployment".into(), Value::String(n.deployment.clone()));
                Some(Item::Fleet(value))
            }),
        })
        .collect();
    pretty(&items)
}

/// Pretty JSON with a final newline.
fn pretty<T: serde::Serialize>(value: &T) -> String {
    let mut text = serde_json::to_string_pretty(value).unwrap_or_else(|_| "null".into());
    text.push('\n');
    text
}

/// `solve --format json` (pretty, with a final newline): per deployment with holes, its
/// solution, or its name and why there is none.
pub fn solve_json(results: &[(String, Result<Solution, String>)]) -> String {
    let entries: Vec<Value> = results
        .iter()
        .map(|(deployment, r)| match r {
            Ok(solution) => serde_json::to_value(solution).unwrap_or_default(),
            Err(message) => serde_json::json!({ "deployment": deployment, "error": message }),
        })
        .collect();
    pretty(&entries)
}

/// `check --format json` of loaded files: the report's text (one JSON document).
pub fn check_json(workspace: &Workspace, files: &[SourceFile]) -> String {
    let diagnostics: Vec<_> = files.iter().flat_map(|f| workspace.check(*f)).collect();
    let summaries: Vec<_> = files.iter().flat_map(|f| workspace.summaries(*f)).collect();
    let source = |path: &std::path::Path| workspace.source(path);
    let report = Report {
        diagnostics: &diagnostics,
        summaries: &summaries,
        source: &source,
    };
    render::render(
        OutputFormat::Json,
        &report,
        files.len(),
        HumanOptions {
            color: false,
            width: 100,
            quiet: false,
        },
    )
}
