//! Inlay hints, semantic tokens and document symbols.

use deployfit_host::ide;
use deployfit_host::syntax::ast::DeclKind;
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::*;

use crate::Backend;

/// The semantic token types, in the order of [`token_index`].
pub(crate) const TOKEN_TYPES: [SemanticTokenType; 9] = [
    SemanticTokenType::KEYWORD,
    SemanticTokenType::TYPE,
    SemanticTokenType::PROPERTY,
    SemanticTokenType::VARIABLE,
    SemanticTokenType::NUMBER,
    SemanticTokenType::MACRO,
    SemanticTokenType::STRING,
    SemanticTokenType::COMMENT,
    SemanticTokenType::OPERATOR,
];

fn token_index(kind: ide::TokenKind) -> u32 {
    match kind {
        ide::TokenKind::Keyword => 0,
        ide::TokenKind::Kind => 1,
        ide::TokenKind::Field => 2,
        ide::TokenKind::Name => 3,
        ide::TokenKind::Number => 4,
        ide::TokenKind::Unit => 5,
        ide::TokenKind::String => 6,
        ide::TokenKind::Comment => 7,
        ide::TokenKind::Operator => 8,
    }
}

pub(crate) async fn inlay_hints(
    backend: &Backend,
    params: InlayHintParams,
) -> Result<Option<Vec<InlayHint>>> {
    let answer = backend
        .on_snapshot(&params.text_document.uri, |analysis, snapshot| {
            analysis.inlay_hints(snapshot.file)
        })
        .await?;
    let Some((hints, snapshot)) = answer else {
        return Ok(None);
    };
    Ok(Some(
        hints
            .into_iter()
            .map(|hint| InlayHint {
                position: snapshot.index.position(hint.offset as usize),
                label: InlayHintLabel::String(format!(" {}", hint.label)),
                kind: None,
                text_edits: None,
                tooltip: None,
                padding_left: Some(true),
                padding_right: None,
                data: None,
            })
            .collect(),
    ))
}

pub(crate) async fn symbols(
    backend: &Backend,
    params: DocumentSymbolParams,
) -> Result<Option<DocumentSymbolResponse>> {
    let answer = backend
        .on_snapshot(&params.text_document.uri, |analysis, snapshot| {
            analysis.symbols(snapshot.file)
        })
        .await?;
    let Some((symbols, snapshot)) = answer else {
        return Ok(None);
    };
    let index = &snapshot.index;
    #[allow(deprecated)]
    let symbols = symbols
        .into_iter()
        .map(|s| DocumentSymbol {
            name: s.name,
            detail: Some(s.kind.keyword().to_string()),
            kind: match s.kind {
                DeclKind::Deployment => SymbolKind::OBJECT,
                DeclKind::Rule => SymbolKind::FUNCTION,
                _ => SymbolKind::STRUCT,
            },
            tags: None,
            deprecated: None,
            range: index.range(s.span.start as usize, s.span.end as usize),
            selection_range: index.range(s.name_span.start as usize, s.name_span.end as usize),
            children: None,
        })
        .collect();
    Ok(Some(DocumentSymbolResponse::Nested(symbols)))
}

pub(crate) async fn semantic_tokens(
    backend: &Backend,
    params: SemanticTokensParams,
) -> Result<Option<SemanticTokensResult>> {
    let answer = backend
        .on_snapshot(&params.text_document.uri, |analysis, snapshot| {
            analysis.semantic_tokens(snapshot.file)
        })
        .await?;
    let Some((tokens, snapshot)) = answer else {
        return Ok(None);
    };
    let index = &snapshot.index;
    let mut data = Vec::new();
    let (mut line, mut character) = (0u32, 0u32);
    // Tokens come in source order; each conversion is a binary search.
    for token in tokens {
        let start = index.position(token.start as usize);
        let end = index.position(token.start as usize + token.len as usize);
        if end.line != start.line {
            continue;
        }
        let Some(delta_line) = start.line.checked_sub(line) else {
            continue;
        };
        let delta_start = if delta_line == 0 {
            match start.character.checked_sub(character) {
                Some(delta) => delta,
                None => continue,
            }
        } else {
            start.character
        };
        data.push(SemanticToken {
            delta_line,
            delta_start,
            length: end.character - start.character,
            token_type: token_index(token.kind),
            token_modifiers_bitset: 0,
        });
        (line, character) = (start.line, start.character);
    }
    Ok(Some(SemanticTokensResult::Tokens(SemanticTokens {
        result_id: None,
        data,
    })))
}
