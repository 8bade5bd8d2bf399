//! deployfit-compiler: everything that understands `.deploy` files.
//!
//! The pipeline (salsa queries in [`db`]): parse → declarations → scope → catalog
//! entries and deployments → diagnostics. [`Workspace`] is the one way in for the CLI,
//! the language server and the tests.

pub mod analysis;
pub mod candidate;
pub mod cards;
pub mod check;
pub mod db;
pub mod diagnostics;
pub mod eval;
pub mod explain;
pub mod export;
pub mod external;
pub mod files;
pub mod fixes;
pub mod hardware;
pub mod ide;
pub mod matrix;
pub mod names;
pub mod query;
pub mod rules;
pub mod solve;
mod workspace;

// The ground layer, its own crate (syntax/): spans, units, codes, the parser and the
// formatter, under the paths the compiler has always used.
pub use deployfit_syntax::{fmt, span, syntax, units};

pub use analysis::{Analysis, AnalysisHost, Cancellable, Cancelled};
pub use diagnostics::{Diagnostic, Label, Severity, Suggestion};
pub use workspace::Workspace;
