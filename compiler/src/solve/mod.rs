//! The solver: holes (`?`, `one_of [...]`) → the candidates → the cheapest (or best by
//! the deployment's `minimize`/`maximize`) assignment that satisfies every require and
//! every error-level rule, the runners-up, and the cheaper candidates that failed.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::candidate::{Mode, run};
use crate::db::{self, Db, DeclKey};
use crate::diagnostics::codes::Code;
use crate::diagnostics::{Diag, Loc, Severity};
use crate::eval::Value;
use crate::eval::deployment::{Cx, Resolved, resolve};
use crate::eval::entry::const_field;
use crate::eval::schema::{FieldTy, field_spec};
use crate::syntax::ast::{Decl, DeclKind, Entry as AstEntry, ExprKind, Field};
use crate::units::per_hour;

/// Counts `?` tries for tensor parallelism.
pub const COUNTS: [i128; 4] = [1, 2, 4, 8];
/// Replicas `?` tries, up to this many.
pub const MAX_REPLICAS: i128 = 16;
/// More candidates than this are refused (`deploy::solve::too_many_candidates`) before
/// anything is evaluated: each candidate is a full evaluation, so the search's time grows
/// with their number. Documented in docs/language.md (Holes).
pub const MAX_CANDIDATES: usize = 100_000;

/// One assignment of the holes and how it fared.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Candidate {
    /// Hole field → the value tried, as written in a .deploy file.
    pub assignment: BTreeMap<String, String>,
    pub feasible: bool,
    /// The objective's value in base units (bytes, seconds, dollars per second …), and as
    /// printed.
    pub objective: Option<f64>,
    pub objective_display: Option<String>,
    pub cost_per_hour: Option<f64>,
    pub decode_tps: Option<f64>,
    pub memory_per_gpu: Option<String>,
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
}

/// The values one hole can take.
fn hole_values<'db>(
    cx: Cx<'_, 'db>,
    resolved: &Resolved,
    field: &Field,
) -> Result<Vec<Value>, Box<Diag<'db>>> {
    let Cx { db, scope, key, .. } = cx;
    let name = field.name.name.as_str();
    let spec = field_spec(DeclKind::Deployment, name).ok_or_else(|| {
        Box::new(
            Diag::error(
                Code::SolveUnsupported,
                format!("`{name}` cannot be left open: it is not a deployment field"),
                Loc::Decl(key, field.value.span),
            )
            .label("not a deployment field")
            .help("holes fill deployment fields (`gpu = ?`, `quant = one_of [...]`); fix the field's name"),
        )
    })?;
    match &field.value.kind {
        ExprKind::OneOf(items) => items
            .iter()
            .map(|item| {
                let one = Field {
                    name: field.name.clone(),
                    value: item.clone(),
                    span: item.span,
                };
                const_field(scope, key, &one, spec)
            })
            .collect::<Result<Vec<_>, _>>(),
        _ => match (spec.ty, name) {
            (FieldTy::Ref(kind), _) if kind != DeclKind::Model => Ok(scope
                .names(kind)
                .map(|(entry, _)| Value::Ref(kind, entry.to_string()))
                .collect()),
            (_, "count") => {
                let heads = match resolved.fields.get("model") {
                    Some(Value::Ref(_, model)) => scope
                        .lookup(DeclKind::Model, model)
                        .and_then(|k| crate::eval::entry_of(db, k).number("heads")),
                    _ => None,
                };
                Ok(COUNTS
                    .iter()
                    .filter(|count| heads.is_none_or(|h| h as i128 % **count == 0))
                    .map(|count| {
                        Value::Q(crate::units::Quantity::new(
                            crate::units::Num::Int(*count),
                            crate::units::Dim::NONE,
                        ))
                    })
                    .collect())
            }
            (_, "replicas") => Ok((1..=MAX_REPLICAS)
                .map(|n| {
                    Value::Q(crate::units::Quantity::new(
                        crate::units::Num::Int(n),
                        crate::units::Dim::NONE,
                    ))
                })
                .collect()),
            _ => Err(Box::new(
                Diag::new(
                    Code::SolveUnsupported,
                    Severity::Error,
                    format!("`{name} = ?` has no catalog to search"),
                    Loc::Decl(key, field.value.span),
                )
                .label("cannot enumerate")
                .help(format!("list the values to try: `{name} = one_of [...]`")),
            )),
        },
    }
}

/// `deploy::solve::too_many_candidates`: the size of each hole's domain, the product,
/// the limit, and the hole whose narrowing helps most.
fn too_many_candidates<'db>(
    key: DeclKey<'db>,
    decl: &Decl,
    domains: &[(String, Vec<Value>)],
    total: usize,
) -> Diag<'db> {
    let factors: Vec<String> = domains
        .iter()
        .map(|(name, values)| format!("{name} {}", values.len()))
        .collect();
    let count = if total == usize::MAX {
        format!("more than {}", usize::MAX)
    } else {
        total.to_string()
    };
    let widest = domains
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
    Diag::error(
        Code::SolveTooManyCandidates,
        format!(
            "{count} candidates ({}); the limit is {MAX_CANDIDATES}",
            factors.join(" × ")
        ),
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
    let holes: Vec<&Field> = decl
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
    if total > MAX_CANDIDATES {
        return Err(Box::new(too_many_candidates(key, decl, &domains, total)));
    }
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

    // Every combination is a number below `total` (mixed radix, the first hole most
    // significant, so numeric order is the order of the combinations), decoded into one
    // index per hole into its values only when it is looked at: nothing proportional to
    // the product is built beyond one number per candidate.
    let count = if domains.iter().any(|(_, values)| values.is_empty()) {
        0
    } else {
        total
    };
    let decode = |mut number: usize| -> Vec<usize> {
        let mut combination = vec![0; domains.len()];
        for (slot, (_, values)) in combination.iter_mut().zip(&domains).rev() {
            *slot = number % values.len();
            number /= values.len();
        }
        combination
    };
    let value_of = |combination: &[usize], name: &str| -> Option<Value> {
        domains
            .iter()
            .zip(combination)
            .find(|((hole, _), _)| hole == name)
            .map(|((_, values), index)| values[*index].clone())
            .or_else(|| resolved.fields.get(name).cloned())
    };
    let assignment_of = |combination: &[usize]| -> BTreeMap<String, Value> {
        domains
            .iter()
            .zip(combination)
            .map(|((name, values), index)| (name.clone(), values[*index].clone()))
            .collect()
    };
    let full = |assignment: &BTreeMap<String, Value>| {
        let mut fields = resolved.fields.clone();
        fields.extend(assignment.clone());
        fields
    };
    // Weight formats that do not run on the engine are not candidates at all.
    let quant_entry = |name: &str| {
        scope
            .lookup(DeclKind::Quant, name)
            .map(|k| crate::eval::entry_of(db, k))
    };
    let mut combinations: Vec<usize> = (0..count)
        .filter(|number| {
            let c = decode(*number);
            match (value_of(&c, "quant"), value_of(&c, "engine")) {
                (Some(Value::Ref(_, quant)), Some(Value::Ref(_, engine))) => {
                    // By the engine's entry: an `extends` copy runs what its parent runs.
                    let engine_entry = scope
                        .lookup(DeclKind::Engine, &engine)
                        .map(|k| crate::eval::entry_of(db, k));
                    quant_entry(&quant).is_none_or(|entry| match engine_entry {
                        Some(engine_entry) => entry.runs_on_engine(&engine, engine_entry),
                        None => entry.runs_on(&engine),
                    })
                }
                _ => true,
            }
        })
        .collect();
    let bound = |combination: &[usize]| -> f64 {
        let price = match value_of(combination, "gpu") {
            Some(Value::Ref(_, gpu)) => scope
                .lookup(DeclKind::Gpu, &gpu)
                .and_then(|k| crate::eval::estimate::hourly_price(crate::eval::entry_of(db, k))),
            _ => None,
        };
        let number = |name: &str| value_of(combination, name).as_ref().and_then(number_of);
        price
            .map(|p| p * number("count").unwrap_or(1.0) * number("replicas").unwrap_or(1.0))
            .unwrap_or(f64::INFINITY)
    };
    // With the default objective the search goes from the cheapest up and stops once the
    // best are known: an hourly price only grows with the price, the count and replicas.
    let mut bounds: Vec<f64> = Vec::new();
    if default_objective {
        let mut keyed: Vec<(f64, usize)> = combinations
            .into_iter()
            .map(|number| (bound(&decode(number)), number))
            .collect();
        keyed.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        bounds = keyed.iter().map(|(b, _)| *b).collect();
        combinations = keyed.into_iter().map(|(_, c)| c).collect();
    }

    // One candidate, evaluated in `mode`: the feasibility pass renders no message
    // (`Mode::Probe`); the misses that are reported are evaluated again with their
    // messages (`Mode::Search`), so a long message costs its length once per miss shown,
    // not once per candidate.
    let evaluate = |number: usize, mode: Mode| -> Candidate {
        let combination = &decode(number);
        let assignment = &assignment_of(combination);
        let mut scratch = Vec::new();
        let fields = Resolved {
            fields: full(assignment),
            workload: resolved.workload.clone(),
        };
        let result = run(cx, fields, mode, &mut scratch);
        let failure = scratch
            .iter()
            .find(|d| d.severity == Severity::Error)
            .map(|d| format!("{} [{}]", d.message, d.code));
        Candidate {
            assignment: assignment
                .iter()
                .map(|(k, v)| (k.clone(), v.display()))
                .collect(),
            feasible: failure.is_none() && result.objective.is_some(),
            objective: result.objective.map(|q| q.value()),
            objective_display: result.objective.map(|q| q.display()),
            cost_per_hour: result.figures.cost_per_hour.clone().ok().map(per_hour),
            decode_tps: result.figures.decode_tps.clone().ok(),
            memory_per_gpu: result
                .figures
                .get("memory_per_gpu")
                .and_then(Result::ok)
                .map(|v| v.display()),
            failure: failure.or_else(|| {
                result
                    .objective
                    .is_none()
                    .then(|| format!("`{objective_text}` cannot be computed for it"))
            }),
        }
    };

    let mut feasible: Vec<Candidate> = Vec::new();
    // Each failed candidate with its number, to evaluate it again if it is reported.
    let mut failed: Vec<(Candidate, usize)> = Vec::new();
    let mut evaluated = 0;
    // The largest objective among the feasible candidates so far, kept as they come in
    // (rescanning them for every candidate made a long search quadratic).
    let mut worst = f64::NEG_INFINITY;
    for (position, number) in combinations.iter().enumerate() {
        if default_objective && feasible.len() >= top && bounds[position] > worst {
            break;
        }
        evaluated += 1;
        let candidate = evaluate(*number, Mode::Probe);
        if candidate.feasible {
            if let Some(objective) = candidate.objective {
                worst = worst.max(objective);
            }
            feasible.push(candidate);
        } else {
            failed.push((candidate, *number));
        }
    }
    let better = |a: &Candidate, b: &Candidate| {
        let (x, y) = (
            a.objective.unwrap_or(f64::NAN),
            b.objective.unwrap_or(f64::NAN),
        );
        let by_objective = if maximize {
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
    };
    feasible.sort_by(better);
    feasible.truncate(top);
    // The misses worth reporting: the candidates that would have ranked above the best,
    // nearest to it first.
    let mut misses: Vec<(Candidate, usize)> = match feasible.first() {
        Some(best) => failed
            .into_iter()
            .filter(|(c, _)| c.objective.is_some() && better(c, best) == std::cmp::Ordering::Less)
            .collect(),
        None => failed,
    };
    // With a best, the nearest misses are those ranked just above it; without one, the
    // best-ranked candidates.
    if feasible.is_empty() {
        misses.sort_by(|(a, _), (b, _)| better(a, b));
    } else {
        misses.sort_by(|(a, _), (b, _)| better(b, a));
    }
    misses.truncate(top.max(3));
    let misses: Vec<Candidate> = misses
        .into_iter()
        .map(|(candidate, number)| Candidate {
            failure: evaluate(number, Mode::Search).failure,
            ..candidate
        })
        .collect();
    Ok(Solution {
        deployment: decl.name.name.clone(),
        objective: objective_text,
        maximize,
        ranked: feasible,
        misses,
        candidates: total,
        evaluated,
    })
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
        if let Some(decode) = best.decode_tps {
            parts.push(format!("{decode:.1} tok/s"));
        }
        if let Some(memory) = &best.memory_per_gpu {
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
            let has_holes = decl
                .fields()
                .any(|f| matches!(f.value.kind, ExprKind::Hole | ExprKind::OneOf(_)));
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
            Some((
                decl.name.name.clone(),
                search(cx, &resolved, top).map_err(|d| d.message),
            ))
        })
        .collect()
}
