//! Completion.

use deployfit_host::ide;
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::*;

use crate::Backend;

pub(crate) async fn completion(
    backend: &Backend,
    params: CompletionParams,
) -> Result<Option<CompletionResponse>> {
    let position = params.text_document_position;
    let answer = backend
        .on_snapshot(&position.text_document.uri, move |analysis, snapshot| {
            let offset = snapshot.index.offset(position.position);
            analysis.completions(snapshot.file, offset)
        })
        .await?;
    let Some((completions, snapshot)) = answer else {
        return Ok(None);
    };
    let index = &snapshot.index;
    let items = completions
        .into_iter()
        .map(|c| CompletionItem {
            filter_text: c.edit.as_ref().map(|e| e.typed.clone()),
            text_edit: c.edit.as_ref().map(|e| {
                CompletionTextEdit::Edit(TextEdit {
                    range: index.range(e.span.start as usize, e.span.end as usize),
                    new_text: c.label.clone(),
                })
            }),
            label: c.label,
            kind: Some(match c.kind {
                ide::CompletionKind::Keyword => CompletionItemKind::KEYWORD,
                ide::CompletionKind::Field => CompletionItemKind::FIELD,
                ide::CompletionKind::Entry => CompletionItemKind::VALUE,
                ide::CompletionKind::Word => CompletionItemKind::ENUM_MEMBER,
                ide::CompletionKind::Unit => CompletionItemKind::UNIT,
                ide::CompletionKind::Property => CompletionItemKind::PROPERTY,
            }),
            detail: (!c.detail.is_empty()).then_some(c.detail),
            ..CompletionItem::default()
        })
        .collect();
    Ok(Some(CompletionResponse::Array(items)))
}
