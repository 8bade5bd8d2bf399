//! One configuration of a deployment, every field resolved: its figures estimated, its
//! requires and every rule in scope checked, its objective computed. `check` runs it on
//! the deployment as written, the solver on each candidate.

use crate::db::Db;
use crate::diagnostics::Diag;
use crate::eval::deployment::{Cx, DeploymentEnv, Resolved, Setup};
use crate::eval::entry::Entry;
use crate::eval::estimate::{self, Inputs, Pricing, PricingMode};
use crate::eval::figures::Figures;
use crate::eval::schema::{self, Segment};
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
    let all = all_offers(cx.db, cx.scope);
    run_with_offers(cx, resolved, mode, &all, diags)
}

/// Every offer in scope with its entry: what [`run_with_offers`] filters. The solver reads
/// them once per search rather than once per candidate.
pub(crate) fn all_offers<'db>(
    db: &'db dyn Db,
    scope: &'db Scope<'db>,
) -> Vec<(&'db str, &'db Entry<'db>)> {
    scope
        .names(DeclKind::Offer)
        .map(|(name, key)| (name, eval::entry_of(db, key)))
        .collect()
}

/// [`run`] with the offers in scope already read ([`all_offers`]).
pub(crate) fn run_with_offers<'db>(
    cx: Cx<'_, 'db>,
    resolved: Resolved,
    mode: Mode,
    all_offers: &[(&'db str, &'db Entry<'db>)],
    diags: &mut Vec<Diag<'db>>,
) -> Evaluated {
    let Cx { db, scope, .. } = cx;
    let picks = Picks::of(cx, &resolved);
    let settings = pricing_settings(&resolved);
    let offers = offers_for(all_offers, &settings);
    let filters = settings.filters();
    let pricing = Pricing {
        mode: settings.mode,
        spot: settings.spot,
        offers: &offers,
        filters: &filters,
        owned: crate::eval::deployment::owned_settings(&resolved.owned),
    };
    let speculative_fields = resolved
        .speculative
        .as_ref()
        .map(eval::parallel::speculative_fields);
    let plan = plan_of(cx, &resolved, speculative_fields.as_ref());
    let inputs = inputs_of(cx, &resolved, &picks, pricing, plan);
    let estimate = estimate::estimate(&inputs);
    let mut figures = estimate.figures;
    if mode == Mode::Check {
        advise(db, scope, &inputs, &mut figures);
    }
    let mut setup = setup_of(&picks, &inputs, &pricing, speculative_fields.as_ref());
    // The release entry a `version` chose, when it is not the engine's own.
    let chosen = inputs.engine.key.name(db);
    if chosen.as_str() != picks.engine {
        setup.engine_release = Some(chosen.to_string());
    }
    let setup = Some(setup);
    let env = DeploymentEnv {
        db,
        scope,
        figures: &figures,
        fields: with_figure_fields(resolved.fields, &inputs),
        workload: resolved.workload,
        messages: mode != Mode::Probe,
    };
    rules::check(cx, &env, diags);
    if mode != Mode::Probe {
        warn_no_offer(cx, &settings, &figures, diags);
    }
    let objective = objective(cx, &env);
    Evaluated {
        figures,
        breakdown: estimate.breakdown,
        setup,
        objective,
    }
}

/// The catalog names a resolved deployment picked, and its host's figures.
struct Picks {
    model: String,
    quant: String,
    kv: String,
    engine: String,
    gpu: String,
    host: Option<estimate::HostFigures>,
    host_name: Option<String>,
}

impl Picks {
    /// The names in `resolved`'s fields (empty where absent) and its host.
    fn of(cx: Cx<'_, '_>, resolved: &Resolved) -> Picks {
        let text = |name: &str| match resolved.fields.get(name) {
            Some(Value::Ref(_, n)) => n.clone(),
            _ => String::new(),
        };
        let (host, host_name) =
            crate::eval::deployment::host_figures(cx.db, cx.scope, &resolved.fields);
        Picks {
            model: text("model"),
            quant: text("quant"),
            kv: text("kv_cache"),
            engine: text("engine"),
            gpu: text("gpu"),
            host,
            host_name,
        }
    }
}

/// The parallelism plan of a resolved deployment: pipeline, expert parallelism and the
/// speculative decoding of `spec` (its draft model looked up in scope).
fn plan_of<'a, 'db>(
    cx: Cx<'_, 'db>,
    resolved: &Resolved,
    spec: Option<&'a eval::parallel::SpeculativeFields>,
) -> eval::parallel::Plan<'a, 'db> {
    let Cx { db, scope, .. } = cx;
    let (pipeline, expert_parallel) = eval::parallel::plan_fields(&resolved.fields);
    eval::parallel::Plan {
        pipeline,
        expert_parallel,
        speculative: spec.map(|spec| {
            let draft = spec.draft.as_deref().and_then(|name| {
                scope
                    .lookup(DeclKind::Model, name)
                    .map(|key| (eval::entry_of(db, key), name))
            });
            eval::parallel::Speculative {
                method: spec.method,
                tokens: spec.tokens,
                acceptance: spec
                    .acceptance
                    .unwrap_or_else(|| spec.method.default_acceptance()),
                draft,
            }
        }),
    }
}

/// The engine entry that describes release `version` of engine `engine`: an entry with
/// `release_of = engine` whose `releases_from` (inclusive) and `releases_before`
/// (exclusive) hold it; the first in name order when several do, none for an unparsable
/// version or when no entry holds it (the engine's own figures then apply).
pub fn release_entry<'db>(cx: Cx<'_, 'db>, engine: &str, version: &str) -> Option<&'db Entry<'db>> {
    let wanted = schema::parse_release(version)?;
    let Cx { db, scope, .. } = cx;
    scope.names(DeclKind::Engine).find_map(|(_, key)| {
        let candidate = eval::entry_of(db, key);
        let view = candidate.as_engine();
        if view.release_of.as_deref() != Some(engine) {
            return None;
        }
        let bound = |text: &Option<String>| text.as_deref().and_then(schema::parse_release);
        let from_ok =
            bound(&view.releases_from).is_none_or(|from| !schema::release_before(&wanted, &from));
        let before_ok = bound(&view.releases_before)
            .is_none_or(|before| schema::release_before(&wanted, &before));
        (from_ok && before_ok).then_some(candidate)
    })
}

/// The estimate's inputs for a resolved deployment: its entries, numbers and workload.
fn inputs_of<'a, 'db>(
    cx: Cx<'_, 'db>,
    resolved: &Resolved,
    picks: &'a Picks,
    pricing: Pricing<'a, 'db>,
    plan: eval::parallel::Plan<'a, 'db>,
) -> Inputs<'a, 'db> {
    let Cx { db, scope, .. } = cx;
    let entry = |kind: DeclKind, name: &str| -> &'db Entry<'db> {
        let entry_key = scope
            .lookup(kind, name)
            .expect("resolve() only returns names that are in scope");
        eval::entry_of(db, entry_key)
    };
    let number = |name: &str, default: u64| match resolved.fields.get(name) {
        Some(Value::Q(q)) => as_count(*q).unwrap_or(default),
        _ => default,
    };
    let workload = |name: &str| {
        resolved
            .workload
            .get(name)
            .and_then(Value::quantity)
            .map(|q| q.value())
    };
    let model_entry = entry(DeclKind::Model, &picks.model);
    // `version`: the catalog's entry for that release of the engine, where one holds it.
    let engine_entry = match resolved.fields.get("version") {
        Some(Value::Str(version)) => release_entry(cx, &picks.engine, version)
            .unwrap_or_else(|| entry(DeclKind::Engine, &picks.engine)),
        _ => entry(DeclKind::Engine, &picks.engine),
    };
    // Without `context`: the engine's default (Ollama's num_ctx), else the model's window.
    let context = match resolved.fields.get("context") {
        Some(Value::Q(q)) => as_count(*q).unwrap_or(1),
        _ => engine_entry
            .as_engine()
            .default_context
            .or(model_entry.as_model().max_context)
            .map(|c| c as u64)
            .unwrap_or(4096),
    };
    // An engine that places layers as Ollama does offloads the rest unless told not to.
    let offload = match resolved.symbol_as::<schema::OffloadMode>("offload") {
        Some(mode) => mode == schema::OffloadMode::Auto,
        None => engine_entry.as_engine().placement == Some(schema::Placement::Ollama),
    };
    Inputs {
        plan,
        pricing: Some(pricing),
        offload,
        flash_attention: resolved
            .symbol_as::<schema::YesNo>("flash_attention")
            .map(|v| v == schema::YesNo::Yes),
        enforce_eager: resolved.symbol_as("enforce_eager") == Some(schema::YesNo::Yes),
        batched_tokens: match resolved.fields.get("batched_tokens") {
            Some(Value::Q(q)) => as_count(*q).map(|t| t as f64),
            _ => None,
        },
        host: picks.host,
        host_name: picks.host_name.as_deref(),
        model: model_entry,
        model_name: &picks.model,
        quant: entry(DeclKind::Quant, &picks.quant),
        quant_name: &picks.quant,
        kv: entry(DeclKind::Kv, &picks.kv),
        engine: engine_entry,
        engine_name: &picks.engine,
        gpu: entry(DeclKind::Gpu, &picks.gpu),
        gpu_name: &picks.gpu,
        arch: eval::support::arch_of(db, scope, entry(DeclKind::Gpu, &picks.gpu)),
        context,
        seqs: number("seqs", 1),
        count: number("count", 1),
        replicas: number("replicas", 1),
        memory_utilization: match resolved.fields.get("memory_utilization") {
            Some(Value::Q(q)) => Some(q.value()),
            _ => None,
        },
        theoretical_weights: false,
        output: workload("output"),
        rate: workload("rate"),
        prompt: workload("prompt"),
        burst: workload("burst"),
        varied: matches!(
            resolved.workload.get("lengths"),
            Some(Value::Symbol(s)) if schema::Lengths::parse(s) == Some(schema::Lengths::Varied)
        ),
    }
}

/// The deployment's own check: add the catalog's alternatives to the advice on a format
/// the GPU does not run natively and on a deployment that does not fit.
fn advise(db: &dyn Db, scope: &Scope<'_>, inputs: &Inputs<'_, '_>, figures: &mut Figures) {
    if inputs.support() != eval::support::Support::Native {
        figures.quant_support_advice = Ok(support_alternatives(db, scope, inputs));
    }
    if figures.fits == Ok(false) {
        let alternatives = alternatives(db, scope, inputs);
        if let Ok(advice) = &mut figures.fit_advice
            && !alternatives.is_empty()
        {
            advice.push_str("; or ");
            advice.push_str(&alternatives.join("; or "));
        }
    }
}

/// What the deployment resolved to, as reported: names, numbers, plan and pricing.
fn setup_of(
    picks: &Picks,
    inputs: &Inputs<'_, '_>,
    pricing: &Pricing<'_, '_>,
    speculative_fields: Option<&eval::parallel::SpeculativeFields>,
) -> Setup {
    Setup {
        model: picks.model.clone(),
        quant: picks.quant.clone(),
        kv_cache: picks.kv.clone(),
        engine: picks.engine.clone(),
        gpu: picks.gpu.clone(),
        count: inputs.count,
        context: inputs.context,
        seqs: inputs.seqs,
        replicas: inputs.replicas,
        memory_utilization: inputs.memory_utilization,
        enforce_eager: inputs.enforce_eager,
        flash_attention: estimate::ollama_flash(inputs),
        engine_release: None,
        batched_tokens: inputs.batched_tokens.map(|t| t as u64),
        pipeline: inputs.plan.pipeline,
        gpus_per_replica: (inputs.plan.pipeline > 1).then(|| inputs.gpus_per_replica()),
        expert_parallel: inputs.plan.expert_parallel,
        speculative: inputs.plan.speculative.map(|spec| {
            crate::eval::deployment::SpeculativeSetup {
                method: spec.method.keyword().to_string(),
                tokens: spec.tokens,
                acceptance: spec.acceptance,
                acceptance_default: speculative_fields.is_some_and(|f| f.acceptance.is_none()),
                expected_tokens_per_step: spec.expected_tokens(),
                draft: spec.draft.map(|(_, name)| name.to_string()),
                draft_hf: spec
                    .draft
                    .and_then(|(entry, _)| entry.as_model().hf.as_deref().map(str::to_string)),
            }
        }),
        pricing: pricing.mode.keyword().to_string(),
        rental: match pricing.mode {
            PricingMode::Cloud => estimate::rent(inputs, pricing).ok(),
            PricingMode::Owned => None,
        },
        owned: match pricing.mode {
            PricingMode::Owned => {
                crate::eval::deployment::OwnedCost::of(inputs.gpu, &pricing.owned)
            }
            PricingMode::Cloud => None,
        },
    }
}

/// The fields the rules read: the resolved ones, with `seqs`, `count` and `replicas`
/// defaulted and `context` as used.
fn with_figure_fields(
    mut fields: std::collections::BTreeMap<String, Value>,
    inputs: &Inputs<'_, '_>,
) -> std::collections::BTreeMap<String, Value> {
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
            inputs.context as f64,
            crate::units::Dim::TOKENS,
        )),
    );
    fields
}

/// The fix for a tensor-parallel group no offer holds in one instance.
const GROUP_HELP: &str = "lower `count` to the GPUs one instance holds and add `replicas` or `pipeline` stages (their traffic may cross instances), declare an `offer` whose instance holds the whole group or that states the `network` between its instances, or write `pricing = owned`";

/// Cloud pricing asked for in writing (`pricing = cloud`, or a `provider`, `region`,
/// `offer` or `spot`), and no offer rents the GPU: said once, on the first such field,
/// unless a require on cost already said it. A tensor-parallel group no offer holds in one
/// instance is said on `count` whether or not cloud pricing was written.
fn warn_no_offer<'db>(
    cx: Cx<'_, 'db>,
    settings: &PricingSettings,
    figures: &Figures,
    diags: &mut Vec<Diag<'db>>,
) {
    // A tensor-parallel group no offer holds in one instance is said at its `count` even
    // when cloud pricing is only the default: the plan cannot be rented as it is timed.
    let group = |why: &str| why.contains("holds a tensor-parallel group");
    let spans_at = match &figures.cost_per_hour {
        Err(eval::EvalError::Missing(why)) if group(why) => cx.decl.field("count"),
        _ => None,
    };
    if let Some(field) = ["pricing", "offer", "provider", "region", "spot"]
        .into_iter()
        .find_map(|name| cx.decl.field(name))
        .or(spans_at)
        && settings.mode == PricingMode::Cloud
        && let Err(eval::EvalError::Missing(why)) = &figures.cost_per_hour
        && why.starts_with(estimate::NO_OFFER)
        && !diags
            .iter()
            .any(|d| d.code == crate::diagnostics::codes::Code::CostNoOffer.as_str())
    {
        diags.push(
            Diag::new(
                crate::diagnostics::codes::Code::CostNoOffer,
                crate::diagnostics::Severity::Warning,
                format!("no cost: {why}"),
                crate::diagnostics::Loc::Decl(cx.key, field.value.span),
            )
            .label(if field.name.name == "count" {
                "no offer holds this many in one instance".to_string()
            } else {
                format!("`{}` asks for a cloud offer", field.name.name)
            })
            .help(if group(why) {
                GROUP_HELP
            } else {
                rules::NO_OFFER_HELP
            }),
        );
    }
}

/// The value of the deployment's `minimize`/`maximize` expression, else its
/// `cost_per_hour`.
fn objective(cx: Cx<'_, '_>, env: &DeploymentEnv<'_, '_>) -> Option<crate::units::Quantity> {
    let objective = cx.decl.body.entries.iter().find_map(|entry| match entry {
        AstEntry::Objective(objective) => Some(&objective.expr),
        _ => None,
    });
    match objective {
        Some(expr) => eval::eval(env, expr).ok().and_then(|v| v.quantity()),
        None => env
            .figures
            .get("cost_per_hour")
            .and_then(Result::ok)
            .and_then(|v| v.quantity()),
    }
}

/// A deployment's pricing fields: `pricing`, `spot`, `provider`, `region`, `offer`.
pub(crate) struct PricingSettings {
    pub mode: PricingMode,
    pub spot: bool,
    pub provider: Option<String>,
    pub region: Option<String>,
    pub offer: Option<String>,
}

impl PricingSettings {
    /// The filters in words, for the reason when no offer matches.
    pub fn filters(&self) -> String {
        let mut out = Vec::new();
        if let Some(provider) = &self.provider {
            out.push(format!("provider = {provider}"));
        }
        if let Some(region) = &self.region {
            out.push(format!("region = {region:?}"));
        }
        if let Some(offer) = &self.offer {
            out.push(format!("offer = {offer}"));
        }
        out.join(", ")
    }
}

/// The pricing fields of a resolved deployment (or of one solver candidate, its holes
/// filled); `pricing` defaults to `cloud`.
pub(crate) fn pricing_settings(resolved: &Resolved) -> PricingSettings {
    let symbol = |name: &str| match resolved.fields.get(name) {
        Some(Value::Symbol(s)) => Some(s.clone()),
        _ => None,
    };
    PricingSettings {
        mode: if symbol("pricing")
            .as_deref()
            .and_then(schema::Pricing::parse)
            == Some(schema::Pricing::Owned)
        {
            PricingMode::Owned
        } else {
            PricingMode::Cloud
        },
        spot: symbol("spot").as_deref().and_then(schema::Boolean::parse)
            == Some(schema::Boolean::True),
        provider: symbol("provider"),
        region: match resolved.fields.get("region") {
            Some(Value::Str(s)) => Some(s.clone()),
            _ => None,
        },
        offer: match resolved.fields.get("offer") {
            Some(Value::Ref(_, name)) => Some(name.clone()),
            _ => None,
        },
    }
}

/// The offers (of `all`, those in scope) that pass the deployment's `offer`, `provider`
/// and `region` (which of them carry its GPU is decided by the estimate).
pub(crate) fn offers_for<'db>(
    all: &[(&'db str, &'db Entry<'db>)],
    settings: &PricingSettings,
) -> Vec<(&'db str, &'db Entry<'db>)> {
    if settings.mode == PricingMode::Owned {
        return Vec::new();
    }
    all.iter()
        .copied()
        .filter(|(name, _)| settings.offer.as_deref().is_none_or(|o| o == *name))
        .filter(|(_, offer)| {
            settings
                .provider
                .as_deref()
                .is_none_or(|p| offer.as_offer().provider.map(|s| s.name()) == Some(p))
                && settings
                    .region
                    .as_deref()
                    .is_none_or(|r| offer.as_offer().region.as_deref() == Some(r))
        })
        .collect()
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
        .filter_map(|(name, entry)| entry.as_quant().bpw.map(|bpw| (bpw, name)))
        .collect();
    quants.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
    let mut gpus: Vec<(f64, &str)> = scope
        .names(DeclKind::Gpu)
        .filter(|(name, _)| *name != inputs.gpu_name)
        .map(|(name, key)| (name, eval::entry_of(db, key)))
        .filter_map(|(name, entry)| {
            let price = entry.as_gpu().price?;
            if !buyable_segment(entry.as_gpu().segment) {
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
pub const ON_REQUEST_SEGMENTS: &[Segment] = &[Segment::Mining, Segment::Embedded];

/// Whether a GPU of this segment may be suggested unasked; a GPU without a segment (the
/// catalog does not say) counts as buyable.
pub fn buyable_segment(segment: Option<Segment>) -> bool {
    segment.is_none_or(|s| !ON_REQUEST_SEGMENTS.contains(&s))
}

/// Changes that make a deployment that does not fit fit, found in the catalog: the
/// largest weight format below the current one that runs on the engine, and the cheapest
/// priced GPU (same count) — a buyable one, or one of the deployment's own GPU's segment
/// (a user on a mining card asked for mining cards).
fn alternatives(db: &dyn Db, scope: &Scope<'_>, inputs: &Inputs<'_, '_>) -> Vec<String> {
    let mut out = Vec::new();
    let current_bpw = inputs.quant.as_quant().bpw.unwrap_or(f64::INFINITY);
    let mut quants: Vec<(f64, &str, &Entry<'_>)> = scope
        .names(DeclKind::Quant)
        .map(|(name, key)| (name, eval::entry_of(db, key)))
        .filter_map(|(name, entry)| entry.as_quant().bpw.map(|bpw| (bpw, name, entry)))
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
            let segment = entry.as_gpu().segment;
            buyable_segment(segment) || segment == inputs.gpu.as_gpu().segment
        })
        .filter_map(|(name, entry)| entry.as_gpu().price.map(|price| (price, name, entry)))
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
