//! Text → typed AST with spans, and syntax errors in plain words.

pub mod ast;
mod errors;
mod lower;
pub mod split;

use std::num::NonZeroUsize;
use std::sync::Once;

use crate::span::Span;
use ast::{Decl, Import, Item};

#[derive(pest_derive::Parser)]
#[grammar = "../../grammar/deploy.pest"]
pub(crate) struct DeployParser;

/// A syntax problem: always an error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxError {
    pub code: &'static str,
    pub message: String,
    pub span: Span,
    pub label: String,
    pub help: String,
}

/// A declaration with its absolute position; the declaration's own spans are relative
/// to `offset`.
#[derive(Clone, Debug, PartialEq)]
pub struct PlacedDecl {
    pub offset: u32,
    pub decl: std::sync::Arc<Decl>,
}

/// The result of parsing one file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Parsed {
    pub imports: Vec<Import>,
    pub decls: Vec<PlacedDecl>,
    pub errors: Vec<SyntaxError>,
}

impl Parsed {
    /// Items in source order, with absolute spans for imports.
    pub fn items(&self) -> Vec<Item> {
        let mut items: Vec<(u32, Item)> = self
            .imports
            .iter()
            .map(|import| (import.span.start, Item::Import(import.clone())))
            .chain(
                self.decls
                    .iter()
                    .map(|placed| (placed.offset, Item::Decl((*placed.decl).clone()))),
            )
            .collect();
        items.sort_by_key(|(offset, _)| *offset);
        items.into_iter().map(|(_, item)| item).collect()
    }
}

/// The most rule calls pest may make on one chunk; hostile input fails instead of
/// running away.
const CALL_LIMIT: usize = 20_000_000;

/// Parses a whole file: splits it at declaration boundaries and parses every chunk, so
/// that each broken declaration reports its own error.
pub fn parse(text: &str) -> Parsed {
    let mut parsed = Parsed::default();
    for chunk in split::split(text) {
        let start = chunk.span.start as usize;
        let source = &text[start..chunk.span.end as usize];
        parsed.append(&parse_chunk(source), start as u32);
    }
    parsed
}

/// Parses one chunk (a piece of a file between declaration boundaries) on its own, with
/// offsets relative to the chunk. Unchanged chunks give equal results, so the database
/// memoizes them per chunk text and an edit re-parses only the chunk it touches.
pub fn parse_chunk(source: &str) -> Parsed {
    static LIMIT: Once = Once::new();
    LIMIT.call_once(|| pest::set_call_limit(NonZeroUsize::new(CALL_LIMIT)));
    let mut parsed = Parsed::default();
    if let Some(at) = split::too_deep(source) {
        parsed.errors.push(too_deep(at));
        return parsed;
    }
    lower::chunk(source, source, 0, &mut parsed);
    parsed
}

impl Parsed {
    /// Appends a chunk's parse, moving its offsets to where the chunk starts.
    pub fn append(&mut self, chunk: &Parsed, start: u32) {
        self.imports
            .extend(chunk.imports.iter().map(|import| Import {
                span: import.span.shift(start),
                path_span: import.path_span.shift(start),
                ..import.clone()
            }));
        self.decls
            .extend(chunk.decls.iter().map(|placed| PlacedDecl {
                offset: placed.offset + start,
                decl: placed.decl.clone(),
            }));
        self.errors
            .extend(chunk.errors.iter().map(|error| SyntaxError {
                span: error.span.shift(start),
                ..error.clone()
            }));
    }
}

pub(crate) fn too_deep(at: usize) -> SyntaxError {
    SyntaxError {
        code: "deploy::syntax::too_deep",
        message: format!(
            "brackets nest more than {} levels deep here",
            split::MAX_DEPTH
        ),
        span: Span::new(at, at + 1),
        label: "too deep".into(),
        help: "split the expression into named fields or simpler parts".into(),
    }
}
