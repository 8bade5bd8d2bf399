//! The model catalog as a user browses it: `deployfit model ID` (the architecture card the
//! seed pages show) and `deployfit models --search TEXT` (catalog and registry models).

use serde::Serialize;

use crate::db::{Db, SourceFile};
use crate::eval::deployment::model_for_query;
use crate::eval::schema::Attention;

use crate::syntax::ast::DeclKind;

/// One model's architecture, as `deployfit model` prints it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ModelCard {
    /// The catalog (or generated) declaration name.
    pub name: String,
    /// The Hugging Face id, when known.
    pub id: Option<String>,
    /// Other names it answers to: its Ollama tag.
    pub aliases: Vec<String>,
    pub params: Option<u64>,
    pub active_params: Option<u64>,
    pub layers: Option<u64>,
    pub hidden: Option<u64>,
    pub intermediate: Option<u64>,
    pub heads: Option<u64>,
    pub kv_heads: Option<u64>,
    pub head_dim: Option<u64>,
    pub vocab: Option<u64>,
    /// The trained context window, in tokens.
    #[serde(rename = "max_context_tokens")]
    pub max_context: Option<u64>,
    pub attention: Option<String>,
    pub window: Option<u64>,
    pub local_layers: Option<u64>,
    pub kv_lora_rank: Option<u64>,
    pub qk_rope_dim: Option<u64>,
    pub experts: Option<u64>,
    pub experts_active: Option<u64>,
    /// KV-cache bytes per token of context (one sequence, every layer) per catalog KV
    /// dtype, for the layers that hold every token.
    pub kv_bytes_per_token: Vec<KvPerToken>,
    pub license: Option<String>,
    pub released: Option<String>,
    /// Where the architecture comes from: the curated catalog, a registry row, a file.
    pub source: String,
    /// What the source does not determine; `None` when the architecture is complete.
    pub incomplete: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KvPerToken {
    pub kv_cache: String,
    pub bytes: u64,
}

/// A count or size as a whole number.
fn whole(value: Option<f64>) -> Option<u64> {
    value
        .filter(|v| v.is_finite() && *v >= 0.0)
        .map(|v| v.round() as u64)
}

/// The card of the model a string names (catalog name, Hugging Face id, Ollama tag, file).
/// The caller has materialized registry and file models ([`crate::Workspace::want_model`]).
pub fn model_card(db: &dyn Db, file: SourceFile, text: &str) -> Result<ModelCard, String> {
    let scope = crate::names::scope(db, file);
    let name = model_for_query(db, scope, text)?;
    let key = scope
        .lookup(DeclKind::Model, &name)
        .ok_or_else(|| format!("no model `{name}`"))?;
    let model = crate::eval::entry_of(db, key).as_model();
    let generated = key.file(db).path(db) == std::path::Path::new(crate::db::RESOLVED_MODELS_PATH);
    let attention = model.attention;
    let layers = whole(model.layers);
    let head_dim = whole(model.head_dim)
        .or_else(|| Some(whole(model.hidden)? / whole(model.heads).filter(|h| *h > 0)?));
    let kv_heads = whole(model.kv_heads).or(whole(model.heads));
    // Bytes per element of each KV dtype in the catalog, by name.
    let per_element: Vec<KvPerToken> = scope
        .names(DeclKind::Kv)
        .filter_map(|(kv, kv_key)| {
            let bytes = crate::eval::entry_of(db, kv_key).as_kv().bytes?;
            let layers = layers? as f64;
            let elements = if attention == Some(Attention::Mla) {
                (whole(model.kv_lora_rank)? + whole(model.qk_rope_dim).unwrap_or(0)) as f64
            } else {
                2.0 * kv_heads? as f64 * head_dim? as f64
            };
            Some(KvPerToken {
                kv_cache: kv.to_string(),
                bytes: (elements * layers * bytes).round() as u64,
            })
        })
        .collect();
    let source = match model.source.clone() {
        Some(source) => source,
        None if generated => "generated".to_string(),
        None => format!(
            "the curated catalog: `{name}` in {}",
            key.file(db).path(db).display()
        ),
    };
    Ok(ModelCard {
        id: model.hf.clone(),
        aliases: model.ollama.clone().into_iter().collect(),
        params: whole(model.params),
        active_params: whole(model.active_params),
        layers,
        hidden: whole(model.hidden),
        intermediate: whole(model.intermediate),
        heads: whole(model.heads),
        kv_heads,
        head_dim,
        vocab: whole(model.vocab),
        max_context: whole(model.max_context),
        attention: attention.map(|a| a.name().to_string()),
        window: whole(model.window),
        local_layers: whole(model.local_layers),
        kv_lora_rank: whole(model.kv_lora_rank),
        qk_rope_dim: whole(model.qk_rope_dim),
        experts: whole(model.experts),
        experts_active: whole(model.experts_active),
        kv_bytes_per_token: per_element,
        license: model.license.clone(),
        released: model.released.clone(),
        source,
        incomplete: model.incomplete.clone(),
        name,
    })
}

/// One row of `deployfit models --search`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ModelRow {
    /// The Hugging Face id (registry rows, catalog models that name one), else the catalog
    /// name.
    pub id: String,
    /// The catalog name, for catalog models.
    pub catalog: Option<String>,
    /// The config.json `model_type` (registry rows; catalog models via their registry row).
    pub family: Option<String>,
    pub params: Option<u64>,
    pub layers: Option<u64>,
    #[serde(rename = "max_context_tokens")]
    pub max_context: Option<u64>,
    /// `catalog` or `registry`.
    pub source: &'static str,
    pub downloads: Option<u64>,
}

/// Catalog models, then registry models (by downloads), whose id or name contains
/// `search` (any case) and whose family is `family`, at most `limit` (0: all).
pub fn list_models(
    db: &dyn Db,
    file: SourceFile,
    search: Option<&str>,
    family: Option<&str>,
    limit: usize,
) -> Vec<ModelRow> {
    let scope = crate::names::scope(db, file);
    let needle = search.map(str::to_ascii_lowercase);
    let wanted = |id: &str, family_of: Option<&str>| {
        needle
            .as_deref()
            .is_none_or(|n| id.to_ascii_lowercase().contains(n))
            && family.is_none_or(|f| family_of.is_some_and(|g| g.eq_ignore_ascii_case(f)))
    };
    let mut rows = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for (name, key) in scope.names(DeclKind::Model) {
        if key.file(db).path(db) == std::path::Path::new(crate::db::RESOLVED_MODELS_PATH) {
            continue;
        }
        let model = crate::eval::entry_of(db, key).as_model();
        let hf = model.hf.clone();
        let registry_row = hf.as_deref().and_then(deployfit_registry::resolve);
        let family_of = registry_row.as_ref().map(|r| r.record.architecture);
        let id = hf.clone().unwrap_or_else(|| name.to_string());
        if !(wanted(&id, family_of) || wanted(name, family_of)) {
            continue;
        }
        if let Some(hf) = &hf {
            seen.insert(hf.to_ascii_lowercase());
        }
        rows.push(ModelRow {
            id,
            catalog: Some(name.to_string()),
            family: family_of.map(str::to_string),
            params: whole(model.params),
            layers: whole(model.layers),
            max_context: whole(model.max_context),
            source: "catalog",
            downloads: None,
        });
    }
    let registry = deployfit_registry::search(needle.as_deref().unwrap_or(""))
        .filter(|r| family.is_none_or(|f| r.architecture.eq_ignore_ascii_case(f)))
        .filter(|r| !seen.contains(&r.id.to_ascii_lowercase()));
    for record in registry {
        if limit > 0 && rows.len() >= limit {
            break;
        }
        rows.push(ModelRow {
            id: record.id.to_string(),
            catalog: None,
            family: Some(record.architecture.to_string()),
            params: record.params,
            layers: record.layers.map(u64::from),
            max_context: record.context_length,
            source: "registry",
            downloads: Some(record.downloads),
        });
    }
    if limit > 0 {
        rows.truncate(limit);
    }
    rows
}
