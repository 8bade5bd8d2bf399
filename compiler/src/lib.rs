//! deployfit-compiler: the analysis core of `.deploy` files, above the syntax crate.
//!
//! The pipeline (salsa queries in [`db`]): parse → declarations → scope → catalog
//! entries and deployments → diagnostics, rules and the solver. It reads no file and
//! starts no process: the host crate (`deployfit-host`, its `Workspace`) feeds it text,
//! and the IDE crate (`deployfit-ide`) answers questions on top of it.

pub mod candidate;
pub mod check;
pub mod db;
pub mod diagnostics;
pub mod eval;
pub mod external;
pub mod names;
pub mod rules;
pub mod solve;

// The ground layer, its own crate (syntax/): spans, units, codes, the parser and the
// formatter, under the paths the compiler has always used.
pub use deployfit_syntax::{fmt, span, syntax, units};

pub use diagnostics::{Diagnostic, Label, Severity, Suggestion};
