//! Whole-document formatting.

use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::*;

use crate::Backend;

pub(crate) async fn format(
    backend: &Backend,
    params: DocumentFormattingParams,
) -> Result<Option<Vec<TextEdit>>> {
    let answer = backend
        .on_snapshot(&params.text_document.uri, |analysis, snapshot| {
            analysis.format(snapshot.file)
        })
        .await?;
    let Some((Some(formatted), snapshot)) = answer else {
        return Ok(None);
    };
    Ok(Some(vec![TextEdit {
        range: snapshot.index.range(0, usize::MAX),
        new_text: formatted,
    }]))
}
