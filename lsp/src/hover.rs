//! Hover.

use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::*;

use crate::Backend;

pub(crate) async fn hover(backend: &Backend, params: HoverParams) -> Result<Option<Hover>> {
    let position = params.text_document_position_params;
    let answer = backend
        .on_snapshot(&position.text_document.uri, move |analysis, snapshot| {
            let offset = snapshot.index.offset(position.position);
            analysis.hover(snapshot.file, offset)
        })
        .await?;
    let Some((Some(hover), snapshot)) = answer else {
        return Ok(None);
    };
    Ok(Some(Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value: hover.markdown,
        }),
        range: Some(
            snapshot
                .index
                .range(hover.span.start as usize, hover.span.end as usize),
        ),
    }))
}
