//! The hand-written fleet solver that model/src/milp.rs replaced (git: the file
//! as of commit 8d2c786), kept here verbatim but for this header and the shared types so that the comparison
//! in docs/cost.md can be rerun. It reuses the product's `Problem`, `Plan` and `Outcome`.
#![allow(dead_code)]

use deployfit_compiler::solve::milp::{Outcome, Plan, Problem, single_type, undominated};

/// Branch-and-bound nodes solved before the search stops with its best plan so far
/// (`optimal = false`). Each node is one small linear program.
pub const MAX_NODES: usize = 20_000;

const EPS: f64 = 1e-9;

/// Pivots in a row that leave the objective where it was (a zero ratio) before the
/// simplex gives up Dantzig's rule, which can cycle on such degenerate vertices, for
/// Bland's, which cannot. Fleets' programs are degenerate at their `n_u ≤ hi_u` rows;
/// 50 lets Dantzig's rule take the short path through the usual few degenerate steps.
const DEGENERATE_PIVOTS: usize = 50;

/// The row of a linear program: `coeffs · z (≤ | ≥) rhs`.
#[derive(Clone, Copy, PartialEq)]
enum Sense {
    Le,
    Ge,
}

struct Row {
    coeffs: Vec<(usize, f64)>,
    sense: Sense,
    rhs: f64,
}

/// `min c·z` subject to `rows`, `z ≥ 0`: the optimal `z`, or `None` when infeasible (or
/// unbounded, which the fleet's programs never are: every cost is positive).
fn simplex(cost: &[f64], rows: &[Row]) -> Option<Vec<f64>> {
    let n = cost.len();
    let m = rows.len();
    // Columns: the n variables, one slack or surplus per row, one artificial per ≥ row
    // (a ≤ row with rhs ≥ 0 starts with its slack in the basis).
    let mut artificial_of = vec![None; m];
    let mut artificials = 0;
    let normalised: Vec<Row> = rows
        .iter()
        .map(|row| {
            if row.rhs < 0.0 {
                Row {
                    coeffs: row.coeffs.iter().map(|&(j, a)| (j, -a)).collect(),
                    sense: if row.sense == Sense::Le {
                        Sense::Ge
                    } else {
                        Sense::Le
                    },
                    rhs: -row.rhs,
                }
            } else {
                Row {
                    coeffs: row.coeffs.clone(),
                    sense: row.sense,
                    rhs: row.rhs,
                }
            }
        })
        .collect();
    for (i, row) in normalised.iter().enumerate() {
        if row.sense == Sense::Ge {
            artificial_of[i] = Some(n + m + artificials);
            artificials += 1;
        }
    }
    let width = n + m + artificials;
    // The tableau: m constraint rows then the objective row, each `width + 1` wide (the
    // last column is the right-hand side).
    let stride = width + 1;
    let mut t = vec![0.0f64; (m + 1) * stride];
    let mut basis = vec![0usize; m];
    for (i, row) in normalised.iter().enumerate() {
        let r = i * stride;
        for &(j, a) in &row.coeffs {
            t[r + j] += a;
        }
        match row.sense {
            Sense::Le => {
                t[r + n + i] = 1.0;
                basis[i] = n + i;
            }
            Sense::Ge => {
                t[r + n + i] = -1.0;
                let a = artificial_of[i].expect("every ≥ row has an artificial");
                t[r + a] = 1.0;
                basis[i] = a;
            }
        }
        t[r + width] = row.rhs;
    }
    let obj = m * stride;
    let nonzero = std::cell::RefCell::new(Vec::<usize>::with_capacity(stride));
    let pivot = |t: &mut Vec<f64>, basis: &mut Vec<usize>, row: usize, col: usize| {
        let r = row * stride;
        let p = t[r + col];
        for j in 0..stride {
            t[r + j] /= p;
        }
        // The pivot row's nonzero columns, once: the tableau is sparse (each `y` column
        // meets two rows), and the elimination touches only these.
        let mut nonzero = nonzero.borrow_mut();
        nonzero.clear();
        nonzero.extend((0..stride).filter(|&j| t[r + j] != 0.0));
        for i in 0..=m {
            if i == row {
                continue;
            }
            let f = t[i * stride + col];
            if f.abs() > 0.0 {
                for &j in nonzero.iter() {
                    t[i * stride + j] -= f * t[r + j];
                }
            }
        }
        basis[row] = col;
    };
    // Runs the simplex on the objective row as it stands (reduced costs, the negated
    // objective value in the last column) over the columns `allowed` admits.
    let run = |t: &mut Vec<f64>, basis: &mut Vec<usize>, allowed: &dyn Fn(usize) -> bool| -> bool {
        // Dantzig's rule (the most improving column) while pivots make progress; after
        // [`DEGENERATE_PIVOTS`] pivots in a row that do not move the objective, Bland's
        // rule (the lowest-index improving column, the lowest-index basic variable among
        // the tied ratios) for the rest of the run. Bland's rule cannot cycle, so this
        // terminates.
        let mut degenerate = 0usize;
        loop {
            let entering = if degenerate < DEGENERATE_PIVOTS {
                (0..width)
                    .filter(|&j| allowed(j) && t[obj + j] < -EPS)
                    .min_by(|&a, &b| t[obj + a].total_cmp(&t[obj + b]).then(a.cmp(&b)))
            } else {
                (0..width).find(|&j| allowed(j) && t[obj + j] < -EPS)
            };
            let Some(col) = entering else {
                return true;
            };
            let mut best: Option<(f64, usize, usize)> = None;
            for i in 0..m {
                let a = t[i * stride + col];
                if a > EPS {
                    let ratio = t[i * stride + width] / a;
                    let better = match best {
                        None => true,
                        Some((r, _, b)) => {
                            ratio < r - EPS || ((ratio - r).abs() <= EPS && basis[i] < b)
                        }
                    };
                    if better {
                        best = Some((ratio, i, basis[i]));
                    }
                }
            }
            let Some((ratio, row, _)) = best else {
                return false; // unbounded
            };
            if ratio <= EPS {
                degenerate += 1;
            } else if degenerate < DEGENERATE_PIVOTS {
                degenerate = 0;
            }
            pivot(t, basis, row, col);
        }
    };
    // Phase 1: minimise the artificials' sum.
    if artificials > 0 {
        for j in n + m..width {
            t[obj + j] = 1.0;
        }
        for i in 0..m {
            if basis[i] >= n + m {
                for j in 0..stride {
                    t[obj + j] -= t[i * stride + j];
                }
            }
        }
        if !run(&mut t, &mut basis, &|_| true) {
            return None;
        }
        let scale = normalised
            .iter()
            .map(|row| row.rhs.abs())
            .fold(1.0f64, f64::max);
        if -t[obj + width] > 1e-7 * scale {
            return None;
        }
        // Artificials still basic (at zero) are pivoted out where a real column can
        // take their place; a row where none can is redundant and stays at zero.
        for i in 0..m {
            if basis[i] >= n + m
                && let Some(col) = (0..n + m).find(|&j| t[i * stride + j].abs() > EPS)
            {
                pivot(&mut t, &mut basis, i, col);
            }
        }
    }
    // Phase 2: the real objective, artificials barred.
    for j in 0..stride {
        t[obj + j] = 0.0;
    }
    for (j, c) in cost.iter().enumerate() {
        t[obj + j] = *c;
    }
    for i in 0..m {
        let b = basis[i];
        let c = if b < n { cost[b] } else { 0.0 };
        if c != 0.0 {
            for j in 0..stride {
                t[obj + j] -= c * t[i * stride + j];
            }
        }
    }
    if !run(&mut t, &mut basis, &|j| j < n + m) {
        return None;
    }
    let mut z = vec![0.0; n];
    for i in 0..m {
        if basis[i] < n {
            z[basis[i]] = t[i * stride + width].max(0.0);
        }
    }
    Some(z)
}

/// The relaxation at one node: `lo ≤ n ≤ hi`. Returns `(cost, n, y)`.
fn relaxation(p: &Problem, lo: &[u64], hi: &[u64]) -> Option<(f64, Vec<f64>, Vec<Vec<f64>>)> {
    let units = p.prices.len();
    let classes = p.rates.len();
    // Variables: n_u (0..units), then y_{u,k} at units + u·classes + k.
    let y = |u: usize, k: usize| units + u * classes + k;
    let mut cost = vec![0.0; units + units * classes];
    cost[..units].copy_from_slice(&p.prices);
    let mut rows = Vec::new();
    for k in 0..classes {
        rows.push(Row {
            coeffs: (0..units)
                .filter(|&u| p.caps[u][k] > 0.0)
                .map(|u| (y(u, k), p.caps[u][k]))
                .collect(),
            sense: Sense::Ge,
            rhs: p.rates[k],
        });
    }
    for u in 0..units {
        let mut coeffs: Vec<(usize, f64)> = (0..classes)
            .filter(|&k| p.caps[u][k] > 0.0)
            .map(|k| (y(u, k), 1.0))
            .collect();
        coeffs.push((u, -1.0));
        rows.push(Row {
            coeffs,
            sense: Sense::Le,
            rhs: 0.0,
        });
        rows.push(Row {
            coeffs: vec![(u, 1.0)],
            sense: Sense::Le,
            rhs: hi[u] as f64,
        });
        if lo[u] > 0 {
            rows.push(Row {
                coeffs: vec![(u, 1.0)],
                sense: Sense::Ge,
                rhs: lo[u] as f64,
            });
        }
    }
    let z = simplex(&cost, &rows)?;
    let value: f64 = (0..units).map(|u| p.prices[u] * z[u]).sum();
    let n = z[..units].to_vec();
    let ys = (0..units)
        .map(|u| (0..classes).map(|k| z[y(u, k)]).collect())
        .collect();
    Some((value, n, ys))
}

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

/// `ceil`, forgiving the rounding of a sum that is an integer.
fn ceil_units(x: f64) -> u64 {
    let r = x.round();
    if (x - r).abs() <= 1e-9 * x.abs().max(1.0) {
        r.max(0.0) as u64
    } else {
        x.ceil().max(0.0) as u64
    }
}

/// Solves the program exactly (or, past [`MAX_NODES`], returns the best plan found with
/// `optimal = false`).
pub fn solve(full: &Problem) -> Outcome {
    solve_with(full, &|| {})
}

/// [`solve`], calling `between_nodes` before each branch-and-bound node: the fleet passes
/// salsa's cancellation check, which unwinds when a newer revision waits.
pub fn solve_with(full: &Problem, between_nodes: &dyn Fn()) -> Outcome {
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
    let infeasible = Outcome {
        plan: None,
        optimal: true,
        nodes: 0,
        bound: f64::INFINITY,
    };
    // A class no unit type serves: no plan.
    if (0..p.rates.len()).any(|k| p.rates[k] > 0.0 && p.caps.iter().all(|c| c[k] <= 0.0)) {
        return infeasible;
    }
    let units = p.prices.len();
    // More of a type than serving every class it can alone is never needed.
    let hi: Vec<u64> = (0..units)
        .map(|u| {
            ceil_units(
                (0..p.rates.len())
                    .filter(|&k| p.caps[u][k] > 0.0)
                    .map(|k| p.rates[k] / p.caps[u][k])
                    .sum(),
            )
        })
        .collect();
    let mut best: Option<Plan> = None;
    // The best single type is a first incumbent.
    for u in 0..units {
        if let Some(n) = single_type(&p, u) {
            let cost = n as f64 * p.prices[u];
            if best.as_ref().is_none_or(|b| cost < b.cost) {
                let mut counts = vec![0; units];
                counts[u] = n;
                let mut ys = vec![vec![0.0; p.rates.len()]; units];
                ys[u] = p.rates.iter().zip(&p.caps[u]).map(|(r, c)| r / c).collect();
                best = Some(plan_of(&p, counts, &ys));
            }
        }
    }
    let mut stack: Vec<(Vec<u64>, Vec<u64>)> = vec![(vec![0; units], hi)];
    let mut nodes = 0;
    let mut root_bound = None;
    let mut optimal = true;
    while let Some((lo, hi)) = stack.pop() {
        if nodes >= MAX_NODES {
            optimal = false;
            break;
        }
        nodes += 1;
        between_nodes();
        let Some((value, n, ys)) = relaxation(&p, &lo, &hi) else {
            if root_bound.is_none() {
                root_bound = Some(f64::INFINITY);
            }
            continue;
        };
        if root_bound.is_none() {
            root_bound = Some(value);
        }
        let tolerance = 1e-9 * value.abs().max(1.0);
        if best.as_ref().is_some_and(|b| value >= b.cost - tolerance) {
            continue;
        }
        // Rounding every count up keeps the relaxation's assignment feasible.
        let rounded: Vec<u64> = n.iter().map(|x| ceil_units(*x)).collect();
        let candidate = plan_of(&p, rounded, &ys);
        if best
            .as_ref()
            .is_none_or(|b| candidate.cost < b.cost - tolerance)
        {
            best = Some(candidate);
        }
        // Branch on the count farthest from an integer.
        let fractional = (0..units)
            .map(|u| (u, n[u] - n[u].floor()))
            .filter(|(_, f)| *f > 1e-7 && *f < 1.0 - 1e-7)
            .max_by(|a, b| (0.5 - (a.1 - 0.5).abs()).total_cmp(&(0.5 - (b.1 - 0.5).abs())));
        let Some((u, _)) = fractional else {
            continue; // integral: its rounding is itself, already an incumbent candidate
        };
        let floor = n[u].floor() as u64;
        let mut down = hi.clone();
        down[u] = floor;
        let mut up = lo.clone();
        up[u] = floor + 1;
        // Depth first, the rounded-down branch explored first (pushed last).
        stack.push((up, hi));
        stack.push((lo, down));
    }
    let bound = if optimal {
        best.as_ref().map_or(f64::INFINITY, |b| b.cost)
    } else {
        root_bound.unwrap_or(f64::INFINITY)
    };
    Outcome {
        plan: best.map(expand),
        optimal,
        nodes,
        bound,
    }
}
