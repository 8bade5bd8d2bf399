//! Time to first token at low concurrency through the real binary: closed-loop runs of
//! tests/fixtures/calibration/low_concurrency.csv (published benchmark results collected for
//! this; its run numbers below), each written as the deployment a user would write for it
//! (docs/calibration-serving.md, "Low concurrency"). Nothing was fitted on these rows; the
//! simulator's one change they motivated is the number of closed-loop waves it averages.

use crate::common;

use common::{explain_text, explanation};

/// (run, engine, model, quant, gpu, count, prompt, output, varied lengths, clients,
/// measured mean TTFT ms). SGLang's `bench_serving --dataset-name random` draws lengths
/// uniformly up to the stated ones (`--random-range-ratio` 0): those runs are written with
/// half the lengths, varied; vLLM's `random` keeps them fixed; the chat sets vary.
type Run = (
    u32,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    u32,
    u32,
    u32,
    bool,
    u32,
    f64,
);

const RUNS: &[Run] = &[
    (
        11,
        "vllm",
        "Qwen/Qwen3.5-4B",
        "bf16",
        "\"RTX 5090\"",
        1,
        1024,
        256,
        false,
        1,
        66.34,
    ),
    (
        12,
        "vllm",
        "Qwen/Qwen3.5-4B",
        "bf16",
        "\"RTX 5090\"",
        1,
        1024,
        256,
        false,
        2,
        97.64,
    ),
    (
        13,
        "vllm",
        "Qwen/Qwen3.5-4B",
        "bf16",
        "\"RTX 5090\"",
        1,
        1024,
        256,
        false,
        4,
        165.88,
    ),
    (
        14,
        "vllm",
        "Qwen/Qwen3.5-4B",
        "bf16",
        "\"RTX 5090\"",
        1,
        1024,
        256,
        false,
        8,
        232.45,
    ),
    (
        15,
        "vllm",
        "Qwen/Qwen3.5-4B",
        "bf16",
        "\"RTX 5090\"",
        1,
        1024,
        256,
        false,
        16,
        358.21,
    ),
    (
        57,
        "vllm",
        "Qwen/Qwen2.5-7B-Instruct",
        "fp16",
        "l4",
        1,
        200,
        128,
        true,
        1,
        70.0,
    ),
    (
        59,
        "vllm",
        "Qwen/Qwen2.5-7B-Instruct",
        "fp16",
        "l4",
        1,
        200,
        128,
        true,
        4,
        123.0,
    ),
    (
        61,
        "vllm",
        "Qwen/Qwen2.5-7B-Instruct",
        "fp16",
        "l4",
        1,
        200,
        128,
        true,
        16,
        196.0,
    ),
    (
        63,
        "sglang",
        "Qwen/Qwen2.5-7B-Instruct",
        "fp16",
        "l4",
        1,
        200,
        128,
        true,
        1,
        119.0,
    ),
    (
        65,
        "sglang",
        "Qwen/Qwen2.5-7B-Instruct",
        "fp16",
        "l4",
        1,
        200,
        128,
        true,
        4,
        119.0,
    ),
    (
        67,
        "sglang",
        "Qwen/Qwen2.5-7B-Instruct",
        "fp16",
        "l4",
        1,
        200,
        128,
        true,
        16,
        222.0,
    ),
    (
        94,
        "vllm",
        "Qwen/Qwen2.5-7B-Instruct",
        "fp16",
        "a100_sxm4_40gb",
        1,
        200,
        128,
        true,
        1,
        25.0,
    ),
    (
        95,
        "vllm",
        "Qwen/Qwen2.5-7B-Instruct",
        "fp16",
        "a100_sxm4_40gb",
        1,
        200,
        128,
        true,
        16,
        73.0,
    ),
    (
        96,
        "sglang",
        "Qwen/Qwen2.5-7B-Instruct",
        "fp16",
        "a100_sxm4_40gb",
        1,
        200,
        128,
        true,
        1,
        38.0,
    ),
    (
        97,
        "sglang",
        "Qwen/Qwen2.5-7B-Instruct",
        "fp16",
        "a100_sxm4_40gb",
        1,
        200,
        128,
        true,
        16,
        76.0,
    ),
    (
        128,
        "sglang",
        "meta-llama/Llama-3.1-70B-Instruct",
        "bf16",
        "a100_sxm4_80gb",
        8,
        500,
        500,
        true,
        1,
        131.61,
    ),
    (
        129,
        "sglang",
        "meta-llama/Llama-3.1-70B-Instruct",
        "bf16",
        "a100_sxm4_80gb",
        8,
        500,
        500,
        true,
        16,
        264.84,
    ),
    (
        130,
        "sglang",
        "meta-llama/Llama-3.1-70B-Instruct",
        "bf16",
        "a100_sxm4_80gb",
        8,
        4000,
        500,
        true,
        1,
        395.25,
    ),
    (
        131,
        "sglang",
        "meta-llama/Llama-3.1-70B-Instruct",
        "bf16",
        "a100_sxm4_80gb",
        8,
        4000,
        500,
        true,
        16,
        603.42,
    ),
    (
        145,
        "sglang",
        "Qwen/Qwen3-235B-A22B-Instruct-2507",
        "bf16",
        "b200",
        8,
        500,
        500,
        true,
        1,
        99.03,
    ),
    (
        146,
        "sglang",
        "Qwen/Qwen3-235B-A22B-Instruct-2507",
        "bf16",
        "b200",
        8,
        500,
        500,
        true,
        16,
        215.7,
    ),
    (
        147,
        "sglang",
        "Qwen/Qwen3-235B-A22B-Instruct-2507",
        "bf16",
        "b200",
        8,
        4000,
        500,
        true,
        1,
        139.9,
    ),
    (
        148,
        "sglang",
        "Qwen/Qwen3-235B-A22B-Instruct-2507",
        "bf16",
        "b200",
        8,
        4000,
        500,
        true,
        16,
        284.29,
    ),
];

#[test]
fn first_tokens_at_low_concurrency() {
    let mut text = String::new();
    for (run, engine, model, quant, gpu, count, prompt, output, varied, clients, _) in RUNS {
        let lengths = if *varied { "; lengths = varied" } else { "" };
        let context = if *varied {
            8 * (prompt + output)
        } else {
            prompt + output + 64
        };
        text.push_str(&format!(
            "deployment run_{run} {{\n    model   = \"{model}\"\n    quant   = {quant}\n    gpu     = {gpu}\n    count   = {count}\n    engine  = {engine}\n    context = {context}\n    seqs    = {clients}\n    workload {{ prompt = {prompt}; output = {output}{lengths} }}\n}}\n"
        ));
    }
    let all = explain_text("low_concurrency", "runs.deploy", &text);
    let (mut loaded, mut single, mut table) = (Vec::new(), Vec::new(), String::new());
    for (run, engine, model, _, gpu, _, _, _, _, clients, measured) in RUNS {
        let d = explanation(&all, &format!("run_{run}"));
        let ttft = d["ttft_s"].as_f64().expect("ttft") * 1000.0;
        let error = (ttft - measured) / measured;
        if *clients > 1 {
            &mut loaded
        } else {
            &mut single
        }
        .push(error.abs());
        table.push_str(&format!(
            "| {run} | {engine} | {model} | {gpu} | {clients} | {measured:.0} | {ttft:.0} | {:+.0} % |\n",
            error * 100.0
        ));
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (loaded_median, single_median) = (median(loaded), median(single));
    println!(
        "{table}2 to 16 clients: median {:.1} %; one client: {:.1} %",
        loaded_median * 100.0,
        single_median * 100.0
    );
    assert!(loaded_median <= 0.20, "{loaded_median}\n{table}");
}

/// One sequence decoding after a long prompt on an A100 (run 102: Qwen3-14B AWQ, 16,000
/// prompt tokens, vLLM 0.9.1, 20.63 ms per output token): the few thread blocks of its
/// decode attention read the KV at a fraction of the bandwidth (archs.deploy
/// `decode_splits`, fitted to this run; in-sample). SGLang's split-KV decode is not
/// limited so.
#[test]
fn long_prompt_decode_on_an_a100() {
    let text = |engine: &str, prompt: u32| {
        format!(
            "deployment {engine}_{prompt} {{\n    model   = \"Qwen/Qwen3-14B\"\n    quant   = awq_int4\n    gpu     = a100_sxm4_80gb\n    engine  = {engine}\n    context = 16384\n    workload {{ prompt = {prompt}; output = 200 }}\n}}\n"
        )
    };
    let file = [
        text("vllm", 16000),
        text("vllm", 100),
        text("sglang", 16000),
    ]
    .concat();
    let all = explain_text("long_prompt_decode", "long.deploy", &file);
    let tpot = |name: &str| explanation(&all, name)["tpot_s"].as_f64().unwrap() * 1000.0;
    let (long, short, sglang) = (tpot("vllm_16000"), tpot("vllm_100"), tpot("sglang_16000"));
    assert!((long - 20.63).abs() / 20.63 < 0.15, "{long:.2} ms");
    assert!(long > 2.0 * short, "{long:.2} vs {short:.2}");
    assert!(sglang < 0.6 * long, "{sglang:.2} vs {long:.2}");
}

/// One sequence of a large model on eight GPUs: its decode step's all-reduces are small
/// (the one-shot kernel's latency, `SMALL_ALL_REDUCE_LATENCY`, fitted to these four runs:
/// in-sample). SGLang at one client, runs 110, 128, 132 and 145.
#[test]
fn single_sequence_decode_of_large_models_on_eight_gpus() {
    let runs: &[(u32, &str, &str, &str, f64)] = &[
        (
            110,
            "deepseek-ai/DeepSeek-R1-0528",
            "fp8_block",
            "b200",
            9.16,
        ),
        (
            128,
            "meta-llama/Llama-3.1-70B-Instruct",
            "bf16",
            "a100_sxm4_80gb",
            18.63,
        ),
        (132, "MiniMaxAI/MiniMax-M2.5", "fp8", "h100_sxm5", 8.05),
        (
            145,
            "Qwen/Qwen3-235B-A22B-Instruct-2507",
            "bf16",
            "b200",
            10.12,
        ),
    ];
    let file: String = runs
        .iter()
        .map(|(run, model, quant, gpu, _)| {
            format!(
                "deployment run_{run} {{\n    model   = \"{model}\"\n    quant   = {quant}\n    gpu     = {gpu}\n    count   = 8\n    engine  = sglang\n    context = 8192\n    workload {{ prompt = 500; output = 500; lengths = varied }}\n}}\n"
            )
        })
        .collect();
    let all = explain_text("small_all_reduce", "eight.deploy", &file);
    for (run, model, _, gpu, measured) in runs {
        let tpot = explanation(&all, &format!("run_{run}"))["tpot_s"]
            .as_f64()
            .unwrap()
            * 1000.0;
        assert!(
            (tpot - measured).abs() / measured < 0.2,
            "{model} on 8 × {gpu}: {tpot:.2} ms, measured {measured}"
        );
    }
}
