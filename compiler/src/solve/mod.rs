//! The solver: holes (`?`, `one_of [...]`) → the candidates → the cheapest (or best by
//! the deployment's `minimize`/`maximize`) assignment that satisfies every require and
//! every error-level rule, the runners-up, and the cheaper candidates that failed.

use std::collections::BTreeMap;

use serde::Serialize;

mod bound;
pub mod fleet;
mod holes;
pub use deployfit_model::milp;

use holes::hole_values;
pub use holes::{COUNTS, MAX_REPLICAS};

use crate::candidate::{Mode, run_with_offers};
use crate::db::{self, Db, DeclKey};
use crate::diagnostics::codes::Code;
use crate::diagnostics::{Diag, Loc, Severity};
use crate::eval::Value;
use crate::eval::deployment::{Cx, Resolved, resolve};
use crate::eval::schema::{Boolean, Fleet, Pricing};
use crate::syntax::ast::{Decl, DeclKind, Entry as AstEntry, ExprKind, Field};
use crate::units::per_hour;

/// More candidates than this are refused (`deploy::solve::too_many_candidates`) before
/// anything is evaluated: each candidate is a full evaluation, so the search's time grows
/// with their number. Documented in docs/language.md (Holes).
pub const MAX_CANDIDATES: usize = 100_000;

/// Candidates evaluated between two checks for a newer revision (salsa's cancellation):
/// a language-server request waiting on one gets it within about a millisecond.
const CANCEL_EVERY: usize = 64;

/// One assignment of the holes and how it fared.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Candidate {
    /// Hole field → the value tried, as written in a .deploy file.
    pub assignment: BTreeMap<String, String>,
    pub feasible: bool,
    /// The objective's value in base units (bytes, seconds, dollars per second …), the
    /// unit it is in (`objective_unit`, e.g. `"$/s"`), and as printed.
    pub objective: Option<f64>,
    pub objective_unit: Option<String>,
    pub objective_display: Option<String>,
    #[serde(rename = "cost_per_hour_usd")]
    pub cost_per_hour: Option<f64>,
    /// What `pricing = cloud` rents: `2 × lambda gpu_1x_h100_sxm5 (offer lambda_…)`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rental: Option<String>,
    pub decode_tps: Option<f64>,
    /// What one GPU holds, in bytes (a whole number), and as printed (`"39.00 GiB"`).
    pub memory_per_gpu_bytes: Option<u64>,
    pub memory_per_gpu_display: Option<String>,
    /// For infeasible candidates: the first constraint that failed, with its figures.
    pub failure: Option<String>,
}

/// The result of a search.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Solution {
    pub deployment: String,
    /// What is ranked: the objective expression, or `cost_per_hour`.
    pub objective: String,
    pub maximize: bool,
    /// The best feasible candidates, best first.
    pub ranked: Vec<Candidate>,
    /// Candidates ranked better than the best feasible one that failed, nearest first.
    pub misses: Vec<Candidate>,
    /// Candidates in the search space, and how many were evaluated.
    pub candidates: usize,
    pub evaluated: usize,
    /// `fleet = mixed`: the fleet (replicas per GPU type), its cost, the best single type
    /// beside it, and the options it was chosen from; `ranked` and `misses` are empty.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub mixed: Option<fleet::Fleet>,
}

impl Solution {
    /// Whether the search found an answer: a ranked candidate, or a fleet.
    pub fn found(&self) -> bool {
        !self.ranked.is_empty() || self.mixed.is_some()
    }
}

/// Why a search is refused.
#[derive(Clone, Copy, PartialEq)]
enum TooMany {
    /// A written objective: every candidate would be evaluated, and there are too many.
    All,
    /// The default objective: too many candidates share each price (the holes other than
    /// `gpu`, `count` and `replicas`).
    PerPrice,
    /// The default objective: the cheapest candidates up to the limit were searched and
    /// none was feasible: how many were ruled out by a bound (module `bound`) rather than
    /// evaluated.
    Exhausted { ruled_out: usize },
}

/// `deploy::solve::too_many_candidates`: the size of each hole's domain, the product,
/// the limit, and the hole whose narrowing helps most.
fn too_many_candidates<'db>(
    key: DeclKey<'db>,
    decl: &Decl,
    domains: &[(String, Vec<Value>)],
    total: usize,
    why: TooMany,
) -> Diag<'db> {
    let counted: Vec<&(String, Vec<Value>)> = domains
        .iter()
        .filter(|(name, _)| {
            why != TooMany::PerPrice || !matches!(name.as_str(), "gpu" | "count" | "replicas")
        })
        .collect();
    let product = counted.iter().fold(1usize, |n, (_, values)| {
        n.saturating_mul(values.len().max(1))
    });
    let factors: Vec<String> = counted
        .iter()
        .map(|(name, values)| format!("{name} {}", values.len()))
        .collect();
    let count = |n: usize| {
        if n == usize::MAX {
            format!("more than {}", usize::MAX)
        } else {
            n.to_string()
        }
    };
    let widest = counted
        .iter()
        .max_by(|a, b| a.1.len().cmp(&b.1.len()).then_with(|| b.0.cmp(&a.0)));
    let help = match widest {
        Some((name, values)) => {
            let examples: Vec<String> = values.iter().take(2).map(Value::display).collect();
            format!(
                "narrow the search: pin `{name}` (it has {} values, e.g. `{name} = {}`), or list the few to try with `{name} = one_of [{}]`; other holes too, until at most {MAX_CANDIDATES} candidates remain",
                values.len(),
                examples.first().cloned().unwrap_or_default(),
                examples.join(", ")
            )
        }
        None => format!("narrow the holes until at most {MAX_CANDIDATES} candidates remain"),
    };
    let message = match why {
        TooMany::All => format!(
            "{} candidates ({}); the limit is {MAX_CANDIDATES}",
            count(product),
            factors.join(" × ")
        ),
        TooMany::PerPrice => format!(
            "{} candidates share each price ({}), of {} in all; the limit is {MAX_CANDIDATES}",
            count(product),
            factors.join(" × "),
            count(total)
        ),
        TooMany::Exhausted { ruled_out: 0 } => format!(
            "the {MAX_CANDIDATES} cheapest of {} candidates ({}) were evaluated and none meets every require; the limit is {MAX_CANDIDATES}",
            count(total),
            factors.join(" × ")
        ),
        TooMany::Exhausted { ruled_out } => format!(
            "the {MAX_CANDIDATES} cheapest of {} candidates ({}) were searched and none meets every require ({} evaluated, {ruled_out} ruled out by a bound on `decode_tps`: their GPUs' memory bandwidth cannot stream the weights that fast); the limit is {MAX_CANDIDATES}",
            count(total),
            factors.join(" × "),
            MAX_CANDIDATES.saturating_sub(ruled_out)
        ),
    };
    Diag::error(
        Code::SolveTooManyCandidates,
        message,
        Loc::Decl(key, decl.name.span),
    )
    .label("too many candidates to search")
    .help(help)
}

fn number_of(value: &Value) -> Option<f64> {
    value.quantity().map(|q| q.value())
}

/// Searches the holes of a deployment for the `top` best assignments.
pub(crate) fn search<'db>(
    cx: Cx<'_, 'db>,
    resolved: &Resolved,
    top: usize,
) -> Result<Solution, Box<Diag<'db>>> {
    let Cx {
        db,
        scope,
        key,
        decl,
    } = cx;
    let (mut domains, total) = hole_domains(cx, resolved)?;
    let (objective_text, maximize, default_objective) = objective_of(decl);

    // The holes that set the hourly price (`gpu`, `count`, `replicas`) are the *priced*
    // ones: with the default objective the search walks their combinations from the
    // cheapest up, lazily, and tries the other holes' combinations under each. Every
    // candidate under one priced combination costs the same, so those must all be
    // searchable: their number is what the limit bounds. A written objective has no such
    // order, and every candidate is evaluated: the limit bounds them all.
    let priced = |name: &str| default_objective && matches!(name, "gpu" | "count" | "replicas");
    let free_total = domains
        .iter()
        .filter(|(name, _)| !priced(name))
        .fold(1usize, |n, (_, values)| {
            n.saturating_mul(values.len().max(1))
        });
    let limited = if default_objective { free_total } else { total };
    if limited > MAX_CANDIDATES {
        let why = if default_objective {
            TooMany::PerPrice
        } else {
            TooMany::All
        };
        return Err(Box::new(too_many_candidates(
            key, decl, &domains, total, why,
        )));
    }
    // A GPU's factor is the lowest per-GPU rate any candidate on it can get: under the
    // deployment's pricing, or, where `pricing`, `spot`, `provider`, `region` or `offer`
    // are holes, under any of their values (each hole's values taken as a set, so the
    // cost of this stays linear in them). It is a lower bound of what a candidate on the
    // GPU costs per GPU (docs/cost.md), so the cheapest-first order stays exact; a GPU
    // nothing prices is no candidate when ranking by cost. Computed once per GPU.
    let all_offers = crate::candidate::all_offers(db, scope);
    let floors = Floors::new(cx, resolved, &domains, &all_offers);
    // The priced holes' values, cheapest first (ties in catalog order), so that the cost
    // only grows with each index.
    if default_objective {
        for (name, values) in domains.iter_mut().filter(|(name, _)| priced(name)) {
            let mut keyed: Vec<(f64, Value)> = values
                .drain(..)
                .map(|v| (floors.factor(name, &v), v))
                .collect();
            keyed.sort_by(|a, b| a.0.total_cmp(&b.0));
            *values = keyed.into_iter().map(|(_, v)| v).collect();
        }
    }
    let searcher = Searcher {
        cx,
        resolved,
        domains: &domains,
        objective_text: &objective_text,
        maximize,
        free_total,
        priced_dims: (0..domains.len())
            .filter(|&i| priced(&domains[i].0))
            .collect(),
        free_dims: (0..domains.len())
            .filter(|&i| !priced(&domains[i].0))
            .collect(),
        floors: &floors,
        all_offers: &all_offers,
        by_gpu: Default::default(),
        // Priced combinations whose every candidate a bound proves infeasible (module
        // `bound`), decided once per GPU and count.
        decode_bound: if default_objective {
            bound::DecodeBound::new(cx, resolved, &domains)
        } else {
            None
        },
        verdicts: Default::default(),
    };
    let mut found = Found {
        feasible: Vec::new(),
        failed: Vec::new(),
        evaluated: 0,
        ruled_out: 0,
        deferred: Vec::new(),
        worst: f64::NEG_INFINITY,
    };
    let empty = domains.iter().any(|(_, values)| values.is_empty());
    let mut exhausted = false;
    if empty {
        // A hole with no values: nothing to try.
    } else if default_objective {
        exhausted = searcher.cheapest_first(&mut found, top);
    } else {
        for number in 0..total {
            let mut one = vec![0usize; domains.len()];
            searcher.set_free(&mut one, number);
            searcher.try_one(&mut found, one);
        }
    }
    if exhausted && found.feasible.is_empty() {
        return Err(Box::new(too_many_candidates(
            key,
            decl,
            &domains,
            total,
            TooMany::Exhausted {
                ruled_out: found.ruled_out,
            },
        )));
    }
    // An answer: the candidates ruled out are evaluated after all (they fail, so the
    // ranking is the same), for the misses and counts a search without the bound reports.
    for (combination, numbers) in std::mem::take(&mut found.deferred) {
        for number in numbers {
            let mut one = combination.clone();
            searcher.set_free(&mut one, number);
            searcher.try_one(&mut found, one);
        }
    }
    let evaluated = found.evaluated;
    let (ranked, misses) = searcher.rank(found, top);
    Ok(Solution {
        deployment: decl.name.name.clone(),
        objective: objective_text,
        maximize,
        ranked,
        misses,
        candidates: total,
        evaluated,
        mixed: None,
    })
}

/// Each hole's name and values.
type Domains = Vec<(String, Vec<Value>)>;

/// Each hole of the deployment (`?`, `one_of [...]`) with its values, and the number of
/// candidates: the product of their counts.
fn hole_domains<'db>(
    cx: Cx<'_, 'db>,
    resolved: &Resolved,
) -> Result<(Domains, usize), Box<Diag<'db>>> {
    let holes: Vec<&Field> = cx
        .decl
        .fields()
        .filter(|f| matches!(f.value.kind, ExprKind::Hole | ExprKind::OneOf(_)))
        .collect();
    let mut domains = Vec::new();
    let mut total: usize = 1;
    for hole in &holes {
        let values = hole_values(cx, resolved, hole)?;
        total = total.saturating_mul(values.len().max(1));
        domains.push((hole.name.name.clone(), values));
    }
    Ok((domains, total))
}

/// The deployment's objective as written (default `cost_per_hour`), whether it is
/// maximized, and whether it is the default (cheapest first).
fn objective_of(decl: &Decl) -> (String, bool, bool) {
    let (objective_text, maximize, default_objective) = decl
        .body
        .entries
        .iter()
        .find_map(|entry| match entry {
            AstEntry::Objective(objective) => Some((
                crate::fmt::expression(&objective.expr),
                objective.maximize,
                false,
            )),
            _ => None,
        })
        .unwrap_or_else(|| ("cost_per_hour".to_string(), false, true));
    // Writing the default out (`minimize cost_per_hour`) keeps the cheapest-first search.
    let default_objective = default_objective || (objective_text == "cost_per_hour" && !maximize);
    (objective_text, maximize, default_objective)
}

/// Offers with their entries.
type Offers<'db> = Vec<(&'db str, &'db crate::eval::entry::Entry<'db>)>;

/// The price floors of the priced holes' values: per GPU, the lowest per-GPU rate under
/// any pricing the deployment's fields or holes allow; a count or replicas, its number.
struct Floors<'a, 'db> {
    cx: Cx<'a, 'db>,
    modes: Vec<crate::eval::estimate::PricingMode>,
    spots: Vec<bool>,
    /// The offers the `offer`, `provider` and `region` fields or holes allow.
    priceable: Offers<'db>,
    owned: crate::eval::estimate::Owned,
    /// Each GPU's floor, computed once.
    floors: std::cell::RefCell<BTreeMap<String, f64>>,
}

impl<'a, 'db> Floors<'a, 'db> {
    /// The pricing modes, spot choices and offers that `domains` and `resolved` allow.
    fn new(
        cx: Cx<'a, 'db>,
        resolved: &Resolved,
        domains: &[(String, Vec<Value>)],
        all_offers: &[(&'db str, &'db crate::eval::entry::Entry<'db>)],
    ) -> Self {
        let hole_values = |name: &str| -> Option<&Vec<Value>> {
            domains
                .iter()
                .find(|(hole, _)| hole == name)
                .map(|(_, values)| values)
        };
        let words = |name: &str| -> Option<Vec<String>> {
            match hole_values(name) {
                Some(values) => Some(
                    values
                        .iter()
                        .filter_map(|v| match v {
                            Value::Symbol(s) | Value::Str(s) | Value::Ref(_, s) => Some(s.clone()),
                            _ => None,
                        })
                        .collect(),
                ),
                None => match resolved.fields.get(name) {
                    Some(Value::Symbol(s) | Value::Str(s) | Value::Ref(_, s)) => {
                        Some(vec![s.clone()])
                    }
                    _ => None,
                },
            }
        };
        let modes: Vec<crate::eval::estimate::PricingMode> = words("pricing")
            .unwrap_or_default()
            .iter()
            .map(|w| {
                if Pricing::parse(w) == Some(Pricing::Owned) {
                    crate::eval::estimate::PricingMode::Owned
                } else {
                    crate::eval::estimate::PricingMode::Cloud
                }
            })
            .chain(
                words("pricing")
                    .is_none()
                    .then_some(crate::eval::estimate::PricingMode::Cloud),
            )
            .collect();
        let spots: Vec<bool> = match words("spot") {
            Some(values) => values
                .iter()
                .map(|v| Boolean::parse(v) == Some(Boolean::True))
                .collect(),
            None => vec![false],
        };
        let allowed = |field: &str, value: Option<&str>| match words(field) {
            Some(set) => value.is_some_and(|v| set.iter().any(|s| s == v)),
            None => true,
        };
        let priceable: Offers<'db> = all_offers
            .iter()
            .copied()
            .filter(|(name, offer)| {
                allowed("offer", Some(name))
                    && allowed("provider", offer.as_offer().provider.map(|s| s.name()))
                    && allowed("region", offer.as_offer().region.as_deref())
            })
            .collect();
        Floors {
            cx,
            modes,
            spots,
            priceable,
            owned: crate::eval::deployment::owned_settings(&resolved.owned),
            floors: Default::default(),
        }
    }

    /// The factor of hole `name`'s `value` in a candidate's hourly cost: a GPU's price
    /// floor (infinite when nothing prices it), else the value's number.
    fn factor(&self, name: &str, value: &Value) -> f64 {
        let Cx { db, scope, .. } = self.cx;
        match (name, value) {
            ("gpu", Value::Ref(_, gpu)) => {
                if let Some(floor) = self.floors.borrow().get(gpu) {
                    return *floor;
                }
                let floor = scope
                    .lookup(DeclKind::Gpu, gpu)
                    .and_then(|k| {
                        let entry = crate::eval::entry_of(db, k);
                        self.modes
                            .iter()
                            .flat_map(|mode| self.spots.iter().map(move |spot| (*mode, *spot)))
                            .filter_map(|(mode, spot)| {
                                crate::eval::estimate::gpu_price_floor(
                                    entry,
                                    gpu,
                                    &crate::eval::estimate::Pricing {
                                        mode,
                                        spot,
                                        offers: &self.priceable,
                                        filters: "",
                                        owned: self.owned,
                                    },
                                )
                            })
                            .min_by(f64::total_cmp)
                    })
                    .unwrap_or(f64::INFINITY);
                self.floors.borrow_mut().insert(gpu.clone(), floor);
                floor
            }
            (_, value) => number_of(value).unwrap_or(f64::INFINITY),
        }
    }
}

/// What the search has found so far.
struct Found {
    feasible: Vec<(Candidate, Vec<usize>)>,
    /// Each failed candidate with its combination, to evaluate it again if reported.
    failed: Vec<(Candidate, Vec<usize>)>,
    evaluated: usize,
    /// Candidates a bound ruled out unevaluated (they fail a require).
    ruled_out: usize,
    /// The priced combinations whose free candidates were ruled out, with the range of
    /// free numbers: evaluated at the end where the search has an answer, so that its
    /// misses are those of a search without the bound.
    deferred: Vec<(Vec<usize>, std::ops::Range<usize>)>,
    /// The largest objective among the feasible candidates so far, kept as they come
    /// in (rescanning them for every candidate made a long search quadratic).
    worst: f64,
}

/// A cost in the best-first search's min-heap, ordered by `total_cmp`.
#[derive(PartialEq)]
struct Cost(f64);
impl Eq for Cost {}
impl PartialOrd for Cost {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Cost {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// One search over the holes' combinations (index tuples into `domains`, the priced
/// holes' values cheapest first): what each candidate is, evaluating it, and the caches
/// shared by all candidates.
struct Searcher<'s, 'a, 'db> {
    cx: Cx<'a, 'db>,
    resolved: &'s Resolved,
    domains: &'s [(String, Vec<Value>)],
    objective_text: &'s str,
    maximize: bool,
    /// Candidates under one priced combination.
    free_total: usize,
    priced_dims: Vec<usize>,
    free_dims: Vec<usize>,
    floors: &'s Floors<'a, 'db>,
    all_offers: &'s Offers<'db>,
    /// The offers that carry each GPU, found once per GPU rather than once per candidate.
    by_gpu: std::cell::RefCell<BTreeMap<String, std::rc::Rc<Offers<'db>>>>,
    decode_bound: Option<bound::DecodeBound>,
    /// `decode_bound`'s verdict per GPU and count.
    verdicts: std::cell::RefCell<BTreeMap<(String, u64), bool>>,
}

impl<'s, 'a, 'db> Searcher<'s, 'a, 'db> {
    /// Field `name`'s value in `combination`: its hole's, else the resolved field's.
    fn value_of(&self, combination: &[usize], name: &str) -> Option<Value> {
        self.domains
            .iter()
            .zip(combination)
            .find(|((hole, _), _)| hole == name)
            .map(|((_, values), index)| values[*index].clone())
            .or_else(|| self.resolved.fields.get(name).cloned())
    }

    /// The holes' values in `combination`.
    fn assignment_of(&self, combination: &[usize]) -> BTreeMap<String, Value> {
        self.domains
            .iter()
            .zip(combination)
            .map(|((name, values), index)| (name.clone(), values[*index].clone()))
            .collect()
    }

    /// The resolved fields with `assignment` filled in.
    fn full(&self, assignment: &BTreeMap<String, Value>) -> BTreeMap<String, Value> {
        let mut fields = self.resolved.fields.clone();
        fields.extend(assignment.clone());
        fields
    }

    /// The entry of `name` in scope.
    fn entry_of(&self, kind: DeclKind, name: &str) -> Option<&'db crate::eval::entry::Entry<'db>> {
        let Cx { db, scope, .. } = self.cx;
        scope
            .lookup(kind, name)
            .map(|k| crate::eval::entry_of(db, k))
    }

    /// Whether `combination` is a candidate at all: weight formats and KV-cache dtypes
    /// that do not run on the engine are not candidates at all.
    fn runs(&self, combination: &[usize]) -> bool {
        let Some(Value::Ref(_, engine)) = self.value_of(combination, "engine") else {
            return true;
        };
        // By the engine's entry: an `extends` copy runs what its parent runs.
        let engine_entry = self.entry_of(DeclKind::Engine, &engine);
        let on_engine = |kind: DeclKind, field: &str| match self.value_of(combination, field) {
            Some(Value::Ref(_, name)) => {
                self.entry_of(kind, &name)
                    .is_none_or(|entry| match engine_entry {
                        Some(engine_entry) => entry.runs_on_engine(&engine, engine_entry),
                        None => entry.runs_on(&engine),
                    })
            }
            _ => true,
        };
        // A GPU the engine is not documented to run on (its `archs`) is no candidate.
        let on_gpu = match (engine_entry, self.value_of(combination, "gpu")) {
            (Some(engine_entry), Some(Value::Ref(_, gpu))) => {
                self.entry_of(DeclKind::Gpu, &gpu).is_none_or(|gpu_entry| {
                    let arch = gpu_entry
                        .as_gpu()
                        .arch
                        .as_ref()
                        .and_then(|arch| self.entry_of(DeclKind::Arch, arch));
                    crate::eval::estimate::engine_runs_on_gpu(engine_entry, gpu_entry, arch)
                })
            }
            _ => true,
        };
        on_gpu
            && on_engine(DeclKind::Quant, "quant")
            && on_engine(DeclKind::Kv, "kv_cache")
            && self.offer_matches(combination)
    }

    /// An offer is a candidate only with the GPU it carries and its own provider
    /// and region.
    fn offer_matches(&self, combination: &[usize]) -> bool {
        match self.value_of(combination, "offer") {
            Some(Value::Ref(_, offer)) => {
                self.entry_of(DeclKind::Offer, &offer).is_none_or(|offer| {
                    let gpu_ok = match self.value_of(combination, "gpu") {
                        Some(Value::Ref(_, gpu)) => {
                            self.entry_of(DeclKind::Gpu, &gpu).is_none_or(|entry| {
                                crate::eval::estimate::offer_gpu_matches(offer, entry, &gpu)
                            })
                        }
                        _ => true,
                    };
                    let provider_ok = match self.value_of(combination, "provider") {
                        Some(Value::Symbol(provider)) => {
                            offer.as_offer().provider.map(|s| s.name()) == Some(provider.as_str())
                        }
                        _ => true,
                    };
                    let region_ok = match self.value_of(combination, "region") {
                        Some(Value::Str(region)) => {
                            offer.as_offer().region.as_deref() == Some(region.as_str())
                        }
                        _ => true,
                    };
                    gpu_ok && provider_ok && region_ok
                })
            }
            _ => true,
        }
    }

    /// A lower bound of `combination`'s hourly cost: the GPU's floor × count × replicas.
    fn bound(&self, combination: &[usize]) -> f64 {
        let number = |name: &str| {
            self.value_of(combination, name)
                .as_ref()
                .and_then(number_of)
        };
        let price = match self.value_of(combination, "gpu") {
            Some(value) => self.floors.factor("gpu", &value),
            None => f64::INFINITY,
        };
        price * number("count").unwrap_or(1.0) * number("replicas").unwrap_or(1.0)
    }

    /// The offers that carry the GPU `gpu` (all of them without one), cached per GPU.
    fn offers_of(&self, gpu: Option<Value>) -> std::rc::Rc<Offers<'db>> {
        let Some(Value::Ref(_, gpu)) = gpu else {
            return std::rc::Rc::new(self.all_offers.to_vec());
        };
        if let Some(offers) = self.by_gpu.borrow().get(&gpu) {
            return offers.clone();
        }
        let offers: Offers<'db> = match self.entry_of(DeclKind::Gpu, &gpu) {
            Some(entry) => self
                .all_offers
                .iter()
                .copied()
                .filter(|(_, offer)| crate::eval::estimate::offer_gpu_matches(offer, entry, &gpu))
                .collect(),
            None => Vec::new(),
        };
        let offers = std::rc::Rc::new(offers);
        self.by_gpu.borrow_mut().insert(gpu, offers.clone());
        offers
    }

    /// One candidate, evaluated in `mode`: the feasibility pass renders no message
    /// (`Mode::Probe`); the misses that are reported are evaluated again with their
    /// messages (`Mode::Search`), so a long message costs its length once per miss shown,
    /// not once per candidate.
    fn evaluate(&self, combination: &[usize], mode: Mode) -> Candidate {
        let resolved = self.resolved;
        let assignment = &self.assignment_of(combination);
        let mut scratch = Vec::new();
        let fields = Resolved {
            fields: self.full(assignment),
            workload: resolved.workload.clone(),
            owned: resolved.owned.clone(),
            speculative: resolved.speculative.clone(),
        };
        let offers = self.offers_of(self.value_of(combination, "gpu"));
        let result = run_with_offers(self.cx, fields, mode, &offers, &mut scratch);
        let failure = scratch
            .iter()
            .find(|d| d.severity == Severity::Error)
            .map(|d| format!("{} [{}]", d.message, d.code));
        // The feasibility pass formats nothing it may throw away: the candidates that are
        // shown are evaluated again in `Mode::Search`.
        let shown = mode != Mode::Probe;
        Candidate {
            assignment: assignment
                .iter()
                .map(|(k, v)| (k.clone(), v.display()))
                .collect(),
            feasible: failure.is_none() && result.objective.is_some(),
            objective: result.objective.map(|q| q.value()),
            objective_unit: result
                .objective
                .filter(|_| shown)
                .map(|q| q.dim.unit_expression()),
            objective_display: result.objective.filter(|_| shown).map(|q| q.display()),
            cost_per_hour: result.figures.cost_per_hour.clone().ok().map(per_hour),
            rental: result
                .setup
                .as_ref()
                .and_then(|setup| setup.rental.as_ref())
                .map(crate::eval::estimate::Rental::describe),
            decode_tps: result.figures.decode_tps.clone().ok(),
            memory_per_gpu_bytes: result
                .figures
                .memory_per_gpu
                .clone()
                .ok()
                .filter(|b| shown && b.is_finite() && *b >= 0.0)
                .map(|b| b.round() as u64),
            memory_per_gpu_display: result
                .figures
                .get("memory_per_gpu")
                .filter(|_| shown)
                .and_then(Result::ok)
                .map(|v| v.display()),
            failure: failure.or_else(|| {
                result
                    .objective
                    .is_none()
                    .then(|| format!("`{}` cannot be computed for it", self.objective_text))
            }),
        }
    }

    /// Evaluate `combination` into `found`, when it is a candidate.
    fn try_one(&self, found: &mut Found, combination: Vec<usize>) {
        if !self.runs(&combination) {
            return;
        }
        // A request of the language server waiting on a newer revision: stop here
        // (salsa unwinds with `Cancelled`) rather than after the whole search.
        if found.evaluated.is_multiple_of(CANCEL_EVERY) {
            self.cx.db.unwind_if_revision_cancelled();
        }
        found.evaluated += 1;
        let candidate = self.evaluate(&combination, Mode::Probe);
        if candidate.feasible {
            if let Some(objective) = candidate.objective {
                found.worst = found.worst.max(objective);
            }
            found.feasible.push((candidate, combination));
        } else {
            found.failed.push((candidate, combination));
        }
    }

    /// The free holes' combinations in mixed radix (the first hole most significant),
    /// written into `combination`'s free slots.
    fn set_free(&self, combination: &mut [usize], mut number: usize) {
        for &dim in self.free_dims.iter().rev() {
            let len = self.domains[dim].1.len();
            combination[dim] = number % len;
            number /= len;
        }
    }

    /// Whether the decode bound proves every candidate of the priced `combination`
    /// infeasible.
    fn ruled_out(&self, combination: &[usize]) -> bool {
        let Some(decode_bound) = &self.decode_bound else {
            return false;
        };
        let Some(Value::Ref(_, gpu)) = self.value_of(combination, "gpu") else {
            return false;
        };
        let count = self
            .value_of(combination, "count")
            .as_ref()
            .and_then(number_of)
            .unwrap_or(1.0);
        let key = (gpu, count.to_bits());
        if let Some(verdict) = self.verdicts.borrow().get(&key) {
            return *verdict;
        }
        let verdict = decode_bound.rules_out(self.cx, &key.0, count);
        self.verdicts.borrow_mut().insert(key, verdict);
        verdict
    }

    /// The default objective's search: the priced combinations cheapest first, every free
    /// combination under each, until `top` feasible candidates are found and no cheaper one
    /// can follow. Whether it stopped at [`MAX_CANDIDATES`].
    fn cheapest_first(&self, found: &mut Found, top: usize) -> bool {
        // Best-first over the priced holes: a min-heap of index tuples keyed by their cost.
        // A tuple is pushed once, from the tuple one step below it in its last raised
        // dimension or a later one, so each is generated once and (the cost growing with
        // every index) popped in order of cost. Memory grows with the tuples popped, not
        // with the product.
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;
        let domains = self.domains;
        let free_total = self.free_total;
        let mut heap: BinaryHeap<Reverse<(Cost, Vec<usize>, usize)>> = BinaryHeap::new();
        let start = vec![0usize; domains.len()];
        heap.push(Reverse((Cost(self.bound(&start)), start, 0)));
        while let Some(Reverse((Cost(cost), combination, last))) = heap.pop() {
            // A candidate without a price cannot be ranked by cost: none after it can.
            if !cost.is_finite() || (found.feasible.len() >= top && cost > found.worst) {
                break;
            }
            for (position, &dim) in self.priced_dims.iter().enumerate().skip(last) {
                if combination[dim] + 1 < domains[dim].1.len() {
                    let mut next = combination.clone();
                    next[dim] += 1;
                    heap.push(Reverse((Cost(self.bound(&next)), next, position)));
                }
            }
            if self.ruled_out(&combination) {
                // Every free candidate here fails the require: counted, not evaluated.
                let mut number = 0;
                while number < free_total {
                    if found.evaluated + found.ruled_out >= MAX_CANDIDATES {
                        found.deferred.push((combination.clone(), 0..number));
                        return true;
                    }
                    let mut one = combination.clone();
                    self.set_free(&mut one, number);
                    if self.runs(&one) {
                        found.ruled_out += 1;
                    }
                    number += 1;
                }
                found.deferred.push((combination, 0..free_total));
                continue;
            }
            for number in 0..free_total {
                if found.evaluated + found.ruled_out >= MAX_CANDIDATES {
                    return true;
                }
                let mut one = combination.clone();
                self.set_free(&mut one, number);
                self.try_one(found, one);
            }
        }
        false
    }

    /// Whether candidate `a` ranks before `b`: by the objective, then the faster decode,
    /// then the assignment.
    fn better(&self, a: &Candidate, b: &Candidate) -> std::cmp::Ordering {
        let (x, y) = (
            a.objective.unwrap_or(f64::NAN),
            b.objective.unwrap_or(f64::NAN),
        );
        let by_objective = if self.maximize {
            y.total_cmp(&x)
        } else {
            x.total_cmp(&y)
        };
        by_objective
            .then_with(|| {
                b.decode_tps
                    .unwrap_or(0.0)
                    .total_cmp(&a.decode_tps.unwrap_or(0.0))
            })
            .then_with(|| a.assignment.cmp(&b.assignment))
    }

    /// The `top` best feasible candidates and the misses worth reporting, each evaluated
    /// again with its messages.
    fn rank(&self, found: Found, top: usize) -> (Vec<Candidate>, Vec<Candidate>) {
        let Found {
            mut feasible,
            failed,
            ..
        } = found;
        feasible.sort_by(|(a, _), (b, _)| self.better(a, b));
        feasible.truncate(top);
        let feasible: Vec<Candidate> = feasible
            .into_iter()
            .map(|(_, combination)| self.evaluate(&combination, Mode::Search))
            .collect();
        // The misses worth reporting: the candidates that would have ranked above the best,
        // nearest to it first.
        let mut misses: Vec<(Candidate, Vec<usize>)> = match feasible.first() {
            Some(best) => failed
                .into_iter()
                .filter(|(c, _)| {
                    c.objective.is_some() && self.better(c, best) == std::cmp::Ordering::Less
                })
                .collect(),
            None => failed,
        };
        // With a best, the nearest misses are those ranked just above it; without one, the
        // best-ranked candidates.
        if feasible.is_empty() {
            misses.sort_by(|(a, _), (b, _)| self.better(a, b));
        } else {
            misses.sort_by(|(a, _), (b, _)| self.better(b, a));
        }
        misses.truncate(top.max(3));
        let misses: Vec<Candidate> = misses
            .into_iter()
            .map(|(_, combination)| self.evaluate(&combination, Mode::Search))
            .collect();
        (feasible, misses)
    }
}

fn describe_candidate(candidate: &Candidate) -> String {
    candidate
        .assignment
        .iter()
        .map(|(k, v)| format!("{k} = {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The solver as `check` runs it: the best assignment, reported on each hole, or an error
/// with the nearest misses.
pub(crate) fn solve<'db>(
    cx: Cx<'_, 'db>,
    resolved: &Resolved,
    diags: &mut Vec<Diag<'db>>,
) -> Option<BTreeMap<String, Value>> {
    let Cx { key, decl, .. } = cx;
    let solution = match search(cx, resolved, 1) {
        Ok(solution) => solution,
        Err(diag) => {
            diags.push(*diag);
            return None;
        }
    };
    let holes: Vec<&Field> = decl
        .fields()
        .filter(|f| matches!(f.value.kind, ExprKind::Hole | ExprKind::OneOf(_)))
        .collect();
    let Some(best) = solution.ranked.first() else {
        let misses: Vec<String> = solution
            .misses
            .iter()
            .take(3)
            .map(|m| {
                format!(
                    "{}: {}",
                    describe_candidate(m),
                    m.failure.as_deref().unwrap_or("fails")
                )
            })
            .collect();
        let help = if misses.is_empty() {
            "widen a hole (`?` searches the whole catalog) or relax a require".to_string()
        } else {
            format!("the nearest misses: {}", misses.join("; "))
        };
        diags.push(
            Diag::error(
                Code::SolveNoSolution,
                format!(
                    "none of the {} candidates satisfies every require and error-level rule",
                    solution.candidates
                ),
                Loc::Decl(key, decl.name.span),
            )
            .label("no solution")
            .help(help),
        );
        return None;
    };
    let figures = {
        let mut parts = Vec::new();
        if let Some(cost) = best.cost_per_hour {
            parts.push(format!("${cost:.2}/h"));
        }
        if let Some(rental) = &best.rental {
            parts.push(rental.clone());
        }
        if let Some(decode) = best.decode_tps {
            parts.push(format!("{decode:.1} tok/s"));
        }
        if let Some(memory) = &best.memory_per_gpu_display {
            parts.push(format!("{memory} per GPU"));
        }
        parts.join(", ")
    };
    let direction = if solution.maximize {
        "maximizes"
    } else {
        "minimizes"
    };
    for hole in holes {
        let name = &hole.name.name;
        let Some(value) = best.assignment.get(name) else {
            continue;
        };
        let mut chosen = Diag::new(
                Code::SolveChosen,
                Severity::Info,
                format!(
                    "solved: {name} = {value} ({figures}); of {} candidates it {direction} `{}` and meets every require",
                    solution.candidates, solution.objective
                ),
                Loc::Decl(key, hole.value.span),
            )
            .label(format!("{name} = {value}"))
            .help(format!(
                "pin it with `{name} = {value}`; `deployfit solve` lists the runners-up and the cheaper candidates that failed"
            ));
        // Pinning is a structured fix: the hole replaced by the value, written as source
        // (a value printed with digit grouping is not offered).
        if !value.contains([',', ' ']) {
            chosen.suggestions.push((
                format!("Pin `{name} = {value}`"),
                Loc::Decl(key, hole.value.span),
                value.clone(),
            ));
        }
        diags.push(chosen);
    }
    let mut choice = BTreeMap::new();
    for hole in decl
        .fields()
        .filter(|f| matches!(f.value.kind, ExprKind::Hole | ExprKind::OneOf(_)))
    {
        if let Ok(values) = hole_values(cx, resolved, hole)
            && let Some(value) = values
                .into_iter()
                .find(|v| Some(&v.display()) == best.assignment.get(&hole.name.name))
        {
            choice.insert(hole.name.name.clone(), value);
        }
    }
    Some(choice)
}

/// `deployfit solve`: the ranked solutions of one deployment (or every deployment with
/// holes) of a file.
pub fn solutions(
    db: &dyn Db,
    file: crate::db::SourceFile,
    top: usize,
) -> Vec<(String, Result<Solution, String>)> {
    let scope = crate::names::scope(db, file);
    db::decl_keys(db, file)
        .iter()
        .copied()
        .filter(|key| key.kind(db) == DeclKind::Deployment)
        .filter_map(|key| {
            let decl = db::decl(db, key)?;
            let has_holes = decl.fields().any(|f| {
                matches!(f.value.kind, ExprKind::Hole | ExprKind::OneOf(_))
                    || (f.name.name == "fleet"
                        && matches!(&f.value.kind, ExprKind::Name(n)
                            if Fleet::parse(n) == Some(Fleet::Mixed)))
            });
            if !has_holes {
                return None;
            }
            let mut diags = Vec::new();
            let cx = Cx {
                db,
                scope,
                key,
                decl: &decl,
            };
            let resolved =
                resolve(cx, &mut diags).filter(|_| crate::rules::statically_sound(cx, &mut diags));
            let Some(resolved) = resolved else {
                let name = decl.name.name.clone();
                return Some((
                    name.clone(),
                    Err(format!("`{name}` has errors; run `deployfit check`")),
                ));
            };
            if fleet::is_mixed(&resolved) {
                let planned = fleet::plan(cx, &resolved).map(|mixed| Solution {
                    deployment: decl.name.name.clone(),
                    objective: "cost_per_hour".to_string(),
                    maximize: false,
                    ranked: Vec::new(),
                    misses: Vec::new(),
                    candidates: mixed.options.len(),
                    evaluated: mixed.nodes,
                    mixed: Some(mixed),
                });
                return Some((
                    decl.name.name.clone(),
                    planned.map_err(|d| {
                        format!("{} [{}]; {}", d.message, d.code, d.help.unwrap_or_default())
                    }),
                ));
            }
            Some((
                decl.name.name.clone(),
                search(cx, &resolved, top).map_err(|d| d.message),
            ))
        })
        .collect()
}
