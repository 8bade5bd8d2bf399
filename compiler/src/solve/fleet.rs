//! `fleet = mixed`: how many replicas of each candidate GPU type serve a workload's
//! request classes at the least hourly cost (docs/cost.md, "Mixed fleets"; after Mélange,
//! Griggs et al. 2024).
//!
//! 1. Every request class of the workload (`workload { chat { rate prompt output require
//!    ... } ... }`, or the workload itself as one class) is resolved.
//! 2. For each candidate GPU type and tensor-parallel size (`gpu`, `count`), and each
//!    class, one replica is evaluated as a probe deployment (the library's estimate, its
//!    requires and rules, through [`run_with_offers`]) at the class's prompt and output
//!    and `seqs` = 1, 2, 4, … 256: the largest request rate one replica sustains
//!    (Little's law, `seqs / (ttft + output / decode_tps)`, as `replicas_needed`) among
//!    the `seqs` that meet the deployment's and the class's requires is its capacity.
//! 3. The units one can buy — one replica (`pricing = owned`), or one whole instance of
//!    an offer holding `floor(gpus / count)` replicas (`pricing = cloud`) — with those
//!    capacities go to the integer program of [`super::milp`], solved exactly.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::candidate::{Mode, run_with_offers};
use crate::diagnostics::codes::Code;
use crate::diagnostics::{Diag, Loc, Severity};
use crate::eval::Value;
use crate::eval::deployment::{Cx, DeploymentEnv, Resolved};
use crate::eval::entry::{Entry, const_field};
use crate::eval::estimate::PricingMode;
use crate::eval::schema::CLASS;
use crate::span::Span;
use crate::syntax::ast::{BinaryOp, DeclKind, Entry as AstEntry, ExprKind, Require};
use crate::units::{Dim, Num, Quantity};
use deployfit_model::milp;

/// The `seqs` a probe tries (concurrent sequences per replica); a written `seqs` caps
/// them.
pub const SEQS: [u64; 9] = [1, 2, 4, 8, 16, 32, 64, 128, 256];

/// More probes (priced GPU × count pairs × classes × `seqs` values) than this are refused
/// (`deploy::solve::too_many_candidates`) before any is evaluated: each is one evaluation,
/// as a solver candidate is (the same limit as `solve::MAX_CANDIDATES`).
pub const MAX_PROBES: usize = 100_000;

/// One request class as the fleet serves it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClassInfo {
    pub name: String,
    /// req/s, tokens, tokens.
    #[serde(rename = "rate_rps")]
    pub rate: f64,
    #[serde(rename = "prompt_tokens")]
    pub prompt: f64,
    #[serde(rename = "output_tokens")]
    pub output: f64,
}

/// A unit type the program may buy: one replica (owned) or one instance of an offer.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct UnitOption {
    pub gpu: String,
    /// GPUs per replica (tensor parallelism).
    pub count: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offer: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpus_per_instance: Option<u64>,
    /// Replicas one unit holds, and instances it takes (cloud).
    pub replicas_per_unit: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instances_per_unit: Option<u64>,
    /// $/h of one unit.
    #[serde(rename = "price_usd_per_hour")]
    pub price_per_hour: f64,
    /// Class → req/s one *replica* sustains serving that class alone (absent: it cannot
    /// serve it within the requires).
    #[serde(rename = "capacity_rps")]
    pub capacity: BTreeMap<String, f64>,
    /// Class → the `seqs` that capacity is reached at.
    pub seqs: BTreeMap<String, u64>,
}

/// A class's rate on one fleet member.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Served {
    pub class: String,
    /// req/s of the class this member serves, and that as a share of the class's rate.
    #[serde(rename = "rate_rps")]
    pub rate: f64,
    pub share: f64,
    /// Concurrent sequences per replica for the class.
    pub seqs: u64,
}

/// One GPU type (and offer) of the fleet.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Member {
    pub gpu: String,
    /// GPUs per replica.
    pub count: u64,
    pub replicas: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offer: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instances: Option<u64>,
    #[serde(rename = "cost_per_hour_usd")]
    pub cost_per_hour: f64,
    pub classes: Vec<Served>,
}

impl Member {
    /// `2 replicas of 1 × l4 (2 × runpod_1x_l4_secure)`.
    pub fn describe(&self) -> String {
        let mut text = format!(
            "{} replica{} of {} × {}",
            self.replicas,
            if self.replicas == 1 { "" } else { "s" },
            self.count,
            self.gpu
        );
        if let (Some(offer), Some(instances)) = (&self.offer, self.instances) {
            text.push_str(&format!(" ({instances} × {offer})"));
        }
        text
    }
}

impl Fleet {
    /// Its members: `1 replica of 1 × l4 (1 × runpod_1x_l4_secure) + …`.
    pub fn describe(&self) -> String {
        self.fleet
            .iter()
            .map(Member::describe)
            .collect::<Vec<_>>()
            .join(" + ")
    }
}

/// The figures a mixed fleet shows in `check`'s summary line and JSON: `fleet`,
/// `cost_per_hour`, `cost_per_mtok`, `pricing`.
pub fn summary_figures(fleet: &Fleet) -> Vec<(String, String)> {
    vec![
        ("fleet".to_string(), fleet.describe()),
        (
            "cost_per_hour".to_string(),
            format!("${:.2}/h", fleet.cost_per_hour),
        ),
        (
            "cost_per_mtok".to_string(),
            format!("${:.3}/Mtok", fleet.cost_per_mtok),
        ),
        ("pricing".to_string(), fleet.pricing.clone()),
    ]
}

/// [`summary_figures`] as JSON figures, under keys that name their unit.
pub fn summary_values(fleet: &Fleet) -> Vec<(String, deployfit_model::figures::JsonFigure)> {
    use deployfit_model::figures::JsonFigure;
    vec![
        ("fleet".to_string(), JsonFigure::Text(fleet.describe())),
        (
            "cost_per_hour_usd".to_string(),
            JsonFigure::Number(fleet.cost_per_hour),
        ),
        (
            "cost_per_mtok_usd".to_string(),
            JsonFigure::Number(fleet.cost_per_mtok),
        ),
        (
            "pricing".to_string(),
            JsonFigure::Text(fleet.pricing.clone()),
        ),
    ]
}

/// The best single GPU type (one unit type) for the same workload.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SingleType {
    pub gpu: String,
    pub count: u64,
    pub replicas: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offer: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instances: Option<u64>,
    #[serde(rename = "cost_per_hour_usd")]
    pub cost_per_hour: f64,
}

/// The solved fleet.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Fleet {
    /// `cloud` or `owned`.
    pub pricing: String,
    /// The GPU types with their replicas, cheapest plan first found.
    pub fleet: Vec<Member>,
    /// $/h of the whole fleet, and $ per million output tokens of the workload's demand.
    #[serde(rename = "cost_per_hour_usd")]
    pub cost_per_hour: f64,
    #[serde(rename = "cost_per_mtok_usd")]
    pub cost_per_mtok: f64,
    /// The cheapest fleet of one unit type, and how much the mix saves against it (%).
    pub single_type: Option<SingleType>,
    pub savings_percent: Option<f64>,
    pub classes: Vec<ClassInfo>,
    /// Every unit type the program chose from.
    pub options: Vec<UnitOption>,
    /// Whether branch-and-bound finished (the fleet is then optimal), and its nodes.
    pub optimal: bool,
    pub nodes: usize,
}

/// A resolved request class.
struct Class<'a> {
    info: ClassInfo,
    span: Span,
    workload: BTreeMap<String, Value>,
    requires: Vec<&'a Require>,
    /// Whether another class has the same workload without its rate: the probes'
    /// evaluations are then kept for it to share.
    shared: bool,
}

fn q(value: f64, dim: Dim) -> Value {
    Value::Q(Quantity::real(value, dim))
}

fn int(value: u64) -> Value {
    Value::Q(Quantity::new(Num::Int(value as i128), Dim::NONE))
}

/// Whether the deployment asks for a mixed fleet.
pub(crate) fn is_mixed(resolved: &Resolved) -> bool {
    resolved.symbol_as("fleet") == Some(crate::eval::schema::Fleet::Mixed)
}

/// The span of the deployment's `fleet` value (or its name).
fn fleet_span(cx: Cx<'_, '_>) -> Span {
    cx.decl
        .field("fleet")
        .map_or(cx.decl.name.span, |f| f.value.span)
}

/// The workload's request classes (named nested blocks of `workload`), each inheriting
/// the workload's own `rate`, `prompt` and `output`; without classes, the workload is one
/// class named `workload`.
fn classes<'a, 'db>(
    cx: Cx<'a, 'db>,
    resolved: &Resolved,
) -> Result<Vec<Class<'a>>, Box<Diag<'db>>> {
    let Cx {
        db,
        scope,
        key,
        decl,
    } = cx;
    let no_workload = |span: Span, what: String, help: Option<String>| {
        Box::new(
            Diag::error(Code::FleetNoWorkload, what, Loc::Decl(key, span))
                .label("no request rates to serve")
                .help(help.unwrap_or_else(|| "give the workload request classes, e.g. `workload { chat { rate = 4 req/s; prompt = 512; output = 256 } rag { rate = 1 req/s; prompt = 16k; output = 512 } }`, or write `fleet = single`".to_string())),
        )
    };
    let Some(block) = decl.nested("workload") else {
        return Err(no_workload(
            fleet_span(cx),
            "`fleet = mixed` needs a `workload` with request rates; the deployment has none"
                .to_string(),
            None,
        ));
    };
    let mut out = Vec::new();
    for entry in &block.body.entries {
        let AstEntry::Nested(nested) = entry else {
            continue;
        };
        if CLASS.iter().any(|s| s.name == nested.name.name) {
            continue;
        }
        let mut workload = resolved.workload.clone();
        let mut requires = Vec::new();
        for inner in &nested.body.entries {
            match inner {
                AstEntry::Field(field) => {
                    if let Some(spec) = CLASS.iter().find(|s| s.name == field.name.name) {
                        workload.insert(
                            field.name.name.clone(),
                            const_field(db, scope, key, field, spec)?,
                        );
                    }
                }
                AstEntry::Require(require) => requires.push(require),
                _ => {}
            }
        }
        out.push((
            nested.name.name.clone(),
            nested.name.span,
            workload,
            requires,
        ));
    }
    if out.is_empty() {
        out.push((
            "workload".to_string(),
            block.name.span,
            resolved.workload.clone(),
            Vec::new(),
        ));
    }
    out.into_iter()
        .map(|(name, span, workload, requires)| {
            let number = |field: &str| {
                workload
                    .get(field)
                    .and_then(Value::quantity)
                    .map(|q| q.value())
            };
            match (number("rate"), number("prompt"), number("output")) {
                (Some(rate), Some(prompt), Some(output)) => Ok(Class {
                    info: ClassInfo {
                        name,
                        rate,
                        prompt,
                        output,
                    },
                    span,
                    workload,
                    requires,
                    shared: false,
                }),
                _ => {
                    let missing: Vec<&str> = ["rate", "prompt", "output"]
                        .into_iter()
                        .filter(|f| number(f).is_none())
                        .collect();
                    let listed = missing
                        .iter()
                        .map(|m| format!("`{m}`"))
                        .collect::<Vec<_>>()
                        .join(", ");
                    let example = missing
                        .iter()
                        .map(|m| match *m {
                            "rate" => "rate = 1 req/s",
                            "prompt" => "prompt = 2k",
                            _ => "output = 512",
                        })
                        .collect::<Vec<_>>()
                        .join("; ");
                    Err(no_workload(
                        span,
                        format!(
                            "request class `{name}` has no {listed} (`fleet = mixed` serves each class's rate)"
                        ),
                        Some(format!(
                            "add `{example}` to `{name}`, or to the `workload` around it (its classes inherit its fields)"
                        )),
                    ))
                }
            }
        })
        .collect()
}

/// How far a failed require is from holding: `lhs / rhs` for `<=`/`<`, `rhs / lhs` for
/// `>=`/`>` (both positive quantities); `None` when it holds, infinity when it cannot be
/// measured.
fn shortfall(env: &DeploymentEnv<'_, '_>, require: &Require) -> Option<f64> {
    match crate::eval::eval(env, &require.cond) {
        Ok(Value::Bool(true)) => None,
        _ => {
            let measured = match &require.cond.kind {
                ExprKind::Binary(op, lhs, rhs) => {
                    let value = |e| {
                        crate::eval::eval(env, e)
                            .ok()
                            .and_then(|v| v.quantity())
                            .map(|q| q.value())
                    };
                    match (value(lhs), value(rhs)) {
                        (Some(l), Some(r)) if l > 0.0 && r > 0.0 => match op {
                            BinaryOp::Le | BinaryOp::Lt => Some(l / r),
                            BinaryOp::Ge | BinaryOp::Gt => Some(r / l),
                            _ => None,
                        },
                        _ => None,
                    }
                }
                _ => None,
            };
            Some(measured.unwrap_or(f64::INFINITY))
        }
    }
}

/// The probe of one class on one replica: its capacity (req/s) when every require and
/// error-level rule holds, else how far it misses and (when `explain`) why.
struct Probe {
    capacity: Option<f64>,
    fits: bool,
    miss: f64,
    why: Option<String>,
}

/// A class's workload without its rate, written out exactly: what its probes'
/// evaluations depend on beside the GPU, count and seqs.
fn shape(workload: &BTreeMap<String, Value>) -> Vec<(String, String)> {
    workload
        .iter()
        .filter(|(k, _)| k.as_str() != "rate")
        .map(|(k, v)| (k.clone(), format!("{v:?}")))
        .collect()
}

/// Plans the cheapest fleet for a `fleet = mixed` deployment.
pub(crate) fn plan<'db>(cx: Cx<'_, 'db>, resolved: &Resolved) -> Result<Fleet, Box<Diag<'db>>> {
    let Cx {
        db,
        scope,
        key,
        decl,
    } = cx;
    let classes = checked_classes(cx, resolved)?;
    refuse_unsearched(cx)?;
    let space = Space::of(cx, resolved)?;

    let settings = crate::candidate::pricing_settings(resolved);
    let all_offers = crate::candidate::all_offers(db, scope);
    let offers = crate::candidate::offers_for(&all_offers, &settings);
    let owned = crate::eval::deployment::owned_settings(&resolved.owned);
    let prober = Prober {
        cx,
        resolved,
        context: space.context,
        evaluations: Default::default(),
    };
    // First what can be bought, per GPU and count (cheap), then the probes of those.
    let priced = priced_units(cx, &space.gpus, &space.counts, &offers, &settings, &owned);
    // Each probe is one evaluation: their number is bounded like the solver's candidates.
    let probes = priced
        .len()
        .saturating_mul(classes.len())
        .saturating_mul(space.seqs.len());
    if probes > MAX_PROBES {
        let gpu_span = decl.field("gpu").map_or(decl.name.span, |f| f.value.span);
        return Err(Box::new(
            Diag::error(
                Code::SolveTooManyCandidates,
                format!(
                    "a mixed fleet of {} priced GPU × count pairs, {} classes and {} `seqs` each needs {probes} probes; the limit is {}",
                    priced.len(),
                    classes.len(),
                    space.seqs.len(),
                    MAX_PROBES
                ),
                Loc::Decl(key, gpu_span),
            )
            .label("too many probes")
            .help("narrow `gpu` to the types worth mixing (`gpu = one_of [...]`), pin `count` or `seqs`, or merge request classes"),
        ));
    }
    let priced_any = !priced.is_empty();
    let (options, nearest) = probe_units(&prober, priced, &classes, &space.seqs);
    if !priced_any {
        let gpu_span = decl.field("gpu").map_or(decl.name.span, |f| f.value.span);
        return Err(Box::new(
            Diag::error(
                Code::FleetInfeasible,
                format!(
                    "no candidate GPU has a price under `pricing = {}`",
                    settings.mode.keyword()
                ),
                Loc::Decl(key, gpu_span),
            )
            .label("nothing to buy")
            .help(match settings.mode {
                PricingMode::Cloud => crate::rules::NO_OFFER_HELP.to_string(),
                PricingMode::Owned => "list GPUs with a purchase price and board power (`msrp`, `tdp` in stdlib/gpus.deploy, or your own `gpu NAME extends ... { msrp = $...; tdp = ... W }`), or write `pricing = cloud`".to_string(),
            }),
        ));
    }
    refuse_unserved(&prober, &classes, &options, &nearest, &offers)?;
    solve_fleet(cx, &settings, &classes, options)
}

/// The deployment's request classes, each marked shared when another has its workload,
/// with their requires checked for names, units and types.
fn checked_classes<'a, 'db>(
    cx: Cx<'a, 'db>,
    resolved: &Resolved,
) -> Result<Vec<Class<'a>>, Box<Diag<'db>>> {
    let mut classes = classes(cx, resolved)?;
    let shapes: Vec<Vec<(String, String)>> = classes.iter().map(|c| shape(&c.workload)).collect();
    for (k, class) in classes.iter_mut().enumerate() {
        class.shared = shapes
            .iter()
            .enumerate()
            .any(|(other, s)| other != k && *s == shapes[k]);
    }
    // A class's requires are checked for names, units and types once, like the
    // deployment's (`rules::statically_sound`): a misspelt figure fails every probe the
    // same way.
    let mut checker = crate::eval::Checker {
        scope: cx.scope,
        anchor: cx.key,
        diags: Vec::new(),
    };
    for class in &classes {
        for require in &class.requires {
            checker.condition(&require.cond);
            if let Some(message) = &require.message {
                checker.string(message);
            }
        }
    }
    if let Some(first) = checker.diags.into_iter().next() {
        return Err(Box::new(first));
    }
    Ok(classes)
}

/// Only `gpu` and `count` are searched; `replicas` is the fleet's answer: an error on the
/// first other hole, or on a written `replicas`.
fn refuse_unsearched<'db>(cx: Cx<'_, 'db>) -> Result<(), Box<Diag<'db>>> {
    for field in cx.decl.fields() {
        let name = field.name.name.as_str();
        let open = matches!(field.value.kind, ExprKind::Hole | ExprKind::OneOf(_));
        if name == "replicas" || (open && !matches!(name, "gpu" | "count")) {
            let help = if name == "replicas" {
                "remove `replicas`: the fleet's replicas per GPU type are what the solver finds"
                    .to_string()
            } else {
                format!("pin `{name}`: a mixed fleet searches `gpu` and `count` only")
            };
            return Err(Box::new(
                Diag::error(
                    Code::SolveUnsupported,
                    format!("`fleet = mixed` does not search `{name}`"),
                    Loc::Decl(cx.key, field.value.span),
                )
                .label("not searched by a mixed fleet")
                .help(help),
            ));
        }
    }
    Ok(())
}

/// What the fleet searches: the candidate GPUs and counts, the `seqs` each probe tries,
/// and the context the probes are checked against.
struct Space {
    gpus: Vec<String>,
    counts: Vec<u64>,
    seqs: Vec<u64>,
    context: f64,
}

impl Space {
    /// The `gpu` and `count` holes' values (or written values; every count dividing the
    /// model's heads when `count` is not written), the `seqs` up to a written one, and the
    /// context.
    fn of<'db>(cx: Cx<'_, 'db>, resolved: &Resolved) -> Result<Space, Box<Diag<'db>>> {
        let Cx {
            db, scope, decl, ..
        } = cx;
        let values_of = |name: &str| -> Result<Option<Vec<Value>>, Box<Diag<'db>>> {
            match decl.field(name) {
                Some(field) if matches!(field.value.kind, ExprKind::Hole | ExprKind::OneOf(_)) => {
                    super::holes::hole_values(cx, resolved, field).map(Some)
                }
                _ => Ok(resolved.fields.get(name).map(|v| vec![v.clone()])),
            }
        };
        let gpus: Vec<String> = values_of("gpu")?
            .unwrap_or_default()
            .into_iter()
            .filter_map(|v| match v {
                Value::Ref(_, name) => Some(name),
                _ => None,
            })
            .collect();
        let heads = match resolved.fields.get("model") {
            Some(Value::Ref(_, model)) => scope
                .lookup(DeclKind::Model, model)
                .and_then(|k| crate::eval::entry_of(db, k).as_model().heads),
            _ => None,
        };
        let counts: Vec<u64> = match values_of("count")? {
            Some(values) => values
                .iter()
                .filter_map(|v| v.quantity().map(|q| q.value() as u64))
                .filter(|c| *c >= 1)
                .collect(),
            None => super::holes::COUNTS
                .iter()
                .map(|c| *c as u64)
                .filter(|c| heads.is_none_or(|h| (h as u64).is_multiple_of(*c)))
                .collect(),
        };
        let max_seqs = resolved
            .fields
            .get("seqs")
            .and_then(Value::quantity)
            .map(|q| q.value() as u64);
        let seqs: Vec<u64> = {
            let mut list: Vec<u64> = SEQS
                .iter()
                .copied()
                .filter(|s| max_seqs.is_none_or(|m| *s <= m))
                .collect();
            if let Some(m) = max_seqs
                && !list.contains(&m)
            {
                list.push(m);
            }
            list
        };
        let context = match resolved.fields.get("context") {
            Some(v) => v.quantity().map(|q| q.value()),
            None => match resolved.fields.get("model") {
                Some(Value::Ref(_, model)) => scope
                    .lookup(DeclKind::Model, model)
                    .and_then(|k| crate::eval::entry_of(db, k).as_model().max_context),
                _ => None,
            },
        }
        .unwrap_or(4096.0);
        Ok(Space {
            gpus,
            counts,
            seqs,
            context,
        })
    }
}

/// The GPU `name` in scope.
fn gpu_entry<'db>(cx: Cx<'_, 'db>, name: &str) -> Option<&'db Entry<'db>> {
    cx.scope
        .lookup(DeclKind::Gpu, name)
        .map(|k| crate::eval::entry_of(cx.db, k))
}

/// Offers with their entries.
type Offers<'db> = Vec<(&'db str, &'db Entry<'db>)>;

/// A GPU and count that can be bought: its offers and the units on sale.
type Priced<'a, 'db> = (&'a String, Offers<'db>, u64, Vec<UnitOption>);

/// The units on sale for each GPU of `gpus` and count of `counts`, those pairs that have
/// any.
fn priced_units<'a, 'db>(
    cx: Cx<'_, 'db>,
    gpus: &'a [String],
    counts: &[u64],
    offers: &[(&'db str, &'db Entry<'db>)],
    settings: &crate::candidate::PricingSettings,
    owned: &crate::eval::estimate::Owned,
) -> Vec<Priced<'a, 'db>> {
    let mut priced: Vec<Priced<'a, 'db>> = Vec::new();
    for gpu in gpus {
        let Some(gpu_entry) = gpu_entry(cx, gpu) else {
            continue;
        };
        let gpu_offers: Offers<'db> = offers
            .iter()
            .copied()
            .filter(|(_, offer)| crate::eval::estimate::offer_gpu_matches(offer, gpu_entry, gpu))
            .collect();
        for &count in counts {
            let units = units_for(gpu, gpu_entry, &gpu_offers, count, settings, owned);
            if !units.is_empty() {
                priced.push((gpu, gpu_offers.clone(), count, units));
            }
        }
    }
    priced
}

/// What one can buy of `count` × `gpu`: replicas (owned) or whole instances of an offer
/// (cloud), their capacities still empty.
fn units_for(
    gpu: &str,
    gpu_entry: &Entry<'_>,
    gpu_offers: &[(&str, &Entry<'_>)],
    count: u64,
    settings: &crate::candidate::PricingSettings,
    owned: &crate::eval::estimate::Owned,
) -> Vec<UnitOption> {
    // What one can buy: replicas (owned) or whole instances of an offer (cloud).
    let mut units: Vec<UnitOption> = Vec::new();
    let blank = |price: f64, replicas: u64| UnitOption {
        gpu: gpu.to_string(),
        count,
        offer: None,
        provider: None,
        instance: None,
        gpus_per_instance: None,
        replicas_per_unit: replicas,
        instances_per_unit: None,
        price_per_hour: price,
        capacity: BTreeMap::new(),
        seqs: BTreeMap::new(),
    };
    match settings.mode {
        PricingMode::Owned => {
            if let Ok(price) = crate::eval::estimate::owned_gpu_price(gpu_entry, gpu, owned) {
                units.push(blank(crate::units::per_hour(price) * count as f64, 1));
            }
        }
        PricingMode::Cloud => {
            // A tensor-parallel group stays in one instance wherever an offer
            // holds it (docs/cost.md), as the rental of one deployment does.
            let (rentable, _) = crate::eval::estimate::rentable_offers(
                gpu_offers.iter().copied(),
                settings.spot,
                count,
                false,
            );
            for (name, offer, rate, per) in rentable {
                let (replicas, instances) = if count <= per {
                    (per / count, 1)
                } else {
                    (1, count.div_ceil(per))
                };
                let mut unit = blank(crate::units::per_hour(rate) * instances as f64, replicas);
                unit.offer = Some(name.to_string());
                unit.provider = offer
                    .as_offer()
                    .provider
                    .map(|s| s.name())
                    .map(str::to_string);
                unit.instance = offer.as_offer().instance.as_deref().map(str::to_string);
                unit.gpus_per_instance = Some(per);
                unit.instances_per_unit = Some(instances);
                units.push(unit);
            }
        }
    }
    units
}

/// Per class: the nearest miss (how far, gpu, count, seqs).
type Nearest = Vec<Option<(f64, String, u64, u64)>>;

/// Probe every priced GPU and count on every class at each of `seqs_list`: the units
/// that serve some class, with each class's capacity and best `seqs`, and per class the
/// nearest miss.
fn probe_units(
    prober: &Prober<'_, '_, '_>,
    priced: Vec<Priced<'_, '_>>,
    classes: &[Class<'_>],
    seqs_list: &[u64],
) -> (Vec<UnitOption>, Nearest) {
    let mut options: Vec<UnitOption> = Vec::new();
    // Per class: the nearest miss (how far, gpu, offers, count, seqs).
    let mut nearest: Nearest = vec![None; classes.len()];
    for (gpu, gpu_offers, count, units) in priced {
        let mut capacity = BTreeMap::new();
        let mut best_seqs = BTreeMap::new();
        for (k, class) in classes.iter().enumerate() {
            let mut best: Option<(f64, u64)> = None;
            for &seqs in seqs_list {
                let at = At {
                    gpu,
                    offers: &gpu_offers,
                    count,
                    seqs,
                };
                let result = prober.probe(&at, class, false);
                match result.capacity {
                    Some(cap) => {
                        if best.is_none_or(|(b, _)| cap > b) {
                            best = Some((cap, seqs));
                        }
                    }
                    None => {
                        // The nearest miss: the smallest shortfall, the first found
                        // of equal ones.
                        if nearest[k].as_ref().is_none_or(|(m, ..)| result.miss < *m) {
                            nearest[k] = Some((result.miss, gpu.clone(), count, seqs));
                        }
                    }
                }
                // More sequences never need less memory: stop at the first that does
                // not fit.
                if !result.fits {
                    break;
                }
            }
            if let Some((cap, seqs)) = best {
                capacity.insert(class.info.name.clone(), cap);
                best_seqs.insert(class.info.name.clone(), seqs);
            }
        }
        if capacity.is_empty() {
            continue;
        }
        for mut unit in units {
            unit.capacity = capacity.clone();
            unit.seqs = best_seqs.clone();
            options.push(unit);
        }
    }
    (options, nearest)
}

/// A class no unit serves: say which, with the nearest miss.
fn refuse_unserved<'db>(
    prober: &Prober<'_, '_, 'db>,
    classes: &[Class<'_>],
    options: &[UnitOption],
    nearest: &Nearest,
    offers: &[(&'db str, &'db Entry<'db>)],
) -> Result<(), Box<Diag<'db>>> {
    for (k, class) in classes.iter().enumerate() {
        if options
            .iter()
            .any(|o| o.capacity.contains_key(&class.info.name))
        {
            continue;
        }
        let detail = match &nearest[k] {
            Some((_, gpu, count, seqs)) => {
                let gpu_offers: Offers<'db> = match gpu_entry(prober.cx, gpu) {
                    Some(entry) => offers
                        .iter()
                        .copied()
                        .filter(|(_, o)| crate::eval::estimate::offer_gpu_matches(o, entry, gpu))
                        .collect(),
                    None => Vec::new(),
                };
                let at = At {
                    gpu,
                    offers: &gpu_offers,
                    count: *count,
                    seqs: *seqs,
                };
                let why = prober
                    .probe(&at, class, true)
                    .why
                    .unwrap_or_else(|| "a require fails".to_string());
                format!("the nearest miss is {gpu} (count {count}, seqs {seqs}): {why}")
            }
            None => "no candidate GPU fits the model".to_string(),
        };
        return Err(Box::new(
            Diag::error(
                Code::FleetInfeasible,
                format!(
                    "no candidate GPU serves request class `{}` within its requires; {detail}",
                    class.info.name
                ),
                Loc::Decl(prober.cx.key, class.span),
            )
            .label(format!("class `{}` cannot be served", class.info.name))
            .help("relax the class's `require`s, shorten its prompt or output, or widen `gpu` (`gpu = ?` tries the catalog)"),
        ));
    }
    Ok(())
}

/// Solve the integer program over `options` and describe the fleet it buys, beside the
/// best single type.
fn solve_fleet<'db>(
    cx: Cx<'_, 'db>,
    settings: &crate::candidate::PricingSettings,
    classes: &[Class<'_>],
    options: Vec<UnitOption>,
) -> Result<Fleet, Box<Diag<'db>>> {
    let problem = milp::Problem {
        prices: options.iter().map(|o| o.price_per_hour).collect(),
        caps: options
            .iter()
            .map(|o| {
                classes
                    .iter()
                    .map(|c| {
                        o.capacity.get(&c.info.name).copied().unwrap_or(0.0)
                            * o.replicas_per_unit as f64
                    })
                    .collect()
            })
            .collect(),
        rates: classes.iter().map(|c| c.info.rate).collect(),
    };
    // Branch-and-bound checks between nodes for a newer revision, as the probes do.
    let outcome = milp::solve_with(&problem, &|| cx.db.unwind_if_revision_cancelled());
    let Some(best) = outcome.plan else {
        return Err(Box::new(
            Diag::error(
                Code::FleetInfeasible,
                "no fleet of the candidate GPUs serves every request class",
                Loc::Decl(cx.key, fleet_span(cx)),
            )
            .label("no fleet")
            .help("relax the classes' `require`s or widen `gpu`"),
        ));
    };
    let fleet = members(&options, classes, &best);
    let tokens_per_second: f64 = classes.iter().map(|c| c.info.rate * c.info.output).sum();
    let per_mtok = |cost: f64| cost / crate::units::SECONDS_PER_HOUR / tokens_per_second * 1e6;
    let single_type = (0..options.len())
        .filter_map(|u| milp::single_type(&problem, u).map(|n| (u, n)))
        .map(|(u, n)| (u, n, n as f64 * options[u].price_per_hour))
        .min_by(|a, b| a.2.total_cmp(&b.2))
        .map(|(u, n, cost)| SingleType {
            gpu: options[u].gpu.clone(),
            count: options[u].count,
            replicas: n * options[u].replicas_per_unit,
            offer: options[u].offer.clone(),
            instances: options[u].instances_per_unit.map(|i| i * n),
            cost_per_hour: cost,
        });
    let savings_percent = single_type
        .as_ref()
        .map(|s| (s.cost_per_hour - best.cost) / s.cost_per_hour * 100.0);
    Ok(Fleet {
        pricing: settings.mode.keyword().to_string(),
        fleet,
        cost_per_hour: best.cost,
        cost_per_mtok: per_mtok(best.cost),
        single_type,
        savings_percent,
        classes: classes.iter().map(|c| c.info.clone()).collect(),
        options,
        optimal: outcome.optimal,
        nodes: outcome.nodes,
    })
}

/// The fleet's members: the units `best` buys of each option, with the classes each
/// serves.
fn members(options: &[UnitOption], classes: &[Class<'_>], best: &milp::Plan) -> Vec<Member> {
    let mut fleet = Vec::new();
    for (u, &units) in best.units.iter().enumerate() {
        if units == 0 {
            continue;
        }
        let o = &options[u];
        fleet.push(Member {
            gpu: o.gpu.clone(),
            count: o.count,
            replicas: units * o.replicas_per_unit,
            offer: o.offer.clone(),
            provider: o.provider.clone(),
            instance: o.instance.clone(),
            instances: o.instances_per_unit.map(|i| i * units),
            cost_per_hour: units as f64 * o.price_per_hour,
            classes: classes
                .iter()
                .enumerate()
                .filter(|(k, _)| best.served[u][*k] > 1e-12)
                .map(|(k, c)| Served {
                    class: c.info.name.clone(),
                    rate: best.served[u][k],
                    share: best.served[u][k] / c.info.rate,
                    seqs: o.seqs.get(&c.info.name).copied().unwrap_or(1),
                })
                .collect(),
        });
    }
    fleet
}

/// Where a probe runs: the GPU with its offers, the count and the `seqs`.
struct At<'o, 'db> {
    gpu: &'o str,
    offers: &'o [(&'db str, &'db Entry<'db>)],
    count: u64,
    seqs: u64,
}

/// Each probe's evaluation (figures, first error).
type Evaluation = std::rc::Rc<(crate::eval::figures::Figures, Option<String>)>;
/// A probe's evaluation is keyed by GPU, count, seqs and workload.
type EvaluationKey = (String, u64, u64, Vec<(String, String)>);

/// The probes of one fleet plan, with the evaluations the classes that share a workload
/// share.
struct Prober<'a, 'r, 'db> {
    cx: Cx<'a, 'db>,
    resolved: &'r Resolved,
    context: f64,
    evaluations: std::cell::RefCell<BTreeMap<EvaluationKey, Evaluation>>,
}

impl<'db> Prober<'_, '_, 'db> {
    /// One probe: the deployment with this GPU, count and seqs, one replica, the class's
    /// prompt and output (no rate: the fleet sizes the replicas).
    fn probe(&self, at: &At<'_, 'db>, class: &Class<'_>, explain: bool) -> Probe {
        let resolved = self.resolved;
        let mut fields = resolved.fields.clone();
        fields.insert("gpu".into(), Value::Ref(DeclKind::Gpu, at.gpu.to_string()));
        fields.insert("count".into(), int(at.count));
        fields.insert("seqs".into(), int(at.seqs));
        fields.insert("replicas".into(), int(1));
        fields.remove("fleet");
        let mut workload = class.workload.clone();
        workload.remove("rate");
        let evaluation = self.evaluation(at, class, explain, &fields, &workload);
        let (figures, error) = &*evaluation;
        fields.insert("context".into(), q(self.context, Dim::TOKENS));
        let env = DeploymentEnv {
            db: self.cx.db,
            scope: self.cx.scope,
            figures,
            fields,
            workload,
            messages: explain,
        };
        self.verdict(&env, error.as_ref(), class, at.seqs, explain)
    }

    /// The probe's evaluation (figures, first error), from the cache when its class
    /// shares the workload.
    fn evaluation(
        &self,
        at: &At<'_, 'db>,
        class: &Class<'_>,
        explain: bool,
        fields: &BTreeMap<String, Value>,
        workload: &BTreeMap<String, Value>,
    ) -> Evaluation {
        // The evaluation depends on the GPU, count, seqs and the class's workload without
        // its rate, not on the class's requires or name: classes that share a workload
        // share it (the feasibility pass only; an explained probe renders its messages).
        let cache_key = (!explain && class.shared)
            .then(|| (at.gpu.to_string(), at.count, at.seqs, shape(workload)));
        let cached = cache_key
            .as_ref()
            .and_then(|key| self.evaluations.borrow().get(key).cloned());
        match cached {
            Some(evaluation) => evaluation,
            None => {
                // A language-server request waiting on a newer revision: stop here.
                self.cx.db.unwind_if_revision_cancelled();
                let mut scratch = Vec::new();
                let mode = if explain { Mode::Search } else { Mode::Probe };
                let evaluated = run_with_offers(
                    self.cx,
                    Resolved {
                        fields: fields.clone(),
                        workload: workload.clone(),
                        owned: self.resolved.owned.clone(),
                        speculative: self.resolved.speculative.clone(),
                    },
                    mode,
                    at.offers,
                    &mut scratch,
                );
                let error = scratch
                    .iter()
                    .find(|d| d.severity == Severity::Error)
                    .map(|d| format!("{} [{}]", d.message, d.code));
                let evaluation = std::rc::Rc::new((evaluated.figures, error));
                if let Some(key) = cache_key {
                    self.evaluations
                        .borrow_mut()
                        .insert(key, evaluation.clone());
                }
                evaluation
            }
        }
    }

    /// Judge a probe's figures in `env`: the capacity at `seqs` when the context holds
    /// the class, the deployment's and the class's requires hold, nothing errs and it
    /// fits; else how far it misses and why.
    fn verdict(
        &self,
        env: &DeploymentEnv<'_, '_>,
        error: Option<&String>,
        class: &Class<'_>,
        seqs: u64,
        explain: bool,
    ) -> Probe {
        let (figures, context) = (env.figures, self.context);
        // The deployment's own requires, measured for the nearest miss.
        let mut miss: f64 = 1.0;
        let mut why = None;
        let mut failed = false;
        if class.info.prompt + class.info.output > context {
            failed = true;
            miss = f64::INFINITY;
            why = Some(format!(
                "prompt + output ({} tokens) exceeds the context ({} tokens)",
                class.info.prompt + class.info.output,
                context
            ));
        }
        for entry in &self.cx.decl.body.entries {
            if let AstEntry::Require(require) = entry
                && let Some(short) = shortfall(env, require)
            {
                miss = miss.max(short);
            }
        }
        if let Some(error) = error {
            failed = true;
            miss = miss.max(1.0 + f64::EPSILON);
            if why.is_none() {
                why = Some(error.clone());
            }
        }
        for require in &class.requires {
            if let Some(short) = shortfall(env, require) {
                failed = true;
                miss = miss.max(short);
                if why.is_none() && explain {
                    let figures = crate::rules::figures(env, &require.cond);
                    why = Some(format!(
                        "`require {}` of class `{}` does not hold{figures}",
                        crate::fmt::expression(&require.cond),
                        class.info.name
                    ));
                }
            }
        }
        if figures.fits != Ok(true) {
            failed = true;
            miss = f64::INFINITY;
            if why.is_none() {
                why = Some("it does not fit".to_string());
            }
        }
        let capacity = match (&figures.ttft, &figures.decode_tps) {
            (Ok(ttft), Ok(decode)) if *decode > 0.0 => {
                let latency = ttft + class.info.output / decode;
                (latency > 0.0).then(|| seqs as f64 / latency)
            }
            _ => None,
        };
        if capacity.is_none() && why.is_none() {
            why = Some("its speed cannot be estimated".to_string());
        }
        Probe {
            fits: figures.fits == Ok(true),
            capacity: capacity.filter(|_| !failed),
            miss: if failed || capacity.is_none() {
                miss.max(1.0 + f64::EPSILON)
            } else {
                0.0
            },
            why,
        }
    }
}

/// `deploy::fleet::chosen`: the fleet in one line, on the `fleet` field.
pub(crate) fn chosen<'db>(cx: Cx<'_, 'db>, fleet: &Fleet) -> Diag<'db> {
    let single = match (&fleet.single_type, fleet.savings_percent) {
        (Some(s), Some(savings)) => format!(
            "; the best single type, {} replica{} of {} × {}, costs ${:.2}/h ({savings:.1} % more than the fleet saves)",
            s.replicas,
            if s.replicas == 1 { "" } else { "s" },
            s.count,
            s.gpu,
            s.cost_per_hour
        ),
        _ => "; no single GPU type serves every class".to_string(),
    };
    let single = single.replace(
        " more than the fleet saves)",
        if fleet.savings_percent.unwrap_or(0.0) > 0.0 {
            " saved by the mix)"
        } else {
            ")"
        },
    );
    let proof = if fleet.optimal {
        "optimal"
    } else {
        "best found, not proven optimal"
    };
    Diag::new(
        Code::FleetChosen,
        Severity::Info,
        format!(
            "fleet: {} — ${:.2}/h, ${:.3}/Mtok ({proof}){single}",
            fleet.describe(),
            fleet.cost_per_hour,
            fleet.cost_per_mtok
        ),
        Loc::Decl(cx.key, fleet_span(cx)),
    )
    .label(match fleet.fleet.len() {
        1 => "1 GPU type".to_string(),
        n => format!("{n} GPU types"),
    })
    .help("`deployfit solve FILE` prints the fleet per GPU type with the classes each serves and every option's capacity")
}

/// `deploy::fleet::classes_without_fleet`: request classes on a deployment that is not a
/// mixed fleet (their rates would otherwise be ignored).
pub(crate) fn classes_without_fleet<'db>(
    cx: Cx<'_, 'db>,
    resolved: &Resolved,
) -> Option<Diag<'db>> {
    if is_mixed(resolved) {
        return None;
    }
    let block = cx.decl.nested("workload")?;
    let class = block.body.entries.iter().find_map(|entry| match entry {
        AstEntry::Nested(nested) if !CLASS.iter().any(|s| s.name == nested.name.name) => {
            Some(nested)
        }
        _ => None,
    })?;
    Some(
        Diag::error(
            Code::FleetClassesWithoutFleet,
            format!(
                "request class `{}` is served only by a mixed fleet",
                class.name.name
            ),
            Loc::Decl(cx.key, class.name.span),
        )
        .label("request class")
        .help("add `fleet = mixed` (with `gpu = one_of [...]` or `gpu = ?`), or write one `workload { rate prompt output }`"),
    )
}
