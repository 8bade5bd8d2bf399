//! `cargo bench --bench check`: times `check` of a generated file of 10,000 deployments
//! (cold, in a fresh workspace) and the re-check after editing one deployment's field.
//! Figures are printed, never asserted: machines here are shared and noisy.

use std::path::Path;
use std::time::{Duration, Instant};

use deployfit_host::Workspace;

const GPUS: &[&str] = &[
    "rtx_3090",
    "rtx_4090",
    "l4",
    "a100_sxm4_80gb",
    "h100_sxm5",
    "rtx_3060_12gb",
];
const MODELS: &[&str] = &[
    "glm4_9b",
    "llama_3_1_8b",
    "qwen3_8b",
    "mistral_7b",
    "glm4_32b",
];
const QUANTS: &[&str] = &["Q4_K_M", "Q8_0", "Q6_K", "IQ4_XS"];

fn generate(count: usize) -> String {
    let mut text = String::new();
    for i in 0..count {
        text.push_str(&format!(
            "deployment d{i} {{\n    model    = {}\n    quant    = {}\n    context  = {}k\n    seqs     = {}\n    kv_cache = q8_0\n    engine   = llamacpp\n    gpu      = {}\n\n    require fits\n    require decode_tps >= 10 tok/s\n}}\n\n",
            MODELS[i % MODELS.len()],
            QUANTS[i % QUANTS.len()],
            4 << (i % 3),
            1 + i % 4,
            GPUS[i % GPUS.len()],
        ));
    }
    text
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn main() {
    let count = 10_000;
    let text = generate(count);
    let path = Path::new("bench.deploy");
    println!("input: {count} deployments, {} bytes", text.len());

    let mut parse = Vec::new();
    for _ in 0..5 {
        let start = Instant::now();
        let parsed = deployfit_host::syntax::parse(&text);
        assert_eq!(parsed.decls.len(), count);
        parse.push(start.elapsed());
    }
    println!("parse alone: median {:?}", median(parse));

    let mut cold = Vec::new();
    let mut diagnostics = 0;
    for _ in 0..5 {
        let start = Instant::now();
        let mut workspace = Workspace::new();
        let file = workspace.set_file(path, text.clone());
        diagnostics = workspace.check(file).len();
        cold.push(start.elapsed());
    }
    println!(
        "cold check (fresh workspace, stdlib included): median {:?} over {} runs, {diagnostics} diagnostics",
        median(cold.clone()),
        cold.len()
    );

    let mut workspace = Workspace::new();
    let file = workspace.set_file(path, text.clone());
    workspace.check(file);
    let mut warm = Vec::new();
    for i in 0..5 {
        let edited = text.replacen("seqs     = 1", &format!("seqs     = {}", 2 + i), 1);
        let start = Instant::now();
        workspace.set_file(path, edited);
        workspace.check(file);
        warm.push(start.elapsed());
    }
    println!(
        "re-check after editing one field: median {:?} over {} runs",
        median(warm.clone()),
        warm.len()
    );

    // The solver: one deployment over the full catalog (every GPU, weight format, KV
    // dtype and tensor-parallel count), and 1,000 deployments with `gpu = ?`.
    let full = "deployment open {\n    model    = glm4_9b\n    quant    = ?\n    context  = 32k\n    seqs     = 4\n    kv_cache = ?\n    engine   = llamacpp\n    gpu      = ?\n    count    = ?\n\n    require decode_tps >= 30 tok/s\n}\n";
    let mut workspace = Workspace::new();
    let file = workspace.set_file(Path::new("solve.deploy"), full.to_string());
    let mut solves = Vec::new();
    let mut evaluated = 0;
    let mut candidates = 0;
    for _ in 0..5 {
        let start = Instant::now();
        let solutions = workspace.solve(file, 5);
        solves.push(start.elapsed());
        if let Some((_, Ok(solution))) = solutions.first() {
            evaluated = solution.evaluated;
            candidates = solution.candidates;
        }
    }
    println!(
        "full-catalog solve of one deployment: median {:?} ({candidates} candidates, {evaluated} evaluated)",
        median(solves)
    );

    let mut many = String::new();
    for i in 0..1_000 {
        many.push_str(&format!(
            "deployment d{i} {{\n    model    = {}\n    quant    = {}\n    context  = {}k\n    engine   = llamacpp\n    gpu      = ?\n}}\n\n",
            MODELS[i % MODELS.len()],
            QUANTS[i % QUANTS.len()],
            4 << (i % 3),
        ));
    }
    let mut thousand = Vec::new();
    for _ in 0..3 {
        let start = Instant::now();
        let mut workspace = Workspace::new();
        let file = workspace.set_file(Path::new("many.deploy"), many.clone());
        workspace.check(file);
        thousand.push(start.elapsed());
    }
    println!(
        "check of 1,000 deployments with `gpu = ?`: median {:?}",
        median(thousand)
    );

    serving();
    hardening();
}

/// The serving simulator's cost: 100 vLLM deployments under Poisson workloads and bursts,
/// explained (each runs a capacity and a latency simulation), and the solver over the
/// catalog with a serving engine and a workload (tests/fixtures/design/02-holes-cheapest).
fn serving() {
    let mut text = String::new();
    for i in 0..100 {
        let arrivals = if i % 2 == 0 {
            format!("rate = {} req/s", 1 + i % 13)
        } else {
            format!("burst = {}", 100 + 37 * i)
        };
        text.push_str(&format!(
            "deployment s{i} {{\n    model    = llama_3_1_8b\n    quant    = fp8\n    engine   = vllm\n    gpu      = h100_sxm5\n    seqs     = {}\n    context  = 8k\n    workload {{\n        prompt = {}\n        output = {}\n        {arrivals}\n        lengths = varied\n    }}\n}}\n\n",
            16 << (i % 5),
            256 << (i % 4),
            64 << (i % 3),
        ));
    }
    // The same deployments under llama.cpp's single-stream model (no simulation): the
    // difference is the simulator's cost.
    let single = text.replace("engine   = vllm", "engine   = llamacpp");
    let time = |text: &str| {
        let mut runs = Vec::new();
        for _ in 0..3 {
            let start = Instant::now();
            let mut workspace = Workspace::new();
            let file = workspace.set_file(Path::new("serving.deploy"), text.to_string());
            workspace.check(file);
            assert_eq!(workspace.explain(file).len(), 100);
            runs.push(start.elapsed());
        }
        median(runs)
    };
    let (served, streamed) = (time(&text), time(&single));
    println!(
        "check + explain of 100 vLLM deployments (Poisson and bursts, varied lengths): median {served:?}; as llama.cpp {streamed:?}; the simulator {:?} per deployment",
        served.saturating_sub(streamed) / 100
    );
    let fixture = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/design/02-holes-cheapest.deploy"),
    )
    .expect("the solver fixture");
    let mut workspace = Workspace::new();
    let file = workspace.set_file(Path::new("serving-solve.deploy"), fixture);
    let mut solves = Vec::new();
    let mut evaluated = 0;
    for _ in 0..3 {
        let start = Instant::now();
        let solutions = workspace.solve(file, 3);
        solves.push(start.elapsed());
        if let Some((_, Ok(solution))) = solutions.first() {
            evaluated = solution.evaluated;
        }
    }
    println!(
        "solve with vLLM and a Poisson workload over the catalog: median {:?} ({evaluated} evaluated)",
        median(solves)
    );
}

/// Checks `text` in a fresh workspace and returns how long it took and the diagnostics.
fn timed_check(name: &str, text: &str) -> (Duration, Vec<deployfit_host::Diagnostic>) {
    let start = Instant::now();
    let mut workspace = Workspace::new();
    let file = workspace.set_file(Path::new(name), text.to_string());
    let diagnostics = workspace.check(file);
    (start.elapsed(), diagnostics)
}

/// The reproducers of issue #10's super-linear cases (tests/hardening_perf.rs checks
/// their diagnostics through the binary): each is timed once at the size.
fn hardening() {
    use deployfit_host::render::{self, HumanOptions, OutputFormat};

    // Human output against JSON: about 1 MB with 1,800 diagnostics.
    let pad = format!("// {}\n", "x".repeat(500));
    let mut big = String::new();
    for i in 0..1_800 {
        big.push_str(&format!(
            "gpu g{i} extends rtx_4090 {{\n    pricee = $1/h\n}}\n{pad}"
        ));
    }
    let path = Path::new("big.deploy");
    let mut workspace = Workspace::new();
    let file = workspace.set_file(path, big.clone());
    let diagnostics = workspace.check(file);
    let source = |p: &Path| workspace.source(p);
    let report = deployfit_host::diagnostics::Report {
        diagnostics: &diagnostics,
        summaries: &[],
        source: &source,
    };
    let options = HumanOptions {
        color: false,
        width: 100,
        quiet: false,
    };
    for format in [OutputFormat::Json, OutputFormat::Human] {
        let start = Instant::now();
        let out = render::render(format, &report, 1, options);
        println!(
            "render {format:?} of {} bytes with {} diagnostics: {:?} ({} bytes out)",
            big.len(),
            diagnostics.len(),
            start.elapsed(),
            out.len()
        );
    }

    let interpolations = "{fits}".repeat(65_000);
    let (time, _) = timed_check(
        "interp.deploy",
        &format!(
            "deployment d {{\n    model = glm4_9b\n    quant = Q4_K_M\n    gpu = rtx_4090\n    require fits else \"{interpolations}\"\n}}\n"
        ),
    );
    println!("check with 65,000 interpolations in one string: {time:?}");

    for links in [8_000, 100_000] {
        let mut chain = String::from("gpu c0 extends rtx_4090 { price = $1/h }\n");
        for i in 1..links {
            chain.push_str(&format!("gpu c{i} extends c{} {{ }}\n", i - 1));
        }
        let (time, _) = timed_check("chain.deploy", &chain);
        println!("check of an `extends` chain of {links} links: {time:?}");
    }

    let values: Vec<String> = (0..30_000).map(|i| (1_000 + i).to_string()).collect();
    let (time, _) = timed_check(
        "one_of.deploy",
        &format!(
            "deployment d {{\n    model = glm4_9b\n    quant = Q4_K_M\n    gpu = rtx_4090\n    context = one_of [{}]\n}}\n",
            values.join(", ")
        ),
    );
    println!("check of a `one_of` of 30,000 values: {time:?}");

    let (time, _) = timed_check(
        "unknown.deploy",
        "deployment d {\n    model = glm4_9b\n    quant = ?\n    kv_cache = ?\n    engine = ?\n    gpu = ?\n    count = ?\n    require bogus_name > 3\n}\n",
    );
    println!("check of an unknown name in a `require` of a deployment with holes: {time:?}");

    let (time, _) = timed_check(
        "open.deploy",
        "deployment d {\n    model = glm4_9b\n    gpu = ?\n    quant = ?\n    kv_cache = ?\n    engine = ?\n    replicas = ?\n    context = one_of [1k, 2k, 4k]\n}\n",
    );
    // Issue #15's 1.55 M-candidate deployment (33.6 M candidates with today's catalog):
    // solved by the lazy best-first walk, not refused.
    println!("check of issue #15's open deployment (33.6 M candidates, solved): {time:?}");

    let (time, diagnostics) = timed_check(
        "worst.deploy",
        "deployment d {\n    model = glm4_9b\n    gpu = ?\n    quant = ?\n    kv_cache = ?\n    count = ?\n    replicas = one_of [1, 2, 3, 4]\n    maximize decode_tps\n    require decode_tps > 100000 tok/s\n}\n",
    );
    println!(
        "check of 86,240 candidates, every one evaluated: {time:?} ({})",
        diagnostics
            .first()
            .map(|d| d.message.as_str())
            .unwrap_or_default()
    );
}
