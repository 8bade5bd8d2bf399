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
pub mod fmt;
pub mod hardware;
pub mod ide;
pub mod matrix;
pub mod names;
pub mod query;
pub mod rules;
pub mod solve;
pub mod span;
pub mod syntax;
pub mod units;
mod workspace;

pub use analysis::{Analysis, AnalysisHost, Cancellable, Cancelled};
pub use diagnostics::{Diagnostic, Label, Severity, Suggestion};
pub use workspace::Workspace;
