//! A deployment's fields resolved against the catalog, and the environment that
//! expressions over a deployment read. Estimating, rules and solving sit above, in
//! [`crate::candidate`], [`crate::rules`], [`crate::solve`] and [`crate::check`].

use std::collections::BTreeMap;

use super::Env;
use super::entry::{const_field, lookup};
use super::figures::Figures;
use super::schema::{FieldTy, WORKLOAD, field_spec};
use super::value::{EvalError, Value, as_count};
use crate::db::{Db, DeclKey};
use crate::diagnostics::codes::Code;
use crate::diagnostics::{Diag, Loc};
use crate::names::Scope;
use crate::syntax::ast::{Decl, DeclKind, Entry as AstEntry, ExprKind};

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
        let entry = super::entry_of(db, key);
        let matches = |field: &str| {
            matches!(entry.fields.get(field), Some(Value::Str(s)) if s.eq_ignore_ascii_case(text))
        };
        (matches("hf") || matches("ollama")).then(|| name.to_string())
    })
}

/// The deployment's fields as values.
#[derive(Clone, Debug)]
pub(crate) struct Resolved {
    pub fields: BTreeMap<String, Value>,
    pub workload: BTreeMap<String, Value>,
}

/// Resolves every field; `None` when a field the estimate needs is missing or invalid
/// (each problem is reported).
pub(crate) fn resolve<'db>(cx: Cx<'_, 'db>, diags: &mut Vec<Diag<'db>>) -> Option<Resolved> {
    let Cx {
        db,
        scope,
        key,
        decl,
    } = cx;
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
                            Code::NameUnknown,
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
                            Code::FieldType,
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
                            Code::FieldType,
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
