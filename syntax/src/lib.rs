//! deployfit-syntax: the ground layer of the `.deploy` language, with no knowledge of
//! names, catalogs or evaluation.
//!
//! - [`span`]: byte spans and line indexes;
//! - [`units`]: quantities with exact integer bytes;
//! - [`codes`]: every stable diagnostic code (the compiler's diagnostics name them);
//! - [`syntax`]: the pest grammar (`grammar/deploy.pest`), the pre-split into
//!   declarations, lowering to a typed AST and syntax errors in words;
//! - [`fmt`]: the formatter, over the same AST.
//!
//! The compiler (`deployfit-compiler`) re-exports these modules under the same names.

pub mod codes;
pub mod fmt;
pub mod span;
pub mod syntax;
pub mod units;
