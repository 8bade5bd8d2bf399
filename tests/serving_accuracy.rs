//! The serving-engine speed model's accuracy: every speed row of
//! tests/fixtures/calibration/serving.csv (a verbatim copy of
//! ../shared/calibration/serving.csv, 133 published vLLM, SGLang, TensorRT-LLM and LMDeploy
//! measurements) becomes one deployment of catalog entries, evaluated in this process through
//! the library (`Workspace::explain`, what `deployfit explain --format json` prints), and its
//! output throughput, time per output token or time to first token is compared with the
//! measurement. Rows that cannot be mapped are skipped, each with its reason, and counted.
//!
//! The mapping (model, GPU, engine, format and concurrency rules) is the one of
//! scripts/fit_serving.py, which fitted the constants on these rows: the figures printed
//! here are in-sample and equal the script's "shipped constants" report. The held-out
//! figures (leave one GPU family out, two halves by model family) are the script's, in
//! docs/calibration-serving.md. The bounds at the end are regression bounds set just past
//! what the model met when they were written: a change that makes it worse fails here.

mod common;

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::Path;

use deployfit_compiler::Workspace;
use deployfit_compiler::db::Db;
use deployfit_compiler::eval::entry::entry_of;
use deployfit_compiler::explain::Explanation;
use deployfit_compiler::syntax::ast::DeclKind;

const GIB: f64 = (1u64 << 30) as f64;

/// Model id (lower-cased substring) → catalog model; the first match wins.
const MODELS: &[(&str, &str)] = &[
    // Llama-3.3-70B has Llama-3.1-70B's architecture; Meta-Llama-3-8B Llama-3.1-8B's dims.
    ("llama-3.3-70b", "llama_3_1_70b"),
    ("llama-3.1-405b", "llama_3_1_405b"),
    ("llama-3.1-8b", "llama_3_1_8b"),
    ("meta-llama-3-8b", "llama_3_1_8b"),
    ("llama-2-7b", "llama_2_7b"),
    ("llama-2-13b", "llama_2_13b"),
    ("llama-2-70b", "llama_2_70b"),
    ("qwen3-235b-a22b", "qwen3_235b_a22b"),
    ("qwen3-30b-a3b", "qwen3_30b_a3b"),
    ("qwen3-14b", "qwen3_14b"),
    ("deepseek-r1", "deepseek_r1"),
    ("gpt-oss-120b", "gpt_oss_120b"),
    // Models of the speculative-decoding rows, from the bundled Hugging Face registry
    // (registry/data/hf_models.csv) by id.
    ("qwen3.5-4b", "\"Qwen/Qwen3.5-4B\""),
    ("glm-5.2", "\"zai-org/GLM-5.2\""),
];

/// GPU text → catalog GPU; an A100 whose variant is not stated is the SXM part.
const GPUS: &[(&str, &str)] = &[
    ("gh200", "gh200"),
    ("b300", "b300"),
    ("b200", "b200"),
    ("h200", "h200_sxm"),
    ("h100", "h100_sxm5"),
    ("a100 pcie", "a100_pcie_80gb"),
    ("a100", "a100_sxm4_80gb"),
    ("mi300x", "mi300x"),
    ("mi325x", "mi325x"),
    ("mi355x", "mi355x"),
    ("l40s", "l40s"),
    ("l20", "l20"),
    ("a10g", "a10g"),
    ("rtx pro 6000", "rtx_pro_6000"),
];

const ENGINES: &[(&str, &str)] = &[
    ("tensorrt-llm", "tensorrt_llm"),
    ("lmdeploy", "lmdeploy"),
    ("vllm", "vllm"),
    ("sglang", "sglang"),
];

const SPEED_METRICS: &[&str] = &[
    "output_throughput_tps",
    "total_throughput_tps",
    "decode_tps_per_user",
    "tpot_ms",
    "itl_ms",
    "ttft_ms",
];

fn first(rules: &[(&str, &'static str)], text: &str) -> Option<&'static str> {
    let text = text.to_lowercase();
    rules
        .iter()
        .find(|(pattern, _)| text.contains(pattern))
        .map(|&(_, name)| name)
}

type Row = HashMap<String, String>;

fn load_rows() -> Vec<Row> {
    let path = common::root().join("tests/fixtures/calibration/serving.csv");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut records = common::parse_csv(&text).into_iter();
    let header = records.next().expect("a header");
    assert_eq!(header[0], "id", "the CSV keeps its header");
    records
        .map(|r| {
            assert_eq!(r.len(), header.len(), "every row has every column: {r:?}");
            header.iter().cloned().zip(r).collect()
        })
        .collect()
}

/// The first number a pattern captures in a text.
fn capture(pattern: &str, text: &str) -> Option<f64> {
    // The patterns are literal prefixes and suffixes around one number: `PRE{}SUF`.
    let (pre, suf) = pattern.split_once("{}").unwrap();
    let mut from = 0;
    while let Some(at) = text[from..].find(pre) {
        let start = from + at + pre.len();
        let digits: String = text[start..]
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        if !digits.is_empty() && text[start + digits.len()..].starts_with(suf) {
            return digits.parse().ok();
        }
        from = start;
    }
    None
}

/// The number of requests a benchmark sent, where the row says it.
fn requests(row: &Row) -> Option<f64> {
    for column in ["concurrency", "input_len", "output_len", "notes"] {
        let text = &row[column];
        for pattern in [
            "num_requests={}",
            "/{} req",
            "({} req",
            "{} prompts",
            "{} requests",
        ] {
            // "{} prompts" and "{} requests": the number before the word.
            if let Some(word) = pattern.strip_prefix("{}") {
                if let Some(at) = text.find(word) {
                    let digits: String = text[..at]
                        .chars()
                        .rev()
                        .take_while(char::is_ascii_digit)
                        .collect::<Vec<_>>()
                        .into_iter()
                        .rev()
                        .collect();
                    if !digits.is_empty() {
                        return digits.parse().ok();
                    }
                }
                continue;
            }
            if let Some(n) = capture(pattern, text) {
                return Some(n);
            }
        }
    }
    None
}

/// (prompt, output) tokens per request, or why not: numbers, ShareGPT totals over the
/// requests, or LMDeploy's request and token rates in the notes.
fn lengths(row: &Row) -> Result<(f64, f64), &'static str> {
    let (input, output) = (row["input_len"].trim(), row["output_len"].trim());
    if let (Ok(i), Ok(o)) = (input.parse::<u64>(), output.parse::<u64>()) {
        return Ok((i as f64, o as f64));
    }
    if let (Some(tokens), Some(count)) = (capture("({} in tok/", input), capture("/{} req", input))
    {
        let out = capture("(~{}k out tok", output)
            .map(|k| k * 1000.0)
            .or_else(|| capture("(~{} out tok", output))
            .or_else(|| capture("({} out tok", output));
        if let Some(out) = out {
            return Ok((tokens / count, out / count));
        }
    }
    let notes = &row["notes"];
    if let (Some(rps), Some(total)) = (capture("RPS {};", notes), capture("total tok/s {}", notes))
        && row["metric"] == "output_throughput_tps"
    {
        let out = row["value"].parse::<f64>().unwrap() / rps;
        return Ok((total / rps - out, out));
    }
    Err("prompt/output lengths not stated")
}

fn quant(row: &Row) -> Result<&'static str, &'static str> {
    let w = row["weight_dtype"].to_lowercase();
    Ok(if w.contains("not in excerpt") {
        return Err("weight format not stated");
    } else if w.contains("nvfp4") || (w.contains("fp4") && !w.contains("mxfp4")) {
        "nvfp4"
    } else if w.contains("mxfp4") {
        "mxfp4"
    } else if w.contains("awq") {
        "awq_int4"
    } else if w.contains("fp8") {
        "fp8"
    } else if w.contains("fp16") {
        "fp16"
    } else {
        "bf16"
    })
}

/// The GPU generation a row is held out by in scripts/fit_serving.py.
fn family(gpu: &str) -> &'static str {
    match gpu {
        g if g.starts_with("a100") || g == "a10g" => "ampere",
        "l40s" | "l20" => "ada",
        g if g.starts_with('b') || g == "rtx_pro_6000" => "blackwell",
        g if g.starts_with("mi") => "cdna",
        _ => "hopper",
    }
}

#[derive(Clone, Debug)]
struct Case {
    id: String,
    engine: &'static str,
    gpu: &'static str,
    model: &'static str,
    quant: &'static str,
    kv: &'static str,
    count: u64,
    prompt: f64,
    output: f64,
    metric: String,
    stat: String,
    value: f64,
    /// The client's cap on requests in flight, or the requests sent (`bounded` false).
    requested: f64,
    bounded: bool,
    offline: bool,
    seqs: u64,
    /// `speculative { method tokens }`, for the rows that ran speculative decoding.
    spec: Option<(&'static str, u64)>,
}

impl Case {
    fn kind(&self) -> &'static str {
        match self.metric.as_str() {
            "output_throughput_tps" | "total_throughput_tps" => "throughput",
            "tpot_ms" | "itl_ms" | "decode_tps_per_user" => "tpot",
            _ if self.seqs == 1 => "ttft_single",
            _ => "ttft_load",
        }
    }
}

fn case(row: &Row) -> Result<Case, &'static str> {
    if !SPEED_METRICS.contains(&row["metric"].as_str()) {
        return Err("not a speed metric");
    }
    if row["stat"] == "p99" {
        return Err("p99 (compared with the p99 figures, not fitted)");
    }
    let spec = speculative(&row["spec_decode"]);
    let notes = &row["notes"];
    if notes.contains("dp-attention") {
        return Err("data-parallel attention (not modelled)");
    }
    if notes.contains("ambiguous whether per-GPU or total") {
        return Err("throughput per GPU or in total not stated");
    }
    if !matches!(row["pp"].trim(), "" | "1") {
        return Err("pipeline parallel (not modelled)");
    }
    let model = first(MODELS, &row["model_hf_id"]).ok_or("model not in the catalog")?;
    let gpu = first(GPUS, &row["gpu"]).ok_or("GPU not in the catalog")?;
    let engine = first(ENGINES, &row["engine"]).ok_or("engine not in the catalog")?;
    let quant = quant(row)?;
    let (prompt, output) = lengths(row)?;
    // ModelOpt checkpoints (nvidia/*) carry an FP8 KV cache (kv_cache_quant_algo FP8).
    let kv = if row["kv_dtype"].to_lowercase().contains("fp8")
        || row["model_hf_id"].to_lowercase().starts_with("nvidia/")
    {
        "fp8"
    } else {
        "fp16"
    };
    let count = [&row["tp"], &row["gpu_count"]]
        .iter()
        .find_map(|c| c.trim().parse::<u64>().ok())
        .unwrap_or(1);
    let concurrency = row["concurrency"].trim();
    let (requested, bounded) = match concurrency.parse::<u64>() {
        Ok(n) => (n as f64, true),
        Err(_) => (requests(row).ok_or("number of requests not stated")?, false),
    };
    let metric = row["metric"].clone();
    if metric == "ttft_ms" && !bounded {
        return Err("TTFT of a burst queued in the server (not modelled)");
    }
    Ok(Case {
        id: row["id"].clone(),
        engine,
        gpu,
        model,
        quant,
        kv,
        count,
        prompt,
        output,
        metric,
        stat: row["stat"].clone(),
        value: row["value"].parse().expect("a measured value"),
        requested,
        bounded,
        offline: concurrency.contains("offline") || notes.contains("trtllm-bench"),
        seqs: 1,
        spec,
    })
}

/// The speculative decoding a row ran, as a `speculative { }` block's method and drafted
/// tokens: a model's own head (MTP, or SGLang's EAGLE on a built-in head) is `mtp`, an
/// EAGLE head `eagle3`; the drafted tokens from "N speculative tokens", else SGLang's
/// "draft tokens N" (N − 1 drafted plus the verified one), else the default 3. The rows
/// do not state an acceptance rate: the method's default is used.
fn speculative(text: &str) -> Option<(&'static str, u64)> {
    if !text.to_lowercase().starts_with("on") {
        return None;
    }
    let method = if text.contains("MTP") || text.contains("built-in head") {
        "mtp"
    } else {
        "eagle3"
    };
    // "5 speculative tokens": the number before the words.
    let before = text.find(" speculative tokens").and_then(|at| {
        let digits: String = text[..at]
            .chars()
            .rev()
            .take_while(char::is_ascii_digit)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        digits.parse::<f64>().ok()
    });
    let tokens = before
        .or_else(|| capture("draft tokens {})", text).map(|n| n - 1.0))
        .map_or(3, |n| (n as u64).max(1));
    Some((method, tokens))
}

fn deployment(name: &str, c: &Case, seqs: u64) -> String {
    let context = (c.prompt + c.output).ceil().max(1.0) as u64;
    let spec = c
        .spec
        .map(|(method, tokens)| {
            format!(
                "    speculative {{\n        method = {method}\n        tokens = {tokens}\n    }}\n"
            )
        })
        .unwrap_or_default();
    format!(
        "deployment {name} {{\n    model    = {}\n    quant    = {}\n    kv_cache = {}\n    engine   = {}\n    gpu      = {}\n    count    = {}\n    seqs     = {seqs}\n    context  = {context}\n    workload {{\n        prompt = {}\n        output = {}\n    }}\n{spec}}}\n",
        c.model, c.quant, c.kv, c.engine, c.gpu, c.count, c.prompt, c.output
    )
}

/// Evaluates one deployment per case in this process: name → explanation.
fn explain_all(
    ws: &mut Workspace,
    name: &str,
    cases: &[(String, String)],
) -> HashMap<String, Explanation> {
    let text: String = cases.iter().map(|(_, text)| text.as_str()).collect();
    let file = ws.set_file(Path::new(name), text);
    ws.explain(file)
        .into_iter()
        .map(|e| {
            let e = e.unwrap_or_else(|missing| panic!("{} is not evaluated", missing.deployment));
            (e.deployment.clone(), e)
        })
        .collect()
}

/// The most requests the engine runs at once by default, as the benchmark left it.
fn engine_cap(c: &Case, gpu_memory: f64) -> f64 {
    match c.engine {
        // vLLM V1 EngineArgs: max_num_seqs 1024 on GPUs of 70 GiB or more that are not an
        // A100, else 256 (tests/engine/test_arg_utils.py, test_defaults_with_usage_context).
        "vllm" if gpu_memory >= 70.0 * GIB && !c.gpu.starts_with("a100") => 1024.0,
        "vllm" => 256.0,
        // trtllm-bench caps its batch at 4096 (bench/build/tuning.py, finetune_setting);
        // trtllm-serve's default max_batch_size is 2048.
        "tensorrt_llm" if c.offline => 4096.0,
        "tensorrt_llm" => 2048.0,
        // SGLang sizes its request pool to at least 2048 (model_runner max_num_reqs).
        _ => 4096.0,
    }
}

/// (predicted, low, high) of the row's metric, in its unit.
fn predicted(c: &Case, e: &Explanation) -> (f64, f64, f64) {
    let p = &e.performance;
    let get = |v: Option<f64>, what: &str| v.unwrap_or_else(|| panic!("{}: no {what}", c.id));
    let p99 = c.stat == "p99";
    match c.metric.as_str() {
        "output_throughput_tps" | "total_throughput_tps" => {
            let scale = if c.metric == "total_throughput_tps" {
                (c.prompt + c.output) / c.output
            } else {
                1.0
            };
            (
                get(p.throughput_tps, "throughput") * scale,
                get(p.throughput_tps_low, "throughput low") * scale,
                get(p.throughput_tps_high, "throughput high") * scale,
            )
        }
        // Output tokens over the request's whole time, first token included.
        "decode_tps_per_user" => {
            let later = (c.output - 1.0).max(0.0);
            let per_user = |ttft: f64, tpot: f64| c.output / (ttft + later * tpot);
            (
                per_user(get(p.ttft_s, "ttft"), get(p.tpot_s, "tpot")),
                per_user(
                    get(p.ttft_s_high, "ttft high"),
                    get(p.tpot_s_high, "tpot high"),
                ),
                per_user(get(p.ttft_s_low, "ttft low"), get(p.tpot_s_low, "tpot low")),
            )
        }
        "tpot_ms" | "itl_ms" if p99 => {
            let v = get(p.tpot_p99_s, "tpot p99") * 1e3;
            (v, v, v)
        }
        "tpot_ms" | "itl_ms" => (
            get(p.tpot_s, "tpot") * 1e3,
            get(p.tpot_s_low, "tpot low") * 1e3,
            get(p.tpot_s_high, "tpot high") * 1e3,
        ),
        "ttft_ms" if p99 => {
            let v = get(p.ttft_p99_s, "ttft p99") * 1e3;
            (v, v, v)
        }
        "ttft_ms" => (
            get(p.ttft_s, "ttft") * 1e3,
            get(p.ttft_s_low, "ttft low") * 1e3,
            get(p.ttft_s_high, "ttft high") * 1e3,
        ),
        other => panic!("{other}"),
    }
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    assert!(n > 0);
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

#[test]
fn serving_measurements() {
    let rows = load_rows();
    assert_eq!(rows.len(), 133, "serving.csv has 133 rows");
    let mut cases = Vec::new();
    let mut p99_cases = Vec::new();
    let mut skipped: BTreeMap<&'static str, Vec<String>> = BTreeMap::new();
    for row in &rows {
        match case(row) {
            Ok(c) => cases.push(c),
            Err(why) => {
                skipped.entry(why).or_default().push(row["id"].clone());
                if why.starts_with("p99") {
                    let mut mean = row.clone();
                    mean.insert("stat".into(), "mean".into());
                    if let Ok(mut c) = case(&mean) {
                        c.stat = "p99".into();
                        p99_cases.push(c);
                    }
                }
            }
        }
    }

    let mut ws = Workspace::new();
    // The GPUs' memory, for vLLM's default batch cap.
    let probe = ws.set_file(Path::new("serving-probe.deploy"), String::new());
    let gpu_memory: HashMap<&str, f64> = {
        let db: &dyn Db = ws.db();
        let scope = deployfit_compiler::names::scope(db, probe);
        GPUS.iter()
            .map(|&(_, name)| {
                let key = scope.lookup(DeclKind::Gpu, name).expect("catalog GPU");
                (name, entry_of(db, key).number("memory").expect("memory"))
            })
            .collect()
    };

    // Requests in flight: the client's cap; else the engine's default batch cap and the
    // sequences of prompt + output tokens the KV cache holds (trtllm-bench's own rule),
    // read from the library's memory breakdown of one sequence.
    let all: Vec<&mut Case> = cases.iter_mut().chain(p99_cases.iter_mut()).collect();
    let one: Vec<(String, String)> = all
        .iter()
        .filter(|c| !c.bounded)
        .map(|c| {
            let name = format!("cap_{}", c.id);
            let text = deployment(&name, c, 1);
            (name, text)
        })
        .collect();
    let capacity = explain_all(&mut ws, "serving-capacity.deploy", &one);
    for c in all {
        c.seqs = if c.bounded {
            c.requested as u64
        } else {
            let b = &capacity[&format!("cap_{}", c.id)].breakdown;
            let fixed = b.weights_bytes as f64 / c.count as f64 + b.overhead_bytes as f64;
            let per_sequence = b.per_gpu_bytes as f64 - fixed;
            let room = b.usable_bytes.expect("usable memory") as f64 - fixed;
            let fit = (room / per_sequence).floor().max(1.0);
            c.requested.min(engine_cap(c, gpu_memory[c.gpu])).min(fit) as u64
        };
    }

    let deployments: Vec<(String, String)> = cases
        .iter()
        .chain(&p99_cases)
        .enumerate()
        .map(|(i, c)| {
            let name = format!("row_{i}_{}", c.id);
            let text = deployment(&name, c, c.seqs);
            (name, text)
        })
        .collect();
    let explained = explain_all(&mut ws, "serving.deploy", &deployments);

    let mut table = String::new();
    writeln!(
        table,
        "\n{:<5} {:<12} {:<15} {:<15} {:<8} {:>2} {:>5} {:>6} {:>5} {:<22} {:>10} {:>10} {:>7}  in range",
        "row", "engine", "gpu", "model", "quant", "tp", "seqs", "prompt", "out", "metric", "measured", "predicted", "error"
    )
    .unwrap();
    // kind → errors (%), and whether each measurement is inside the printed range.
    let mut errors: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let mut inside: BTreeMap<String, Vec<bool>> = BTreeMap::new();
    // Rows on registry models (outside the fitted catalog set): evaluated and printed,
    // (id, speculative, error %) kept apart from the bounds below.
    let mut registry_rows: Vec<(String, bool, f64)> = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        let e = &explained[&format!("row_{i}_{}", c.id)];
        assert_eq!(e.setup.seqs, c.seqs);
        assert_eq!(
            e.setup.speculative.as_ref().map(|s| s.tokens),
            c.spec.map(|(_, tokens)| tokens),
            "{}",
            c.id
        );
        let (pred, low, high) = predicted(c, e);
        let error = (pred - c.value) / c.value * 100.0;
        let within = low <= c.value && c.value <= high;
        let registry = c.model.starts_with('"');
        if registry {
            assert!(pred.is_finite() && pred > 0.0, "{}: {pred}", c.id);
            registry_rows.push((c.id.clone(), c.spec.is_some(), error));
        }
        let keys = if registry {
            Vec::new()
        } else {
            vec![
                c.kind().to_string(),
                format!("engine {}", c.engine),
                format!("GPU family {}", family(c.gpu)),
                "all".to_string(),
            ]
        };
        for key in keys {
            errors.entry(key.clone()).or_default().push(error.abs());
            inside.entry(key).or_default().push(within);
        }
        writeln!(
            table,
            "{:<5} {:<12} {:<15} {:<15} {:<8} {:>2} {:>5} {:>6.0} {:>5.0} {:<22} {:>10.2} {:>10.2} {:>+6.1}%  {}",
            c.id, c.engine, c.gpu, c.model, c.quant, c.count, c.seqs, c.prompt, c.output, c.metric,
            c.value, pred, error, if within { "yes" } else { "no" }
        )
        .unwrap();
    }
    println!("{table}");
    let offset = cases.len();
    for (j, c) in p99_cases.iter().enumerate() {
        let e = &explained[&format!("row_{}_{}", offset + j, c.id)];
        let (pred, _, _) = predicted(c, e);
        println!(
            "p99 {} {} {} {}: measured {:.1}, predicted {pred:.1} (not fitted)",
            c.id, c.engine, c.model, c.metric, c.value
        );
    }
    println!("\nskipped rows:");
    for (why, ids) in &skipped {
        println!("  {:>3}  {why}: {}", ids.len(), ids.join(" "));
    }
    println!(
        "\nin-sample |predicted - measured| / measured, and the share inside the printed range:"
    );
    let mut summary = BTreeMap::new();
    for (key, errs) in &mut errors {
        let n = errs.len();
        let med = median(errs);
        let share = inside[key].iter().filter(|&&x| x).count() as f64 / n as f64 * 100.0;
        println!("  {key:<24} n={n:3}  median {med:5.1} %  inside {share:5.1} %");
        summary.insert(key.clone(), (n, med, share));
    }

    println!("\nrows on registry models (outside the fitted set; speculative decoding marked *):");
    for (id, spec, error) in &registry_rows {
        println!("  {id}{} {error:+.1} %", if *spec { "*" } else { "" });
    }

    // Every row is either evaluated or skipped with its reason: the 84 rows on catalog
    // models, and 6 on registry models (S108–S111 Qwen3.5-4B, S116–S117 GLM-5.2; four of
    // them ran speculative decoding). The other two speculative rows (S163, S164) also
    // ran SGLang's data-parallel attention.
    let skipped_count: usize = skipped.values().map(Vec::len).sum();
    assert_eq!((cases.len(), skipped_count), (90, 43), "{skipped:?}");
    assert_eq!(registry_rows.len(), 6, "{registry_rows:?}");
    assert_eq!(registry_rows.iter().filter(|(_, spec, _)| *spec).count(), 4);
    assert_eq!(skipped["model not in the catalog"].len(), 8);
    assert_eq!(skipped["data-parallel attention (not modelled)"].len(), 4);
    assert_eq!(p99_cases.len(), 1, "the MI355X TPOT p99 row");

    // Regression bounds, just past what the shipped constants met (in-sample; the held-out
    // figures are in docs/calibration-serving.md): throughput median 10.9 %, time per
    // output token 15.4 %, single-request time to first token 13.3 %; inside the printed
    // ranges 85.7 %, 90.0 %, 71.4 %, all rows 85.7 %.
    let get = |key: &str| summary[key];
    let (n, throughput, throughput_in) = get("throughput");
    assert_eq!(n, 56);
    assert!(throughput <= 11.5, "throughput median {throughput:.1} %");
    assert!(
        throughput_in >= 83.0,
        "throughput inside {throughput_in:.1} %"
    );
    let (n, tpot, tpot_in) = get("tpot");
    assert_eq!(n, 20);
    assert!(tpot <= 16.5, "TPOT median {tpot:.1} %");
    assert!(tpot_in >= 85.0, "TPOT inside {tpot_in:.1} %");
    let (n, ttft, ttft_in) = get("ttft_single");
    assert_eq!(n, 7);
    assert!(ttft <= 14.5, "single-request TTFT median {ttft:.1} %");
    assert!(ttft_in >= 70.0, "TTFT inside {ttft_in:.1} %");
    let (_, _, all_in) = get("all");
    assert!(all_in >= 83.0, "all rows inside {all_in:.1} %");
}

#[test]
fn enforce_eager_adds_per_layer_launches() {
    let mut ws = Workspace::new();
    let text = |eager: &str| {
        format!(
            "deployment d {{\n    model    = llama_3_1_8b\n    quant    = bf16\n    engine   = vllm\n    gpu      = h100_sxm5\n    seqs     = 1\n    context  = 4k\n    enforce_eager = {eager}\n    workload {{\n        prompt = 1000\n        output = 200\n    }}\n}}\n"
        )
    };
    let tpot = |ws: &mut Workspace, eager: &str| {
        let file = ws.set_file(Path::new(&format!("eager-{eager}.deploy")), text(eager));
        let e = ws.explain(file).remove(0).expect("evaluated");
        e.performance.tpot_s.expect("a time per token")
    };
    let graphs = tpot(&mut ws, "no");
    let eager = tpot(&mut ws, "yes");
    // `export` passes it on to vLLM.
    let file = ws.set_file(Path::new("eager-export.deploy"), text("yes"));
    let command = ws
        .export(file, "d", deployfit_compiler::export::Target::Vllm)
        .expect("a vLLM command");
    assert!(command.contains("--enforce-eager"), "{command}");
    // 32 layers at llama.cpp's fitted CUDA launch cost, 2.89 ms per 32 layers.
    let added = eager - graphs;
    assert!(
        (added - 2.89e-3).abs() < 1e-6,
        "eager adds {added} s per token"
    );
}

#[test]
fn the_explain_json_has_the_serving_figures() {
    let output = common::deployfit(&["explain", "examples/11-workload.deploy", "--format", "json"]);
    assert_eq!(output.status.code(), Some(0), "{}", common::stdout(&output));
    let report = common::json(&output);
    let first = report.as_array().map_or(&report, |list| &list[0]);
    for key in [
        "throughput_tps_low",
        "throughput_tps_high",
        "ttft_s_low",
        "ttft_s_high",
        "tpot_s",
        "tpot_s_low",
        "tpot_s_high",
        "ttft_p99_s",
        "tpot_p99_s",
    ] {
        assert!(
            first.get(key).is_some(),
            "explain JSON lacks {key}: {first}"
        );
    }
}
