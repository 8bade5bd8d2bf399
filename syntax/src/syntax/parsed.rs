//! What parsing produces: declarations placed at their offsets, imports, and syntax
//! errors; and the pest parser they come from.

use crate::codes::Code;
use crate::span::Span;

use super::ast::{Decl, Import, Item};

#[derive(pest_derive::Parser)]
#[grammar = "../grammar/deploy.pest"]
pub(crate) struct DeployParser;

/// A syntax problem: always an error.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SyntaxError {
    pub code: Code,
    pub message: String,
    pub span: Span,
    pub label: String,
    pub help: String,
}

/// A declaration with its absolute position; the declaration's own spans are relative
/// to `offset`.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PlacedDecl {
    pub offset: u32,
    pub decl: std::sync::Arc<Decl>,
}

/// The result of parsing one file.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
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
