//! The serving simulator through the real binary: `deployfit explain --format json` of
//! deployments whose workloads differ only in how requests arrive (clients, a burst,
//! Poisson rates), how long they are (fixed or varied) and how the engine schedules
//! (mixed chunked prefill or prefill first).

use crate::common;

use common::{codes, deployfit, json, scratch};

/// One deployment of Llama-3.1-8B on an H100 under `engine`, with `workload` lines.
fn deployment(name: &str, engine: &str, seqs: u32, workload: &str) -> String {
    format!(
        "// Überblick: ein Einsatz — 模型 test\ndeployment {name} {{\n    model    = llama_3_1_8b\n    quant    = bf16\n    engine   = {engine}\n    gpu      = h100_sxm5\n    seqs     = {seqs}\n    context  = 4k\n    workload {{\n        prompt = 1000\n        output = 200\n{workload}    }}\n}}\n"
    )
}

/// Explains `text` and returns its figures by deployment name.
fn explain(file: &str, text: &str) -> serde_json::Value {
    let dir = scratch(&format!("simulator-{}", file.trim_end_matches(".deploy")));
    let path = dir.join(file);
    std::fs::write(&path, text).unwrap();
    let output = deployfit(&["explain", path.to_str().unwrap(), "--format", "json"]);
    assert_eq!(output.status.code(), Some(0), "{}", common::stdout(&output));
    json(&output)
}

fn figure(report: &serde_json::Value, index: usize, key: &str) -> f64 {
    let list = report.as_array().expect("one explanation per deployment");
    let e = &list[index];
    e.get(key)
        .or_else(|| e["performance"].get(key))
        .and_then(serde_json::Value::as_f64)
        .unwrap_or_else(|| panic!("{key} missing in {e}"))
}

/// Asserts that `a` is within `tolerance` (a share) of `b`.
#[track_caller]
fn assert_close(a: f64, b: f64, tolerance: f64) {
    assert!(
        (a / b - 1.0).abs() < tolerance,
        "{a} is not within {tolerance} of {b}"
    );
}

/// Checks `text` through the binary and asserts an out-of-range diagnostic at `line`, with a
/// help that names a fix.
fn assert_out_of_range_at(dir: &str, text: &str, line: u64) {
    let dir = scratch(dir);
    let path = dir.join("bad.deploy");
    std::fs::write(&path, text).unwrap();
    let output = deployfit(&["check", path.to_str().unwrap(), "--format", "json"]);
    assert_eq!(output.status.code(), Some(1));
    let d = common::diagnostic(&json(&output), "deploy::field::out_of_range");
    assert_eq!(d["line"].as_u64(), Some(line), "{d}");
    assert!(d["help"].as_str().is_some_and(|h| !h.is_empty()), "{d}");
}

#[test]
fn a_burst_queues_behind_the_running_cap() {
    let text = [
        deployment("clients", "vllm", 32, ""),
        deployment("burst", "vllm", 32, "        burst  = 256\n"),
    ]
    .concat();
    let report = explain("burst.deploy", &text);
    // 32 clients each keep one request open: none waits for a slot, only for the token
    // budget (8 prompts of 1000 tokens per step).
    let clients_queue = figure(&report, 0, "queue_s");
    let burst_queue = figure(&report, 1, "queue_s");
    assert!(clients_queue < 0.5, "clients wait {clients_queue} s");
    // 256 requests at once, 32 at a time: on average several batches wait ahead.
    assert!(burst_queue > 2.0, "a burst waits {burst_queue} s");
    let ttft = figure(&report, 1, "ttft_s");
    let p50 = figure(&report, 1, "ttft_p50_s");
    let p99 = figure(&report, 1, "ttft_p99_s");
    assert!(p50 < p99 && ttft < p99, "{ttft} {p50} {p99}");
    assert!(ttft > 10.0 * figure(&report, 0, "ttft_s"));
    // The queue widens the first-token range: its waiting part takes the throughput range.
    let (low, high) = (
        figure(&report, 1, "ttft_s_low"),
        figure(&report, 1, "ttft_s_high"),
    );
    assert!(low < ttft && ttft < high, "{low} {ttft} {high}");
    assert!(high / low > 1.9, "{low} {high}");
    // Throughput is the server's over the burst: about what the clients get.
    let ratio = figure(&report, 1, "throughput_tps") / figure(&report, 0, "throughput_tps");
    assert!(
        (0.7..1.1).contains(&ratio),
        "burst / clients throughput {ratio}"
    );
}

/// Llama-3.1-8B on an L4: its KV cache holds about 40 requests of 1000 + 200 tokens, so a
/// burst runs that many at once whatever `seqs` allows; vLLM admits by the cache its
/// requests hold and preempts the newest when their new tokens find none free, and an
/// engine that reserves every request's whole output up front runs fewer and preempts none.
#[test]
fn a_small_kv_cache_runs_fewer_requests_at_once() {
    let on_l4 = |name: &str, engine: &str, seqs: u32| {
        format!(
            "// Kleiner Speicher — 小显存\ndeployment {name} {{\n    model    = llama_3_1_8b\n    quant    = bf16\n    engine   = {engine}\n    gpu      = l4\n    seqs     = {seqs}\n    context  = 1200\n    workload {{\n        prompt = 1000\n        output = 200\n        burst  = 400\n    }}\n}}\n"
        )
    };
    let text = [
        "engine reserving extends vllm {\n    output_reserve = 100%\n    preemption     = no\n}\n"
            .to_string(),
        on_l4("wide", "vllm", 200),
        on_l4("narrower", "vllm", 100),
        on_l4("reserving", "reserving", 200),
        on_l4("capped", "vllm", 4),
    ]
    .concat();
    let report = explain("kv-cache.deploy", &text);
    // 200 and 100 running slots: the cache binds both, so the runs are the same (both under
    // vLLM's 256-row sampler profile on a GPU under 70 GiB, so the KV budget is the same).
    for key in ["throughput_tps", "tpot_s", "ttft_s", "queue_s"] {
        let (wide, narrower) = (figure(&report, 0, key), figure(&report, 1, key));
        assert!(
            (wide - narrower).abs() <= 1e-9 * wide.abs().max(1e-12),
            "{key}: {wide} vs {narrower}"
        );
    }
    // The KV budget explain prints (about 46,000 tokens) holds about 40 such requests (each
    // holding its 1000-token prompt and the output so far; the newest preempted when the
    // others' new tokens find no free cache); with 4 slots the server runs fewer, so the
    // cache, not `seqs`, is what limits the wide deployment.
    let capacity = report[0]["kv_capacity_tokens"]
        .as_f64()
        .expect("the KV capacity in tokens");
    assert!(
        (30_000.0..60_000.0).contains(&capacity),
        "capacity {capacity}"
    );
    assert!(figure(&report, 0, "throughput_tps") > 2.0 * figure(&report, 3, "throughput_tps"));
    // explain says how many ran at once and that the cache, not `seqs`, held it there.
    let running = figure(&report, 0, "running_peak");
    assert!((30.0..60.0).contains(&running), "running {running}");
    assert_eq!(report[0]["kv_bound"], true);
    assert_eq!(figure(&report, 3, "running_peak"), 4.0);
    assert_eq!(report[3]["kv_bound"], false);
    let preempted = figure(&report, 0, "preemptions");
    assert!(preempted >= 1.0, "preempted {preempted}");
    assert_eq!(figure(&report, 2, "preemptions"), 0.0);
    assert_eq!(figure(&report, 3, "preemptions"), 0.0);
    let dir = scratch("simulator-kv-cache-human");
    let path = dir.join("kv-cache.deploy");
    std::fs::write(&path, &text).unwrap();
    let human = common::stdout(&deployfit(&[
        "explain",
        "--deployment",
        "wide",
        path.to_str().unwrap(),
    ]));
    let line = human
        .lines()
        .find(|l| l.trim_start().starts_with("running"))
        .unwrap_or_else(|| panic!("no running line in {human}"));
    assert!(
        line.contains(&format!("{running:.0}"))
            && line.contains("KV cache")
            && line.contains("seqs = 200")
            && line.contains(&format!("{preempted:.0} preempted")),
        "{line}"
    );
    // A rule can ask for it: `require not kv_bound` fails on the wide deployment.
    let required = text.replace(
        "deployment wide {\n",
        "deployment wide {\n    require not kv_bound\n",
    );
    std::fs::write(&path, &required).unwrap();
    let out = deployfit(&["check", path.to_str().unwrap(), "--format", "json"]);
    assert_eq!(out.status.code(), Some(1), "{}", common::stdout(&out));
    // Reserving the whole output (1200 tokens a request, not 1100) admits fewer at once:
    // longer waits, less throughput, shorter steps.
    assert!(figure(&report, 2, "queue_s") > figure(&report, 0, "queue_s"));
    assert!(figure(&report, 2, "throughput_tps") < figure(&report, 0, "throughput_tps"));
    assert!(figure(&report, 2, "tpot_s") <= figure(&report, 0, "tpot_s"));
}

/// `batched_tokens` sets the engine's token budget per step: with every request of a burst
/// running at once, a small one spreads the prompts over more steps (later first tokens) and
/// stalls decodes less (shorter steps); `export` writes it as the engine's flag.
#[test]
fn batched_tokens_sets_the_step_budget() {
    let text = [
        deployment("default_budget", "vllm", 256, "        burst  = 256\n"),
        deployment("small_budget", "vllm", 256, "        burst  = 256\n").replace(
            "    seqs     = 256\n",
            "    seqs     = 256\n    batched_tokens = 512\n",
        ),
    ]
    .concat();
    let report = explain("budget.deploy", &text);
    let (ttft, small_ttft) = (figure(&report, 0, "ttft_s"), figure(&report, 1, "ttft_s"));
    assert!(small_ttft > ttft, "{small_ttft} <= {ttft}");
    let (tpot, small_tpot) = (figure(&report, 0, "tpot_s"), figure(&report, 1, "tpot_s"));
    assert!(small_tpot < tpot, "{small_tpot} >= {tpot}");
    // The profiling pass runs over the smaller budget too: less activation memory.
    let activation = |i: usize| {
        report[i]["engine_memory"]["activation_bytes"]
            .as_f64()
            .expect("the engine's activation memory")
    };
    assert!(
        activation(1) < activation(0),
        "{} >= {}",
        activation(1),
        activation(0)
    );
    let dir = scratch("simulator-budget-export");
    let path = dir.join("budget.deploy");
    std::fs::write(&path, &text).unwrap();
    for (engine, flag) in [
        ("vllm", "--max-num-batched-tokens 512"),
        ("tgi", "--max-batch-prefill-tokens 512"),
        ("lmdeploy", "--max-prefill-token-num 512"),
    ] {
        let out = deployfit(&[
            "export",
            "--deployment",
            "small_budget",
            "--engine",
            engine,
            path.to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", common::stdout(&out));
        assert!(
            common::stdout(&out).contains(flag),
            "{engine}: {}",
            common::stdout(&out)
        );
        let out = deployfit(&[
            "export",
            "--deployment",
            "default_budget",
            "--engine",
            engine,
            path.to_str().unwrap(),
        ]);
        assert!(!common::stdout(&out).contains(flag.split(' ').next().unwrap()));
    }
    // A budget of 0 is diagnosed at its span.
    let bad = deployment("zero", "vllm", 8, "").replace(
        "    seqs     = 8\n",
        "    seqs     = 8\n    batched_tokens = 0\n",
    );
    let dir = scratch("simulator-budget-zero");
    let path = dir.join("zero.deploy");
    std::fs::write(&path, &bad).unwrap();
    let out = deployfit(&["check", path.to_str().unwrap(), "--format", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let report = json(&out);
    assert!(
        codes(&report).contains(&"deploy::field::out_of_range".to_string()),
        "{report}"
    );
    let diagnostic = &report["diagnostics"][0];
    let line = diagnostic["line"]
        .as_u64()
        .or_else(|| diagnostic["span"]["line"].as_u64());
    assert_eq!(line, Some(8), "{diagnostic}");
}

#[test]
fn latency_grows_with_the_request_rate() {
    let text = [
        deployment("light", "vllm", 64, "        rate   = 1 req/s\n"),
        deployment("busy", "vllm", 64, "        rate   = 20 req/s\n"),
        deployment("overloaded", "vllm", 64, "        rate   = 200 req/s\n"),
    ]
    .concat();
    let report = explain("rates.deploy", &text);
    let ttft: Vec<f64> = (0..3).map(|i| figure(&report, i, "ttft_s")).collect();
    let tpot: Vec<f64> = (0..3).map(|i| figure(&report, i, "tpot_s")).collect();
    assert!(ttft[0] < ttft[1] && ttft[1] < ttft[2], "{ttft:?}");
    assert!(tpot[0] < tpot[1], "{tpot:?}");
    // At 1 req/s a request is almost alone: its first token is about its own prefill.
    let prefill = 1000.0 / figure(&report, 0, "prefill_tps");
    assert!(ttft[0] < 2.0 * prefill + 0.05, "{} vs {prefill}", ttft[0]);
    // Far past capacity the queue dominates.
    assert!(figure(&report, 2, "queue_s") > 1.0, "{ttft:?}");
    assert!(figure(&report, 2, "queue_s") > 3.0 * figure(&report, 1, "queue_s"));
}

#[test]
fn prefill_first_engines_stall_decodes() {
    // The same engine with both schedulers: only `scheduling` differs.
    let engines = "engine mixed_vllm extends vllm {\n    scheduling = mixed\n}\nengine eager_prompts extends vllm {\n    scheduling = prefill_first\n}\n";
    let text = [
        engines.to_string(),
        deployment("mixed", "mixed_vllm", 64, "        rate   = 15 req/s\n"),
        deployment("first", "eager_prompts", 64, "        rate   = 15 req/s\n"),
    ]
    .concat();
    let report = explain("scheduling.deploy", &text);
    let mixed = figure(&report, 0, "tpot_p99_s");
    let first = figure(&report, 1, "tpot_p99_s");
    assert!(
        first > mixed,
        "prefill-first p99 TPOT {first} vs mixed {mixed}"
    );
}

#[test]
fn varied_lengths_spread_the_latencies() {
    let text = [
        deployment("fixed", "vllm", 64, "        burst  = 512\n"),
        deployment(
            "varied",
            "vllm",
            64,
            "        burst  = 512\n        lengths = varied\n",
        ),
    ]
    .concat();
    let report = explain("lengths.deploy", &text);
    let spread = |i: usize| figure(&report, i, "tpot_p99_s") / figure(&report, i, "tpot_p50_s");
    assert!(spread(1) > spread(0), "{} {}", spread(1), spread(0));
}

#[test]
fn bad_workload_values_are_diagnosed_with_spans() {
    let dir = scratch("simulator-bad");
    let path = dir.join("bad.deploy");
    let text = deployment(
        "bad",
        "vllm",
        8,
        "        burst  = 0 // ニ\n        lengths = wobbly // ü\n",
    );
    std::fs::write(&path, &text).unwrap();
    let output = deployfit(&["check", path.to_str().unwrap(), "--format", "json"]);
    assert_eq!(output.status.code(), Some(1));
    let report = json(&output);
    let found = codes(&report);
    assert!(
        found.contains(&"deploy::field::out_of_range".to_string()),
        "{found:?}"
    );
    assert!(found.iter().any(|c| c.starts_with("deploy::")), "{found:?}");
    for d in report["diagnostics"].as_array().unwrap() {
        let line = d["line"].as_u64().expect("a line") as usize;
        let source_line = text.lines().nth(line - 1).unwrap();
        assert!(
            source_line.contains("burst") || source_line.contains("lengths"),
            "{d} at {source_line}"
        );
        assert!(
            d["help"].as_str().is_some_and(|h| !h.is_empty()),
            "a help names the fix: {d}"
        );
    }
}

/// Qwen3-32B on an H100 under vLLM in three weight formats, and an `extends` copy of the
/// block-scaled format that claims the full FP8 rate: `extra` adds deployment lines.
fn formats(workload: &str) -> String {
    let one = |name: &str, quant: &str| {
        format!(
            "deployment {name} {{\n    model    = qwen3_32b\n    quant    = {quant}\n    engine   = vllm\n    gpu      = h100_sxm5\n    seqs     = 1\n    context  = 8k\n    workload {{\n{workload}    }}\n}}\n"
        )
    };
    [
        "// Blockskalierung — 块缩放 FP8, ein Vergleich\nquant block_full extends fp8_block { // ü\n    tensor_efficiency = 100%\n}\n".to_string(),
        one("bf16", "bf16"),
        one("fp8", "fp8"),
        one("block", "fp8_block"),
        one("block_full", "block_full"),
    ]
    .concat()
}

/// Block-scaled FP8 (DeepSeek-R1, Qwen3-FP8: a scale per 128 × 128 block) reads the same
/// bytes as per-tensor FP8 but multiplies at half its achievable rate (`tensor_efficiency`):
/// on an H100, whose best FP8 matmuls reach 70.9 % of the FP8 peak and BF16 ones 80.3 % of
/// half that, 88 % of the 16-bit rate.
#[test]
fn block_scaled_fp8_multiplies_at_half_its_achievable_rate() {
    // A long prompt alone: prefill is compute-bound.
    let report = explain(
        "formats.deploy",
        &formats("        prompt = 6000\n        output = 100\n"),
    );
    let prefill = |i| figure(&report, i, "prefill_tps");
    let (bf16, fp8, block, block_full) = (prefill(0), prefill(1), prefill(2), prefill(3));
    assert!(
        fp8 > 1.6 * bf16,
        "per-tensor FP8 prefills at the FP8 rate: {fp8} {bf16}"
    );
    assert!(
        (0.85..0.95).contains(&(block / bf16)),
        "block-scaled FP8 prefills at 88 % of BF16's rate: {block} {bf16}"
    );
    // The data decides, not the entry's name: a copy at 100 % runs as per-tensor FP8.
    assert_close(block_full, fp8, 1e-9);
    // One request decoding reads the weights: half of BF16's bytes either way.
    let decode = |i| figure(&report, i, "decode_tps");
    assert_close(decode(2), decode(1), 0.02);
    assert!(decode(2) > 1.6 * decode(0), "{} {}", decode(2), decode(0));
    // Explain says why.
    let said = |i: usize| report[i]["assumptions"].to_string();
    assert!(
        said(2).contains("fp8_block's matrix multiplies reach 50 % of the GPU's fp8 peak"),
        "{}",
        said(2)
    );
    assert!(!said(1).contains("`tensor_efficiency`"), "{}", said(1));
    assert!(!said(3).contains("`tensor_efficiency`"), "{}", said(3));
}

#[test]
fn a_tensor_efficiency_past_100_percent_is_diagnosed() {
    assert_out_of_range_at(
        "simulator-tensor-share",
        "// Überprüfung — 检查\nquant over extends fp8_block {\n    tensor_efficiency = 150% // ü\n}\ndeployment d {\n    model  = qwen3_32b\n    quant  = over\n    engine = vllm\n    gpu    = h100_sxm5\n}\n",
        3,
    );
}

/// Weight-only kernels (Marlin: AWQ and GPTQ everywhere, FP8 on an A100) widen the packed
/// weights to 16 bit inside each multiply and reach the quant's `weight_only_efficiency` of
/// the 16-bit rate (75 %) where a step is compute-bound. Not where the GPU runs the format
/// natively (FP8 on an H100), nor on 16-bit weights, nor where the engine converts the weights
/// when it loads them; a single request's decode, which reads the weights, keeps the packed
/// format's speed.
#[test]
fn weight_only_kernels_multiply_below_the_16_bit_rate() {
    let one = |name: &str, quant: &str, engine: &str, gpu: &str| {
        format!(
            "deployment {name} {{ // Gewicht — 权重\n    model    = qwen3_14b\n    quant    = {quant}\n    engine   = {engine}\n    gpu      = {gpu}\n    seqs     = 1\n    context  = 8k\n    workload {{\n        prompt = 6000\n        output = 100\n    }}\n}}\n"
        )
    };
    let text = [
        "// Marlin-Kerne — 仅权重 (ü)\nquant fp8_full extends fp8 {\n    weight_only_efficiency = 100%\n}\nquant bf16_half extends bf16 {\n    weight_only_efficiency = 50%\n}\nengine vllm_upcast extends vllm {\n    fallback = upcast\n}\n".to_string(),
        one("bf16", "bf16", "vllm", "a100_sxm4_80gb"),
        one("fp8", "fp8", "vllm", "a100_sxm4_80gb"),
        one("fp8_full", "fp8_full", "vllm", "a100_sxm4_80gb"),
        one("awq", "awq_int4", "vllm", "a100_sxm4_80gb"),
        one("fp8_upcast", "fp8", "vllm_upcast", "a100_sxm4_80gb"),
        one("fp8_h100", "fp8", "vllm", "h100_sxm5"),
        one("fp8_full_h100", "fp8_full", "vllm", "h100_sxm5"),
        one("bf16_half", "bf16_half", "vllm", "a100_sxm4_80gb"),
    ]
    .concat();
    let report = explain("weight-only.deploy", &text);
    // A 6000-token prompt alone is compute-bound: its matmuls slow to 75 %, its attention
    // (16-bit KV) does not.
    let prefill = |i| figure(&report, i, "prefill_tps");
    let bf16 = prefill(0);
    for (i, what) in [(1, "FP8 on an A100"), (3, "AWQ")] {
        let ratio = prefill(i) / bf16;
        assert!((0.74..0.85).contains(&ratio), "{what}: {ratio}");
    }
    // The data decides, not the entry's name: a copy at 100 % prefills at the 16-bit rate,
    // and so does FP8 that the engine widens to 16 bit at load.
    for i in [2, 4] {
        assert_close(prefill(i), bf16, 0.02);
    }
    // Natively (an H100's FP8 tensor cores) the field plays no part, nor on 16-bit weights.
    assert_close(prefill(5), prefill(6), 1e-9);
    assert_close(prefill(7), bf16, 1e-9);
    // One request decoding reads the weights: FP8's bytes, not its multiplies, decide
    // (beside the same KV of the 6,000-token prompt, which an A100 reads with few thread
    // blocks: archs.deploy `decode_splits`).
    let decode = |i| figure(&report, i, "decode_tps");
    assert_close(decode(1), decode(2), 0.01);
    assert!(decode(1) > 1.4 * decode(0), "{} {}", decode(1), decode(0));
    // Explain says where it applies.
    let said = |i: usize| report[i]["assumptions"].to_string();
    for (i, quant) in [(1, "fp8"), (3, "awq_int4")] {
        assert!(
            said(i).contains(&format!(
                "{quant}'s matrix multiplies run through weight-only kernels at 75 % of the 16-bit rate"
            )),
            "{}",
            said(i)
        );
    }
    for i in [0, 2, 4, 5] {
        assert!(
            !said(i).contains("`weight_only_efficiency`"),
            "{i}: {}",
            said(i)
        );
    }
}

#[test]
fn a_weight_only_efficiency_past_100_percent_is_diagnosed() {
    assert_out_of_range_at(
        "simulator-weight-only-share",
        "// Überprüfung — 检查\nquant over extends awq_int4 {\n    weight_only_efficiency = 150% // ü\n}\ndeployment d {\n    model  = qwen3_14b\n    quant  = over\n    engine = vllm\n    gpu    = a100_sxm4_80gb\n}\n",
        3,
    );
}

/// An architecture's `serving_efficiency` scales the serving engines' fitted bandwidth
/// efficiency on its GPUs (CDNA 3: 62 %): the same MI300X with an `extends` copy of its
/// architecture at 100 % streams at the NVIDIA-fitted rate; its compute is its own measured
/// matmul rate either way. Explain says which applies.
#[test]
fn an_architecture_serving_efficiency_slows_its_serving_engines() {
    let one = |name: &str, gpu: &str| {
        format!(
            "deployment {name} {{\n    model    = qwen3_8b\n    quant    = bf16\n    engine   = vllm\n    gpu      = {gpu}\n    seqs     = 32\n    context  = 4k\n    workload {{\n        prompt = 2000\n        output = 500\n    }}\n}}\n"
        )
    };
    let text = [
        "// ROCm-Kerne — 内核 (ein Vergleich)\narch cdna3_full extends cdna3 { // ü\n    serving_efficiency = 100%\n}\ngpu mi300x_full extends mi300x {\n    arch = cdna3_full\n}\n".to_string(),
        one("amd", "mi300x"),
        one("full", "mi300x_full"),
        one("nvidia", "h100_sxm5"),
    ]
    .concat();
    let report = explain("arch-share.deploy", &text);
    let ratio = |key: &str| figure(&report, 0, key) / figure(&report, 1, key);
    // Bandwidth-bound decode slows; the fixed step overhead keeps it above the bare 62 %.
    // Compute-bound prefill runs at the MI300X's measured matmul rate in both.
    let decode = ratio("decode_tps");
    assert!((0.62..0.8).contains(&decode), "decode {decode}");
    let prefill = ratio("prefill_tps");
    assert!((0.98..1.02).contains(&prefill), "prefill {prefill}");
    assert!(ratio("tpot_s") > 1.2, "tpot {}", ratio("tpot_s"));
    let said = |i: usize| report[i]["assumptions"].to_string();
    assert!(
        said(0)
            .contains("AMD CDNA 3's kernels reach 62 % of the serving engines' fitted bandwidth"),
        "{}",
        said(0)
    );
    assert!(!said(1).contains("kernels reach"), "{}", said(1));
    assert!(!said(2).contains("kernels reach"), "{}", said(2));
}

/// A GPU's measured Maximum Achievable Matmul FLOPS (`bf16_mamf`, `fp8_mamf`) sets the rate
/// the serving engines' compute efficiencies scale: halving an H100's halves its
/// compute-bound prefill and leaves its bandwidth-bound one-sequence decode alone; an
/// `extends` copy that changes nothing runs as the H100; a GPU without a measurement takes
/// its architecture's `matmul_share` (CDNA 3: 55.6 %), else the NVIDIA median (80.3 %); a
/// measurement above the peak counts as the peak. Explain names the share and its source.
#[test]
fn a_gpus_measured_matmul_rate_sets_its_serving_compute() {
    let one = |name: &str, gpu: &str| {
        format!(
            "deployment {name} {{ // Vorfüllung — 预填充\n    model    = llama_3_1_8b\n    quant    = bf16\n    engine   = vllm\n    gpu      = {gpu}\n    seqs     = 1\n    context  = 16k\n    workload {{\n        prompt = 8000\n        output = 100\n    }}\n}}\n"
        )
    };
    let text = [
        "// Matmul-Messung — 实测 (MAMF)\n\
         gpu copy extends h100_sxm5 {}\n\
         gpu half extends h100_sxm5 { bf16_mamf = 397.25 TFLOPS } // ½\n\
         gpu over extends h100_sxm5 { bf16_mamf = 2000 TFLOPS }\n\
         gpu plain_cdna3 {\n    vendor = amd\n    arch = cdna3\n    memory = 192 GiB\n    bandwidth = 5300 GB/s\n    bf16 = 1307.4 TFLOPS\n    memory_kind = hbm\n    family = datacenter\n}\n\
         gpu plain_hopper {\n    vendor = nvidia\n    arch = hopper\n    memory = 80 GiB\n    bandwidth = 3350 GB/s\n    bf16 = 989.4 TFLOPS\n    memory_kind = hbm\n    family = datacenter\n}\n"
            .to_string(),
        one("h100", "h100_sxm5"),
        one("copy", "copy"),
        one("half", "half"),
        one("over", "over"),
        one("cdna3", "plain_cdna3"),
        one("hopper", "plain_hopper"),
        one("b200", "b200").replace("quant    = bf16", "quant    = nvfp4"),
    ]
    .concat();
    let report = explain("mamf.deploy", &text);
    let value = |i: usize, key: &str| figure(&report, i, key);
    for key in ["prefill_tps", "decode_tps", "ttft_s"] {
        assert_eq!(
            value(1, key),
            value(0, key),
            "{key}: the copy runs as the H100"
        );
    }
    // Half the matmul rate: the 8,000-token prefill (matmuls and attention) takes about
    // twice as long; one sequence's decode streams weights and is untouched.
    let prefill = value(2, "prefill_tps") / value(0, "prefill_tps");
    assert!((0.49..0.53).contains(&prefill), "prefill {prefill}");
    let decode = value(2, "decode_tps") / value(0, "decode_tps");
    assert!((0.97..=1.0).contains(&decode), "decode {decode}");
    // 2,000 TFLOPS counts as the 989.4 TFLOPS peak: 1 / 0.803 of the measured rate.
    let over = value(3, "prefill_tps") / value(0, "prefill_tps");
    assert!((1.2..1.26).contains(&over), "over {over}");
    // The datasheet H100 without a measurement takes the NVIDIA median: the H100's own.
    let hopper = value(5, "prefill_tps") / value(0, "prefill_tps");
    assert!((0.99..1.01).contains(&hopper), "hopper {hopper}");
    let said = |i: usize| report[i]["assumptions"].to_string();
    for (i, line) in [
        (
            0,
            "h100_sxm5's best matrix multiplies reach 80.3 % of its BF16 peak, 70.9 % in FP8 (its measured `bf16_mamf`",
        ),
        (
            2,
            "half's best matrix multiplies reach 40.2 % of its BF16 peak, 70.9 % in FP8",
        ),
        (
            3,
            "over's best matrix multiplies reach 100.0 % of its BF16 peak",
        ),
        (
            4,
            "plain_cdna3's best matrix multiplies reach 55.6 % of its BF16 peak (no measurement of its own: its architecture's `matmul_share`, from AMD CDNA 3's measured GPUs)",
        ),
        (
            5,
            "plain_hopper's best matrix multiplies reach 80.3 % of its BF16 peak (no measurement of it or its architecture",
        ),
        // NVFP4 on a B200: FP4 runs natively, and without an `fp4_mamf` at the BF16 share.
        (
            6,
            "b200's best matrix multiplies reach 77.6 % of its BF16 peak, 76.3 % in FP8 (its measured `bf16_mamf`, Maximum Achievable Matmul FLOPS; FP4 is taken at the BF16 share (no `fp4_mamf` measured))",
        ),
    ] {
        assert!(said(i).contains(line), "{i}: {}", said(i));
    }
    // A BF16 deployment names no other type.
    assert!(!said(0).contains("taken at the BF16 share"), "{}", said(0));
}

#[test]
fn a_negative_matmul_rate_or_share_is_diagnosed() {
    assert_out_of_range_at(
        "simulator-mamf",
        "// Überprüfung — 检查\ngpu slow extends h100_sxm5 {\n    bf16_mamf = -5 TFLOPS // ü\n}\n",
        3,
    );
    assert_out_of_range_at(
        "simulator-matmul-share",
        "// Überprüfung — 检查 (ü)\narch odd extends cdna3 {\n    name = \"ü\"\n    matmul_share = 120% // ü\n}\n",
        4,
    );
}

#[test]
fn a_serving_efficiency_past_100_percent_is_diagnosed() {
    assert_out_of_range_at(
        "simulator-arch-share",
        "// Überprüfung — 检查\narch fast extends cdna3 {\n    serving_efficiency = 150% // ü\n}\n",
        3,
    );
}

/// A mixture-of-experts layer's two shares act apart: `moe_bandwidth_efficiency` slows the
/// expert weights a bandwidth-bound decode streams, `moe_efficiency` the expert matmuls a
/// compute-bound prefill runs; a dense model takes neither.
#[test]
fn moe_shares_split_streaming_from_matmuls() {
    let one = |name: &str, model: &str, engine: &str| {
        format!(
            "deployment {name} {{ // Experten — 专家\n    model    = {model}\n    quant    = bf16\n    engine   = {engine}\n    gpu      = h100_sxm5\n    seqs     = 1\n    context  = 16k\n    workload {{\n        prompt = 8000\n        output = 200\n    }}\n}}\n"
        )
    };
    let text = [
        "// Mischung der Experten — 混合专家\nengine slow_stream extends vllm {\n    moe_bandwidth_efficiency = 30% // ü\n}\nengine slow_matmul extends vllm {\n    moe_efficiency = 10%\n}\n".to_string(),
        one("moe", "qwen3_30b_a3b", "vllm"),
        one("moe_stream", "qwen3_30b_a3b", "slow_stream"),
        one("moe_matmul", "qwen3_30b_a3b", "slow_matmul"),
        one("dense", "qwen3_8b", "vllm"),
        one("dense_stream", "qwen3_8b", "slow_stream"),
        one("dense_matmul", "qwen3_8b", "slow_matmul"),
    ]
    .concat();
    let report = explain("moe-shares.deploy", &text);
    let ratio =
        |i: usize, base: usize, key: &str| figure(&report, i, key) / figure(&report, base, key);
    // Decode of one sequence streams the touched experts: the stream share slows it (from
    // the pooled 62.8 % to 30 % of the engine's bandwidth efficiency), the matmul share
    // barely moves it.
    let stream = ratio(1, 0, "decode_tps");
    assert!(
        (0.4..0.8).contains(&stream),
        "decode at the stream share: {stream}"
    );
    let matmul = ratio(2, 0, "decode_tps");
    assert!(
        (0.95..1.001).contains(&matmul),
        "decode at the matmul share: {matmul}"
    );
    // An 8,000-token prompt is matmul-bound: the matmul share slows it, the stream share
    // does not.
    let stream = ratio(1, 0, "prefill_tps");
    assert!(
        (0.97..=1.03).contains(&stream),
        "prefill at the stream share: {stream}"
    );
    let matmul = ratio(2, 0, "prefill_tps");
    assert!(matmul < 0.6, "prefill at the matmul share: {matmul}");
    // Explain names the shares each deployment runs at; a dense model gets no such line.
    let said = |i: usize| report[i]["assumptions"].to_string();
    assert!(
        said(0).contains("expert weights stream at 63 % of the engine's bandwidth efficiency and expert matmuls reach 37 %"),
        "{}",
        said(0)
    );
    assert!(said(1).contains("stream at 30 %"), "{}", said(1));
    assert!(said(2).contains("matmuls reach 10 %"), "{}", said(2));
    assert!(!said(3).contains("expert weights stream"), "{}", said(3));
    // A dense model has no experts: neither share changes a figure.
    for key in ["decode_tps", "prefill_tps", "tpot_s", "ttft_s"] {
        assert_eq!(figure(&report, 4, key), figure(&report, 3, key), "{key}");
        assert_eq!(figure(&report, 5, key), figure(&report, 3, key), "{key}");
    }
}

#[test]
fn a_moe_bandwidth_efficiency_past_100_percent_is_diagnosed() {
    assert_out_of_range_at(
        "simulator-moe-share",
        "// Überprüfung — 检查\nengine fast extends vllm {\n    moe_bandwidth_efficiency = 120% // ü\n}\n",
        3,
    );
}
