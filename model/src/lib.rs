//! deployfit-model: the model's numerics and tables, with no database, no diagnostics and
//! no catalog lookups — what can be computed, tested and benchmarked on plain inputs.
//!
//! - [`schema`]: every declaration kind's fields, their types and valid ranges;
//! - [`value`]: evaluated values and the reasons a value is missing ([`value::EvalError`]);
//! - [`figures`]: a deployment's typed figures and the language's property table;
//! - [`speed`]: decode, prefill and serving speed from a step's costs, and [`sim`], the
//!   serving simulator (continuous batching, chunked prefill, preemption);
//! - [`milp`]: the mixed-fleet integer program and its solver (microlp).
//!
//! The compiler (`deployfit-compiler`) reads the catalog, evaluates a deployment's fields
//! and calls these; it re-exports them as `eval::{schema, value, figures, speed, sim}` and
//! `solve::milp`.

// The syntax crate's modules, under the paths these modules have always used.
use deployfit_syntax::{span, syntax, units};

pub mod figures;
pub mod milp;
pub mod ollama;
pub mod schema;
pub mod sim;
pub mod speed;
pub mod value;
pub mod views;
