//! Runtime values and why an expression or a figure has none.

use crate::span::Span;
use crate::syntax::ast::DeclKind;
use crate::units::{Num, Quantity};

/// A runtime value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Q(Quantity),
    Bool(bool),
    Str(String),
    /// A word from a fixed set (`nvidia`, `gqa`, `warn`), or a bare name compared with
    /// a reference (`kv_cache == fp16`).
    Symbol(String),
    /// A catalog entry by kind and name.
    Ref(DeclKind, String),
    List(Vec<Value>),
}

impl Value {
    pub fn display(&self) -> String {
        match self {
            Value::Q(q) => q.display(),
            Value::Bool(b) => b.to_string(),
            Value::Str(s) => s.clone(),
            Value::Symbol(s) | Value::Ref(_, s) => s.clone(),
            Value::List(items) => format!(
                "[{}]",
                items
                    .iter()
                    .map(Value::display)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }

    pub fn quantity(&self) -> Option<Quantity> {
        match self {
            Value::Q(q) => Some(*q),
            _ => None,
        }
    }
}

/// Why an expression has no value.
#[derive(Clone, Debug, PartialEq)]
pub enum EvalError {
    /// A figure the estimate needs is missing (the message names it).
    Missing(String),
    DivisionByZero(Span),
    /// A result that is not a finite number (overflow, or NaN when `nan`): the expression
    /// that produced it (`span`), or the estimate's figure (`figure`) it came from.
    NotFinite {
        span: Option<Span>,
        figure: Option<String>,
        nan: bool,
    },
    /// Already reported by the checker.
    Invalid,
}

/// A quantity as a count (`seqs = 8`), when it is a positive whole number.
pub fn as_count(q: Quantity) -> Option<u64> {
    match q.num {
        Num::Int(v) if v > 0 && v <= u32::MAX as i128 => Some(v as u64),
        Num::Real(v) if v.fract() == 0.0 && v > 0.0 && v <= u32::MAX as f64 => Some(v as u64),
        _ => None,
    }
}
