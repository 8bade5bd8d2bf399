//! deployfit-host: the one way in for the CLI, the language server and the tests.
//!
//! [`Workspace`] reads `.deploy` files and their imports from disk (through [`files`]),
//! materializes registry and file models ([`external`]) and fetches Hugging Face models
//! the registry lacks ([`hub`], only once the program calls [`hub::allow_network`]), detects the local hardware
//! ([`hardware`]) and feeds the text to the compiler's database; [`AnalysisHost`] wraps it
//! for the language server with cancellable snapshots ([`Analysis`]). Only this crate does
//! I/O. It re-exports the layers below under their own names, so that a caller needs
//! this crate alone: `deployfit_host::check`, `deployfit_host::explain` and so on.

pub mod analysis;
pub mod answers;
pub mod external;
pub mod files;
pub mod formats;
pub mod hardware;
pub mod hub;
mod workspace;

pub use analysis::{Analysis, AnalysisHost, Cancellable, Cancelled};
pub use workspace::Workspace;

pub use deployfit_compiler::{
    Diagnostic, Label, Severity, Suggestion, candidate, check, db, diagnostics, eval, fmt, names,
    rules, solve, span, syntax, units,
};
pub use deployfit_ide::{cards, explain, export, fixes, ide, matrix, query, render};
