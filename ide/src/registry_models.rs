//! `models --gpu G` over the embedded model registry: every registry row (9,441 Hugging
//! Face architectures) on one GPU, without a `model` declaration per row.
//!
//! A deployment that names a registry model gets a generated declaration
//! (`deployfit_host::external`), parsed and evaluated like a catalog entry. Doing that for
//! every row on each `models --gpu` would parse thousands of declarations; instead each row
//! becomes the typed view the estimate reads ([`model_view`]: the same fields, from the
//! same registry facts, as the generated declaration), wrapped in an in-memory
//! [`Entry`], and the estimate runs on it as on a catalog model. Rows that do not fit at
//! any weight format the listing allows are left out; those that fit are ranked with the
//! catalog models by the caller.

use std::collections::BTreeSet;

use deployfit_registry::{self as registry, Attention, Record};

use crate::eval::Entry;
use crate::eval::schema;
use crate::eval::views::{self, View};
use crate::syntax::ast::DeclKind;

/// The typed model view of a registry row: the fields the generated declaration of the
/// row writes (`deployfit_host::external::registry_declaration`), read from the same
/// registry facts (its layout, MoE parameters and attention kind).
pub fn model_view(r: &Record) -> views::Model {
    let number = |n: Option<u64>| n.map(|n| n as f64);
    let small = |n: Option<u32>| n.map(f64::from);
    let shape = r.layout();
    let moe = r.moe_params();
    let (params, active_params) = match moe {
        Some(p) => (Some(p.total as f64), Some(p.active as f64)),
        None if r.is_moe() => (number(r.params), None),
        None => (number(r.params), number(r.params)),
    };
    let attention = r.attention();
    let window = shape.and_then(|s| s.window.zip(s.local_layers));
    let mut view = views::Model {
        name: Some(r.id.to_string()),
        hf: Some(r.id.to_string()),
        params,
        active_params,
        layers: small(r.layers),
        hidden: small(r.hidden),
        intermediate: small(r.intermediate),
        heads: small(r.heads),
        kv_heads: small(r.key_value_heads()),
        head_dim: small(r.head_dim).filter(|_| attention != Attention::Mla),
        vocab: small(r.vocab),
        max_context: number(r.context_length),
        attention: match attention {
            _ if window.is_some() => Some(schema::Attention::Hybrid),
            Attention::Gqa => Some(schema::Attention::Gqa),
            Attention::Mha => Some(schema::Attention::Mha),
            Attention::Mla => Some(schema::Attention::Mla),
            Attention::Unknown => None,
        },
        window: window.map(|(w, _)| f64::from(w)),
        local_layers: window.map(|(_, l)| f64::from(l)),
        license: r.license.map(str::to_string),
        released: r.release_date.map(str::to_string),
        ..views::Model::default()
    };
    if let Some(s) = shape {
        view.kv_lora_rank = small(s.kv_lora_rank);
        view.qk_rope_dim = small(s.qk_rope_dim);
        view.linear_layers = small(s.linear_layers);
        view.linear_state = number(s.linear_state);
        if moe.is_some() {
            view.experts = small(s.experts);
            view.experts_active = small(s.experts_active);
        }
    }
    view
}

/// A registry row as an entry the estimate reads: its view, no fields or files of its own.
/// `key` is only the entry's identity for diagnostics, which the listing does not report:
/// the estimate reads a model through its view (and its `files`, empty here).
fn entry<'db>(key: crate::db::DeclKey<'db>, view: views::Model) -> Entry<'db> {
    Entry::bare(key, View::Model(Box::new(view)))
}

/// What `answer` makes of every registry row with a memory estimate (parameters, layers
/// and hidden size known), the rows `answer` declines (a model that does not fit) left out;
/// `catalog_hf` are the lowercased Hugging Face ids of catalog models, whose rows the
/// catalog answers. Empty when the catalog has no model declaration to lend its identity
/// to the entries.
pub fn answer_rows<'db, T>(
    scope: &crate::names::Scope<'db>,
    catalog_hf: &BTreeSet<String>,
    mut answer: impl FnMut(&str, &Entry<'db>) -> Option<T>,
) -> Vec<T> {
    let Some((_, key)) = scope.names(DeclKind::Model).next() else {
        return Vec::new();
    };
    registry::records()
        .iter()
        .filter(|r| !catalog_hf.contains(&r.id.to_ascii_lowercase()))
        .filter(|r| r.params.is_some() && r.layers.is_some() && r.hidden.is_some())
        .filter_map(|r| answer(r.id, &entry(key, model_view(r))))
        .collect()
}
