//! Proofs that rule candidates out without evaluating them (docs/cost.md, "Bounds in the
//! search"): a `require decode_tps > X` (or `>=`) that no candidate on a GPU and count can
//! meet, because no decode step can stream the weights faster than the GPUs' memory
//! bandwidth.
//!
//! A decode step of a dense model (every parameter active) reads each GPU's share of the
//! weights at least once per output token, so, whatever the engine, KV cache, context,
//! `seqs` or price:
//!
//! ```text
//! decode_tps ≤ count × bandwidth / weights
//! ```
//!
//! with every efficiency of the speed model at most 1 (`decode_efficiency`, the engines'
//! `bandwidth_efficiency` and the architectures' `serving_efficiency` are shares), the
//! weights no smaller than the smallest the quant values can give (a weights file, or
//! `params × bpw / 8`, or 16-bit weights when an engine upcasts), and every other term of
//! a step (KV reads, compute, all-reduces, overheads, padding) only adding time. The
//! bound is used only where those premises hold: no speculative decoding (several tokens
//! per step), no mixture of experts (a token reads only its experts), no pipeline stages,
//! no `offload = auto` (layers read from the host's memory), not the host's CPU, and no
//! hole but those listed in [`BOUNDED_HOLES`]. It is then widened by [`SAFETY`].

use crate::eval::Value;
use crate::eval::deployment::{Cx, Resolved};
use crate::syntax::ast::{BinaryOp, DeclKind, Entry as AstEntry, Expr, ExprKind};
use crate::units::Dim;

/// The holes whose values the bound holds for: the priced ones (`gpu`, `count`,
/// `replicas`: the bound is computed per GPU and count) and those that only add time to
/// a decode step or set its price.
pub const BOUNDED_HOLES: [&str; 16] = [
    "gpu",
    "count",
    "replicas",
    "quant",
    "kv_cache",
    "engine",
    "context",
    "seqs",
    "memory_utilization",
    "enforce_eager",
    "batched_tokens",
    "pricing",
    "spot",
    "offer",
    "provider",
    "region",
];

/// The factor the bound is widened by, so that a rounding or a term of the speed model
/// this proof does not follow cannot rule out a candidate that meets the require: a
/// candidate is ruled out only when twice the bound is still short of it.
pub const SAFETY: f64 = 2.0;

/// The strictest `require decode_tps > X` / `>= X` (or `X < decode_tps`, `X <=
/// decode_tps`) among the deployment's requires, in tok/s.
fn decode_floor(cx: Cx<'_, '_>) -> Option<f64> {
    fn strip(expr: &Expr) -> &Expr {
        match &expr.kind {
            ExprKind::Paren(inner) => strip(inner),
            _ => expr,
        }
    }
    let is_decode = |e: &Expr| matches!(&strip(e).kind, ExprKind::Name(n) if n == "decode_tps");
    let rate = |e: &Expr| match &strip(e).kind {
        ExprKind::Literal { value, .. } if value.dim == Dim::TOKEN_RATE && !value.percent => {
            Some(value.value()).filter(|v| v.is_finite())
        }
        _ => None,
    };
    cx.decl
        .body
        .entries
        .iter()
        .filter_map(|entry| match entry {
            AstEntry::Require(require) => match &strip(&require.cond).kind {
                ExprKind::Binary(BinaryOp::Gt | BinaryOp::Ge, lhs, rhs) if is_decode(lhs) => {
                    rate(rhs)
                }
                ExprKind::Binary(BinaryOp::Lt | BinaryOp::Le, lhs, rhs) if is_decode(rhs) => {
                    rate(lhs)
                }
                _ => None,
            },
            _ => None,
        })
        .max_by(f64::total_cmp)
}

/// What rules a GPU and count out: the require's floor and the smallest weights.
pub(crate) struct DecodeBound {
    floor: f64,
    weights: f64,
}

impl DecodeBound {
    /// The bound for a search, when its premises hold (module docs); `holes` are the
    /// holes with their values.
    pub(crate) fn new(
        cx: Cx<'_, '_>,
        resolved: &Resolved,
        holes: &[(String, Vec<Value>)],
    ) -> Option<DecodeBound> {
        let Cx { db, scope, .. } = cx;
        let floor = decode_floor(cx)?;
        if holes
            .iter()
            .any(|(name, _)| !BOUNDED_HOLES.contains(&name.as_str()))
            || resolved.speculative.is_some()
            || crate::eval::parallel::plan_fields(&resolved.fields).0 > 1
            || resolved.symbol_as("offload") == Some(crate::eval::schema::OffloadMode::Auto)
        {
            return None;
        }
        let model = match resolved.fields.get("model") {
            Some(Value::Ref(_, name)) => {
                crate::eval::entry_of(db, scope.lookup(DeclKind::Model, name)?)
            }
            _ => return None,
        };
        let params = model.as_model().params;
        // A mixture of experts reads only the experts a token picks.
        if model.as_model().experts.is_some()
            || model
                .as_model()
                .active_params
                .is_some_and(|active| params.is_none_or(|p| active < p))
        {
            return None;
        }
        let quants: Vec<String> = match holes.iter().find(|(name, _)| name == "quant") {
            Some((_, values)) => values
                .iter()
                .filter_map(|v| match v {
                    Value::Ref(_, name) => Some(name.clone()),
                    _ => None,
                })
                .collect(),
            None => match resolved.fields.get("quant") {
                Some(Value::Ref(_, name)) => vec![name.clone()],
                _ => return None,
            },
        };
        // The smallest weights any quant value gives: its file (or an ancestor's), its
        // bits per weight, or 16 bits where an engine upcasts it.
        let mut weights = f64::INFINITY;
        for quant in &quants {
            let entry = crate::eval::entry_of(db, scope.lookup(DeclKind::Quant, quant)?);
            let file = std::iter::once(quant.as_str())
                .chain(entry.ancestor_names.iter().map(String::as_str))
                .find_map(|name| model.files.get(name))
                .map(|bytes| *bytes as f64);
            let from_bits = params.and_then(|p| entry.as_quant().bpw.map(|bpw| p * bpw / 8.0));
            let upcast = params.map(|p| p * 16.0 / 8.0);
            let least = [file, from_bits, upcast]
                .into_iter()
                .flatten()
                .fold(f64::INFINITY, f64::min);
            weights = weights.min(least);
        }
        (weights.is_finite() && weights > 0.0).then_some(DecodeBound { floor, weights })
    }

    /// Whether no candidate on `gpu` with `count` GPUs per replica can meet the require.
    pub(crate) fn rules_out(&self, cx: Cx<'_, '_>, gpu: &str, count: f64) -> bool {
        let Cx { db, scope, .. } = cx;
        let Some(key) = scope.lookup(DeclKind::Gpu, gpu) else {
            return false;
        };
        let entry = crate::eval::entry_of(db, key);
        if entry.as_gpu().device == Some(crate::eval::schema::Device::Cpu) {
            return false;
        }
        let Some(bandwidth) = entry.as_gpu().bandwidth.filter(|b| b.is_finite()) else {
            return false;
        };
        let best = SAFETY * count.max(1.0) * bandwidth / self.weights;
        best < self.floor
    }
}
