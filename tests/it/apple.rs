//! Apple silicon decode through the real binary: MLX rows of
//! tests/fixtures/calibration/unified_tps.csv (public mlx-lm and MLX-server runs, each row
//! number there), each written as the deployment a user would write (docs/calibration-speed.md,
//! "MLX").

use crate::common;

use common::{explain_text, explanation};

/// (row, model, quant, chip, prompt tokens, measured decode tok/s).
const MLX: &[(u32, &str, &str, &str, u32, f64)] = &[
    (
        3,
        "Qwen/Qwen3-4B-Instruct-2507",
        "bf16",
        "m4_max_40c_64gb",
        2048,
        52.47,
    ),
    (
        5,
        "Qwen/Qwen3-4B-Instruct-2507",
        "mlx_8bit",
        "m4_max_40c_64gb",
        2048,
        86.907,
    ),
    (
        15,
        "Qwen/Qwen3-4B-Instruct-2507",
        "mlx_4bit",
        "m4_max_40c_64gb",
        2048,
        134.52,
    ),
    (
        17,
        "Qwen/Qwen3-30B-A3B-Instruct-2507",
        "mlx_8bit",
        "m4_max_40c_64gb",
        2048,
        83.16,
    ),
    (
        23,
        "Qwen/Qwen3-30B-A3B-Instruct-2507",
        "mlx_4bit",
        "m4_max_40c_64gb",
        2048,
        113.33,
    ),
    (
        25,
        "Qwen/Qwen3-4B-Instruct-2507",
        "mlx_4bit",
        "m3_pro_18c_18gb",
        2048,
        44.62,
    ),
    (
        27,
        "meta-llama/Meta-Llama-3-70B-Instruct",
        "bf16",
        "m2_ultra_192gb",
        16,
        4.7,
    ),
    (
        33,
        "meta-llama/Llama-3.3-70B-Instruct",
        "mlx_4bit",
        "m3_max_40c_64gb",
        260,
        9.351,
    ),
    (
        35,
        "meta-llama/Llama-3.3-70B-Instruct",
        "mlx_4bit",
        "m3_max_40c_64gb",
        2173,
        9.123,
    ),
    (
        37,
        "meta-llama/Llama-3.3-70B-Instruct",
        "mlx_4bit",
        "m3_max_40c_64gb",
        8015,
        8.52,
    ),
    (
        39,
        "meta-llama/Llama-3.3-70B-Instruct",
        "mlx_4bit",
        "m3_max_40c_64gb",
        16003,
        7.779,
    ),
    (
        41,
        "meta-llama/Llama-3.3-70B-Instruct",
        "mlx_4bit",
        "m3_max_40c_64gb",
        30136,
        6.784,
    ),
    (
        43,
        "meta-llama/Llama-3.1-8B-Instruct",
        "mlx_4bit",
        "m4_pro_64gb",
        32159,
        23.146,
    ),
    (
        47,
        "Qwen/Qwen2.5-7B-Instruct-1M",
        "mlx_4bit",
        "m2_max_38c_32gb",
        115,
        71.392,
    ),
    (51, "Qwen/Qwen3-0.6B", "mlx_4bit", "m4_pro_48gb", 512, 349.3),
    (53, "Qwen/Qwen3-0.6B", "mlx_8bit", "m4_pro_48gb", 512, 257.7),
    (55, "Qwen/Qwen3-0.6B", "bf16", "m4_pro_48gb", 512, 162.8),
    (
        63,
        "Qwen/Qwen3-0.6B",
        "mlx_4bit",
        "m3_ultra_60c_256gb",
        512,
        387.64,
    ),
    (
        69,
        "google/gemma-3-1b-it",
        "mlx_4bit",
        "m3_ultra_60c_256gb",
        512,
        261.07,
    ),
    (
        72,
        "meta-llama/Llama-3.1-8B-Instruct",
        "mlx_4bit",
        "m3_ultra_60c_256gb",
        512,
        119.39,
    ),
    (
        75,
        "Qwen/Qwen3-8B",
        "mlx_4bit",
        "m3_ultra_60c_256gb",
        512,
        112.89,
    ),
    (
        78,
        "Qwen/Qwen2.5-14B-Instruct",
        "mlx_4bit",
        "m3_ultra_60c_256gb",
        512,
        66.36,
    ),
    (
        81,
        "google/gemma-3-27b-it",
        "mlx_4bit",
        "m3_ultra_60c_256gb",
        512,
        35.19,
    ),
];

#[test]
fn mlx_decode_on_apple_silicon() {
    let mut text = String::new();
    for (row, model, quant, chip, prompt, _) in MLX {
        text.push_str(&format!(
            "deployment row_{row} {{\n    model   = \"{model}\"\n    quant   = {quant}\n    gpu     = {chip}\n    engine  = mlx\n    context = {}\n}}\n",
            prompt + 128
        ));
    }
    let all = explain_text("apple_mlx", "mlx.deploy", &text);
    let (mut errors, mut inside, mut table) = (Vec::new(), 0, String::new());
    for (row, model, quant, chip, _, measured) in MLX {
        let d = explanation(&all, &format!("row_{row}"));
        let (tps, low, high) = (
            d["decode_tps"].as_f64().expect("decode"),
            d["decode_tps_low"].as_f64().expect("low"),
            d["decode_tps_high"].as_f64().expect("high"),
        );
        let error = (tps - measured) / measured;
        errors.push(error.abs());
        inside += usize::from((low..=high).contains(measured));
        table.push_str(&format!(
            "| {row} | {model} {quant} | {chip} | {measured:.1} | {tps:.1} | {:+.0} % |\n",
            error * 100.0
        ));
    }
    errors.sort_by(f64::total_cmp);
    let median = errors[errors.len() / 2];
    println!(
        "{table}median {:.1} %, inside {inside}/{}",
        median * 100.0,
        MLX.len()
    );
    assert!(median <= 0.10, "median {median}\n{table}");
    assert!(inside * 10 >= MLX.len() * 7, "{inside} inside\n{table}");
}
