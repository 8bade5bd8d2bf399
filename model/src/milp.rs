//! The integer program behind `fleet = mixed` (docs/cost.md, "Mixed fleets"), after
//! Mélange (Griggs et al. 2024): buy whole units (a replica, or an instance of replicas)
//! of each GPU type so that every request class's rate is served, at the least hourly
//! price.
//!
//! ```text
//! minimise    Σ_u price_u · n_u                    n_u ∈ {0, 1, 2, …}
//! subject to  Σ_u cap_{u,k} · y_{u,k} ≥ rate_k     for every class k
//!             Σ_k y_{u,k} ≤ n_u                    for every unit type u
//!             y_{u,k} ≥ 0
//! ```
//!
//! `cap_{u,k}` is the request rate one unit of `u` sustains serving only class `k`, and
//! `y_{u,k}` the units' worth of time given to `k` (Mélange's "fraction of a GPU's
//! capacity"). Unit types dominated by another (no cheaper, no less capacity for any
//! class) are dropped first, since an optimal plan never needs them, and each `n_u` is
//! bounded by what serving every class alone takes; the program then goes to microlp, an
//! exact branch-and-bound MILP solver in pure Rust, seeded with the best single-type plan.
//! It replaced a hand-written dense simplex after a measured comparison (docs/cost.md,
//! "The fleet program's solver").

/// The input: per unit type its price and capacity per class; per class its rate.
#[derive(Clone, Debug)]
pub struct Problem {
    /// $/h of one unit of each type.
    pub prices: Vec<f64>,
    /// `caps[u][k]`: req/s one unit of type `u` sustains on class `k` alone; 0 when it
    /// cannot serve the class.
    pub caps: Vec<Vec<f64>>,
    /// req/s of each class.
    pub rates: Vec<f64>,
}

/// An integral plan: units of each type, and the rate of each class each type serves.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    pub units: Vec<u64>,
    /// `served[u][k]`: req/s of class `k` on type `u` (each class's rates sum to its rate).
    pub served: Vec<Vec<f64>>,
    pub cost: f64,
}

/// The solver's answer.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The cheapest plan found; `None` when some class no unit type serves.
    pub plan: Option<Plan>,
    /// Whether the search finished: `plan` is then optimal.
    pub optimal: bool,
    /// Branch-and-bound nodes solved.
    pub nodes: usize,
    /// The lowest cost any plan can have (the root relaxation, or the plan's when optimal).
    pub bound: f64,
}

/// Branch-and-bound nodes solved before the search stops with its best plan so far
/// (`optimal = false`). Each node is one small linear program.
pub const MAX_NODES: usize = 20_000;

/// Nodes the solver runs between two calls of the caller's `between_nodes` (salsa's
/// cancellation check): small enough that an edit stops a long search within a few
/// milliseconds, large enough that resuming costs nothing measurable.
const NODES_PER_SLICE: u64 = 64;

/// The plan `units` with the class rates each type serves, from a relaxation's `y`
/// (scaled so that each class's rates sum to its rate).
fn plan_of(p: &Problem, units: Vec<u64>, ys: &[Vec<f64>]) -> Plan {
    let classes = p.rates.len();
    let mut served: Vec<Vec<f64>> = ys
        .iter()
        .enumerate()
        .map(|(u, y)| (0..classes).map(|k| y[k] * p.caps[u][k]).collect())
        .collect();
    for k in 0..classes {
        let total: f64 = served.iter().map(|s| s[k]).sum();
        if total > 0.0 {
            for s in served.iter_mut() {
                s[k] *= p.rates[k] / total;
            }
        }
    }
    let cost = units
        .iter()
        .zip(&p.prices)
        .map(|(n, price)| *n as f64 * price)
        .sum();
    Plan {
        units,
        served,
        cost,
    }
}

/// Units of type `u` that serve every class alone, fractions shared: `ceil(Σ_k rate_k /
/// cap_k)`; `None` when it cannot serve some class.
pub fn single_type(p: &Problem, u: usize) -> Option<u64> {
    let mut need = 0.0;
    for (k, rate) in p.rates.iter().enumerate() {
        let cap = p.caps[u][k];
        if *rate > 0.0 {
            if cap <= 0.0 {
                return None;
            }
            need += rate / cap;
        }
    }
    Some(ceil_units(need))
}

/// `ceil`, forgiving the rounding of a sum that is a positive integer.
fn ceil_units(x: f64) -> u64 {
    let r = x.round();
    // Any positive need takes a unit: only a sum within rounding of 1, 2, … is forgiven.
    if r >= 1.0 && (x - r).abs() <= 1e-9 * x.abs().max(1.0) {
        r.max(0.0) as u64
    } else {
        x.ceil().max(0.0) as u64
    }
}

/// The unit types no other type dominates (no cheaper and at least the capacity for
/// every class; of equal ones, the first), in their order.
pub fn undominated(p: &Problem) -> Vec<usize> {
    let units = p.prices.len();
    let dominates = |v: usize, u: usize| {
        p.prices[v] <= p.prices[u] && (0..p.rates.len()).all(|k| p.caps[v][k] >= p.caps[u][k])
    };
    (0..units)
        .filter(|&u| {
            p.caps[u].iter().any(|c| *c > 0.0)
                && !(0..units).any(|v| {
                    v != u
                        && dominates(v, u)
                        && (!dominates(u, v) || v < u)
                        && p.caps[v].iter().any(|c| *c > 0.0)
                })
        })
        .collect()
}

/// The programs solved so far, kept for benches/milp-compare (feature `milp-trace`).
#[cfg(feature = "milp-trace")]
pub mod trace {
    use crate::milp::Problem;
    use std::sync::Mutex;

    static SEEN: Mutex<Vec<Problem>> = Mutex::new(Vec::new());

    pub(super) fn record(p: &Problem) {
        SEEN.lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(p.clone());
    }

    /// Takes the programs recorded since the last call.
    pub fn take() -> Vec<Problem> {
        std::mem::take(&mut *SEEN.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// Solves the program exactly (or, past [`MAX_NODES`], returns the best plan found with
/// `optimal = false`).
pub fn solve(full: &Problem) -> Outcome {
    solve_with(full, &|| {})
}

/// [`solve`], calling `between_nodes` between slices of branch-and-bound nodes: the fleet
/// passes salsa's cancellation check, which unwinds when a newer revision waits.
///
/// The program goes to microlp (pure Rust, exact branch-and-bound over a bounded dual
/// simplex) after two cheap reductions it does not make itself: dominated unit types are
/// dropped and each count is bounded by what serving every class alone needs. docs/cost.md
/// ("The fleet program's solver") has the comparison with the hand-written solver this
/// replaced: the same optimal cost on every program, 14× faster at the median.
pub fn solve_with(full: &Problem, between_nodes: &dyn Fn()) -> Outcome {
    #[cfg(feature = "milp-trace")]
    trace::record(full);
    let keep = undominated(full);
    let p = Problem {
        prices: keep.iter().map(|&u| full.prices[u]).collect(),
        caps: keep.iter().map(|&u| full.caps[u].clone()).collect(),
        rates: full.rates.clone(),
    };
    let expand = |plan: Plan| -> Plan {
        let mut units = vec![0; full.prices.len()];
        let mut served = vec![vec![0.0; full.rates.len()]; full.prices.len()];
        for (i, &u) in keep.iter().enumerate() {
            units[u] = plan.units[i];
            served[u] = plan.served[i].clone();
        }
        Plan {
            units,
            served,
            cost: plan.cost,
        }
    };
    // A class no unit type serves: no plan.
    if (0..p.rates.len()).any(|k| p.rates[k] > 0.0 && p.caps.iter().all(|c| c[k] <= 0.0)) {
        return Outcome {
            plan: None,
            optimal: true,
            nodes: 0,
            bound: f64::INFINITY,
        };
    }
    // The best single type: the answer when the program is trivial or the solver fails,
    // and a first incumbent for it.
    let incumbent = best_single_type(&p);
    let (plan, optimal, nodes, bound) = match branch_and_bound(&p, &incumbent, between_nodes) {
        Some(found) => found,
        None => {
            let cost = incumbent.as_ref().map_or(f64::INFINITY, |b| b.cost);
            (incumbent, false, 0, cost)
        }
    };
    Outcome {
        plan: plan.map(expand),
        optimal,
        nodes,
        bound,
    }
}

/// The cheapest plan of one unit type alone.
fn best_single_type(p: &Problem) -> Option<Plan> {
    let units = p.prices.len();
    let mut best: Option<Plan> = None;
    for u in 0..units {
        if let Some(n) = single_type(p, u) {
            let cost = n as f64 * p.prices[u];
            if best.as_ref().is_none_or(|b| cost < b.cost) {
                let mut counts = vec![0; units];
                counts[u] = n;
                let mut ys = vec![vec![0.0; p.rates.len()]; units];
                ys[u] = p
                    .rates
                    .iter()
                    .zip(&p.caps[u])
                    .map(|(r, c)| if *c > 0.0 { r / c } else { 0.0 })
                    .collect();
                best = Some(plan_of(p, counts, &ys));
            }
        }
    }
    best
}

/// The program solved by microlp: `(plan, optimal, nodes, bound)`, or `None` when it
/// reports an error (then the caller keeps the single-type plan, marked not optimal).
fn branch_and_bound(
    p: &Problem,
    incumbent: &Option<Plan>,
    between_nodes: &dyn Fn(),
) -> Option<(Option<Plan>, bool, usize, f64)> {
    use microlp::{ComparisonOp, OptimizationDirection, SolveOptions, SolveOutcome};
    let units = p.prices.len();
    let classes = p.rates.len();
    let mut program = microlp::Problem::new(OptimizationDirection::Minimize);
    // More of a type than serving every class it can alone is never needed.
    let counts: Vec<microlp::Variable> = (0..units)
        .map(|u| {
            let hi = ceil_units(
                (0..classes)
                    .filter(|&k| p.caps[u][k] > 0.0)
                    .map(|k| p.rates[k] / p.caps[u][k])
                    .sum(),
            );
            program.add_integer_var(p.prices[u], (0, i32::try_from(hi).unwrap_or(i32::MAX)))
        })
        .collect();
    // `y[u][k]`: units' worth of time of type `u` given to class `k` (only where it can
    // serve `k`).
    let time: Vec<Vec<Option<microlp::Variable>>> = (0..units)
        .map(|u| {
            (0..classes)
                .map(|k| (p.caps[u][k] > 0.0).then(|| program.add_var(0.0, (0.0, f64::INFINITY))))
                .collect()
        })
        .collect();
    for (k, rate) in p.rates.iter().enumerate() {
        let served: Vec<(microlp::Variable, f64)> = time
            .iter()
            .zip(&p.caps)
            .filter_map(|(row, caps)| row[k].map(|y| (y, caps[k])))
            .collect();
        program.add_constraint(served.as_slice(), ComparisonOp::Ge, *rate);
    }
    for (row, count) in time.iter().zip(&counts) {
        let mut busy: Vec<(microlp::Variable, f64)> =
            row.iter().flatten().map(|y| (*y, 1.0)).collect();
        busy.push((*count, -1.0));
        program.add_constraint(busy.as_slice(), ComparisonOp::Le, 0.0);
    }
    let mut options = SolveOptions::default();
    options.node_limit = Some(NODES_PER_SLICE);
    options.warm_start = incumbent.as_ref().map(|plan| {
        let mut hint: Vec<(microlp::Variable, f64)> = counts
            .iter()
            .zip(&plan.units)
            .map(|(v, n)| (*v, *n as f64))
            .collect();
        for ((row, served), caps) in time.iter().zip(&plan.served).zip(&p.caps) {
            for (k, y) in row.iter().enumerate() {
                if let Some(y) = y {
                    hint.push((*y, served[k] / caps[k]));
                }
            }
        }
        hint
    });
    between_nodes();
    let mut outcome = program.solve_with(options).ok()?;
    loop {
        let nodes = outcome.stats().nodes_solved as usize;
        if outcome.is_optimal() || nodes >= MAX_NODES {
            break;
        }
        between_nodes();
        outcome = outcome.resume().ok()?;
    }
    let stats = outcome.stats();
    let optimal = outcome.is_optimal();
    let SolveOutcome::Solution(solution) = outcome else {
        // The node limit ran out before any plan: the single type stands.
        let bound = stats.best_bound.unwrap_or(0.0);
        return Some((incumbent.clone(), false, stats.nodes_solved as usize, bound));
    };
    let units_of: Vec<u64> = counts
        .iter()
        .map(|v| solution.var_value_raw(*v).round().max(0.0) as u64)
        .collect();
    // Time on a type bought zero times is rounding noise: the rescaling in `plan_of`
    // hands its share to the others (or `plan_holds` refuses the plan).
    let ys: Vec<Vec<f64>> = time
        .iter()
        .zip(&units_of)
        .map(|(row, n)| {
            row.iter()
                .map(|y| match y {
                    Some(y) if *n > 0 => solution.var_value_raw(*y).max(0.0),
                    _ => 0.0,
                })
                .collect()
        })
        .collect();
    let plan = plan_of(p, units_of, &ys);
    // A plan that does not hold (a numerical slip) or costs more than the single type:
    // keep the single type.
    let holds = plan_holds(p, &plan);
    let better = incumbent
        .as_ref()
        .is_none_or(|b| plan.cost <= b.cost * (1.0 + 1e-9));
    let plan = if holds && better {
        Some(plan)
    } else {
        incumbent.clone()
    };
    let cost = plan.as_ref().map_or(f64::INFINITY, |b| b.cost);
    let optimal = optimal && holds && better;
    let bound = if optimal {
        cost
    } else {
        stats.best_bound.unwrap_or(0.0).min(cost)
    };
    Some((plan, optimal, stats.nodes_solved as usize, bound))
}

/// Whether a plan serves every class within every unit's time.
fn plan_holds(p: &Problem, plan: &Plan) -> bool {
    let classes_ok = (0..p.rates.len()).all(|k| {
        let served: f64 = plan.served.iter().map(|s| s[k]).sum();
        served >= p.rates[k] * (1.0 - 1e-9)
    });
    let units_ok = (0..p.prices.len()).all(|u| {
        let busy: f64 = (0..p.rates.len())
            .filter(|&k| p.caps[u][k] > 0.0)
            .map(|k| plan.served[u][k] / p.caps[u][k])
            .sum();
        // Any share of a class needs a whole unit: a tolerance never buys time on none.
        (busy == 0.0 || plan.units[u] >= 1) && busy <= plan.units[u] as f64 * (1.0 + 1e-6) + 1e-9
    });
    classes_ok && units_ok
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every plan with at most `max` units of each type, checked for feasibility by the
    /// two-class greedy: class 0 goes first to the types that give up the least class-1
    /// capacity for it.
    fn brute_force_two_classes(p: &Problem, max: u64) -> f64 {
        let units = p.prices.len();
        let mut best = f64::INFINITY;
        let mut counts = vec![0u64; units];
        loop {
            let mut order: Vec<usize> = (0..units).collect();
            order.sort_by(|&a, &b| {
                let ra = p.caps[a][0] / p.caps[a][1].max(1e-300);
                let rb = p.caps[b][0] / p.caps[b][1].max(1e-300);
                rb.total_cmp(&ra)
            });
            let mut need0 = p.rates[0];
            let mut cap1 = 0.0;
            for &u in &order {
                let mut time = counts[u] as f64;
                if need0 > 0.0 && p.caps[u][0] > 0.0 {
                    let used = (need0 / p.caps[u][0]).min(time);
                    need0 -= used * p.caps[u][0];
                    time -= used;
                }
                cap1 += time * p.caps[u][1];
            }
            if need0 <= 1e-9 && cap1 >= p.rates[1] - 1e-9 {
                let cost: f64 = (0..units).map(|u| counts[u] as f64 * p.prices[u]).sum();
                best = best.min(cost);
            }
            let mut i = 0;
            loop {
                if i == units {
                    return best;
                }
                counts[i] += 1;
                if counts[i] <= max {
                    break;
                }
                counts[i] = 0;
                i += 1;
            }
        }
    }

    #[test]
    fn a_mix_beats_one_type_and_matches_brute_force() {
        // A small card good at short requests, a big one at long ones.
        let p = Problem {
            prices: vec![1.0, 4.0],
            caps: vec![vec![3.0, 0.2], vec![8.0, 2.0]],
            rates: vec![5.0, 1.5],
        };
        let outcome = solve(&p);
        assert!(outcome.optimal);
        let plan = outcome.plan.unwrap();
        assert!(
            (plan.cost - brute_force_two_classes(&p, 12)).abs() < 1e-9,
            "{plan:?}"
        );
        let single = (0..2)
            .filter_map(|u| single_type(&p, u).map(|n| n as f64 * p.prices[u]))
            .fold(f64::INFINITY, f64::min);
        assert!(plan.cost < single, "{plan:?} vs {single}");
        for k in 0..2 {
            let total: f64 = plan.served.iter().map(|s| s[k]).sum();
            assert!((total - p.rates[k]).abs() < 1e-9);
        }
    }

    #[test]
    fn random_programs_match_brute_force() {
        // A fixed linear congruential sequence: reproducible programs.
        let mut state = 12345u64;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 33) % 1000) as f64 / 100.0
        };
        for _ in 0..40 {
            let p = Problem {
                prices: (0..3).map(|_| 0.5 + next()).collect(),
                caps: (0..3)
                    .map(|_| vec![0.1 + next(), 0.1 + next() / 3.0])
                    .collect(),
                rates: vec![0.5 + next(), 0.5 + next() / 2.0],
            };
            let outcome = solve(&p);
            assert!(outcome.optimal);
            let plan = outcome.plan.unwrap();
            let brute = brute_force_two_classes(&p, 40);
            assert!(
                (plan.cost - brute).abs() < 1e-6,
                "{p:?}: {plan:?} vs {brute}"
            );
        }
    }

    #[test]
    fn a_class_nothing_serves_has_no_plan() {
        let p = Problem {
            prices: vec![1.0],
            caps: vec![vec![1.0, 0.0]],
            rates: vec![1.0, 1.0],
        };
        assert!(solve(&p).plan.is_none());
    }

    #[test]
    fn the_cancellation_check_runs_during_the_search() {
        let calls = std::cell::Cell::new(0);
        let p = Problem {
            prices: vec![1.0, 4.0, 2.5],
            caps: vec![vec![3.0, 0.2], vec![8.0, 2.0], vec![4.0, 1.0]],
            rates: vec![5.0, 1.5],
        };
        let outcome = solve_with(&p, &|| calls.set(calls.get() + 1));
        assert!(outcome.optimal && outcome.plan.is_some());
        assert!(calls.get() >= 1);
    }

    #[test]
    fn extreme_programs_get_an_answer_without_panicking() {
        for (rate, cap, price) in [
            (1e12, 1e-9, 1e-6),
            (1e-12, 1e9, 1e6),
            (1.0, f64::MIN_POSITIVE, 1.0),
            (3e9, 1.0, 0.5),
        ] {
            let p = Problem {
                prices: vec![price, price * 2.0],
                caps: vec![vec![cap, cap], vec![cap * 3.0, cap]],
                rates: vec![rate, rate],
            };
            let outcome = solve(&p);
            let plan = outcome.plan.expect("a plan: every class is served");
            assert!(plan.cost.is_finite() && plan.cost > 0.0, "{plan:?}");
        }
    }

    #[test]
    fn dominated_types_are_dropped() {
        let p = Problem {
            prices: vec![2.0, 1.0, 1.0],
            caps: vec![vec![1.0, 1.0], vec![2.0, 1.0], vec![2.0, 1.0]],
            rates: vec![1.0, 1.0],
        };
        assert_eq!(undominated(&p), vec![1]);
    }
}
