//! One configuration of a deployment, every field resolved: its figures estimated, its
//! requires and every rule in scope checked, its objective computed. `check` runs it on
//! the deployment as written, the solver on each candidate.

use crate::db::Db;
use crate::diagnostics::Diag;
use crate::eval::deployment::{Cx, DeploymentEnv, Resolved, Setup};
use crate::eval::entry::Entry;
use crate::eval::estimate::{self, Inputs};
use crate::eval::figures::Figures;
use crate::eval::{self, Value, as_count};
use crate::names::Scope;
use crate::rules;
use crate::syntax::ast::{DeclKind, Entry as AstEntry};

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
    pub figures: Figures,
    pub breakdown: Option<estimate::Breakdown>,
    pub setup: Option<Setup>,
    /// The value of the deployment's `minimize`/`maximize` expression (default: minimize
    /// `cost_per_hour`), when it could be computed.
    pub objective: Option<crate::units::Quantity>,
}

/// Estimates a resolved deployment and checks its requires and rules into `diags`.
pub(crate) fn run<'db>(
    cx: Cx<'_, 'db>,
    resolved: Resolved,
    mode: Mode,
    diags: &mut Vec<Diag<'db>>,
) -> Evaluated {
    let Cx {
        db, scope, decl, ..
    } = cx;
    let entry = |kind: DeclKind, name: &str| -> &'db Entry<'db> {
        let entry_key = scope
            .lookup(kind, name)
            .expect("resolve() only returns names that are in scope");
        eval::entry_of(db, entry_key)
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
    let (host, host_name) = crate::eval::deployment::host_figures(db, scope, &resolved.fields);
    let inputs = Inputs {
        offload: matches!(resolved.fields.get("offload"), Some(Value::Symbol(mode)) if mode == "auto"),
        enforce_eager: matches!(resolved.fields.get("enforce_eager"), Some(Value::Symbol(yes)) if yes == "yes"),
        host,
        host_name: host_name.as_deref(),
        model: model_entry,
        model_name: &model,
        quant: entry(DeclKind::Quant, &quant),
        quant_name: &quant,
        kv: entry(DeclKind::Kv, &kv),
        engine: entry(DeclKind::Engine, &engine),
        engine_name: &engine,
        gpu: entry(DeclKind::Gpu, &gpu),
        gpu_name: &gpu,
        arch: eval::support::arch_of(db, scope, entry(DeclKind::Gpu, &gpu)),
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
    let estimate = estimate::estimate(&inputs);
    let mut figures = estimate.figures;
    if mode == Mode::Check && inputs.support() != eval::support::Support::Native {
        figures.quant_support_advice = Ok(support_alternatives(db, scope, &inputs));
    }
    if mode == Mode::Check && figures.fits == Ok(false) {
        let alternatives = alternatives(db, scope, &inputs);
        if let Ok(advice) = &mut figures.fit_advice
            && !alternatives.is_empty()
        {
            advice.push_str("; or ");
            advice.push_str(&alternatives.join("; or "));
        }
    }
    let setup = Some(Setup {
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
        enforce_eager: inputs.enforce_eager,
    });
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
        figures: &figures,
        fields,
        workload: resolved.workload,
        messages: mode != Mode::Probe,
    };
    rules::check(cx, &env, diags);
    let objective = decl.body.entries.iter().find_map(|entry| match entry {
        AstEntry::Objective(objective) => Some(&objective.expr),
        _ => None,
    });
    let objective = match objective {
        Some(expr) => eval::eval(&env, expr).ok().and_then(|v| v.quantity()),
        None => figures
            .get("cost_per_hour")
            .and_then(Result::ok)
            .and_then(|v| v.quantity()),
    };
    Evaluated {
        figures,
        breakdown: estimate.breakdown,
        setup,
        objective,
    }
}

/// What to run instead of a format the GPU lacks tensor cores for, from the catalog: the
/// formats with the most bits per weight that the engine runs natively on this GPU and that
/// fit, and the cheapest priced GPUs that run the format natively and fit.
fn support_alternatives(db: &dyn Db, scope: &Scope<'_>, inputs: &Inputs<'_, '_>) -> String {
    use eval::support::Support;
    let mut quants: Vec<(f64, &str)> = scope
        .names(DeclKind::Quant)
        .map(|(name, key)| (name, eval::entry_of(db, key)))
        .filter(|(name, entry)| {
            *name != inputs.quant_name
                && entry.runs_on_engine(inputs.engine_name, inputs.engine)
                && Inputs {
                    quant: entry,
                    quant_name: name,
                    ..*inputs
                }
                .support()
                    == Support::Native
                && estimate::fits(&Inputs {
                    quant: entry,
                    quant_name: name,
                    ..*inputs
                }) == Some(true)
        })
        .filter_map(|(name, entry)| entry.number("bpw").map(|bpw| (bpw, name)))
        .collect();
    quants.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
    let mut gpus: Vec<(f64, &str)> = scope
        .names(DeclKind::Gpu)
        .filter(|(name, _)| *name != inputs.gpu_name)
        .map(|(name, key)| (name, eval::entry_of(db, key)))
        .filter_map(|(name, entry)| {
            let price = entry.number("price")?;
            if !buyable_segment(entry.symbol("segment")) {
                return None;
            }
            let variant = Inputs {
                gpu: entry,
                gpu_name: name,
                arch: eval::support::arch_of(db, scope, entry),
                ..*inputs
            };
            (variant.arch.is_some()
                && variant.support() == Support::Native
                && estimate::fits(&variant) == Some(true))
            .then_some((price, name))
        })
        .collect();
    gpus.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(b.1)));
    let mut out = Vec::new();
    if !quants.is_empty() {
        let names: Vec<&str> = quants.iter().take(3).map(|(_, n)| *n).collect();
        out.push(format!(
            "quant = {} runs natively on {} with {} and fits",
            names.join(" or "),
            inputs.gpu_name,
            inputs.engine_name
        ));
    }
    if !gpus.is_empty() {
        let names: Vec<String> = gpus
            .iter()
            .take(3)
            .map(|(price, name)| {
                format!(
                    "{name} ({}/GPU)",
                    crate::units::Quantity::real(*price, crate::units::Dim::HOURLY).display()
                )
            })
            .collect();
        out.push(format!(
            "a GPU that runs {} natively: {}",
            inputs.quant_name,
            names.join(", ")
        ));
    }
    if out.is_empty() {
        format!(
            "choose a weight format that {} runs natively on {}",
            inputs.engine_name, inputs.gpu_name
        )
    } else {
        out.join("; or ")
    }
}

/// Segments (`schema::SEGMENTS`) whose GPUs are named only when the user asked for them:
/// mining cards (sold for hashing, often with cut-down buses and no display outputs) and
/// embedded modules are not what someone buying a GPU for a model goes out to buy. The
/// "smallest GPU" of `matrix`, the `does_not_fit` alternatives and the summaries of `gpus`
/// skip them (docs/cli.md).
pub const ON_REQUEST_SEGMENTS: &[&str] = &["mining", "embedded"];

/// Whether a GPU of this segment may be suggested unasked; a GPU without a segment (the
/// catalog does not say) counts as buyable.
pub fn buyable_segment(segment: Option<&str>) -> bool {
    segment.is_none_or(|s| !ON_REQUEST_SEGMENTS.contains(&s))
}

/// Changes that make a deployment that does not fit fit, found in the catalog: the
/// largest weight format below the current one that runs on the engine, and the cheapest
/// priced GPU (same count) — a buyable one, or one of the deployment's own GPU's segment
/// (a user on a mining card asked for mining cards).
fn alternatives(db: &dyn Db, scope: &Scope<'_>, inputs: &Inputs<'_, '_>) -> Vec<String> {
    let mut out = Vec::new();
    let current_bpw = inputs.quant.number("bpw").unwrap_or(f64::INFINITY);
    let mut quants: Vec<(f64, &str, &Entry<'_>)> = scope
        .names(DeclKind::Quant)
        .map(|(name, key)| (name, eval::entry_of(db, key)))
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
        if runs && estimate::fits(&variant) == Some(true) {
            out.push(format!("quant = {name} ({bpw} bits per weight) fits"));
            break;
        }
    }
    let mut gpus: Vec<(f64, &str, &Entry<'_>)> = scope
        .names(DeclKind::Gpu)
        .map(|(name, key)| (name, eval::entry_of(db, key)))
        .filter(|(_, entry)| {
            let segment = entry.symbol("segment");
            buyable_segment(segment) || segment == inputs.gpu.symbol("segment")
        })
        .filter_map(|(name, entry)| entry.number("price").map(|price| (price, name, entry)))
        .collect();
    gpus.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(b.1)));
    for (price, name, entry) in gpus {
        let variant = Inputs {
            gpu: entry,
            gpu_name: name,
            ..*inputs
        };
        if name != inputs.gpu_name && estimate::fits(&variant) == Some(true) {
            let hourly = crate::units::Quantity::real(price, crate::units::Dim::HOURLY).display();
            out.push(format!(
                "gpu = {name} fits, the cheapest that does at {hourly} per GPU"
            ));
            break;
        }
    }
    out
}
