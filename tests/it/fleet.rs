//! Mixed fleets (issue #15 part 4; docs/cost.md, "Mixed fleets") through the real binary:
//! `fleet = mixed` with a workload's request classes solves to a fleet of GPU types with
//! replicas, proven cheapest against an independent brute force over the per-class
//! capacities the JSON reports, with the best single type beside it.

use crate::common;

use common::{deployfit, deployfit_in, json, scratch, stdout};
use serde_json::Value;

/// One option of the JSON: price per unit, replicas per unit, per-replica capacity per
/// class (0 when it cannot serve the class).
#[derive(Clone, Debug)]
struct Unit {
    price: f64,
    replicas: f64,
    caps: Vec<f64>,
}

fn units(solution: &Value, classes: &[String]) -> Vec<Unit> {
    solution["options"]
        .as_array()
        .expect("options")
        .iter()
        .map(|o| Unit {
            price: o["price_usd_per_hour"].as_f64().unwrap(),
            replicas: o["replicas_per_unit"].as_f64().unwrap(),
            caps: classes
                .iter()
                .map(|c| o["capacity_rps"][c].as_f64().unwrap_or(0.0))
                .collect(),
        })
        .collect()
}

/// Whether `counts` units serve both class rates: class 0 goes first to the units that give
/// up the least class-1 capacity for it (exact for two classes: a fractional knapsack).
fn serves_two(units: &[Unit], counts: &[u64], rates: &[f64]) -> bool {
    let mut order: Vec<usize> = (0..units.len()).collect();
    let ratio = |u: &Unit| {
        if u.caps[1] <= 0.0 {
            f64::INFINITY
        } else {
            u.caps[0] / u.caps[1]
        }
    };
    order.sort_by(|a, b| ratio(&units[*b]).total_cmp(&ratio(&units[*a])));
    let mut need = rates[0];
    let mut spare = 0.0;
    for u in order {
        let unit = &units[u];
        // Replica-time this option has.
        let mut time = counts[u] as f64 * unit.replicas;
        if need > 0.0 && unit.caps[0] > 0.0 {
            let used = (need / unit.caps[0]).min(time);
            need -= used * unit.caps[0];
            time -= used;
        }
        spare += time * unit.caps[1];
    }
    need <= 1e-9 * rates[0].max(1.0) && spare >= rates[1] * (1.0 - 1e-9)
}

/// Drops options another is at least as good as (no dearer per unit, no less capacity per
/// unit for either class): a plan never needs them. Of equal options, the first stays.
fn undominated(units: &[Unit]) -> Vec<usize> {
    let per_unit = |u: &Unit, k: usize| u.caps[k] * u.replicas;
    let dominates =
        |v: &Unit, u: &Unit| v.price <= u.price && (0..2).all(|k| per_unit(v, k) >= per_unit(u, k));
    (0..units.len())
        .filter(|&u| {
            !(0..units.len()).any(|v| {
                v != u
                    && dominates(&units[v], &units[u])
                    && (!dominates(&units[u], &units[v]) || v < u)
            })
        })
        .collect()
}

/// The cheapest plan by trying every count of every undominated option whose total stays
/// within `budget` $/h; the cost and every plan that reaches it (as counts over all
/// options).
fn brute_force(units: &[Unit], rates: &[f64], budget: f64) -> (f64, Vec<Vec<u64>>) {
    struct Search<'a> {
        keep: Vec<usize>,
        units: &'a [Unit],
        rates: &'a [f64],
        budget: f64,
        counts: Vec<u64>,
        best: f64,
        plans: Vec<Vec<u64>>,
    }
    impl Search<'_> {
        fn walk(&mut self, at: usize, spent: f64) {
            if at == self.keep.len() {
                if serves_two(self.units, &self.counts, self.rates) {
                    if spent < self.best - 1e-9 {
                        self.best = spent;
                        self.plans = vec![self.counts.clone()];
                    } else if (spent - self.best).abs() <= 1e-9 {
                        self.plans.push(self.counts.clone());
                    }
                }
                return;
            }
            let u = self.keep[at];
            let price = self.units[u].price;
            let mut n = 0;
            while spent + n as f64 * price <= self.budget + 1e-9 {
                self.counts[u] = n;
                self.walk(at + 1, spent + n as f64 * price);
                n += 1;
            }
            self.counts[u] = 0;
        }
    }
    let mut search = Search {
        keep: undominated(units),
        units,
        rates,
        budget,
        counts: vec![0; units.len()],
        best: f64::INFINITY,
        plans: Vec::new(),
    };
    search.walk(0, 0.0);
    (search.best, search.plans)
}

fn solve_json(path: &str) -> Value {
    let output = deployfit(&["solve", path, "--format", "json"]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    json(&output)[0].clone()
}

#[test]
fn two_classes_mixed_fleet_is_cheaper_than_any_single_type() {
    let s = solve_json("examples/13-mixed-fleet.deploy");
    assert_eq!(s["deployment"], "mixed_api");
    assert_eq!(s["pricing"], "cloud");
    assert_eq!(s["optimal"], true);
    let classes: Vec<String> = s["classes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(classes, ["chat", "rag"]);
    let rates: Vec<f64> = s["classes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["rate_rps"].as_f64().unwrap())
        .collect();
    assert_eq!(rates, [16.0, 2.0]);
    let options = s["options"].as_array().unwrap().clone();
    let units = units(&s, &classes);

    // The fleet: GPU types with counts, replicas and what they rent.
    let fleet = s["fleet"].as_array().expect("a fleet");
    assert!(!fleet.is_empty());
    let mut types: Vec<&str> = fleet.iter().map(|m| m["gpu"].as_str().unwrap()).collect();
    types.dedup();
    assert!(types.len() >= 2, "a mix of GPU types: {fleet:?}");
    let mut total = 0.0;
    for member in fleet {
        assert!(member["count"].as_u64().unwrap() >= 1);
        assert!(member["replicas"].as_u64().unwrap() >= 1);
        assert!(member["offer"].is_string() && member["provider"].is_string());
        assert!(member["instances"].as_u64().unwrap() >= 1);
        total += member["cost_per_hour_usd"].as_f64().unwrap();
    }
    let cost = s["cost_per_hour_usd"].as_f64().unwrap();
    assert!((total - cost).abs() < 1e-9, "{total} vs {cost}");
    // Every class is served in full.
    for (k, class) in classes.iter().enumerate() {
        let served: f64 = fleet
            .iter()
            .flat_map(|m| m["classes"].as_array().unwrap())
            .filter(|c| c["class"] == class.as_str())
            .map(|c| c["rate_rps"].as_f64().unwrap())
            .sum();
        assert!((served - rates[k]).abs() < 1e-6, "{class}: {served}");
    }
    // $/Mtok over the demand's output tokens.
    let tokens = 16.0 * 256.0 + 2.0 * 512.0;
    let per_mtok = cost / 3600.0 / tokens * 1e6;
    assert!((s["cost_per_mtok_usd"].as_f64().unwrap() - per_mtok).abs() < 1e-9);

    // The expected optimum, independently: brute force over small counts of the options
    // from the per-class capacities the JSON reports.
    let single = units
        .iter()
        .filter(|u| u.caps.iter().all(|c| *c > 0.0))
        .map(|u| {
            let need: f64 = (0..2).map(|k| rates[k] / (u.caps[k] * u.replicas)).sum();
            need.ceil() * u.price
        })
        .fold(f64::INFINITY, f64::min);
    assert!(single.is_finite());
    // Every plan up to the single type's cost is tried.
    let (best, plans) = brute_force(&units, &rates, single);
    assert!(
        (cost - best).abs() < 1e-9,
        "fleet ${cost}/h, brute force ${best}/h"
    );
    // The fleet's units per option are one of the optimal plans.
    let mut chosen = vec![0u64; options.len()];
    for member in fleet {
        let at = options
            .iter()
            .position(|o| {
                o["gpu"] == member["gpu"]
                    && o["count"] == member["count"]
                    && o["offer"] == member["offer"]
            })
            .expect("the member is an option");
        chosen[at] = member["instances"].as_u64().unwrap()
            / options[at]["instances_per_unit"].as_u64().unwrap();
    }
    assert!(plans.contains(&chosen), "{chosen:?} is not among {plans:?}");

    // Below the best single type, computed here from the same capacities.
    assert!(cost < single - 1e-9, "fleet ${cost}/h, single ${single}/h");
    let reported = s["single_type"]["cost_per_hour_usd"].as_f64().unwrap();
    assert!((reported - single).abs() < 1e-9, "{reported} vs {single}");
    let savings = s["savings_percent"].as_f64().unwrap();
    assert!(
        (savings - (single - cost) / single * 100.0).abs() < 1e-9,
        "{savings}"
    );

    // The human table says the same, and `check` reports the fleet as a note.
    let table = stdout(&deployfit(&["solve", "examples/13-mixed-fleet.deploy"]));
    assert!(table.contains("mixed fleet"), "{table}");
    assert!(table.contains(&format!("fleet: ${cost:.2}/h")), "{table}");
    assert!(table.contains("best single type:"), "{table}");
    assert!(table.contains("the fleet saves"), "{table}");
    let check = deployfit(&[
        "check",
        "--format",
        "json",
        "examples/13-mixed-fleet.deploy",
    ]);
    assert_eq!(check.status.code(), Some(0));
    let report = json(&check);
    let chosen = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "deploy::fleet::chosen")
        .expect("the fleet is reported");
    assert_eq!(chosen["severity"], "info");
    assert!(
        chosen["message"]
            .as_str()
            .unwrap()
            .contains(&format!("${cost:.2}/h"))
    );
    assert_eq!(
        report["deployments"][0]["display"]["cost_per_hour"],
        format!("${cost:.2}/h")
    );
    // explain prints the fleet, in JSON too.
    let explained = json(&deployfit(&[
        "explain",
        "examples/13-mixed-fleet.deploy",
        "--format",
        "json",
    ]));
    assert_eq!(explained[0]["deployment"], "mixed_api");
    assert_eq!(explained[0]["fleet"], s["fleet"]);
}

const ONE_CLASS: &str = r#"
deployment one_class {
    model    = qwen3_8b
    quant    = fp8
    context  = 8k
    seqs     = 16
    kv_cache = fp8
    engine   = vllm
    gpu      = one_of [l4, l40s, h100_sxm5]
    count    = 1
    FLEET
    workload { rate = 6 req/s; prompt = 2k; output = 512 }
    require tpot <= 100 ms
    REQUIRE
}
"#;

#[test]
fn a_single_class_reduces_to_the_single_type_answer() {
    let dir = scratch("fleet_one_class");
    std::fs::write(
        dir.join("fleet.deploy"),
        ONE_CLASS
            .replace("FLEET", "fleet    = mixed")
            .replace("REQUIRE", ""),
    )
    .unwrap();
    std::fs::write(
        dir.join("single.deploy"),
        ONE_CLASS
            .replace("FLEET", "replicas = ?")
            .replace("REQUIRE", "require replicas >= replicas_needed"),
    )
    .unwrap();
    let fleet = json(&deployfit_in(
        &dir,
        &["solve", "fleet.deploy", "--format", "json"],
    ))[0]
        .clone();
    let single = json(&deployfit_in(
        &dir,
        &["solve", "single.deploy", "--format", "json"],
    ))[0]
        .clone();
    // The fleet's best single type is the ordinary solver's answer: the same GPU, replicas
    // and cost (one class: the replicas are Little's law's, as `replicas_needed`).
    let best = &single["ranked"][0];
    let one = &fleet["single_type"];
    assert_eq!(
        one["gpu"].as_str(),
        best["assignment"]["gpu"].as_str(),
        "{fleet}"
    );
    assert_eq!(
        one["replicas"].as_u64().unwrap().to_string(),
        best["assignment"]["replicas"].as_str().unwrap()
    );
    let cost = one["cost_per_hour_usd"].as_f64().unwrap();
    assert!((cost - best["cost_per_hour_usd"].as_f64().unwrap()).abs() < 1e-9);
    // A mix may still be cheaper (whole replicas round up), never dearer.
    assert!(fleet["cost_per_hour_usd"].as_f64().unwrap() <= cost + 1e-9);

    // With one GPU type, the fleet is exactly that type.
    std::fs::write(
        dir.join("l4.deploy"),
        ONE_CLASS
            .replace("one_of [l4, l40s, h100_sxm5]", "l4")
            .replace("FLEET", "fleet    = mixed")
            .replace("REQUIRE", ""),
    )
    .unwrap();
    std::fs::write(
        dir.join("l4_single.deploy"),
        ONE_CLASS
            .replace("one_of [l4, l40s, h100_sxm5]", "l4")
            .replace("FLEET", "replicas = ?")
            .replace("REQUIRE", "require replicas >= replicas_needed"),
    )
    .unwrap();
    let fleet = json(&deployfit_in(
        &dir,
        &["solve", "l4.deploy", "--format", "json"],
    ))[0]
        .clone();
    let single = json(&deployfit_in(
        &dir,
        &["solve", "l4_single.deploy", "--format", "json"],
    ))[0]
        .clone();
    let members = fleet["fleet"].as_array().unwrap();
    assert_eq!(members.len(), 1, "{fleet}");
    assert_eq!(members[0]["gpu"], "l4");
    assert_eq!(
        members[0]["replicas"].as_u64().unwrap().to_string(),
        single["ranked"][0]["assignment"]["replicas"]
            .as_str()
            .unwrap()
    );
    assert!(
        (fleet["cost_per_hour_usd"].as_f64().unwrap()
            - single["ranked"][0]["cost_per_hour_usd"].as_f64().unwrap())
        .abs()
            < 1e-9
    );
    assert_eq!(fleet["savings_percent"].as_f64(), Some(0.0));
}

#[test]
fn an_unreachable_slo_names_the_class_and_the_nearest_miss() {
    let dir = scratch("fleet_infeasible");
    // Non-ASCII comments before and on the lines the spans point at.
    let text = [
        "// Entrée — a fleet whose « rag » class asks the impossible ☃",
        "deployment tight { // ✓ déploiement",
        "    model    = qwen3_8b",
        "    quant    = fp8",
        "    context  = 20k",
        "    kv_cache = fp8",
        "    engine   = vllm",
        "    gpu      = one_of [l4, h100_sxm5]",
        "    fleet    = mixed",
        "    workload {",
        "        // « chat » ☕",
        "        chat { rate = 4 req/s; prompt = 512; output = 256 }",
        "        // é ☃",
        "        rag { rate = 1 req/s; prompt = 16k; output = 512; require ttft <= 1 ms } // ☃",
        "    }",
        "}",
        "",
    ]
    .join("\n");
    std::fs::write(dir.join("tight.deploy"), &text).unwrap();
    let output = deployfit_in(&dir, &["check", "--format", "json", "tight.deploy"]);
    assert_eq!(output.status.code(), Some(1), "{}", stdout(&output));
    let report = json(&output);
    let diag = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "deploy::fleet::infeasible")
        .expect("the infeasible class is reported");
    let message = diag["message"].as_str().unwrap();
    assert!(message.contains("request class `rag`"), "{message}");
    assert!(message.contains("nearest miss"), "{message}");
    assert!(message.contains("ttft"), "{message}");
    assert!(diag["help"].as_str().unwrap().contains("require"), "{diag}");
    // The span is the class's name, counted in characters after the non-ASCII lines.
    let line = text.lines().position(|l| l.contains("rag {")).unwrap() + 1;
    assert_eq!(diag["line"].as_u64(), Some(line as u64), "{diag}");
    assert_eq!(diag["column"].as_u64(), Some(9), "{diag}");
    // The human rendering underlines it without a panic.
    let human = stdout(&deployfit_in(&dir, &["check", "tight.deploy"]));
    assert!(human.contains("class `rag` cannot be served"), "{human}");
    // `solve` fails with the same reason.
    let solve = deployfit_in(&dir, &["solve", "tight.deploy"]);
    assert_eq!(solve.status.code(), Some(1));
    assert!(stdout(&solve).contains("deploy::fleet::infeasible"));
}

#[test]
fn a_fleet_needs_a_workload_and_classes_need_a_fleet() {
    let dir = scratch("fleet_forms");
    std::fs::write(
        dir.join("forms.deploy"),
        "deployment no_rates {\n    model  = qwen3_8b\n    quant  = fp8\n    engine = vllm\n    gpu    = one_of [l4, h100_sxm5]\n    fleet  = mixed\n}\n\ndeployment classes_alone {\n    model  = qwen3_8b\n    quant  = fp8\n    engine = vllm\n    gpu    = l4\n    workload { chat { rate = 4 req/s; prompt = 512; output = 256 } }\n}\n\ndeployment half_a_class {\n    model  = qwen3_8b\n    quant  = fp8\n    engine = vllm\n    gpu    = l4\n    fleet  = mixed\n    workload { output = 256; chat { rate = 4 req/s } }\n}\n\ndeployment typo {\n    model  = qwen3_8b\n    quant  = fp8\n    engine = vllm\n    gpu    = l4\n    fleet  = mixed\n    workload { chat { rate = 4 req/s; prompt = 512; output = 256; require tfft <= 1 s } }\n}\n",
    )
    .unwrap();
    let output = deployfit_in(&dir, &["check", "--format", "json", "forms.deploy"]);
    assert_eq!(output.status.code(), Some(1));
    let report = json(&output);
    let diags = report["diagnostics"].as_array().unwrap();
    let find = |code: &str, line: u64| {
        diags
            .iter()
            .find(|d| d["code"] == code && d["line"] == line)
            .unwrap_or_else(|| panic!("no {code} on line {line}: {diags:?}"))
    };
    let no_rates = find("deploy::fleet::no_workload", 6);
    assert!(no_rates["help"].as_str().unwrap().contains("workload {"));
    let alone = find("deploy::fleet::classes_without_fleet", 14);
    assert!(alone["help"].as_str().unwrap().contains("fleet = mixed"));
    // A class inherits the workload's `output` but has no `prompt`.
    let half = find("deploy::fleet::no_workload", 23);
    assert!(
        half["message"].as_str().unwrap().contains("`prompt`"),
        "{half}"
    );
    assert!(
        !half["message"].as_str().unwrap().contains("`output`"),
        "{half}"
    );
}

/// A fleet option of `count` tensor-parallel GPUs rents instances that hold the group
/// (docs/cost.md): two H100 SXM5 never come as two of Lambda's 1-GPU instances; two H100
/// PCIe, which only 1-GPU instances carry, are no option at all (a group is never split
/// across instances, issue 35).
#[test]
fn fleet_options_keep_a_tensor_parallel_group_in_one_instance() {
    let dir = scratch("fleet_tensor_group");
    let path = dir.join("pairs.deploy");
    std::fs::write(
        &path,
        "// Paare — 成对: zwei GPUs je Replik\ndeployment pairs {\n    model    = qwen3_32b\n    quant    = fp8\n    context  = 8k\n    engine   = vllm\n    gpu      = one_of [h100_sxm5, h100_pcie] // ü\n    count    = 2\n    fleet    = mixed\n    workload {\n        chat {\n            rate   = 4 req/s\n            prompt = 512\n            output = 256\n        }\n    }\n}\n",
    )
    .unwrap();
    let s = solve_json(path.to_str().unwrap());
    let options = s["options"].as_array().expect("options");
    let of = |gpu: &str| -> Vec<&Value> { options.iter().filter(|o| o["gpu"] == gpu).collect() };
    let sxm = of("h100_sxm5");
    assert!(!sxm.is_empty(), "{s}");
    for o in &sxm {
        assert!(o["gpus_per_instance"].as_u64().unwrap() >= 2, "{o}");
        assert_ne!(o["offer"], "lambda_gpu_1x_h100_sxm5", "{o}");
    }
    assert!(of("h100_pcie").is_empty(), "{s}");
}

/// A mixed fleet of `classes` request classes over the whole catalog (`gpu = ?`): prompts,
/// outputs and limits cycle, so classes share workloads (issue #32: the probes of a shared
/// workload are evaluated once).
fn many_classes(classes: usize) -> String {
    let mut text = String::from(
        "deployment many {\n    model    = qwen3_8b\n    quant    = fp8\n    context  = 20k\n    kv_cache = fp8\n    engine   = vllm\n    gpu      = ?\n    fleet    = mixed\n    pricing  = cloud\n\n    workload {\n",
    );
    for i in 0..classes {
        text.push_str(&format!(
            "        c{i} {{\n            rate   = {} req/s\n            prompt = {}\n            output = {}\n            require ttft <= {} s\n            require tpot <= {} ms\n        }}\n",
            1 + i % 7,
            [512, 1024, 2048, 4096, 8192][i % 5],
            [128, 256, 512, 1024][i % 4],
            1 + i % 4,
            40 + 10 * (i % 5)
        ));
    }
    text.push_str("    }\n}\n");
    text
}

#[test]
fn forty_classes_over_the_catalog_solve_to_an_optimal_fleet() {
    let dir = scratch("fleet_forty_classes");
    std::fs::write(dir.join("many.deploy"), many_classes(40)).unwrap();
    let output = deployfit_in(&dir, &["solve", "many.deploy", "--format", "json"]);
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    let solution = json(&output)[0].clone();
    assert_eq!(solution["classes"].as_array().unwrap().len(), 40);
    assert_eq!(solution["optimal"], true, "{solution}");
    assert!(!solution["fleet"].as_array().unwrap().is_empty());
    // Every class's rate is served in full by the fleet's members.
    for class in solution["classes"].as_array().unwrap() {
        let name = class["name"].as_str().unwrap();
        let served: f64 = solution["fleet"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|m| m["classes"].as_array().unwrap().iter())
            .filter(|s| s["class"] == name)
            .map(|s| s["rate_rps"].as_f64().unwrap())
            .sum();
        let rate = class["rate_rps"].as_f64().unwrap();
        assert!(
            (served - rate).abs() <= 1e-6 * rate,
            "{name}: {served} of {rate}"
        );
    }
}

#[test]
fn classes_sharing_a_workload_solve_as_one_class_of_their_summed_rate() {
    // Two classes with the same prompt, output and requires share their probes' evaluations;
    // one class of their summed rate has nothing to share. Their capacities are the same,
    // so the fleets cost the same.
    let dir = scratch("fleet_shared_workload");
    let deployment = |name: &str, classes: &str| {
        format!(
            "deployment {name} {{\n    model    = qwen3_8b\n    quant    = fp8\n    context  = 20k\n    kv_cache = fp8\n    engine   = vllm\n    gpu      = one_of [l4, l40s, a100_sxm4_80gb, h100_sxm5]\n    fleet    = mixed\n    pricing  = cloud\n    workload {{\n{classes}    }}\n}}\n"
        )
    };
    let class = |name: &str, rate: u32| {
        format!(
            "        {name} {{\n            rate   = {rate} req/s\n            prompt = 2k\n            output = 256\n            require ttft <= 2 s\n            require tpot <= 50 ms\n        }}\n"
        )
    };
    std::fs::write(
        dir.join("shared.deploy"),
        deployment("split", &format!("{}{}", class("a", 3), class("b", 5)))
            + &deployment("whole", &class("a", 8)),
    )
    .unwrap();
    let output = deployfit_in(&dir, &["solve", "shared.deploy", "--format", "json"]);
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    let both = json(&output);
    let cost = |i: usize| both[i]["cost_per_hour_usd"].as_f64().unwrap();
    assert!((cost(0) - cost(1)).abs() <= 1e-9 * cost(1), "{both}");
    let capacity = |i: usize, class: &str| {
        both[i]["options"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["capacity_rps"][class].as_f64().unwrap_or(0.0))
            .collect::<Vec<_>>()
    };
    assert_eq!(capacity(0, "a"), capacity(0, "b"));
    assert_eq!(capacity(0, "a"), capacity(1, "a"));
}
