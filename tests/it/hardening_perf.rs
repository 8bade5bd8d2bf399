//! Issue #10, super-linear time and memory: each reproducer is generated here, checked
//! through the real binary, and its diagnostics asserted. Time bounds are generous hang
//! guards for the debug build (the fixed cases take well under a second in release);
//! the one relative bound compares the human format with JSON on the same input.

use crate::common;

use std::path::Path;
use std::process::Output;
use std::time::Duration;

use common::{deployfit_timed as run_timed, scratch, stdout};

/// A generous bound for work that must take milliseconds to a few seconds.
const HANG: Duration = Duration::from_secs(120);

fn check_json(dir: &Path, file: &str) -> (serde_json::Value, Output) {
    let (output, _) = run_timed(dir, &["check", "--format", "json", file], HANG);
    let report = serde_json::from_slice(&output.stdout).expect("stdout is JSON");
    (report, output)
}

fn diagnostics(report: &serde_json::Value) -> &Vec<serde_json::Value> {
    report["diagnostics"].as_array().unwrap()
}

fn codes(report: &serde_json::Value) -> Vec<&str> {
    diagnostics(report)
        .iter()
        .map(|d| d["code"].as_str().unwrap())
        .collect()
}

#[test]
fn human_output_of_a_large_file_costs_the_same_order_as_json() {
    // About 1 MB with 1,800 diagnostics, non-ASCII text on every diagnostic's line.
    let dir = scratch("perf_human");
    let pad = format!("// {}\n", "x".repeat(500));
    let mut text = String::new();
    for i in 0..1800 {
        text.push_str(&format!(
            "rule r{i} {{\n    level = warn  when = fits\n    message = \"naïve ünïcödé\"  helpp = \"x\"\n}}\n{pad}"
        ));
    }
    std::fs::write(dir.join("big.deploy"), &text).unwrap();
    assert!(text.len() > 900_000);

    let (json, json_time) = run_timed(&dir, &["check", "--format", "json", "big.deploy"], HANG);
    let (human, human_time) = run_timed(&dir, &["check", "big.deploy"], HANG);
    let report: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let found = diagnostics(&report);
    assert_eq!(found.len(), 1800);
    assert_eq!(human.status.code(), Some(1));
    let human = stdout(&human);
    assert!(human.ends_with("1 file: 1800 errors, 0 warnings, 0 notes\n"));
    // Every report's header has the line and column (in characters) that JSON gives.
    for diag in found {
        let header = format!(
            "[big.deploy:{}:{}]",
            diag["line"].as_u64().unwrap(),
            diag["column"].as_u64().unwrap()
        );
        assert!(human.contains(&header), "no {header}");
    }
    assert_eq!(human.matches("unknown field").count(), 1800);
    // Quadratic, this was 37 times JSON's time in release; allow a wide margin for noise.
    assert!(
        human_time < json_time * 5 + Duration::from_secs(5),
        "human {human_time:?}, json {json_time:?}"
    );
}

#[test]
fn a_label_past_column_65535_is_drawn_and_placed_at_its_true_column() {
    let dir = scratch("perf_wide");
    // A syntax error at the end of a 70,000-character line, and an unknown field after
    // 70,000 non-ASCII characters (140,000 bytes) on another line.
    let text = format!(
        "gpu g extends rtx_4090 {{ price = $1/h }}{}bogus\nrule r {{ level = warn  when = fits  message = \"{}\"  helpp = \"x\" }}\n",
        " ".repeat(70_000),
        "é".repeat(70_000)
    );
    std::fs::write(dir.join("wide.deploy"), &text).unwrap();
    let (report, _) = check_json(&dir, "wide.deploy");
    let (human, _) = run_timed(&dir, &["check", "wide.deploy"], HANG);
    assert_eq!(human.status.code(), Some(1));
    let human = stdout(&human);
    let found = diagnostics(&report);
    assert!(codes(&report).contains(&"deploy::syntax::unexpected"));
    for diag in found {
        let header = format!(
            "[wide.deploy:{}:{}]",
            diag["line"].as_u64().unwrap(),
            diag["column"].as_u64().unwrap()
        );
        assert!(human.contains(&header), "no {header} in\n{human}");
    }
    let syntax = found
        .iter()
        .find(|d| d["code"] == "deploy::syntax::unexpected")
        .unwrap();
    assert_eq!(syntax["line"], 1);
    assert!(syntax["column"].as_u64().unwrap() > 70_000);
    // Long lines are cut around the label, not printed whole.
    assert!(human.lines().all(|l| l.chars().count() < 1_000), "{human}");
    assert!(human.contains("bogus"));
    assert!(human.contains('…'));
}

#[test]
fn sixty_five_thousand_interpolations_are_linear() {
    let dir = scratch("perf_interp");
    let message = "{fits}".repeat(65_000);
    std::fs::write(
        dir.join("interp.deploy"),
        format!(
            "deployment d {{\n    model = glm4_9b\n    quant = Q4_K_M\n    gpu = rtx_4090\n    require fits else \"{message}\"\n}}\nrule every_figure {{\n    level = warn\n    when = fits\n    message = \"{message}\"\n}}\n"
        ),
    )
    .unwrap();
    let (report, output) = check_json(&dir, "interp.deploy");
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(codes(&report), ["deploy::rule::every_figure"]);
    let shown = diagnostics(&report)[0]["message"].as_str().unwrap();
    assert_eq!(shown, "true".repeat(65_000));
}

fn chain(links: usize) -> String {
    let mut text = String::from("gpu c0 extends rtx_4090 { price = $1/h }\n");
    for i in 1..links {
        text.push_str(&format!("gpu c{i} extends c{} {{ }}\n", i - 1));
    }
    text
}

#[test]
fn an_extends_chain_of_8000_links_is_reported_once_and_checked_in_linear_time() {
    let dir = scratch("perf_extends");
    let mut text = chain(8_000);
    // Entries within the limit inherit the chain's figures; c31 is 32 links from the
    // start, the last one followed.
    text.push_str("deployment near {\n    model = glm4_9b\n    quant = Q4_K_M\n    gpu = c31\n}\n");
    std::fs::write(dir.join("chain.deploy"), &text).unwrap();
    let (report, output) = check_json(&dir, "chain.deploy");
    assert_eq!(output.status.code(), Some(1));
    let found = diagnostics(&report);
    assert_eq!(
        codes(&report),
        ["deploy::name::extends_too_deep"],
        "{found:?}"
    );
    assert_eq!(found[0]["line"], 33);
    let message = found[0]["message"].as_str().unwrap();
    assert!(message.contains("`c32` is 33 `extends` links"), "{message}");
    assert!(message.contains("the limit is 32"), "{message}");
    let near = &report["deployments"][0];
    assert_eq!(near["name"], "near");
    assert_eq!(near["display"]["fits"], "true", "{near}");
    // c31 is an `extends` copy of rtx_4090 through 32 links: it rents rtx_4090's offers
    // (`pricing = cloud` matches an offer's GPU against the entry's ancestors).
    assert_eq!(near["display"]["cost_per_hour"], "$0.69/h", "{near}");
    assert_eq!(
        near["display"]["offer"], "runpod_1x_rtx4090_secure",
        "{near}"
    );
}

#[test]
fn an_extends_chain_of_100000_links_does_not_overflow_the_stack() {
    let dir = scratch("perf_extends_long");
    std::fs::write(dir.join("chain.deploy"), chain(100_000)).unwrap();
    let (report, output) = check_json(&dir, "chain.deploy");
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(codes(&report), ["deploy::name::extends_too_deep"]);
}

#[test]
fn a_long_extends_cycle_is_reported_on_each_entry() {
    let dir = scratch("perf_extends_cycle");
    let mut text = String::new();
    for i in 0..1_000 {
        text.push_str(&format!("gpu k{i} extends k{} {{ }}\n", (i + 1) % 1_000));
    }
    text.push_str("gpu tail extends k0 { }\n");
    std::fs::write(dir.join("cycle.deploy"), text).unwrap();
    let (report, _) = check_json(&dir, "cycle.deploy");
    let found = diagnostics(&report);
    assert_eq!(found.len(), 1_000);
    assert!(
        codes(&report)
            .iter()
            .all(|c| *c == "deploy::name::extends_cycle")
    );
    // `tail` is not on the cycle: the entries of the cycle report it.
    assert!(found.iter().all(|d| d["line"].as_u64().unwrap() <= 1_000));
}

#[test]
fn a_one_of_with_30000_values_is_searched_in_linear_time() {
    let dir = scratch("perf_one_of");
    let values: Vec<String> = (0..30_000).map(|i| (1_000 + i).to_string()).collect();
    std::fs::write(
        dir.join("one_of.deploy"),
        format!(
            "deployment d {{\n    model = glm4_9b\n    quant = Q4_K_M\n    gpu = rtx_4090\n    context = one_of [{}]\n}}\n",
            values.join(", ")
        ),
    )
    .unwrap();
    let (report, output) = check_json(&dir, "one_of.deploy");
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(codes(&report), ["deploy::solve::chosen"]);
    let message = diagnostics(&report)[0]["message"].as_str().unwrap();
    assert!(message.contains("of 30000 candidates"), "{message}");
}

#[test]
fn an_unknown_name_in_a_require_is_reported_once_and_no_candidate_is_tried() {
    let dir = scratch("perf_unknown_require");
    std::fs::write(
        dir.join("unknown.deploy"),
        "deployment d {\n    model = glm4_9b\n    quant = ?\n    kv_cache = ?\n    engine = ?\n    gpu = ?\n    count = ?\n    require fits\n    require bogus_name > 3\n}\n",
    )
    .unwrap();
    let (report, output) = check_json(&dir, "unknown.deploy");
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(codes(&report), ["deploy::name::unknown"]);
    assert_eq!(diagnostics(&report)[0]["line"], 9);
    let (solve, _) = run_timed(&dir, &["solve", "unknown.deploy"], HANG);
    assert_eq!(solve.status.code(), Some(1));
    let text = format!(
        "{}{}",
        stdout(&solve),
        String::from_utf8_lossy(&solve.stderr)
    );
    assert!(text.contains("`d` has errors"), "{text}");
}

#[test]
fn the_cheapest_first_search_solves_a_million_candidates_lazily() {
    let dir = scratch("perf_candidates");
    // 170 bytes, 1,552,320 candidates with the 77-GPU catalog (more with a larger one):
    // searched in full (31 s, 1.47 GB), then refused by the limit; now walked from the
    // cheapest price up, evaluating only the candidates at the prices it must.
    std::fs::write(
        dir.join("open.deploy"),
        "deployment d {\n    model = glm4_9b\n    gpu = ?\n    quant = ?\n    kv_cache = ?\n    engine = ?\n    replicas = ?\n    context = one_of [1k, 2k, 4k]\n}\n",
    )
    .unwrap();
    let (report, output) = check_json(&dir, "open.deploy");
    assert_eq!(output.status.code(), Some(0), "{report}");
    assert!(
        codes(&report)
            .iter()
            .all(|c| *c != "deploy::solve::too_many_candidates"),
        "{report}"
    );
    assert!(codes(&report).contains(&"deploy::solve::chosen"));
    let (solve, _) = run_timed(&dir, &["solve", "open.deploy", "--format", "json"], HANG);
    assert_eq!(solve.status.code(), Some(0));
    let solutions: serde_json::Value = serde_json::from_slice(&solve.stdout).unwrap();
    let solution = &solutions[0];
    let candidates = solution["candidates"].as_u64().unwrap();
    let evaluated = solution["evaluated"].as_u64().unwrap();
    assert!(candidates >= 1_552_320, "{candidates}");
    assert!(evaluated < 20_000, "{evaluated} of {candidates} evaluated");
    assert_eq!(solution["ranked"][0]["assignment"]["replicas"], "1");

    // The lazy search returns what the exhaustive one does: the same deployment with a
    // written objective (every candidate evaluated) ranks the same top five. Quants and
    // engines are narrowed so that the exhaustive search stays under its candidate limit
    // with the ~800-GPU catalog.
    let holes = "    model = glm4_9b\n    gpu = ?\n    quant = one_of [Q4_K_M, Q8_0, fp8]\n    kv_cache = ?\n    engine = one_of [vllm, llamacpp, sglang]\n    replicas = one_of [1, 2]\n    require decode_tps > 60 tok/s\n";
    std::fs::write(
        dir.join("both.deploy"),
        format!(
            "deployment lazy {{\n{holes}}}\ndeployment full {{\n{holes}    minimize cost_per_hour * 1\n}}\n"
        ),
    )
    .unwrap();
    let (solve, _) = run_timed(
        &dir,
        &["solve", "both.deploy", "--top", "5", "--format", "json"],
        HANG,
    );
    let both: serde_json::Value = serde_json::from_slice(&solve.stdout).unwrap();
    let ranked = |i: usize| {
        both[i]["ranked"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["assignment"].clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(both[0]["deployment"], "lazy");
    assert_eq!(ranked(0).len(), 5);
    assert_eq!(ranked(0), ranked(1));
    assert!(both[0]["evaluated"].as_u64() < both[1]["evaluated"].as_u64());
}

#[test]
fn too_many_candidates_are_refused_before_the_search_with_each_hole_counted() {
    let dir = scratch("perf_too_many");
    // A written objective evaluates every candidate: more than the limit is refused.
    std::fs::write(
        dir.join("open.deploy"),
        "deployment d {\n    model = glm4_9b\n    gpu = ?\n    quant = ?\n    kv_cache = ?\n    engine = ?\n    replicas = ?\n    context = one_of [1k, 2k, 4k]\n    maximize decode_tps\n}\n",
    )
    .unwrap();
    let (report, output) = check_json(&dir, "open.deploy");
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(codes(&report), ["deploy::solve::too_many_candidates"]);
    let diag = &diagnostics(&report)[0];
    let message = diag["message"].as_str().unwrap();
    assert!(message.contains("the limit is 100000"), "{message}");
    assert!(message.contains(" × replicas 16 × context 3)"), "{message}");
    let help = diag["help"].as_str().unwrap();
    assert!(help.contains("pin `gpu`"), "{help}");
    let (solve, _) = run_timed(&dir, &["solve", "open.deploy"], HANG);
    assert_eq!(solve.status.code(), Some(1));

    // The cheapest-first search bounds the candidates that share one price (the holes
    // other than gpu, count and replicas), and a product past what a machine word holds
    // saturates instead of overflowing.
    let many: Vec<String> = (1..=1_000).map(|i| i.to_string()).collect();
    let many = many.join(", ");
    let shares: Vec<String> = (1..=1_000)
        .map(|i| format!("{}%", i as f64 / 10.0))
        .collect();
    let shares = shares.join(", ");
    std::fs::write(
        dir.join("huge.deploy"),
        format!(
            "deployment d {{\n    model = glm4_9b\n    quant = ?\n    gpu = ?\n    count = one_of [{many}]\n    replicas = one_of [{many}]\n    seqs = one_of [{many}]\n    context = one_of [{many}]\n    kv_cache = ?\n    engine = ?\n    memory_utilization = one_of [{shares}]\n}}\n"
        ),
    )
    .unwrap();
    let (report, _) = check_json(&dir, "huge.deploy");
    assert_eq!(codes(&report), ["deploy::solve::too_many_candidates"]);
    let message = diagnostics(&report)[0]["message"].as_str().unwrap();
    assert!(message.contains("candidates share each price"), "{message}");
    assert!(message.contains("of more than "), "{message}");
    assert!(
        !message.contains("gpu "),
        "priced holes are not counted: {message}"
    );
}

#[test]
fn a_long_message_is_rendered_once_per_reported_candidate_not_per_candidate() {
    let dir = scratch("perf_message_search");
    // 1,078 candidates, every one evaluated (a written objective), and a rule whose
    // message has 65,000 interpolations: rendered for each candidate, this took 24 s in
    // debug.
    let message = "{fits}".repeat(65_000);
    std::fs::write(
        dir.join("search.deploy"),
        format!(
            "deployment d {{\n    model = glm4_9b\n    quant = ?\n    gpu = ?\n    maximize decode_tps\n}}\nrule every_figure {{\n    level = warn\n    when = fits\n    message = \"{message}\"\n}}\n"
        ),
    )
    .unwrap();
    let (report, output) = check_json(&dir, "search.deploy");
    assert_eq!(output.status.code(), Some(0));
    let found = diagnostics(&report);
    let rule = found
        .iter()
        .find(|d| d["code"] == "deploy::rule::every_figure")
        .expect("the rule fires on the solution");
    assert_eq!(rule["message"].as_str().unwrap(), "true".repeat(65_000));
    assert!(codes(&report).contains(&"deploy::solve::chosen"));

    // The misses that are reported still carry their rendered messages.
    std::fs::write(
        dir.join("slow.deploy"),
        "deployment d {\n    model = glm4_9b\n    quant = one_of [Q4_K_M, Q8_0]\n    gpu = one_of [rtx_3090, rtx_4090]\n    require decode_tps >= 500 tok/s else \"too slow at {decode_tps}\"\n}\n",
    )
    .unwrap();
    let (report, _) = check_json(&dir, "slow.deploy");
    assert_eq!(codes(&report), ["deploy::solve::no_solution"]);
    let help = diagnostics(&report)[0]["help"].as_str().unwrap();
    assert_eq!(help.matches("too slow at ").count(), 3, "{help}");
    assert!(help.contains(" tok/s (decode_tps = "), "{help}");
}

#[test]
fn an_impossible_require_is_proved_by_a_bound_rather_than_evaluated() {
    let dir = scratch("perf_impossible");
    // 33,570,720 candidates with the 818-GPU catalog; no GPU decodes 100,000 tok/s. The
    // cheapest 100,000 were evaluated (3.6 s of CPU, 180 MB); now a bound on decode speed
    // from each GPU's memory bandwidth rules them out (docs/cost.md), with the same code
    // and help, and a message that says how many were evaluated and how many ruled out.
    std::fs::write(
        dir.join("impossible.deploy"),
        "deployment d {\n    model = glm4_9b\n    gpu = ?\n    quant = ?\n    kv_cache = ?\n    engine = ?\n    replicas = ?\n    context = one_of [1k, 2k, 4k]\n    require decode_tps > 100000 tok/s\n}\n",
    )
    .unwrap();
    let (report, output) = check_json(&dir, "impossible.deploy");
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(codes(&report), ["deploy::solve::too_many_candidates"]);
    let diag = &diagnostics(&report)[0];
    let message = diag["message"].as_str().unwrap();
    assert!(message.starts_with("the 100000 cheapest of "), "{message}");
    assert!(
        message.contains(" were searched and none meets every require ("),
        "{message}"
    );
    assert!(message.ends_with("; the limit is 100000"), "{message}");
    let help = diag["help"].as_str().unwrap();
    assert!(help.starts_with("narrow the search: pin `gpu`"), "{help}");
    let number_before = |word: &str| -> u64 {
        let end = message.find(word).unwrap();
        let start = message[..end].rfind(['(', ' ']).unwrap() + 1;
        message[start..end].trim().parse().unwrap()
    };
    let evaluated = number_before(" evaluated,");
    let ruled_out = number_before(" ruled out by a bound");
    assert_eq!(evaluated + ruled_out, 100_000, "{message}");
    assert!(evaluated < 1_000, "{evaluated} evaluated: {message}");
}

#[test]
fn the_decode_bound_prunes_nothing_that_meets_the_require() {
    let dir = scratch("perf_bound_sound");
    // A floor most cheap GPUs cannot reach but some can: the search with the bound (the
    // default objective) ranks the same top five as the exhaustive one (a written
    // objective, no bound).
    let holes = "    model = glm4_9b\n    gpu = ?\n    quant = one_of [Q4_K_M, Q8_0, fp8]\n    kv_cache = ?\n    engine = one_of [vllm, llamacpp]\n    replicas = one_of [1, 2]\n    require decode_tps > 150 tok/s\n";
    std::fs::write(
        dir.join("both.deploy"),
        format!(
            "deployment lazy {{\n{holes}}}\ndeployment full {{\n{holes}    minimize cost_per_hour * 1\n}}\n"
        ),
    )
    .unwrap();
    let (solve, _) = run_timed(
        &dir,
        &["solve", "both.deploy", "--top", "5", "--format", "json"],
        HANG,
    );
    assert_eq!(solve.status.code(), Some(0));
    let both: serde_json::Value = serde_json::from_slice(&solve.stdout).unwrap();
    let assignments = |i: usize, list: &str| {
        both[i][list]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["assignment"].clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(assignments(0, "ranked").len(), 5);
    assert_eq!(assignments(0, "ranked"), assignments(1, "ranked"));
}
