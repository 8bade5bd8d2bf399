//! Cost that matches the bill (issue #15, parts 1–3), through the real binary: cloud
//! offers rented as whole instances, owned GPUs amortised with power, no silent fallback,
//! the solver ranking rentable configurations, and the generated offers file.

use crate::common;

use std::process::Command;

use common::{deployfit, json, root, scratch, stdout};
use serde_json::Value;

fn write(dir: &std::path::Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

/// `explain --format json` of one file, by deployment name.
fn explain(path: &str) -> Vec<Value> {
    let output = deployfit(&["explain", path, "--format", "json"]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    json(&output).as_array().expect("an array").clone()
}

fn by_name<'a>(all: &'a [Value], name: &str) -> &'a Value {
    all.iter()
        .find(|e| e["deployment"] == name)
        .unwrap_or_else(|| panic!("no deployment {name}"))
}

const LLAMA_70B_CLOUD: &str = r#"
deployment llama70 {
    model   = "meta-llama/Llama-3.1-70B-Instruct"
    quant   = fp8
    engine  = vllm
    gpu     = h100_sxm5
    count   = 2
    context = 8k
    pricing = cloud
}
"#;

#[test]
fn llama_70b_on_two_h100_rents_a_named_offer() {
    let dir = scratch("pricing_llama70");
    let path = write(&dir, "a.deploy", LLAMA_70B_CLOUD);
    let all = explain(&path);
    let e = by_name(&all, "llama70");
    assert_eq!(e["pricing"], "cloud");
    let provider = e["provider"].as_str().expect("a provider");
    let offer = e["offer"].as_str().expect("an offer");
    let instances = e["instances"].as_u64().expect("instances");
    let per_instance = e["instance_price_usd_per_hour"].as_f64().unwrap();
    let gpus_per_instance = e["gpus_per_instance"].as_u64().unwrap();
    let cost = e["cost_per_hour_usd"].as_f64().unwrap();
    // The cost is the instances it implies, whole.
    assert!((cost - instances as f64 * per_instance).abs() < 1e-9, "{e}");
    assert!(instances * gpus_per_instance >= 2, "{e}");
    // The tensor-parallel pair must share one server's NVLink: the cheapest instance that
    // holds two is RunPod's 8-GPU pod, not two of Lambda's 1-GPU instances ($6.58/h).
    assert_eq!(
        (provider, offer, instances, gpus_per_instance),
        ("runpod", "runpod_8x_h100_sxm_secure", 1, 8)
    );
    assert!((cost - 23.92).abs() < 1e-9, "{cost}");
    assert!(e.get("tensor_spans_instances").is_none(), "{e}");
    // The human explain says it too.
    let text = stdout(&deployfit(&["explain", &path]));
    assert!(
        text.contains("pricing      cloud: provider runpod, offer runpod_8x_h100_sxm_secure, 1 × 8x_H100-SXM_SECURE"),
        "{text}"
    );
    assert!(text.contains("cost         $23.92/h"), "{text}");
    assert!(
        text.contains("each tensor-parallel group of 2 × h100_sxm5 is rented in one instance"),
        "{text}"
    );
}

/// A tensor-parallel group is rented in one instance wherever an offer holds it; where
/// none does (the catalog rents H100 PCIe only as Lambda's 1-GPU instances) it spans
/// instances and says so. One GPU still rents the cheapest 1-GPU instance, pipeline
/// stages may cross instances, and the solver's fleet options follow the same rule.
#[test]
fn a_tensor_parallel_group_rents_one_instance_that_holds_it() {
    let dir = scratch("pricing_tensor_group");
    let path = write(
        &dir,
        "a.deploy",
        r#"// Tensorparallel — 张量并行: eine Gruppe, ein Server
deployment one {
    model = glm4_9b; quant = fp8; engine = vllm; context = 8k; gpu = h100_sxm5 // ü
}
deployment pair {
    model = glm4_9b; quant = fp8; engine = vllm; context = 8k; gpu = h100_sxm5; count = 2
}
deployment pcie_pair {
    model = glm4_9b; quant = fp8; engine = vllm; context = 8k; gpu = h100_pcie; count = 2
}
deployment stages {
    model = glm4_9b; quant = bf16; engine = vllm; context = 8k; gpu = h100_sxm5; pipeline = 2
}
"#,
    );
    let all = explain(&path);
    let one = by_name(&all, "one");
    assert_eq!(one["offer"], "lambda_gpu_1x_h100_sxm5", "{one}");
    let pair = by_name(&all, "pair");
    assert!(pair["gpus_per_instance"].as_u64().unwrap() >= 2, "{pair}");
    assert_eq!(pair["instances"], 1, "{pair}");
    // No offer holds two H100 PCIe in one instance (Lambda rents them one per machine): the
    // group is not split across instances, so the plan has no cloud cost (issue 35).
    let pcie = by_name(&all, "pcie_pair");
    assert!(pcie["offer"].is_null(), "{pcie}");
    assert!(pcie["cost_per_hour_usd"].is_null(), "{pcie}");
    let said = pcie["assumptions"].to_string();
    assert!(!said.contains("is rented in one instance"), "{said}");
    // Two pipeline stages of one GPU each: each stage fits a 1-GPU instance.
    let stages = by_name(&all, "stages");
    assert_eq!(
        (stages["offer"].as_str(), stages["instances"].as_u64()),
        (Some("lambda_gpu_1x_h100_sxm5"), Some(2)),
        "{stages}"
    );
    assert!(
        !stages["assumptions"]
            .to_string()
            .contains("tensor-parallel group")
    );
}

#[test]
fn whole_instances_and_filters() {
    let dir = scratch("pricing_filters");
    let path = write(
        &dir,
        "a.deploy",
        r#"
deployment eight {
    model = glm4_9b; quant = fp8; engine = vllm; context = 8k
    gpu = h100_sxm5; count = 8
}
deployment on_aws {
    model = glm4_9b; quant = fp8; engine = vllm; context = 8k
    gpu = h100_sxm5; provider = aws
}
deployment spot {
    model = glm4_9b; quant = fp8; engine = vllm; context = 8k
    gpu = l40s; provider = aws; spot = true
}
deployment named {
    model = glm4_9b; quant = fp8; engine = vllm; context = 8k
    gpu = h100_sxm5; count = 2; replicas = 3; offer = runpod_8x_h100_sxm_secure
}
"#,
    );
    let all = explain(&path);
    // Eight GPUs: one 8-GPU server is cheaper than eight 1-GPU instances.
    let eight = by_name(&all, "eight");
    assert_eq!(eight["instances"], 1);
    assert_eq!(eight["gpus_per_instance"], 8);
    // An AWS p5 has 8 GPUs: one GPU rents the whole instance.
    let aws = by_name(&all, "on_aws");
    assert_eq!(aws["provider"], "aws");
    assert_eq!(aws["instance"], "p5.48xlarge");
    assert_eq!(aws["instances"], 1);
    let spot = by_name(&all, "spot");
    assert_eq!(spot["spot"], true);
    assert!(
        (spot["cost_per_hour_usd"].as_f64().unwrap()
            - spot["instance_price_usd_per_hour"].as_f64().unwrap())
        .abs()
            < 1e-9
    );
    // 3 replicas of 2 GPUs share 8-GPU instances 4 to one: 1 instance.
    let named = by_name(&all, "named");
    assert_eq!(named["offer"], "runpod_8x_h100_sxm_secure");
    assert_eq!(named["instances"], 1);
}

#[test]
fn an_owned_rtx_4090_costs_more_than_its_amortised_price() {
    let dir = scratch("pricing_owned");
    let path = write(
        &dir,
        "a.deploy",
        r#"
deployment mine {
    model   = glm4_9b
    quant   = Q4_K_M
    engine  = llamacpp
    context = 8k
    gpu     = rtx_4090
    pricing = owned
    owned { amortize = 3 years; power = $0.30/kWh }
}
"#,
    );
    let all = explain(&path);
    let e = by_name(&all, "mine");
    assert_eq!(e["pricing"], "owned");
    assert!(e.get("offer").is_none(), "{e}");
    let owned = &e["owned"];
    let amortised = owned["amortized_usd_per_hour"].as_f64().unwrap();
    let cost = e["cost_per_hour_usd"].as_f64().unwrap();
    // $1,599 over 26,280 h, plus 450 W × 1.3 at $0.30/kWh.
    assert!((amortised - 1599.0 / 26280.0).abs() < 1e-9, "{owned}");
    assert!(
        (cost - (1599.0 / 26280.0 + 0.450 * 1.3 * 0.30)).abs() < 1e-9,
        "{cost}"
    );
    assert!(cost > amortised);
    let text = stdout(&deployfit(&["explain", &path]));
    assert!(text.contains("pricing      owned"), "{text}");
    assert!(
        text.contains("- pricing = owned: per GPU $1599.00 over 3 years"),
        "{text}"
    );
}

#[test]
fn no_offer_means_no_cost_and_a_coded_diagnostic() {
    let dir = scratch("pricing_no_offer");
    let path = write(
        &dir,
        "a.deploy",
        r#"
deployment small {
    model   = glm4_9b
    quant   = Q4_K_M
    engine  = llamacpp
    context = 8k
    gpu     = rtx_3060_12gb
    pricing = cloud
}
deployment quiet {
    model   = glm4_9b
    quant   = Q4_K_M
    engine  = llamacpp
    context = 8k
    gpu     = rtx_3060_12gb
}
"#,
    );
    let all = explain(&path);
    let small = by_name(&all, "small");
    assert!(small["cost_per_hour_usd"].is_null(), "{small}");
    let why = small["cost_missing"].as_str().unwrap();
    assert!(
        why.contains("no cloud offer rents `rtx_3060_12gb`"),
        "{why}"
    );
    assert!(why.contains("pricing = owned"), "{why}");
    let report = json(&deployfit(&["check", "--format", "json", &path]));
    let codes = common::codes(&report);
    // Said on the explicit `pricing = cloud` only; the default is quiet.
    assert_eq!(
        codes
            .iter()
            .filter(|c| *c == "deploy::cost::no_offer")
            .count(),
        1,
        "{codes:?}"
    );
}

#[test]
fn the_solver_ranks_rentable_configurations() {
    let dir = scratch("pricing_solve");
    let path = write(
        &dir,
        "a.deploy",
        r#"
deployment solve_me {
    model   = "meta-llama/Llama-3.1-70B-Instruct"
    quant   = fp8
    engine  = vllm
    context = 8k
    gpu     = ?
    count   = ?
    pricing = cloud
}
deployment pick_offer {
    model   = glm4_9b
    quant   = fp8
    engine  = vllm
    context = 8k
    gpu     = h100_sxm5
    offer   = ?
    provider = one_of [aws, lambda]
}
"#,
    );
    let output = deployfit(&["solve", &path, "--format", "json"]);
    let solutions = json(&output);
    let all = solutions.as_array().expect("solutions");
    let first = |name: &str| {
        all.iter()
            .find(|s| s["deployment"] == name)
            .and_then(|s| s["ranked"].get(0))
            .cloned()
            .unwrap_or_else(|| panic!("{name}: {solutions}"))
    };
    let best = first("solve_me");
    let rental = best["rental"].as_str().expect("a named offer");
    assert!(rental.contains("(offer "), "{rental}");
    assert!(best["cost_per_hour_usd"].as_f64().unwrap() > 0.0);
    // No GPU without an offer is ranked, and costs only grow down the ranking.
    let ranked = all.iter().find(|s| s["deployment"] == "solve_me").unwrap()["ranked"]
        .as_array()
        .unwrap()
        .clone();
    let costs: Vec<f64> = ranked
        .iter()
        .map(|c| {
            c["cost_per_hour_usd"]
                .as_f64()
                .expect("every ranked candidate has a cost")
        })
        .collect();
    assert!(costs.windows(2).all(|w| w[0] <= w[1]), "{costs:?}");
    let pick = first("pick_offer");
    assert_eq!(
        pick["assignment"]["offer"], "lambda_gpu_1x_h100_sxm5",
        "{pick}"
    );
    assert_eq!(pick["assignment"]["provider"], "lambda", "{pick}");
    // The table names it too.
    let text = stdout(&deployfit(&["solve", &path]));
    assert!(text.contains("rents"), "{text}");
    assert!(text.contains("(offer "), "{text}");
}

#[test]
fn an_extends_copy_of_h100_sxm5_prices_identically() {
    let dir = scratch("pricing_extends");
    let path = write(
        &dir,
        "a.deploy",
        r#"
gpu my_h100 extends h100_sxm5 { name = "Renamed card" }

deployment original {
    model = glm4_9b; quant = fp8; engine = vllm; context = 8k; gpu = h100_sxm5; count = 2
}
deployment copy {
    model = glm4_9b; quant = fp8; engine = vllm; context = 8k; gpu = my_h100; count = 2
}
deployment owned_original {
    model = glm4_9b; quant = fp8; engine = vllm; context = 8k; gpu = h100_sxm5
    pricing = owned
}
deployment owned_copy {
    model = glm4_9b; quant = fp8; engine = vllm; context = 8k; gpu = my_h100
    pricing = owned
}
"#,
    );
    let all = explain(&path);
    let (a, b) = (by_name(&all, "original"), by_name(&all, "copy"));
    for key in [
        "pricing",
        "provider",
        "offer",
        "instances",
        "instance_price_usd_per_hour",
        "cost_per_hour_usd",
        "cost_per_mtok_usd",
    ] {
        assert_eq!(a[key], b[key], "{key}");
    }
    assert!(a["cost_per_hour_usd"].as_f64().is_some());
    let (a, b) = (by_name(&all, "owned_original"), by_name(&all, "owned_copy"));
    // No `msrp` on either: no owned cost, for the same reason (each names its entry).
    assert_eq!(a["cost_per_hour_usd"], b["cost_per_hour_usd"]);
    assert!(a["cost_per_hour_usd"].is_null());
    assert!(
        b["cost_missing"]
            .as_str()
            .unwrap()
            .contains("has no `msrp`")
    );
}

#[test]
fn non_ascii_around_the_new_syntax() {
    let dir = scratch("pricing_unicode");
    let text = "// Coût réel — « propriétaire » ✓\n\
deployment owned_u { // 所有\n    \
model   = glm4_9b // modèle\n    \
quant   = Q4_K_M\n    \
gpu     = rtx_4090\n    \
pricing = owned   // ⚡\n    \
owned { amortize = 3 years; power = $0.30/kWh; pue = 1.2 } // énergie ✓\n\
}\n\
deployment bad { // ✗ « mauvais »\n    \
model = glm4_9b; quant = Q4_K_M; gpu = rtx_4090 // ß\n    \
owned { power = 3 years; pue = 0.5; hst = $1/h } // é\n    \
pricing = cloud; region = \"nowhere-é\"\n    \
require cost_per_hour <= $1/h // 💸\n\
}\n";
    let path = write(&dir, "a.deploy", text);
    let output = deployfit(&["check", "--format", "json", &path]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    let report = json(&output);
    let codes = common::codes(&report);
    for code in [
        "deploy::unit::expected",
        "deploy::field::out_of_range",
        "deploy::field::unknown",
    ] {
        assert!(codes.iter().any(|c| c == code), "{code} in {codes:?}");
    }
    // The owned deployment is fine and owned (explained from a file of its own: a file
    // with errors exits 1).
    let good_text = &text[..text.find("deployment bad").unwrap()];
    let good = write(&dir, "good.deploy", good_text);
    let all = explain(&good);
    let owned = by_name(&all, "owned_u");
    assert_eq!(owned["pricing"], "owned");
    assert!(owned["cost_per_hour_usd"].as_f64().unwrap() > 0.0);
    // Every span is on character boundaries of the file.
    for diagnostic in report["diagnostics"].as_array().unwrap() {
        let span = &diagnostic["span"];
        if let (Some(start), Some(end)) = (span["start"].as_u64(), span["end"].as_u64()) {
            assert!(text.is_char_boundary(start as usize), "{diagnostic}");
            assert!(text.is_char_boundary(end as usize), "{diagnostic}");
        }
    }
    // The human renderer and `fmt` take the same text without panicking.
    for args in [
        vec!["check", path.as_str()],
        vec!["fmt", "--check", path.as_str()],
    ] {
        let output = deployfit(&args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

#[test]
fn the_offers_file_is_up_to_date() {
    let python = Command::new("python3").arg("--version").output();
    if !python.is_ok_and(|o| o.status.success()) {
        println!("note: python3 is not on PATH; skipping `scripts/gen_offers.py --check`");
        return;
    }
    if !root().join("../shared/catalog/cloud_prices.csv").exists() {
        println!(
            "note: ../shared/catalog/cloud_prices.csv is absent; skipping `scripts/gen_offers.py --check`"
        );
        return;
    }
    let output = Command::new("python3")
        .args(["scripts/gen_offers.py", "--check"])
        .current_dir(root())
        .output()
        .expect("python3 runs");
    assert!(
        output.status.success(),
        "stdlib/offers.deploy is stale: run python3 scripts/gen_offers.py\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // The check really compares: a changed price fails it.
    let scratch = scratch("gen_offers_check");
    let csv = std::fs::read_to_string(root().join("../shared/catalog/cloud_prices.csv")).unwrap();
    let changed = csv.replacen(",g5.xlarge,A10G,1,1.006,", ",g5.xlarge,A10G,1,1.007,", 1);
    assert_ne!(changed, csv, "the g5.xlarge row");
    let stale = scratch.join("cloud_prices.csv");
    std::fs::write(&stale, changed).unwrap();
    let output = Command::new("python3")
        .args(["scripts/gen_offers.py", "--check", "--csv"])
        .arg(&stale)
        .current_dir(root())
        .output()
        .expect("python3 runs");
    assert_eq!(
        output.status.code(),
        Some(1),
        "a changed price must fail --check"
    );
}

#[test]
fn the_offers_catalog_is_sourced_and_whole() {
    let text = std::fs::read_to_string(root().join("stdlib/offers.deploy")).unwrap();
    let offers = text.lines().filter(|l| l.starts_with("offer ")).count();
    assert_eq!(offers, 63);
    // Every offer has a source comment above it.
    let sources = text
        .lines()
        .filter(|l| l.starts_with("// source: "))
        .count();
    assert_eq!(sources, offers);
}

/// Issue 35: a tensor-parallel group is never rented across instances — their network is
/// neither stated by an offer nor timed — so the cheapest 70B plan at 32k × 8 is not eight
/// one-GPU machines priced as if they shared NVLink, and `check` says so of a pinned group.
#[test]
fn no_plan_rents_a_tensor_parallel_group_across_instances() {
    let dir = scratch("pricing_tp_instances");
    let path = write(
        &dir,
        "big.deploy",
        "// ü\ndeployment big {\n    model   = llama_3_1_70b\n    quant   = bf16\n    context = 32k\n    seqs    = 8\n    gpu     = ?\n    count   = ?\n    engine  = vllm\n    minimize cost_per_hour\n}\n",
    );
    let output = deployfit(&["solve", &path, "--format", "json"]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let answer = json(&output);
    let ranked = answer[0]["ranked"].as_array().expect("ranked");
    assert!(!ranked.is_empty(), "{answer}");
    for candidate in ranked {
        // One replica of one stage: the whole group is one instance.
        let rental = candidate["rental"].as_str().unwrap_or_default();
        assert!(rental.starts_with("1 × "), "{candidate}");
    }
    // A pinned pair no offer holds in one instance: no cost, and a warning on `count`.
    let text = "// ü\ndeployment pair {\n    model = glm4_9b\n    quant = fp8\n    engine = vllm\n    context = 8k\n    gpu = h100_pcie\n    count = 2\n}\n";
    let path = write(&dir, "pair.deploy", text);
    let report = json(&deployfit(&["check", &path, "--format", "json"]));
    let diag = common::diagnostic(&report, "deploy::cost::no_offer");
    assert_eq!(diag["severity"], "warning", "{diag}");
    let at = text.find("count = 2").unwrap() + "count = ".len();
    assert_eq!(diag["span"]["start"].as_u64(), Some(at as u64), "{diag}");
    assert!(
        diag["message"]
            .as_str()
            .unwrap()
            .contains("holds a tensor-parallel group of 2 × `h100_pcie` in one instance"),
        "{diag}"
    );
}

/// An offer that states the GPU-to-GPU network between its instances (`network`: AWS's
/// EFA, Azure's InfiniBand) may hold a tensor-parallel group across whole instances; the
/// group's all-reduces are then timed over that network, so the plan is timed as it is
/// priced (issue 35). AWS p4de.24xlarge states 400 Gb/s for 8 A100s, 6.25 GB/s per GPU,
/// a quarter of the 25 GB/s a DGX A100's own InfiniBand gives each GPU.
#[test]
fn a_tensor_parallel_group_spans_instances_only_over_a_stated_network() {
    let dir = scratch("pricing_network");
    let body = |name: &str, extra: &str| {
        format!(
            "deployment {name} {{\n    model    = \"meta-llama/Llama-3.1-405B-Instruct\"\n    quant    = bf16\n    context  = 8k\n    seqs     = 16\n    engine   = vllm\n    gpu      = \"A100 SXM4 80GB\"\n    count    = 16\n{extra}    workload {{\n        prompt = 1000\n        output = 500\n    }}\n}}\n"
        )
    };
    let text = format!(
        "// Zwei Instanzen — 两台实例\n\
         /// The same eight GPUs rented from a colocation provider that states no network.\n\
         offer colo_8x_a100 {{\n    name  = \"colo 8 × A100 — ü\"\n    gpu   = a100_sxm4_80gb\n    gpus  = 8\n    price = $12/h\n}}\n\
         /// And one that states 200 Gb/s per GPU.\n\
         offer colo_8x_a100_ib {{\n    name    = \"colo 8 × A100 IB\"\n    gpu     = a100_sxm4_80gb\n    gpus    = 8\n    price   = $14/h\n    network = 25 GB/s\n}}\n\
         {}{}{}{}",
        body("on_aws", "    pricing  = cloud\n    provider = aws\n"),
        body("owned", "    pricing  = owned\n"),
        body(
            "colo_no_network",
            "    pricing  = cloud\n    offer    = colo_8x_a100\n"
        ),
        body(
            "colo_infiniband",
            "    pricing  = cloud\n    offer    = colo_8x_a100_ib\n"
        ),
    );
    let path = write(&dir, "span.deploy", &text);
    let all = explain(&path);
    let aws = by_name(&all, "on_aws");
    assert_eq!(
        (aws["offer"].as_str(), aws["instances"].as_u64()),
        (Some("aws_p4de_24xlarge"), Some(2)),
        "{aws}"
    );
    let said = aws["assumptions"].to_string();
    assert!(
        said.contains(
            "spans 2 instances of 8 over the offer's stated network, 6.25 GB/s per GPU each way"
        ),
        "{said}"
    );
    // Timed over EFA's 6.25 GB/s per GPU: slower than over the GPU's own 25 GB/s node link
    // (owned), and the same as a declared offer at that 25 GB/s within rounding.
    let tpot = |name: &str| by_name(&all, name)["tpot_s"].as_f64().unwrap();
    assert!(
        tpot("on_aws") > tpot("owned") * 1.05,
        "{} vs {}",
        tpot("on_aws"),
        tpot("owned")
    );
    assert!((tpot("colo_infiniband") - tpot("owned")).abs() < 1e-9 * tpot("owned").max(1.0));
    let ib = by_name(&all, "colo_infiniband");
    assert_eq!(ib["instances"], 2, "{ib}");
    // An offer that states no network does not rent the group across its instances.
    let none = by_name(&all, "colo_no_network");
    assert!(none["cost_per_hour_usd"].is_null(), "{none}");
    // `check` says so with the fix.
    let report = json(&deployfit(&["check", &path, "--format", "json"]));
    let text = report.to_string();
    assert!(
        text.contains("states the `network` between its instances"),
        "{text}"
    );
}
