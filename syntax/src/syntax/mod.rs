//! Text → typed AST with spans, and syntax errors in plain words.

pub mod ast;
mod errors;
mod lower;
mod parsed;
pub mod split;

use std::num::NonZeroUsize;
use std::sync::Once;

pub use parsed::{Parsed, PlacedDecl, SyntaxError};

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
        parsed.errors.push(errors::too_deep(at));
        return parsed;
    }
    let masked = split::mask_comments(source);
    lower::chunk(source, masked.as_deref().unwrap_or(source), 0, &mut parsed);
    parsed
}
