//! A deployment: fields resolved against the catalog, figures estimated, then its
//! requires and every rule in scope checked (compiler/src/rules).

use std::collections::BTreeMap;

use super::entry::{Entry, check_block_fields, const_field, lookup};
use super::memory::{self, Inputs};
use super::schema::{FieldTy, WORKLOAD, field_spec};
use super::{Env, EvalError, Properties, Value, as_count};
use crate::db::{self, Db, DeclKey};
use crate::diagnostics::{Diag, Loc};
use crate::names::Scope;
use crate::rules;
use crate::syntax::ast::{Decl, DeclKind, Entry as AstEntry, ExprKind};

#[derive(Clone, Debug, PartialEq, salsa::SalsaValue)]
pub struct DeploymentResult<'db> {
    /// The deployment's figures, when its fields resolved.
    pub props: Option<BTreeMap<String, Result<Value, EvalError>>>,
    /// The memory breakdown in exact bytes, when memory could be estimated.
    pub breakdown: Option<memory::Breakdown>,
    /// The catalog entries and numbers the figures were computed from.
    pub setup: Option<Setup>,
    pub diags: Vec<Diag<'db>>,
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
    pub context: u64,
    pub seqs: u64,
    pub replicas: u64,
    /// The override of the engine's memory share, 0–1.
    pub memory_utilization: Option<f64>,
}

/// What expressions over a deployment read: its properties, its fields, the catalog.
pub struct DeploymentEnv<'a, 'db> {
    pub db: &'db dyn Db,
    pub scope: &'a Scope<'db>,
    pub props: &'a Properties,
    pub fields: BTreeMap<String, Value>,
    pub workload: BTreeMap<String, Value>,
    /// Whether the requires' and rules' messages are rendered and warnings and infos
    /// produced: not in the solver's feasibility pass (`Mode::Probe`), where only whether
    /// an error fires matters.
    pub messages: bool,
}

impl Env for DeploymentEnv<'_, '_> {
    fn get(&self, name: &str) -> Option<Result<Value, EvalError>> {
        if let Some(value) = self.props.get(name) {
            return Some(value.clone());
        }
        self.fields.get(name).cloned().map(Ok)
    }

    fn field_of(&self, kind: DeclKind, name: &str, field: &str) -> Option<Value> {
        if kind == DeclKind::Deployment && name == "workload" {
            return self.workload.get(field).cloned();
        }
        let key = self.scope.lookup(kind, name)?;
        db::entry(self.db, key).fields.get(field).cloned()
    }
}

/// Finds a model by catalog name, Hugging Face id or Ollama tag.
/// A model for a command-line query by catalog name, Hugging Face id or Ollama tag, or the
/// sentence that says none matches, with the closest catalog name.
pub(crate) fn model_for_query(
    db: &dyn Db,
    scope: &Scope<'_>,
    text: &str,
) -> Result<String, String> {
    model_by_alias(db, scope, text).ok_or_else(|| {
        let hint = scope
            .suggest(DeclKind::Model, &text.replace(['-', '.', '/', ':'], "_"))
            .map(|s| format!("; did you mean `{s}`?"))
            .unwrap_or_default();
        format!("no catalog model has the name, Hugging Face id or Ollama tag `{text}`{hint}")
    })
}

pub(crate) fn model_by_alias<'db>(
    db: &'db dyn Db,
    scope: &Scope<'db>,
    text: &str,
) -> Option<String> {
    if scope.lookup(DeclKind::Model, text).is_some() {
        return Some(text.to_string());
    }
    scope.names(DeclKind::Model).find_map(|(name, key)| {
        let entry = db::entry(db, key);
        let matches = |field: &str| {
            matches!(entry.fields.get(field), Some(Value::Str(s)) if s.eq_ignore_ascii_case(text))
        };
        (matches("hf") || matches("ollama")).then(|| name.to_string())
    })
}

pub fn evaluate<'db>(db: &'db dyn Db, key: DeclKey<'db>) -> DeploymentResult<'db> {
    let mut result = DeploymentResult {
        props: None,
        breakdown: None,
        setup: None,
        diags: Vec::new(),
    };
    let Some(decl) = db::decl(db, key) else {
        return result;
    };
    let scope = db::scope(db, key.file(db));
    let diags = &mut result.diags;
    check_block_fields(key, DeclKind::Deployment, &decl.body, diags);
    if decl.extends.is_some() {
        diags.push(
            Diag::error(
                "deploy::field::type",
                "a deployment cannot `extends` another",
                Loc::Decl(key, decl.extends.as_ref().map(|e| e.span).unwrap_or_default()),
            )
            .label("not supported for deployments")
            .help("copy the fields you share, or put the shared hardware in a `gpu ... extends` entry"),
        );
    }

    let holes: Vec<_> = decl
        .fields()
        .filter(|f| matches!(f.value.kind, ExprKind::Hole | ExprKind::OneOf(_)))
        .collect();
    let Some(resolved) = resolve(db, scope, key, &decl, diags) else {
        rules::check_statically(scope, key, &decl, diags);
        return result;
    };
    let evaluated = if holes.is_empty() {
        run(db, scope, key, &decl, resolved, Mode::Check, diags)
    } else if !statically_sound(scope, key, &decl, diags) {
        // A require or objective with an unknown name, unit or type fails the same way
        // for every candidate: report it once, and search nothing.
        return result;
    } else {
        match crate::solve::solve(db, scope, key, &decl, &resolved, diags) {
            Some(choice) => {
                let mut fields = resolved;
                fields.fields.extend(choice);
                run(db, scope, key, &decl, fields, Mode::Check, diags)
            }
            None => {
                rules::check_statically(scope, key, &decl, diags);
                return result;
            }
        }
    };
    result.props = Some(evaluated.props);
    result.breakdown = evaluated.breakdown;
    result.setup = evaluated.setup;
    result
}

/// Checks the requires and the objective of a deployment with holes for names, units and
/// types before the solver runs (errors go to `diags`); `false` when there are errors, so
/// that no candidate is tried.
pub(crate) fn statically_sound<'db>(
    scope: &Scope<'db>,
    key: DeclKey<'db>,
    decl: &Decl,
    diags: &mut Vec<Diag<'db>>,
) -> bool {
    let before = diags.len();
    rules::check_statically(scope, key, decl, diags);
    !diags[before..]
        .iter()
        .any(|d| d.severity == crate::diagnostics::Severity::Error)
}

/// Whether an evaluation is the deployment's own check (with catalog alternatives in
/// the helps), one candidate of the solver's search, or a candidate's feasibility only
/// (its errors without their messages, no warnings or infos).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    Check,
    Search,
    Probe,
}

/// A resolved deployment's figures.
pub(crate) struct Evaluated {
    pub props: BTreeMap<String, Result<Value, EvalError>>,
    pub breakdown: Option<memory::Breakdown>,
    pub setup: Option<Setup>,
    /// The value of the deployment's `minimize`/`maximize` expression (default: minimize
    /// `cost_per_hour`), when it could be computed.
    pub objective: Option<crate::units::Quantity>,
}

/// Estimates a resolved deployment and checks its requires and rules into `diags`.
pub(crate) fn run<'db>(
    db: &'db dyn Db,
    scope: &'db Scope<'db>,
    key: DeclKey<'db>,
    decl: &Decl,
    resolved: Resolved,
    mode: Mode,
    diags: &mut Vec<Diag<'db>>,
) -> Evaluated {
    let entry = |kind: DeclKind, name: &str| -> &'db Entry<'db> {
        let entry_key = scope
            .lookup(kind, name)
            .expect("resolve() only returns names that are in scope");
        db::entry(db, entry_key)
    };
    let text = |name: &str| match resolved.fields.get(name) {
        Some(Value::Ref(_, n)) => n.clone(),
        _ => String::new(),
    };
    let (model, quant, kv, engine, gpu) = (
        text("model"),
        text("quant"),
        text("kv_cache"),
        text("engine"),
        text("gpu"),
    );
    let number = |name: &str, default: u64| match resolved.fields.get(name) {
        Some(Value::Q(q)) => as_count(*q).unwrap_or(default),
        _ => default,
    };
    let model_entry = entry(DeclKind::Model, &model);
    let context = match resolved.fields.get("context") {
        Some(Value::Q(q)) => as_count(*q).unwrap_or(1),
        _ => model_entry
            .number("max_context")
            .map(|c| c as u64)
            .unwrap_or(4096),
    };
    let inputs = Inputs {
        model: model_entry,
        model_name: &model,
        quant: entry(DeclKind::Quant, &quant),
        quant_name: &quant,
        kv: entry(DeclKind::Kv, &kv),
        engine: entry(DeclKind::Engine, &engine),
        engine_name: &engine,
        gpu: entry(DeclKind::Gpu, &gpu),
        gpu_name: &gpu,
        context,
        seqs: number("seqs", 1),
        count: number("count", 1),
        replicas: number("replicas", 1),
        memory_utilization: match resolved.fields.get("memory_utilization") {
            Some(Value::Q(q)) => Some(q.value()),
            _ => None,
        },
        theoretical_weights: false,
        output: resolved
            .workload
            .get("output")
            .and_then(Value::quantity)
            .map(|q| q.value()),
        rate: resolved
            .workload
            .get("rate")
            .and_then(Value::quantity)
            .map(|q| q.value()),
        prompt: resolved
            .workload
            .get("prompt")
            .and_then(Value::quantity)
            .map(|q| q.value()),
    };
    let estimate = memory::estimate(&inputs);
    let mut props = estimate.props;
    if mode == Mode::Check && props.get("fits") == Some(&Ok(Value::Bool(false))) {
        let alternatives = alternatives(db, scope, &inputs);
        if let Some(Ok(Value::Str(advice))) = props.get_mut("fit_advice")
            && !alternatives.is_empty()
        {
            advice.push_str("; or ");
            advice.push_str(&alternatives.join("; or "));
        }
    }
    let mut result = Evaluated {
        props: BTreeMap::new(),
        breakdown: None,
        setup: None,
        objective: None,
    };
    result.setup = Some(Setup {
        model: model.clone(),
        quant: quant.clone(),
        kv_cache: kv.clone(),
        engine: engine.clone(),
        gpu: gpu.clone(),
        count: inputs.count,
        context: inputs.context,
        seqs: inputs.seqs,
        replicas: inputs.replicas,
        memory_utilization: inputs.memory_utilization,
    });
    result.breakdown = estimate.breakdown;
    let mut fields = resolved.fields;
    for (name, value) in [
        ("seqs", inputs.seqs),
        ("count", inputs.count),
        ("replicas", inputs.replicas),
    ] {
        fields
            .entry(name.to_string())
            .or_insert(Value::Q(crate::units::Quantity::new(
                crate::units::Num::Int(value as i128),
                crate::units::Dim::NONE,
            )));
    }
    fields.insert(
        "context".into(),
        Value::Q(crate::units::Quantity::real(
            context as f64,
            crate::units::Dim::TOKENS,
        )),
    );
    let env = DeploymentEnv {
        db,
        scope,
        props: &props,
        fields,
        workload: resolved.workload,
        messages: mode != Mode::Probe,
    };
    rules::check(db, scope, key, decl, &env, diags);
    let objective = decl.body.entries.iter().find_map(|entry| match entry {
        AstEntry::Objective(objective) => Some(&objective.expr),
        _ => None,
    });
    result.objective = match objective {
        Some(expr) => super::eval(&env, expr).ok().and_then(|v| v.quantity()),
        None => props
            .get("cost_per_hour")
            .and_then(|v| v.as_ref().ok())
            .and_then(Value::quantity),
    };
    result.props = props.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    result
}

/// Changes that make a deployment that does not fit fit, found in the catalog: the
/// largest weight format below the current one that runs on the engine, and the cheapest
/// priced GPU (same count).
fn alternatives(db: &dyn Db, scope: &Scope<'_>, inputs: &Inputs<'_, '_>) -> Vec<String> {
    let mut out = Vec::new();
    let current_bpw = inputs.quant.number("bpw").unwrap_or(f64::INFINITY);
    let mut quants: Vec<(f64, &str, &Entry<'_>)> = scope
        .names(DeclKind::Quant)
        .map(|(name, key)| (name, db::entry(db, key)))
        .filter_map(|(name, entry)| entry.number("bpw").map(|bpw| (bpw, name, entry)))
        .filter(|(bpw, _, _)| *bpw < current_bpw)
        .collect();
    quants.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
    for (bpw, name, entry) in quants {
        let runs = entry.runs_on_engine(inputs.engine_name, inputs.engine);
        let variant = Inputs {
            quant: entry,
            quant_name: name,
            ..*inputs
        };
        if runs && memory::fits(&variant) == Some(true) {
            out.push(format!("quant = {name} ({bpw} bits per weight) fits"));
            break;
        }
    }
    let mut gpus: Vec<(f64, &str, &Entry<'_>)> = scope
        .names(DeclKind::Gpu)
        .map(|(name, key)| (name, db::entry(db, key)))
        .filter_map(|(name, entry)| entry.number("price").map(|price| (price, name, entry)))
        .collect();
    gpus.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(b.1)));
    for (price, name, entry) in gpus {
        let variant = Inputs {
            gpu: entry,
            gpu_name: name,
            ..*inputs
        };
        if name != inputs.gpu_name && memory::fits(&variant) == Some(true) {
            let hourly = crate::units::Quantity::real(price, crate::units::Dim::HOURLY).display();
            out.push(format!(
                "gpu = {name} fits, the cheapest that does at {hourly} per GPU"
            ));
            break;
        }
    }
    out
}

/// The deployment's fields as values.
#[derive(Clone, Debug)]
pub(crate) struct Resolved {
    pub fields: BTreeMap<String, Value>,
    pub workload: BTreeMap<String, Value>,
}

/// Resolves every field; `None` when a field the estimate needs is missing or invalid
/// (each problem is reported).
pub(crate) fn resolve<'db>(
    db: &'db dyn Db,
    scope: &Scope<'db>,
    key: DeclKey<'db>,
    decl: &Decl,
    diags: &mut Vec<Diag<'db>>,
) -> Option<Resolved> {
    let mut fields = BTreeMap::new();
    let mut ok = true;
    for field in decl.fields() {
        let Some(spec) = field_spec(DeclKind::Deployment, &field.name.name) else {
            continue;
        };
        if spec.ty == FieldTy::Block {
            // Reported by check_block_fields: `workload` is a block, not a value.
            continue;
        }
        if matches!(field.value.kind, ExprKind::Hole | ExprKind::OneOf(_)) {
            // Filled by the solver.
            continue;
        }
        let value = if spec.name == "model"
            && let ExprKind::Str(lit) = &field.value.kind
        {
            let text = lit.plain().unwrap_or_default();
            match model_by_alias(db, scope, &text) {
                Some(name) => Ok(Value::Ref(DeclKind::Model, name)),
                None => {
                    let suggestion =
                        scope.suggest(DeclKind::Model, &text.replace(['-', '.', '/', ':'], "_"));
                    Err(Box::new(
                        Diag::error(
                            "deploy::name::unknown",
                            format!("no catalog model has the name, Hugging Face id or Ollama tag \"{text}\""),
                            Loc::Decl(key, field.value.span),
                        )
                        .label("unknown model")
                        .help(match &suggestion {
                            Some(s) => format!("did you mean `{s}`?"),
                            None => "add it: `model my_model { hf = \"...\" params = ... }`".to_string(),
                        })
                        .suggest(suggestion),
                    ))
                }
            }
        } else {
            const_field(scope, key, field, spec)
        };
        match value {
            Ok(value) => {
                if matches!(spec.ty, FieldTy::Number | FieldTy::Q(_))
                    && matches!(spec.name, "seqs" | "count" | "replicas" | "context")
                    && value.quantity().and_then(as_count).is_none()
                {
                    diags.push(
                        Diag::error(
                            "deploy::field::type",
                            format!("`{}` must be a positive whole number", spec.name),
                            Loc::Decl(key, field.value.span),
                        )
                        .label(format!("`{}` is {}", spec.name, value.display()))
                        .help(format!("write `{} = 1` or more", spec.name)),
                    );
                    ok = false;
                    continue;
                }
                if spec.ty == FieldTy::Ratio
                    && let Some(q) = value.quantity()
                    && !(q.value() > 0.0 && q.value() <= 1.0)
                {
                    diags.push(
                        Diag::error(
                            "deploy::field::type",
                            format!("`{}` must be between 0% and 100%", spec.name),
                            Loc::Decl(key, field.value.span),
                        )
                        .label(format!("`{}` is {}", spec.name, value.display()))
                        .help(format!("write `{} = 90%`", spec.name)),
                    );
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
    for (name, default) in [("kv_cache", "fp16"), ("engine", "generic")] {
        if !fields.contains_key(name) && decl.field(name).is_none() {
            let kind = if name == "kv_cache" {
                DeclKind::Kv
            } else {
                DeclKind::Engine
            };
            if let Ok(value) = lookup(scope, key, kind, default, decl.name.span) {
                fields.insert(name.to_string(), value);
            }
        }
    }
    for required in ["model", "quant", "gpu"] {
        if decl.field(required).is_none() {
            let example = match required {
                "model" => "model = glm4_9b",
                "quant" => "quant = Q4_K_M",
                _ => "gpu = rtx_4090",
            };
            diags.push(
                Diag::error(
                    "deploy::field::missing",
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
    let mut workload = BTreeMap::new();
    if let Some(block) = decl.nested("workload") {
        for entry in &block.body.entries {
            if let AstEntry::Field(field) = entry
                && let Some(spec) = WORKLOAD.iter().find(|s| s.name == field.name.name)
            {
                match const_field(scope, key, field, spec) {
                    Ok(value) => {
                        workload.insert(field.name.name.clone(), value);
                    }
                    Err(diag) => {
                        // An invalid workload figure (a negative prompt) is not
                        // replaced by a default: the deployment is not evaluated.
                        diags.push(*diag);
                        ok = false;
                    }
                }
            }
        }
    }
    ok.then_some(Resolved { fields, workload })
}
