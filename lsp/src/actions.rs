//! Code actions (quick fixes), code lenses and the commands the lenses run.

use std::collections::HashMap;

use deployfit_host::span::Span;
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::*;

use crate::Backend;

/// The commands the code lenses run.
pub(crate) const EXPLAIN: &str = "deployfit.explain";
pub(crate) const SOLVE: &str = "deployfit.solve";

pub(crate) async fn code_actions(
    backend: &Backend,
    params: CodeActionParams,
) -> Result<Option<CodeActionResponse>> {
    let uri = params.text_document.uri;
    let range = params.range;
    let answer = backend
        .on_snapshot(&uri, move |analysis, snapshot| {
            let start = snapshot.index.offset(range.start);
            let end = snapshot.index.offset(range.end);
            analysis.code_actions(snapshot.file, Span::new(start, end))
        })
        .await?;
    let Some((fixes, snapshot)) = answer else {
        return Ok(None);
    };
    let actions = fixes
        .into_iter()
        .map(|fix| {
            let edits = fix
                .edits
                .into_iter()
                .map(|(span, new_text)| TextEdit {
                    range: snapshot.index.range(span.start as usize, span.end as usize),
                    new_text,
                })
                .collect();
            CodeActionOrCommand::CodeAction(CodeAction {
                title: fix.title,
                kind: Some(CodeActionKind::QUICKFIX),
                edit: Some(WorkspaceEdit {
                    changes: Some(HashMap::from([(uri.clone(), edits)])),
                    ..WorkspaceEdit::default()
                }),
                ..CodeAction::default()
            })
        })
        .collect();
    Ok(Some(actions))
}

pub(crate) async fn code_lenses(
    backend: &Backend,
    params: CodeLensParams,
) -> Result<Option<Vec<CodeLens>>> {
    let uri = params.text_document.uri;
    let answer = backend
        .on_snapshot(&uri, |analysis, snapshot| {
            analysis.code_lenses(snapshot.file)
        })
        .await?;
    let Some((deployments, snapshot)) = answer else {
        return Ok(None);
    };
    let mut lenses = Vec::new();
    for (name, span, holes) in deployments {
        let range = snapshot.index.range(span.start as usize, span.end as usize);
        let arguments = Some(vec![
            LSPAny::String(uri.as_str().to_string()),
            LSPAny::String(name.clone()),
        ]);
        lenses.push(CodeLens {
            range,
            command: Some(Command {
                title: "explain".into(),
                command: EXPLAIN.into(),
                arguments: arguments.clone(),
            }),
            data: None,
        });
        if holes {
            lenses.push(CodeLens {
                range,
                command: Some(Command {
                    title: "solve".into(),
                    command: SOLVE.into(),
                    arguments,
                }),
                data: None,
            });
        }
    }
    Ok(Some(lenses))
}

pub(crate) async fn execute_command(
    backend: &Backend,
    params: ExecuteCommandParams,
) -> Result<Option<LSPAny>> {
    let text_argument = |i: usize| {
        params
            .arguments
            .get(i)
            .and_then(|a| a.as_str())
            .map(str::to_string)
    };
    let (Some(uri), Some(name)) = (text_argument(0), text_argument(1)) else {
        return Err(Error::invalid_params("expected [uri, deployment]"));
    };
    let Ok(uri) = uri.parse::<Uri>() else {
        return Err(Error::invalid_params("not a URI"));
    };
    let command = params.command.clone();
    let deployment = name.clone();
    let answer = backend
        .on_snapshot(&uri, move |analysis, snapshot| match command.as_str() {
            EXPLAIN => analysis.explain_markdown(snapshot.file, &deployment),
            SOLVE => analysis.solve_summary(snapshot.file, &deployment),
            _ => Ok(None),
        })
        .await?;
    let Some((Some(output), _)) = answer else {
        return Err(Error::invalid_params(format!(
            "`{}` cannot run for `{name}`",
            params.command
        )));
    };
    backend
        .client
        .show_message(MessageType::INFO, output.clone())
        .await;
    Ok(Some(LSPAny::String(output)))
}
