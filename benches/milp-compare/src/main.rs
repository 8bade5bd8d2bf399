//! Issue 32: was the hand-written fleet MILP faster and as robust as a library? Three
//! solvers take the same programs: the hand-written one deployfit had (kept in
//! `hand_written.rs`), deployfit's solver now (model/src/milp.rs: microlp, called
//! directly, with node slices for cancellation), and good_lp over microlp (the modelling
//! layer the issue named), as a cross-check of the formulation. The programs:
//!
//! 1. the programs real fleet files give the solver (benches/solver/fleet_*.deploy and
//!    examples/13-mixed-fleet.deploy, each with its class rates scaled by 0.1 … 20, so
//!    that plans range from one unit to hundreds), recorded with the compiler's
//!    `milp-trace` feature;
//! 2. seeded random programs of the same shape (unit types with a speed and per-class
//!    slow-downs, some types unable to serve some classes, equal prices and capacities
//!    for degenerate ties).
//!
//! For each program: the optimal cost of each (agreement within 1e-6 relative), the
//! median wall time over repeated solves, and failures (an error, a plan that breaks a
//! constraint, a search that stopped at its node limit). good_lp gets the program after
//! the same cheap preprocessing (dominated types dropped, per-type upper bounds).
//!
//!   cargo run --release --manifest-path benches/milp-compare/Cargo.toml

#![allow(clippy::needless_range_loop)] // indices mirror the program's subscripts

mod hand_written;

use std::path::Path;
use std::time::{Duration, Instant};

use deployfit_host::Workspace;
use deployfit_compiler::solve::milp::{self, Problem};
use good_lp::{
    Expression, ResolutionError, Solution, SolverModel, Variable, microlp, variable, variables,
};

/// The library's answer: the cost, and whether the plan serves every class.
fn library(p: &Problem, preprocess: bool) -> Result<f64, ResolutionError> {
    let keep: Vec<usize> = if preprocess {
        milp::undominated(p)
    } else {
        (0..p.prices.len()).collect()
    };
    let classes = p.rates.len();
    let mut vars = variables!();
    let mut n: Vec<Variable> = Vec::new();
    let mut y: Vec<Vec<Variable>> = Vec::new();
    for &u in &keep {
        let mut v = variable().integer().min(0);
        if preprocess {
            let hi: f64 = (0..classes)
                .filter(|&k| p.caps[u][k] > 0.0)
                .map(|k| p.rates[k] / p.caps[u][k])
                .sum();
            v = v.max(hi.ceil());
        }
        n.push(vars.add(v));
        y.push(
            (0..classes)
                .map(|_| vars.add(variable().min(0.0)))
                .collect(),
        );
    }
    let objective: Expression = keep
        .iter()
        .enumerate()
        .map(|(i, &u)| p.prices[u] * n[i])
        .sum();
    let mut model = vars.minimise(objective).using(microlp);
    for k in 0..classes {
        let served: Expression = keep
            .iter()
            .enumerate()
            .filter(|(_, u)| p.caps[**u][k] > 0.0)
            .map(|(i, &u)| p.caps[u][k] * y[i][k])
            .sum();
        model = model.with(served.geq(p.rates[k]));
    }
    for i in 0..keep.len() {
        let busy: Expression = y[i].iter().copied().sum();
        model = model.with(busy.leq(n[i]));
    }
    let solution = model.solve()?;
    Ok(keep
        .iter()
        .enumerate()
        .map(|(i, &u)| p.prices[u] * solution.value(n[i]).round())
        .sum())
}

/// Whether a hand-written plan serves every class within every unit's time.
fn plan_holds(p: &Problem, plan: &milp::Plan) -> bool {
    let classes_ok = (0..p.rates.len()).all(|k| {
        let served: f64 = (0..p.prices.len()).map(|u| plan.served[u][k]).sum();
        served >= p.rates[k] * (1.0 - 1e-9)
    });
    let units_ok = (0..p.prices.len()).all(|u| {
        let busy: f64 = (0..p.rates.len())
            .filter(|&k| p.caps[u][k] > 0.0)
            .map(|k| plan.served[u][k] / p.caps[u][k])
            .sum();
        busy <= plan.units[u] as f64 * (1.0 + 1e-9) + 1e-9
    });
    classes_ok && units_ok
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Median time of `f` over enough repetitions to fill ~50 ms (at least 3, at most 200).
fn time<T>(mut f: impl FnMut() -> T) -> (T, Duration) {
    let start = Instant::now();
    let first = f();
    let one = start.elapsed();
    if one > Duration::from_millis(500) {
        return (first, one);
    }
    let reps = ((Duration::from_millis(50).as_secs_f64() / one.as_secs_f64().max(1e-7)) as usize)
        .clamp(3, 200);
    let mut samples = vec![one];
    for _ in 1..reps {
        let start = Instant::now();
        std::hint::black_box(f());
        samples.push(start.elapsed());
    }
    (first, median(samples))
}

/// The programs real fleet files produce, their class rates scaled.
fn real_programs() -> Vec<(String, Problem)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let files = [
        "benches/solver/fleet_20_classes.deploy",
        "benches/solver/fleet_40_classes.deploy",
        "examples/13-mixed-fleet.deploy",
    ];
    let mut out = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(root.join(file)).expect("a fleet file");
        for scale in [0.1, 0.5, 1.0, 2.0, 5.0, 20.0] {
            let scaled = scale_rates(&text, scale);
            let mut workspace = Workspace::new();
            let id = workspace.set_file(&root.join(file), scaled);
            milp::trace::take();
            workspace.check(id);
            for (i, p) in milp::trace::take().into_iter().enumerate() {
                let name = Path::new(file).file_stem().unwrap().to_string_lossy();
                out.push((format!("{name} x{scale} #{i}"), p));
            }
        }
    }
    out
}

/// `rate = X req/s` lines with X multiplied by `scale`.
fn scale_rates(text: &str, scale: f64) -> String {
    text.lines()
        .map(|line| {
            let t = line.trim_start();
            if let Some(rest) = t.strip_prefix("rate") {
                let rest = rest.trim_start().trim_start_matches('=').trim_start();
                if let Some((value, unit)) = rest.split_once(' ')
                    && let Ok(v) = value.parse::<f64>()
                {
                    let indent = &line[..line.len() - t.len()];
                    return format!("{indent}rate = {} {unit}", v * scale);
                }
            }
            line.to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// xorshift64*: a fixed-seed generator, so every run sees the same programs.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }
}

fn random_programs(count: usize, shapes: &[(usize, usize)], seed: u64) -> Vec<(String, Problem)> {
    let mut rng = Rng(seed);
    let mut out = Vec::new();
    for i in 0..count {
        let (units, classes) = shapes[i % shapes.len()];
        let speeds: Vec<f64> = (0..units).map(|_| rng.range(0.5, 20.0)).collect();
        let mut prices: Vec<f64> = speeds
            .iter()
            .map(|s| s * rng.range(0.3, 1.5))
            .map(|p| (p * 100.0).round() / 100.0)
            .collect();
        let slow: Vec<f64> = (0..classes).map(|_| rng.range(0.5, 8.0)).collect();
        let mut caps: Vec<Vec<f64>> = (0..units)
            .map(|u| {
                (0..classes)
                    .map(|k| {
                        if rng.unit() < 0.2 {
                            0.0
                        } else {
                            speeds[u] / slow[k] * rng.range(0.6, 1.4)
                        }
                    })
                    .collect()
            })
            .collect();
        // Degenerate ties: every fourth program copies a type's price and capacities.
        if i % 4 == 3 && units > 1 {
            prices[1] = prices[0];
            caps[1] = caps[0].clone();
        }
        let rates: Vec<f64> = (0..classes)
            .map(|_| (rng.range(0.05, 30.0) * 100.0).round() / 100.0)
            .collect();
        out.push((
            format!("random {units}x{classes} #{i}"),
            Problem {
                prices,
                caps,
                rates,
            },
        ));
    }
    out
}

/// A solver's answer to one program: the plan's cost (`None`: no plan), whether it
/// claims optimality and the plan holds, and its median time.
struct Answer {
    cost: Option<f64>,
    sound: bool,
    time: Duration,
}

fn ours(p: &Problem, solver: fn(&Problem) -> milp::Outcome) -> Answer {
    let (outcome, time) = time(|| solver(p));
    let sound = match &outcome.plan {
        Some(plan) => outcome.optimal && plan_holds(p, plan),
        None => outcome.optimal,
    };
    Answer {
        cost: outcome.plan.map(|plan| plan.cost),
        sound,
        time,
    }
}

fn theirs(p: &Problem) -> Answer {
    let (result, time) = time(|| library(p, true));
    Answer {
        sound: matches!(result, Ok(_) | Err(ResolutionError::Infeasible)),
        cost: result.ok(),
        time,
    }
}

fn same(a: Option<f64>, b: Option<f64>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => (a - b).abs() <= 1e-6 * a.abs().max(1.0),
        (None, None) => true,
        _ => false,
    }
}

/// `with_hand`: whether the hand-written solver runs too (at the real fleets' size,
/// 154 types × 40 classes, one random program ran past eight minutes at its node limit).
fn run(label: &str, programs: &[(String, Problem)], with_hand: bool) {
    let started = Instant::now();
    let names = ["hand-written", "deployfit", "good_lp"];
    let mut times: [Vec<Duration>; 3] = Default::default();
    let mut failures = [0usize; 3];
    let mut agree = 0;
    let mut faster = 0;
    let mut worst: f64 = 0.0;
    println!(
        "{:<28} {:>5} {:>4} {:>10} {:>13} {:>13} {:>13}  agree",
        "program", "types", "cls", "cost", names[0], names[1], names[2]
    );
    for (name, p) in programs {
        let deployfit = ours(p, milp::solve);
        let hand = if with_hand {
            ours(p, hand_written::solve)
        } else {
            Answer {
                cost: deployfit.cost,
                sound: true,
                time: Duration::ZERO,
            }
        };
        let answers = [hand, deployfit, theirs(p)];
        for (i, a) in answers.iter().enumerate() {
            if i == 0 && !with_hand {
                continue;
            }
            times[i].push(a.time);
            if !a.sound {
                failures[i] += 1;
            }
        }
        let all_agree =
            same(answers[0].cost, answers[1].cost) && same(answers[1].cost, answers[2].cost);
        if all_agree {
            agree += 1;
        }
        if with_hand && answers[1].time < answers[0].time {
            faster += 1;
        }
        worst = worst.max(answers[1].time.as_secs_f64() / answers[0].time.as_secs_f64().max(1e-9));
        println!(
            "{:<28} {:>5} {:>4} {:>10} {:>13?} {:>13?} {:>13?}  {}",
            name,
            p.prices.len(),
            p.rates.len(),
            answers[1]
                .cost
                .map_or("none".to_string(), |c| format!("{c:.2}")),
            answers[0].time,
            answers[1].time,
            answers[2].time,
            if all_agree { "yes" } else { "NO" }
        );
    }
    let total = |v: &[Duration]| v.iter().sum::<Duration>();
    let versus = if with_hand {
        format!(
            "; deployfit faster than hand-written on {faster}; worst deployfit/hand-written time ratio {worst:.2}"
        )
    } else {
        "; hand-written not run".to_string()
    };
    println!(
        "\n{label}: {} programs in {:?}; the same optimal cost from all three on {agree}{versus}",
        programs.len(),
        started.elapsed()
    );
    for i in 0..3 {
        if times[i].is_empty() {
            continue;
        }
        println!(
            "  {:<13} median {:>12?}  total {:>12?}  failures {}",
            names[i],
            median(times[i].clone()),
            total(&times[i]),
            failures[i]
        );
    }
}

fn main() {
    let real = real_programs();
    run("real fleet programs", &real, true);
    // The count of random programs of each set: `milp-compare 60` (default 40).
    let count = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(40);
    let shapes = [(4, 1), (8, 3), (20, 5), (40, 10), (60, 20)];
    let random = random_programs(count, &shapes, 0x9E37_79B9_7F4A_7C15);
    run("seeded random programs", &random, true);
    let large = random_programs(count / 4, &[(154, 40)], 0xD1B5_4A32_D192_ED03);
    run(
        "seeded random programs at the real fleets' size",
        &large,
        false,
    );
}
