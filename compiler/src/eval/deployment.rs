//! A deployment's fields resolved against the catalog, and the environment that
//! expressions over a deployment read. Estimating, rules and solving sit above, in
//! [`crate::candidate`], [`crate::rules`], [`crate::solve`] and [`crate::check`].

use std::collections::BTreeMap;
use std::path::Path;

use super::Env;
use super::entry::const_field;
use super::estimate::{HostFigures, Owned};
use super::figures::Figures;
use super::schema::{
    FieldSpec, FieldTy, OWNED, OffloadKind, OffloadMode, SPECULATIVE, WORKLOAD, field_spec, schema,
};
use super::value::{EvalError, Value, as_count};
use crate::db::{Db, DeclKey};
use crate::diagnostics::codes::Code;
use crate::diagnostics::{Diag, Loc};
use crate::external;
use crate::names::Scope;
use crate::syntax::ast::{Decl, DeclKind, Entry as AstEntry, ExprKind, Field};

/// A deployment being checked and what it sees: the parameters that resolution,
/// evaluation, the rules and the solver pass together.
#[derive(Clone, Copy)]
pub struct Cx<'a, 'db> {
    pub db: &'db dyn Db,
    pub scope: &'db Scope<'db>,
    pub key: DeclKey<'db>,
    pub decl: &'a Decl,
}

/// What a deployment resolved to: entry names and the numbers that were used.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Setup {
    pub model: String,
    pub quant: String,
    pub kv_cache: String,
    pub engine: String,
    pub gpu: String,
    pub count: u64,
    #[serde(rename = "context_tokens")]
    pub context: u64,
    pub seqs: u64,
    pub replicas: u64,
    /// The override of the engine's memory share, 0–1.
    pub memory_utilization: Option<f64>,
    /// `enforce_eager = yes`: the serving engine runs without CUDA graphs (printed only
    /// when set).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub enforce_eager: bool,
    /// The engine entry whose figures a `version` chose (`vllm_v0`), when it is not the
    /// engine's own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub engine_release: Option<String>,
    /// Flash attention as an engine with `placement = ollama` runs it (the deployment's
    /// `flash_attention` or the architecture's default); absent on other engines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flash_attention: Option<bool>,
    /// `batched_tokens`: the engine's token budget per step, when the deployment sets it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub batched_tokens: Option<u64>,
    /// Pipeline-parallel stages (printed only above 1), and the GPUs one replica uses,
    /// `count × pipeline`.
    #[serde(skip_serializing_if = "is_one")]
    pub pipeline: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpus_per_replica: Option<u64>,
    /// `expert_parallel = true` (printed only when set).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub expert_parallel: bool,
    /// `speculative { }`, resolved (printed only when set).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speculative: Option<SpeculativeSetup>,
    /// `cloud` or `owned`.
    pub pricing: String,
    /// What `pricing = cloud` rents: the offer, its provider and instance, how many.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub rental: Option<super::estimate::Rental>,
    /// What one owned GPU costs per hour, in parts (`pricing = owned`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub owned: Option<OwnedCost>,
}

fn is_one(n: &u64) -> bool {
    *n == 1
}

/// Speculative decoding as evaluated: the method, the tokens drafted per step, the
/// acceptance rate used (the deployment's or the method's default) and what it yields.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct SpeculativeSetup {
    pub method: String,
    pub tokens: u64,
    pub acceptance: f64,
    /// Whether `acceptance` is the method's default rather than the deployment's.
    pub acceptance_default: bool,
    /// Expected tokens each target step yields per sequence, `(1 − a^(k+1)) / (1 − a)`.
    pub expected_tokens_per_step: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub draft: Option<String>,
    /// The draft model's Hugging Face id (for `--speculative-config`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub draft_hf: Option<String>,
}

/// One owned GPU's hourly cost in parts, $/h, with the settings behind it.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct OwnedCost {
    #[serde(rename = "msrp_usd")]
    pub msrp: f64,
    pub amortize_years: f64,
    #[serde(rename = "power_usd_per_kwh")]
    pub power_per_kwh: f64,
    pub pue: f64,
    pub tdp_watts: f64,
    /// The purchase price over the amortisation period.
    #[serde(rename = "amortized_usd_per_hour")]
    pub amortized_per_hour: f64,
    /// TDP × PUE at the power price.
    #[serde(rename = "power_usd_per_hour")]
    pub power_per_hour: f64,
    #[serde(rename = "host_usd_per_hour")]
    pub host_per_hour: f64,
    /// The sum: one GPU's hourly cost.
    #[serde(rename = "gpu_usd_per_hour")]
    pub gpu_per_hour: f64,
}

impl OwnedCost {
    /// The parts for a GPU entry; `None` when it has no `msrp` or `tdp`.
    pub fn of(gpu: &super::entry::Entry<'_>, owned: &Owned) -> Option<OwnedCost> {
        let msrp = gpu.as_gpu().msrp?;
        let tdp = gpu.as_gpu().tdp?;
        let hours = crate::units::SECONDS_PER_HOUR;
        let amortized = msrp / owned.amortize.max(1.0) * hours;
        let power = tdp * owned.pue * owned.power * hours;
        let host = owned.host * hours;
        Some(OwnedCost {
            msrp,
            amortize_years: owned.amortize / crate::units::SECONDS_PER_YEAR as f64,
            power_per_kwh: owned.power * crate::units::JOULES_PER_KWH as f64,
            pue: owned.pue,
            tdp_watts: tdp,
            amortized_per_hour: amortized,
            power_per_hour: power,
            host_per_hour: host,
            gpu_per_hour: amortized + power + host,
        })
    }
}

/// What expressions over a deployment read: its properties, its fields, the catalog.
pub struct DeploymentEnv<'a, 'db> {
    pub db: &'db dyn Db,
    pub scope: &'a Scope<'db>,
    pub figures: &'a Figures,
    pub fields: BTreeMap<String, Value>,
    pub workload: BTreeMap<String, Value>,
    /// Whether the requires' and rules' messages are rendered and warnings and infos
    /// produced: not in the solver's feasibility pass (`Mode::Probe`), where only whether
    /// an error fires matters.
    pub messages: bool,
}

impl Env for DeploymentEnv<'_, '_> {
    fn get(&self, name: &str) -> Option<Result<Value, EvalError>> {
        if let Some(value) = self.figures.get(name) {
            return Some(value);
        }
        self.fields.get(name).cloned().map(Ok)
    }

    fn field_of(&self, kind: DeclKind, name: &str, field: &str) -> Option<Value> {
        if kind == DeclKind::Deployment && name == "workload" {
            return self.workload.get(field).cloned();
        }
        let key = self.scope.lookup(kind, name)?;
        super::entry_of(self.db, key).fields.get(field).cloned()
    }
}

/// A model for a command-line query by catalog name, Hugging Face id, Ollama tag or
/// file (materialized by [`crate::Workspace::want_model`]), or the sentence that says
/// none matches, with the closest name.
pub fn model_for_query(db: &dyn Db, scope: &Scope<'_>, text: &str) -> Result<String, String> {
    model_by_alias(db, scope, text, Path::new(COMMANDS)).ok_or_else(|| {
        if let Some(problem) = db
            .project()
            .external(db)
            .get(&external::decl_name(text, Path::new(COMMANDS)))
        {
            return format!("cannot read the model `{text}`: {problem}");
        }
        let hint = closest_model(scope, text)
            .map(|s| format!("; did you mean `{s}`?"))
            .unwrap_or_default();
        let hub = external::hub_note(db, text, Path::new(COMMANDS))
            .map(|note| format!(" — {note}"))
            .unwrap_or_default();
        format!(
            "no catalog or registry model has the name, Hugging Face id or Ollama tag `{text}`{hint}{hub}"
        )
    })
}

/// The model a deployment's `model = "…"` string names, as seen from `file` (for the
/// language server's hover and go-to-definition on the string).
pub fn model_for_file(db: &dyn Db, scope: &Scope<'_>, text: &str, file: &Path) -> Option<String> {
    model_by_alias(db, scope, text, file)
}

/// The file that command-line model strings are relative to: a name in the current
/// folder.
pub const COMMANDS: &str = "<commands>";

/// The closest name for a "did you mean": for an id or tag (`org/name`, `name:tag`) the
/// closest registry id first, for a bare word the closest catalog name first.
fn closest_model(scope: &Scope<'_>, text: &str) -> Option<String> {
    let catalog = || scope.suggest(DeclKind::Model, &text.replace(['-', '.', '/', ':'], "_"));
    let registry = || deployfit_registry::closest(text).map(str::to_string);
    if text.contains(['/', ':']) {
        registry().or_else(catalog)
    } else {
        catalog().or_else(registry)
    }
}

/// The model a string names: a catalog model (by name, `hf` or `ollama`), else the
/// declaration materialized for it from the registry or a file (named by
/// [`external::decl_name`]; `importer` is the file that names it).
pub(crate) fn model_by_alias<'db>(
    db: &'db dyn Db,
    scope: &Scope<'db>,
    text: &str,
    importer: &Path,
) -> Option<String> {
    if let Some(key) = super::entry::curated_model(db, scope, text)
        .or_else(|| super::entry::curated_reupload(db, scope, text))
    {
        return Some(key.name(db).clone());
    }
    let name = external::decl_name(text, importer);
    if let Some(generated) = scope.lookup(DeclKind::Model, &name) {
        // The ids the registry passed through (an Ollama tag's id, the original of a
        // re-upload, the base of a quantized one): a catalog model that owns one wins.
        let model = super::entry_of(db, generated).as_model();
        let owner = model
            .hf
            .iter()
            .chain(model.aliases.iter().flatten())
            .find_map(|id| super::entry::curated_model(db, scope, id));
        return Some(owner.map_or(name, |key| key.name(db).clone()));
    }
    scope
        .lookup(DeclKind::Model, text)
        .map(|key| key.name(db).clone())
}

/// The deployment's fields as values.
#[derive(Clone, Debug)]
pub(crate) struct Resolved {
    pub fields: BTreeMap<String, Value>,
    pub workload: BTreeMap<String, Value>,
    /// `owned { amortize power pue host }`, as written (defaults are applied by
    /// [`owned_settings`]).
    pub owned: BTreeMap<String, Value>,
    /// `speculative { method tokens acceptance draft }`, as written; `None` without the
    /// block (defaults are applied by [`super::parallel::speculative_fields`]).
    pub speculative: Option<BTreeMap<String, Value>>,
}

impl Resolved {
    /// A word-valued deployment field as its enum (`offload = auto`), when written.
    pub fn symbol_as<T: super::schema::Symbol>(&self, name: &str) -> Option<T> {
        match self.fields.get(name) {
            Some(Value::Symbol(word)) => T::parse(word),
            _ => None,
        }
    }
}

/// Resolves every field; `None` when a field the estimate needs is missing or invalid
/// (each problem is reported).
pub(crate) fn resolve<'db>(cx: Cx<'_, 'db>, diags: &mut Vec<Diag<'db>>) -> Option<Resolved> {
    let (mut fields, mut ok) = own_fields(cx, diags);
    model_defaults(cx, &mut fields, diags);
    super::formats::check_file_format(cx.db, cx.scope, cx.key, cx.decl, &fields, diags);
    default_refs(cx, &mut fields);
    if !check_offload(cx, &fields, diags) {
        ok = false;
    }
    if !check_required(cx, &fields, diags) {
        ok = false;
    }
    // The nested blocks' fields: an invalid figure (a negative prompt) is not replaced by a
    // default; the deployment is not evaluated.
    let workload = block_fields(cx, "workload", WORKLOAD, diags, &mut ok).unwrap_or_default();
    let owned = block_fields(cx, "owned", OWNED, diags, &mut ok).unwrap_or_default();
    let speculative = block_fields(cx, "speculative", SPECULATIVE, diags, &mut ok);
    if !check_plan(cx, &fields, speculative.as_ref(), diags) {
        ok = false;
    }
    ok.then_some(Resolved {
        fields,
        workload,
        owned,
        speculative,
    })
}

/// The deployment's own fields as constants, and whether every one is valid (each
/// problem is reported). Blocks and the solver's holes and choices are left out.
fn own_fields<'db>(cx: Cx<'_, 'db>, diags: &mut Vec<Diag<'db>>) -> (BTreeMap<String, Value>, bool) {
    let Cx { key, decl, .. } = cx;
    let mut fields = BTreeMap::new();
    let mut ok = true;
    let mut seen = std::collections::HashSet::new();
    for field in decl.fields() {
        let Some(spec) = field_spec(DeclKind::Deployment, &field.name.name) else {
            continue;
        };
        if !seen.insert(field.name.name.as_str()) {
            // A field given again is `deploy::field::duplicate`; the first one counts, and
            // the repeat's value is not resolved (a file of thousands of repeated unknown
            // names would otherwise rank suggestions for each).
            continue;
        }
        if spec.ty == FieldTy::Block {
            // Reported by check_block_fields: `workload` is a block, not a value.
            continue;
        }
        if matches!(field.value.kind, ExprKind::Hole | ExprKind::OneOf(_)) {
            // Filled by the solver.
            continue;
        }
        match field_value(cx, field, spec) {
            Ok(value) => {
                if let Some(diag) = field_range_error(key, field, spec, &value) {
                    diags.push(diag);
                    ok = false;
                    continue;
                }
                fields.insert(field.name.name.clone(), value);
            }
            Err(diag) => {
                diags.push(*diag);
                ok = false;
            }
        }
    }
    (fields, ok)
}

/// One field's value: a `model` string resolved to the model it names (by alias, file,
/// Hugging Face id or Ollama tag), any other field as a constant.
fn field_value<'db>(
    cx: Cx<'_, 'db>,
    field: &Field,
    spec: &FieldSpec,
) -> Result<Value, Box<Diag<'db>>> {
    let Cx { db, scope, key, .. } = cx;
    if spec.name == "model"
        && let ExprKind::Str(lit) = &field.value.kind
    {
        let text = lit.plain().unwrap_or_default();
        let importer = key.file(db).path(db);
        match model_by_alias(db, scope, &text, importer) {
            Some(name) => Ok(Value::Ref(DeclKind::Model, name)),
            None => Err(Box::new(unknown_model(
                db,
                scope,
                key,
                &text,
                importer,
                field.value.span,
            ))),
        }
    } else {
        const_field(db, scope, key, field, spec)
    }
}

/// The error for a value out of its field's range: a count (`seqs`, `count`, `replicas`,
/// `context`) that is not a positive whole number, a ratio outside 0–100%.
fn field_range_error<'db>(
    key: DeclKey<'db>,
    field: &Field,
    spec: &FieldSpec,
    value: &Value,
) -> Option<Diag<'db>> {
    if matches!(spec.ty, FieldTy::Number | FieldTy::Q(_))
        && matches!(spec.name, "seqs" | "count" | "replicas" | "context")
        && value.quantity().and_then(as_count).is_none()
    {
        return Some(
            Diag::error(
                Code::FieldType,
                format!("`{}` must be a positive whole number", spec.name),
                Loc::Decl(key, field.value.span),
            )
            .label(format!("`{}` is {}", spec.name, value.display()))
            .help(format!("write `{} = 1` or more", spec.name)),
        );
    }
    if spec.ty == FieldTy::Ratio
        && let Some(q) = value.quantity()
        && !(q.value() > 0.0 && q.value() <= 1.0)
    {
        return Some(
            Diag::error(
                Code::FieldType,
                format!("`{}` must be between 0% and 100%", spec.name),
                Loc::Decl(key, field.value.span),
            )
            .label(format!("`{}` is {}", spec.name, value.display()))
            .help(format!("write `{} = 90%`", spec.name)),
        );
    }
    None
}

/// What the deployment's model brings: its default weight format, and a warning when its
/// source does not determine its architecture.
fn model_defaults<'db>(
    cx: Cx<'_, 'db>,
    fields: &mut BTreeMap<String, Value>,
    diags: &mut Vec<Diag<'db>>,
) {
    let Cx {
        db,
        scope,
        key,
        decl,
    } = cx;
    // The weight format a model's file or tag says, when the deployment names none.
    let model_entry = match fields.get("model") {
        Some(Value::Ref(_, name)) => scope
            .lookup(DeclKind::Model, name)
            .map(|k| super::entry_of(db, k)),
        _ => None,
    };
    if let Some(model) = model_entry {
        // The format the written string says (an Ollama tag, a quantized re-upload:
        // its generated declaration's) wins over the catalog model's default.
        let written = decl
            .field("model")
            .and_then(|f| match &f.value.kind {
                ExprKind::Str(lit) => lit.plain(),
                _ => None,
            })
            .map(|text| external::decl_name(&text, key.file(db).path(db)))
            .and_then(|name| scope.lookup(DeclKind::Model, &name))
            .and_then(|k| super::entry_of(db, k).as_model().default_quant.clone());
        if decl.field("quant").is_none()
            && let Some(quant) = written.as_ref().or(model.as_model().default_quant.as_ref())
            && scope.lookup(DeclKind::Quant, quant).is_some()
        {
            fields.insert(
                "quant".to_string(),
                Value::Ref(DeclKind::Quant, quant.clone()),
            );
        }
        if let (Some(incomplete), Some(field)) =
            (model.as_model().incomplete.as_deref(), decl.field("model"))
        {
            diags.push(
                Diag::new(
                    Code::ModelIncomplete,
                    crate::diagnostics::Severity::Warning,
                    format!(
                        "the model's source does not determine everything: {incomplete}"
                    ),
                    Loc::Decl(key, field.value.span),
                )
                .label("incomplete architecture")
                .help(
                    "figures that need what is missing are estimated without it (dense, every layer global) or absent; give a config.json (`model = \"./path/config.json\"`) or declare the model with the missing fields",
                ),
            );
        }
    }
}

/// Fills the reference fields the deployment leaves unset with their defaults.
fn default_refs(cx: Cx<'_, '_>, fields: &mut BTreeMap<String, Value>) {
    let Cx { scope, decl, .. } = cx;
    // Reference fields the deployment leaves unset get the schema's default entry
    // (`kv_cache` fp16, `engine` generic, `host` the stdlib's desktop) when it is in scope.
    for spec in schema(DeclKind::Deployment) {
        if let (FieldTy::Ref(kind), Some(default)) = (spec.ty, spec.default)
            && !fields.contains_key(spec.name)
            && decl.field(spec.name).is_none()
            && scope.lookup(kind, default).is_some()
        {
            fields.insert(spec.name.to_string(), Value::Ref(kind, default.to_string()));
        }
    }
}

/// Reports `offload = auto` on an engine that cannot keep layers in system RAM; returns
/// whether the deployment may be evaluated.
fn check_offload<'db>(
    cx: Cx<'_, 'db>,
    fields: &BTreeMap<String, Value>,
    diags: &mut Vec<Diag<'db>>,
) -> bool {
    let Cx {
        db,
        scope,
        key,
        decl,
    } = cx;
    if let (Some(Value::Symbol(mode)), Some(Value::Ref(_, engine)), Some(field)) = (
        fields.get("offload"),
        fields.get("engine"),
        decl.field("offload"),
    ) && OffloadMode::parse(mode) == Some(OffloadMode::Auto)
        && let Some(engine_key) = scope.lookup(DeclKind::Engine, engine)
        && super::entry_of(db, engine_key).as_engine().offload != Some(OffloadKind::Layers)
    {
        let able: Vec<String> = scope
            .names(DeclKind::Engine)
            .filter(|(_, key)| {
                super::entry_of(db, *key).as_engine().offload == Some(OffloadKind::Layers)
            })
            .map(|(name, _)| format!("`{name}`"))
            .collect();
        let help = if able.is_empty() {
            "no engine in scope declares `offload = layers`: remove `offload = auto`, or choose a GPU that holds the model".to_string()
        } else {
            format!(
                "set `engine` to {} (they keep the layers that do not fit in system RAM), or remove `offload = auto`",
                able.join(" or ")
            )
        };
        let mut diag = Diag::error(
            Code::FitOffloadUnsupported,
            format!(
                "`{engine}` cannot keep layers in system RAM, so `offload = auto` has no effect"
            ),
            Loc::Decl(key, field.value.span),
        )
        .label("`offload = auto`")
        .help(help);
        if let Some(engine_field) = decl.field("engine") {
            diag = diag.with_label(
                Loc::Decl(key, engine_field.value.span),
                format!("{engine} keeps every layer on the GPU"),
            );
        }
        diags.push(diag);
        return false;
    }
    true
}

/// Reports each of `model`, `quant` and `gpu` the deployment neither writes nor gets by
/// default; returns whether all three are there.
fn check_required<'db>(
    cx: Cx<'_, 'db>,
    fields: &BTreeMap<String, Value>,
    diags: &mut Vec<Diag<'db>>,
) -> bool {
    let Cx { key, decl, .. } = cx;
    let mut ok = true;
    for required in ["model", "quant", "gpu"] {
        if decl.field(required).is_none() && !fields.contains_key(required) {
            let example = match required {
                "model" => "model = glm4_9b",
                "quant" => "quant = Q4_K_M",
                _ => "gpu = rtx_4090",
            };
            diags.push(
                Diag::error(
                    Code::FieldMissing,
                    format!("deployment `{}` has no `{required}`", decl.name.name),
                    Loc::Decl(key, decl.name.span),
                )
                .label(format!("`{required}` missing"))
                .help(format!(
                    "add `{example}` (or `{required} = ?` to let the solver choose)"
                )),
            );
            ok = false;
        }
    }
    ok
}

/// The fields of the nested block `name` as constants, `None` without the block; an
/// invalid one is reported and clears `ok`.
fn block_fields<'db>(
    cx: Cx<'_, 'db>,
    name: &str,
    schema: &[FieldSpec],
    diags: &mut Vec<Diag<'db>>,
    ok: &mut bool,
) -> Option<BTreeMap<String, Value>> {
    let Cx {
        db,
        scope,
        key,
        decl,
    } = cx;
    let block = decl.nested(name)?;
    let mut values = BTreeMap::new();
    for entry in &block.body.entries {
        if let AstEntry::Field(field) = entry
            && let Some(spec) = schema.iter().find(|s| s.name == field.name.name)
        {
            match const_field(db, scope, key, field, spec) {
                Ok(value) => {
                    values.insert(field.name.name.clone(), value);
                }
                Err(diag) => {
                    diags.push(*diag);
                    *ok = false;
                }
            }
        }
    }
    Some(values)
}

/// `owned { ... }` in base units, each setting the deployment does not write at its
/// default ([`Owned::default`], docs/cost.md).
pub(crate) fn owned_settings(owned: &BTreeMap<String, Value>) -> Owned {
    let value = |name: &str| owned.get(name).and_then(Value::quantity).map(|q| q.value());
    let default = Owned::default();
    Owned {
        amortize: value("amortize").unwrap_or(default.amortize),
        power: value("power").unwrap_or(default.power),
        pue: value("pue").unwrap_or(default.pue),
        host: value("host").unwrap_or(default.host),
    }
}

/// The deployment's host machine: its `host` entry's figures with `host_memory` and
/// `host_bandwidth` applied, and the host's name; `None` when it has neither.
pub(crate) fn host_figures(
    db: &dyn Db,
    scope: &Scope<'_>,
    fields: &BTreeMap<String, Value>,
) -> (Option<HostFigures>, Option<String>) {
    let name = match fields.get("host") {
        Some(Value::Ref(_, name)) => Some(name.clone()),
        _ => None,
    };
    let entry = name
        .as_deref()
        .and_then(|name| scope.lookup(DeclKind::Host, name))
        .map(|key| super::entry_of(db, key));
    let quantity = |field: &str| {
        fields
            .get(field)
            .and_then(Value::quantity)
            .map(|q| q.value())
    };
    let memory = quantity("host_memory").or_else(|| entry.and_then(|e| e.as_host().memory));
    let bandwidth =
        quantity("host_bandwidth").or_else(|| entry.and_then(|e| e.as_host().bandwidth));
    let pcie = entry.and_then(|e| e.as_host().pcie);
    if entry.is_none() && memory.is_none() && bandwidth.is_none() {
        return (None, name);
    }
    (
        Some(HostFigures {
            memory,
            bandwidth,
            pcie,
        }),
        name,
    )
}

/// The error for a model string that names nothing: a file that cannot be read as a
/// model, or a name that neither the catalog nor the registry knows (with the closest).
fn unknown_model<'db>(
    db: &'db dyn Db,
    scope: &Scope<'db>,
    key: DeclKey<'db>,
    text: &str,
    importer: &Path,
    span: crate::span::Span,
) -> Diag<'db> {
    let loc = Loc::Decl(key, span);
    if let Some(problem) = db
        .project()
        .external(db)
        .get(&external::decl_name(text, importer))
    {
        return Diag::error(
            Code::ModelUnreadable,
            format!("cannot read a model from \"{text}\": {problem}"),
            loc,
        )
        .label("not a readable model")
        .help("point `model` at a config.json, a model folder, a .safetensors or model.safetensors.index.json file, or a .gguf file");
    }
    let suggestion = closest_model(scope, text);
    let quoted = suggestion.as_ref().map(|s| {
        if scope.lookup(DeclKind::Model, s).is_some() {
            s.clone()
        } else {
            format!("\"{s}\"")
        }
    });
    Diag::error(
        Code::NameUnknown,
        format!(
            "no catalog or registry model has the name, Hugging Face id or Ollama tag \"{text}\""
        ),
        loc,
    )
    .label("unknown model")
    .help(external::with_hub_note(
        db,
        text,
        importer,
        match &quoted {
            Some(s) => format!("did you mean `{s}`?"),
            None => "add it: `model my_model { hf = \"...\" params = ... }`, or name a config.json or .gguf file".to_string(),
        },
    ))
    .suggest(quoted)
}

use super::parallel::{Method, plan_fields, speculative_fields};
use crate::diagnostics::Severity;

/// The diagnostics of a plan that cannot run: more stages than layers, expert
/// parallelism on a dense model, a tensor-parallel group that crosses nodes (a warning:
/// slow) or does not fill whole nodes, pipeline, experts or speculation on an engine
/// without serving kernels, `method = draft` without a draft model. Returns whether the
/// deployment may be evaluated (no error).
pub(crate) fn check_plan<'db>(
    cx: Cx<'_, 'db>,
    fields: &BTreeMap<String, Value>,
    speculative: Option<&BTreeMap<String, Value>>,
    diags: &mut Vec<Diag<'db>>,
) -> bool {
    let plan = Plan::new(cx, fields);
    let mut ok = true;
    if !plan.check_stages(diags) {
        ok = false;
    }
    if !plan.check_experts(diags) {
        ok = false;
    }
    if !plan.check_serving(diags) {
        ok = false;
    }
    if !plan.check_nodes(diags) {
        ok = false;
    }
    if let Some(block) = speculative
        && !plan.check_speculative(block, diags)
    {
        ok = false;
    }
    ok
}

/// A catalog entry a deployment field names, with the name.
type Named<'db> = Option<(&'db super::Entry<'db>, String)>;

/// What the plan checks read: the deployment, its parallelism and the entries it names.
struct Plan<'a, 'db> {
    cx: Cx<'a, 'db>,
    pipeline: u64,
    expert_parallel: bool,
    count: u64,
    model: Named<'db>,
    engine: Named<'db>,
    gpu: Named<'db>,
    /// Whether the engine runs serving kernels for the weight format on the GPU.
    serving: bool,
    engine_name: String,
}

impl<'a, 'db> Plan<'a, 'db> {
    /// The plan of the deployment with resolved `fields`.
    fn new(cx: Cx<'a, 'db>, fields: &BTreeMap<String, Value>) -> Self {
        let Cx { db, scope, .. } = cx;
        let entry = |kind: DeclKind, field: &str| match fields.get(field) {
            Some(Value::Ref(_, name)) => scope
                .lookup(kind, name)
                .map(|k| (super::entry_of(db, k), name.clone())),
            _ => None,
        };
        let (pipeline, expert_parallel) = plan_fields(fields);
        let count = match fields.get("count") {
            Some(Value::Q(q)) => as_count(*q).unwrap_or(1).max(1),
            _ => 1,
        };
        let model = entry(DeclKind::Model, "model");
        let engine = entry(DeclKind::Engine, "engine");
        let gpu = entry(DeclKind::Gpu, "gpu");
        let quant = entry(DeclKind::Quant, "quant");
        let serving = engine.as_ref().is_some_and(|(e, _)| {
            super::estimate::serving_kernels(
                e,
                quant.as_ref().map(|(q, _)| *q),
                gpu.as_ref().map(|(g, _)| *g),
            )
        });
        let engine_name = engine
            .as_ref()
            .map_or_else(
                || super::schema::default_of(DeclKind::Deployment, "engine").unwrap_or_default(),
                |(_, n)| n.as_str(),
            )
            .to_string();
        Plan {
            cx,
            pipeline,
            expert_parallel,
            count,
            model,
            engine,
            gpu,
            serving,
            engine_name,
        }
    }

    /// Where the deployment writes `field`.
    fn span(&self, field: &str) -> Option<crate::span::Span> {
        self.cx.decl.field(field).map(|f| f.value.span)
    }

    /// Reports more pipeline stages than the model has layers; returns whether none are.
    fn check_stages(&self, diags: &mut Vec<Diag<'db>>) -> bool {
        let (key, pipeline) = (self.cx.key, self.pipeline);
        if let (Some((model, model_name)), Some(at)) = (&self.model, self.span("pipeline"))
            && let Some(layers) = model.as_model().layers
            && pipeline as f64 > layers
        {
            diags.push(
                Diag::error(
                    Code::ParallelPipelineExceedsLayers,
                    format!(
                        "`pipeline = {pipeline}` asks for more stages than `{model_name}` has layers ({layers})"
                    ),
                    Loc::Decl(key, at),
                )
                .label(format!("{pipeline} stages"))
                .help(format!(
                    "each stage needs at least one layer: write `pipeline = {}` or fewer, or raise `count` instead",
                    layers as u64
                )),
            );
            return false;
        }
        true
    }

    /// Reports expert parallelism on a dense model; returns whether it is not.
    fn check_experts(&self, diags: &mut Vec<Diag<'db>>) -> bool {
        let key = self.cx.key;
        if self.expert_parallel
            && let (Some((model, model_name)), Some(at)) =
                (&self.model, self.span("expert_parallel"))
        {
            let params = model.as_model().params.unwrap_or(0.0);
            let active = model.as_model().active_params.unwrap_or(params);
            let experts = model.as_model().experts.unwrap_or(0.0);
            if experts <= 1.0 && active >= params {
                diags.push(
                    Diag::error(
                        Code::ParallelNoExperts,
                        format!(
                            "`expert_parallel = true` on `{model_name}`, a dense model: it has no experts to spread"
                        ),
                        Loc::Decl(key, at),
                    )
                    .label("dense model")
                    .help("remove `expert_parallel = true` (tensor parallelism splits a dense model), or choose a mixture-of-experts model"),
                );
                return false;
            }
        }
        true
    }

    /// Reports pipeline stages or expert parallelism on an engine without serving
    /// kernels; returns whether the engine runs what is asked.
    fn check_serving(&self, diags: &mut Vec<Diag<'db>>) -> bool {
        let (key, pipeline, engine_name) = (self.cx.key, self.pipeline, &self.engine_name);
        let asks_parallel = pipeline > 1 || self.expert_parallel;
        if asks_parallel && self.engine.is_some() && !self.serving {
            let (field, what) = if pipeline > 1 {
                ("pipeline", "pipeline stages")
            } else {
                ("expert_parallel", "expert parallelism")
            };
            if let Some(at) = self.span(field) {
                diags.push(
                    Diag::error(
                        Code::ParallelUnsupported,
                        format!("`{engine_name}` does not run {what}: its kernels are not a serving engine's (`kernels = serving`)"),
                        Loc::Decl(key, at),
                    )
                    .label(format!("{what} on {engine_name}"))
                    .help(format!("choose `engine = vllm` or `sglang`, or remove `{field}`; {engine_name} splits a model over `count` GPUs by itself")),
                );
                return false;
            }
        }
        true
    }

    /// Reports a tensor-parallel group that does not fill whole nodes (an error) or
    /// crosses nodes (a warning); returns whether it is not the error.
    fn check_nodes(&self, diags: &mut Vec<Diag<'db>>) -> bool {
        let (key, pipeline, count) = (self.cx.key, self.pipeline, self.count);
        if let Some((gpu, gpu_name)) = &self.gpu
            && let Some(per_node) = gpu.as_gpu().gpus_per_node.map(|n| n.max(1.0) as u64)
            && let Some(at) = self.span("count")
        {
            if count > per_node && count % per_node != 0 {
                diags.push(
                    Diag::error(
                        Code::ParallelUnevenNodes,
                        format!(
                            "`count = {count}` does not fill whole nodes: a `{gpu_name}` node holds {per_node} GPUs"
                        ),
                        Loc::Decl(key, at),
                    )
                    .label(format!("{count} GPUs per tensor-parallel group"))
                    .help(format!(
                        "write `count = {per_node}` and `pipeline = {}` (stages across nodes), or `count = {}`",
                        count.div_ceil(per_node),
                        count.div_ceil(per_node) * per_node
                    )),
                );
                return false;
            } else if count > per_node {
                let link = gpu
                    .as_gpu()
                    .node_link
                    .map(|b| format!("{:.0} GB/s", b / 1e9))
                    .unwrap_or_else(|| "the network".to_string());
                diags.push(
                    Diag::new(
                        Code::ParallelTensorAcrossNodes,
                        Severity::Warning,
                        format!(
                            "`count = {count}` spans {} nodes of {per_node} `{gpu_name}`: every layer's all-reduce crosses {link} instead of the GPUs' own link",
                            count / per_node
                        ),
                        Loc::Decl(key, at),
                    )
                    .label("tensor parallelism across nodes")
                    .help(format!(
                        "keep tensor parallelism inside a node: `count = {per_node}` with `pipeline = {}`",
                        (count / per_node) * pipeline
                    )),
                );
            }
        }
        true
    }

    /// Reports a `speculative { }` block on an engine without serving kernels, and
    /// `method = draft` without a draft model; returns whether neither is.
    fn check_speculative(
        &self,
        block: &BTreeMap<String, Value>,
        diags: &mut Vec<Diag<'db>>,
    ) -> bool {
        let (key, engine_name) = (self.cx.key, &self.engine_name);
        let mut ok = true;
        let spec = speculative_fields(block);
        let block_span = self.cx.decl.nested("speculative").map(|n| n.name.span);
        if self.engine.is_some()
            && !self.serving
            && let Some(at) = block_span
        {
            diags.push(
                Diag::error(
                    Code::SpeculativeUnsupported,
                    format!("speculative decoding is modelled for serving engines only, not `{engine_name}`"),
                    Loc::Decl(key, at),
                )
                .label(format!("speculative decoding on {engine_name}"))
                .help("choose `engine = vllm` or `sglang` (they take `--speculative-config`), or remove the `speculative { }` block"),
            );
            ok = false;
        }
        if spec.method == Method::Draft
            && spec.draft.is_none()
            && let Some(at) = block_span
        {
            diags.push(
                Diag::error(
                    Code::SpeculativeNoDraft,
                    "`method = draft` needs a draft model, and the block names none",
                    Loc::Decl(key, at),
                )
                .label("no `draft`")
                .help("add `draft = <model>` inside `speculative { }`, naming a small catalog model with the target's tokenizer (`llama_3_2_1b` for Llama 3), or use `method = eagle3`, `mtp` or `ngram`"),
            );
            ok = false;
        }
        ok
    }
}
