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

/// Keeps only the explanation of deployment `only` of `file`, or says there is none, with
/// the closest name (`explain --deployment`, the MCP tool's `deployment`).
pub fn keep_explained(
    results: &mut Vec<Result<Explanation, NotEvaluated>>,
    only: &str,
    file: &str,
) -> Result<(), String> {
    let name = |r: &Result<Explanation, NotEvaluated>| match r {
        Ok(e) => e.deployment.clone(),
        Err(n) => n.deployment.clone(),
    };
    let names: Vec<String> = results.iter().map(name).collect();
    no_such_deployment(file, only, &names)?;
    results.retain(|r| name(r) == only);
    Ok(())
}

/// Keeps only the solution of deployment `only` of `file`, or says there is none.
pub fn keep_solved(
    results: &mut Vec<(String, Result<Solution, String>)>,
    only: &str,
    file: &str,
) -> Result<(), String> {
    let names: Vec<String> = results.iter().map(|(n, _)| n.clone()).collect();
    no_such_deployment(file, only, &names)?;
    results.retain(|(n, _)| n == only);
    Ok(())
}

fn no_such_deployment(file: &str, only: &str, names: &[String]) -> Result<(), String> {
    if names.iter().any(|n| n == only) {
        return Ok(());
    }
    let hint = crate::names::closest(only, names.iter().map(String::as_str))
        .map(|s| format!("; did you mean `{s}`?"))
        .unwrap_or_default();
    Err(format!("`{file}` has no deployment `{only}`{hint}"))
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
