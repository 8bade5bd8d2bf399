//! deployfit-ide: what the products ask of an analysed file, without disk access — the
//! IDE queries (hover, completion, definition, references, rename, inlay hints, semantic
//! tokens, symbols, quick fixes, lenses: [`ide`]), `explain`, `export`, the `gpus` and
//! `models` queries ([`query`]), the `matrix`, model cards and structured fixes.
//!
//! Each takes a database and a file from the compiler (`deployfit-compiler`); the host
//! crate (`deployfit-host`) owns the database and reads the disk.

// The compiler's modules, under the paths these modules have always used.
use deployfit_compiler::{
    candidate, check, db, diagnostics, eval, external, names, solve, span, syntax, units,
};

pub mod cards;
pub mod explain;
pub mod export;
pub mod fixes;
pub mod ide;
pub mod matrix;
pub mod query;
pub mod registry_models;
pub mod render;
