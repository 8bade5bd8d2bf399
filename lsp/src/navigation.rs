//! Go-to-definition, references and rename: computed on a snapshot, then converted under
//! the lock (locations in other files need the open documents and the stdlib folder).

use std::collections::HashMap;

use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::*;

use crate::{Backend, Files};

pub(crate) async fn definition(
    backend: &Backend,
    params: GotoDefinitionParams,
) -> Result<Option<GotoDefinitionResponse>> {
    let position = params.text_document_position_params;
    let answer = backend
        .on_snapshot(&position.text_document.uri, move |analysis, snapshot| {
            let offset = snapshot.index.offset(position.position);
            analysis.definition(snapshot.file, offset)
        })
        .await?;
    let Some((Some(target), _)) = answer else {
        return Ok(None);
    };
    let state = backend.lock();
    let location = Files::new(backend, &state).location(&target.path, target.span);
    Ok(location.map(GotoDefinitionResponse::Scalar))
}

pub(crate) async fn references(
    backend: &Backend,
    params: ReferenceParams,
) -> Result<Option<Vec<Location>>> {
    let position = params.text_document_position;
    let answer = backend
        .on_snapshot(&position.text_document.uri, move |analysis, snapshot| {
            let offset = snapshot.index.offset(position.position);
            analysis.references(snapshot.file, offset)
        })
        .await?;
    let Some((targets, _)) = answer else {
        return Ok(None);
    };
    let state = backend.lock();
    let mut files = Files::new(backend, &state);
    Ok(Some(
        targets
            .into_iter()
            .filter_map(|t| files.location(&t.path, t.span))
            .collect(),
    ))
}

pub(crate) async fn rename(
    backend: &Backend,
    params: RenameParams,
) -> Result<Option<WorkspaceEdit>> {
    let position = params.text_document_position;
    let new_name = params.new_name;
    let asked = new_name.clone();
    let answer = backend
        .on_snapshot(&position.text_document.uri, move |analysis, snapshot| {
            let offset = snapshot.index.offset(position.position);
            analysis.rename(snapshot.file, offset, &asked)
        })
        .await?;
    let targets = match answer {
        None => return Ok(None),
        Some((Err(message), _)) => return Err(Error::invalid_params(message)),
        Some((Ok(targets), _)) => targets,
    };
    let state = backend.lock();
    let mut changes: HashMap<Uri, Vec<TextEdit>> = HashMap::new();
    let mut files = Files::new(backend, &state);
    for t in targets {
        let Some(Location { uri, range }) = files.location(&t.path, t.span) else {
            continue;
        };
        changes.entry(uri).or_default().push(TextEdit {
            range,
            new_text: new_name.clone(),
        });
    }
    Ok(Some(WorkspaceEdit {
        changes: Some(changes),
        ..WorkspaceEdit::default()
    }))
}

pub(crate) async fn prepare_rename(
    backend: &Backend,
    params: TextDocumentPositionParams,
) -> Result<Option<PrepareRenameResponse>> {
    let answer = backend
        .on_snapshot(&params.text_document.uri, move |analysis, snapshot| {
            let offset = snapshot.index.offset(params.position);
            analysis.prepare_rename(snapshot.file, offset)
        })
        .await?;
    match answer {
        None => Ok(None),
        Some((Err(message), _)) => Err(Error::invalid_params(message)),
        Some((Ok(span), snapshot)) => Ok(Some(PrepareRenameResponse::Range(
            snapshot.index.range(span.start as usize, span.end as usize),
        ))),
    }
}
