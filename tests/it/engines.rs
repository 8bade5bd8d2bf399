//! The engines TGI, LMDeploy and MLX end to end through the real binary: each evaluates a
//! deployment (`explain --format json`: verdict, memory breakdown, decode speed), each
//! `export` writes its launch command with the engine's own flags, a quant an engine does
//! not run is refused, values a flag cannot take are refused, and an `extends` copy of an
//! engine behaves as the engine (behaviour from fields, not names).

use crate::common;

use common::{deployfit, json, scratch, stdout};
use serde_json::Value;
use std::path::{Path, PathBuf};

const GIB: f64 = (1u64 << 30) as f64;

/// Writes `text` to a scratch file and returns its path.
fn file(name: &str, text: &str) -> PathBuf {
    let dir = scratch(&format!("engines_{name}"));
    let path = dir.join(format!("{name}.deploy"));
    std::fs::write(&path, text).unwrap();
    path
}

fn deployment(name: &str, fields: &[(&str, &str)]) -> String {
    let body: String = fields
        .iter()
        .map(|(k, v)| format!("    {k} = {v}\n"))
        .collect();
    format!("deployment {name} {{\n{body}}}\n")
}

/// `explain --format json` for one deployment: its object.
fn explain(path: &Path, name: &str) -> Value {
    let out = deployfit(&[
        "explain",
        path.to_str().unwrap(),
        "--deployment",
        name,
        "--format",
        "json",
    ]);
    let report = json(&out);
    let list = report.as_array().cloned().unwrap_or_else(|| vec![report]);
    list.into_iter()
        .find(|d| d["deployment"] == name)
        .unwrap_or_else(|| panic!("no explanation of {name}: {}", stdout(&out)))
}

/// `export` of one deployment: exit code, stdout, stderr.
fn export(path: &Path, name: &str, engine: Option<&str>) -> (Option<i32>, String, String) {
    let mut args = vec!["export", "--deployment", name];
    if let Some(engine) = engine {
        args.extend(["--engine", engine]);
    }
    args.push(path.to_str().unwrap());
    let out = deployfit(&args);
    (
        out.status.code(),
        stdout(&out),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn bytes(value: &Value) -> f64 {
    value
        .as_f64()
        .unwrap_or_else(|| panic!("not a number: {value}"))
}

const SERVING: &str = "
engine my_tgi extends tgi {}
engine my_lmdeploy extends lmdeploy {}
engine my_mlx extends mlx {}
";

fn serving_file(name: &str) -> PathBuf {
    let mut text = SERVING.to_string();
    for (d, engine, quant, gpu, count, seqs, context) in [
        ("tgi_bf16", "tgi", "bf16", "h100_sxm5", "1", "4", "8192"),
        (
            "tgi_awq",
            "tgi",
            "awq_int4",
            "a100_sxm4_80gb",
            "2",
            "8",
            "32768",
        ),
        (
            "lmd_awq",
            "lmdeploy",
            "awq_int4",
            "a100_sxm4_80gb",
            "2",
            "8",
            "32768",
        ),
        (
            "lmd_bf16",
            "lmdeploy",
            "bf16",
            "h100_sxm5",
            "1",
            "4",
            "8192",
        ),
        (
            "mlx_4bit",
            "mlx",
            "mlx_4bit",
            "m2_ultra_192gb",
            "1",
            "2",
            "8192",
        ),
        (
            "mlx_bf16",
            "mlx",
            "bf16",
            "m2_ultra_192gb",
            "1",
            "1",
            "4096",
        ),
        (
            "copy_tgi_bf16",
            "my_tgi",
            "bf16",
            "h100_sxm5",
            "1",
            "4",
            "8192",
        ),
        (
            "copy_lmd_awq",
            "my_lmdeploy",
            "awq_int4",
            "a100_sxm4_80gb",
            "2",
            "8",
            "32768",
        ),
        (
            "copy_mlx_4bit",
            "my_mlx",
            "mlx_4bit",
            "m2_ultra_192gb",
            "1",
            "2",
            "8192",
        ),
    ] {
        text.push_str(&deployment(
            d,
            &[
                ("model", "llama_3_1_8b"),
                ("quant", quant),
                ("engine", engine),
                ("gpu", gpu),
                ("count", count),
                ("seqs", seqs),
                ("context", context),
            ],
        ));
    }
    file(name, &text)
}

#[test]
fn each_new_engine_evaluates_a_deployment() {
    let path = serving_file("evaluate");
    for name in ["tgi_bf16", "lmd_awq", "mlx_4bit"] {
        let e = explain(&path, name);
        assert_eq!(e["verdict"], "comfortable", "{name}: {e:#}");
        for field in [
            "weights_bytes",
            "kv_bytes",
            "overhead_bytes",
            "per_gpu_bytes",
            "usable_bytes",
        ] {
            assert!(bytes(&e[field]) > 0.0, "{name}: {field} missing in {e:#}");
        }
        for field in ["decode_tps", "decode_tps_low", "decode_tps_high"] {
            assert!(
                e[field].as_f64().is_some_and(|s| s > 0.0),
                "{name}: no {field} in {e:#}"
            );
        }
    }

    // TGI: 90 % of the GPU (cuda_memory_fraction 1.0 × TGI_WIGGLE_ROOM 0.90).
    let tgi = explain(&path, "tgi_bf16");
    let h100 = 80.0 * GIB;
    assert_eq!(bytes(&tgi["usable_bytes"]), (h100 * 0.9).floor());

    // LMDeploy: weights and overhead first, then 80 % of what is left for the KV cache.
    let lmd = explain(&path, "lmd_awq");
    let m = &lmd;
    let fixed = bytes(&m["weights_bytes"]) / 2.0 + bytes(&m["overhead_bytes"]);
    let a100 = 80.0 * GIB;
    let expected = (fixed + 0.8 * (a100 - fixed)).floor();
    assert!(
        (bytes(&m["usable_bytes"]) - expected).abs() <= 1.0,
        "LMDeploy usable {} vs {expected}",
        m["usable_bytes"]
    );
    // The same deployment on vLLM's rule (90 % of the GPU) would allow more: the share of
    // free memory is a different rule, not a renamed utilization.
    assert!(bytes(&m["usable_bytes"]) < a100 * 0.9);

    // MLX: the wired share of unified memory (three quarters above 36 GiB).
    let mlx = explain(&path, "mlx_4bit");
    assert_eq!(bytes(&mlx["usable_bytes"]), (192.0 * GIB * 0.75).floor());
    // mlx_4bit is 4.5 bits per weight.
    assert_eq!(
        bytes(&mlx["weights_bytes"]),
        (8_030_261_248.0_f64 * 4.5 / 8.0).round()
    );
}

#[test]
fn an_extends_copy_of_each_engine_evaluates_and_exports_as_the_engine() {
    let path = serving_file("copies");
    for (original, copy) in [
        ("tgi_bf16", "copy_tgi_bf16"),
        ("lmd_awq", "copy_lmd_awq"),
        ("mlx_4bit", "copy_mlx_4bit"),
    ] {
        let mut a = explain(&path, original);
        let mut b = explain(&path, copy);
        for e in [&mut a, &mut b] {
            let object = e.as_object_mut().unwrap();
            for key in ["deployment", "engine", "line", "assumptions"] {
                object.remove(key);
            }
        }
        assert_eq!(a, b, "{copy} evaluates differently from {original}");
        // Export without --engine follows the engine's dialect, copy or not.
        let (code_a, text_a, _) = export(&path, original, None);
        let (code_b, text_b, _) = export(&path, copy, None);
        assert_eq!(code_a, Some(0));
        assert_eq!(
            (code_a, text_a),
            (code_b, text_b),
            "{copy} exports differently"
        );
    }
}

#[test]
fn tgi_export_writes_the_launcher_flags() {
    let path = serving_file("tgi_export");
    let (code, text, err) = export(&path, "tgi_bf16", Some("tgi"));
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        text,
        "text-generation-launcher --model-id meta-llama/Llama-3.1-8B-Instruct \\\n  \
         --num-shard 1 \\\n  \
         --max-input-tokens 8191 \\\n  \
         --max-total-tokens 8192 \\\n  \
         --cuda-memory-fraction 1 \\\n  \
         --port 3000\n"
    );
    // Without --engine: the deployment's engine decides.
    assert_eq!(export(&path, "tgi_bf16", None).1, text);

    let (code, text, err) = export(&path, "tgi_awq", Some("tgi"));
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        text,
        "# meta-llama/Llama-3.1-8B-Instruct is the unquantized checkpoint: point `--model-id` at a AWQ repository of it.\n\
         text-generation-launcher --model-id meta-llama/Llama-3.1-8B-Instruct \\\n  \
         --num-shard 2 \\\n  \
         --quantize awq \\\n  \
         --max-input-tokens 32767 \\\n  \
         --max-total-tokens 32768 \\\n  \
         --cuda-memory-fraction 1 \\\n  \
         --port 3000\n"
    );
}

#[test]
fn tgi_export_writes_fp8_weights_kv_and_the_memory_fraction() {
    let text = deployment(
        "d",
        &[
            ("model", "llama_3_1_8b"),
            ("quant", "fp8"),
            ("kv_cache", "fp8"),
            ("engine", "tgi"),
            ("gpu", "h100_sxm5"),
            ("context", "4096"),
            ("memory_utilization", "72%"),
        ],
    );
    let path = file("tgi_fp8", &text);
    let (code, out, err) = export(&path, "d", None);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        out,
        "text-generation-launcher --model-id meta-llama/Llama-3.1-8B-Instruct \\\n  \
         --num-shard 1 \\\n  \
         --quantize fp8 \\\n  \
         --kv-cache-dtype fp8_e4m3fn \\\n  \
         --max-input-tokens 4095 \\\n  \
         --max-total-tokens 4096 \\\n  \
         --cuda-memory-fraction 0.8 \\\n  \
         --port 3000\n"
    );
}

#[test]
fn lmdeploy_export_writes_the_turbomind_flags() {
    let path = serving_file("lmdeploy_export");
    let (code, text, err) = export(&path, "lmd_awq", Some("lmdeploy"));
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        text,
        "# meta-llama/Llama-3.1-8B-Instruct is the unquantized checkpoint: point `lmdeploy serve api_server` at a AWQ repository of it.\n\
         lmdeploy serve api_server meta-llama/Llama-3.1-8B-Instruct \\\n  \
         --backend turbomind \\\n  \
         --tp 2 \\\n  \
         --session-len 32768 \\\n  \
         --max-batch-size 8 \\\n  \
         --cache-max-entry-count 0.8 \\\n  \
         --quant-policy 0 \\\n  \
         --model-format awq \\\n  \
         --server-port 23333\n"
    );
    let (code, text, err) = export(&path, "lmd_bf16", None);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        text,
        "lmdeploy serve api_server meta-llama/Llama-3.1-8B-Instruct \\\n  \
         --backend turbomind \\\n  \
         --tp 1 \\\n  \
         --session-len 8192 \\\n  \
         --max-batch-size 4 \\\n  \
         --cache-max-entry-count 0.8 \\\n  \
         --quant-policy 0 \\\n  \
         --server-port 23333\n"
    );
}

#[test]
fn mlx_export_converts_then_serves() {
    let path = serving_file("mlx_export");
    let (code, text, err) = export(&path, "mlx_4bit", Some("mlx"));
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        text,
        "# Convert the checkpoint once, then serve the converted folder:\n\
         mlx_lm.convert --hf-path meta-llama/Llama-3.1-8B-Instruct --mlx-path mlx_models/Llama-3.1-8B-Instruct-mlx_4bit \\\n  \
         -q --q-bits 4 --q-group-size 64 --q-mode affine\n\
         mlx_lm.server --model mlx_models/Llama-3.1-8B-Instruct-mlx_4bit \\\n  \
         --decode-concurrency 2 \\\n  \
         --port 8080\n"
    );
    let (code, text, err) = export(&path, "mlx_bf16", None);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        text,
        "mlx_lm.server --model meta-llama/Llama-3.1-8B-Instruct \\\n  \
         --decode-concurrency 1 \\\n  \
         --port 8080\n"
    );
}

#[test]
fn a_quant_an_engine_does_not_run_is_refused() {
    let mut text = String::new();
    for (d, engine, quant, gpu) in [
        ("tgi_gguf", "tgi", "Q4_K_M", "h100_sxm5"),
        ("lmd_gguf", "lmdeploy", "Q4_K_M", "h100_sxm5"),
        ("mlx_awq", "mlx", "awq_int4", "m2_ultra_192gb"),
        ("vllm_mlx", "vllm", "mlx_4bit", "h100_sxm5"),
    ] {
        text.push_str(&deployment(
            d,
            &[
                ("model", "llama_3_1_8b"),
                ("quant", quant),
                ("engine", engine),
                ("gpu", gpu),
                ("context", "4096"),
            ],
        ));
    }
    let path = file("mismatch", &text);
    let out = deployfit(&["check", path.to_str().unwrap(), "--format", "json"]);
    let report = json(&out);
    let mismatches: Vec<&Value> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "deploy::fit::quant_engine_mismatch")
        .collect();
    assert_eq!(mismatches.len(), 4, "{report:#}");
    for (d, engine, quant) in [
        ("tgi_gguf", "tgi", "Q4_K_M"),
        ("lmd_gguf", "lmdeploy", "Q4_K_M"),
        ("mlx_awq", "mlx", "awq_int4"),
    ] {
        let (code, out, err) = export(&path, d, None);
        assert_eq!(code, Some(1), "{d}: {out}");
        assert!(out.is_empty());
        assert!(
            err.contains(&format!("{quant} weights do not run on {engine}")),
            "{d}: {err}"
        );
    }
}

/// A refusal case: deployment name, engine, extra fields, the expected message.
type Case = (
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str)],
    &'static str,
);

/// Values a flag cannot take are refused, with the fix.
#[test]
fn values_an_engine_flag_cannot_take_are_refused() {
    let base = [
        ("model", "llama_3_1_8b"),
        ("quant", "bf16"),
        ("gpu", "h100_sxm5"),
        ("context", "4096"),
    ];
    let mut text = String::new();
    let cases: [Case; 6] = [
        (
            "tgi_too_much",
            "tgi",
            &[("memory_utilization", "95%")],
            "set memory_utilization to at most 90% with TGI",
        ),
        (
            "tgi_q8_kv",
            "tgi",
            &[("kv_cache", "q8_0")],
            "TGI has no `q8_0` KV cache",
        ),
        (
            "lmd_three",
            "lmdeploy",
            &[("count", "3")],
            "LMDeploy's --tp must be a power of two, not 3",
        ),
        (
            "lmd_fp8_kv",
            "lmdeploy",
            &[("kv_cache", "fp8")],
            "LMDeploy TurboMind has no `fp8` KV cache",
        ),
        (
            "mlx_two",
            "mlx",
            &[("count", "2")],
            "export writes mlx_lm.server for one GPU, not count = 2",
        ),
        (
            "tgi_one_token",
            "tgi",
            &[("context", "1")],
            "TGI needs a context of at least 2 tokens, not 1",
        ),
    ];
    for (name, engine, extra, _) in &cases {
        let mut fields: Vec<(&str, &str)> = base
            .iter()
            .copied()
            .filter(|(k, _)| !extra.iter().any(|(e, _)| e == k))
            .collect();
        fields.push(("engine", engine));
        fields.extend(extra.iter().copied());
        text.push_str(&deployment(name, &fields));
    }
    let path = file("refusals", &text);
    for (name, _, _, expected) in &cases {
        let (code, out, err) = export(&path, name, None);
        assert_eq!(code, Some(1), "{name} was exported:\n{out}");
        assert!(err.contains(expected), "{name}: {err}");
        assert!(err.contains("help:"), "{name}: no fix in {err}");
    }
}

#[test]
fn an_engine_export_does_not_write_needs_an_explicit_target() {
    let text = deployment(
        "d",
        &[
            ("model", "llama_3_1_8b"),
            ("quant", "bf16"),
            ("engine", "sglang"),
            ("gpu", "h100_sxm5"),
            ("context", "4096"),
        ],
    );
    let path = file("no_target", &text);
    let (code, out, err) = export(&path, "d", None);
    assert_eq!(code, Some(2), "{out}");
    assert!(err.contains("pass --engine"), "{err}");
    // With a target it is written for that engine.
    let (code, out, _) = export(&path, "d", Some("tgi"));
    assert_eq!(code, Some(0));
    assert!(out.starts_with("text-generation-launcher --model-id meta-llama/Llama-3.1-8B"));
}

#[test]
fn a_user_controlled_id_is_quoted_or_refused() {
    // An `hf` id is validated by `check`; export refuses one it cannot validate.
    let text = "model bad extends llama_3_1_8b { hf = \"a/b; rm -rf ~\" }\n".to_string()
        + &deployment(
            "d",
            &[
                ("model", "bad"),
                ("quant", "bf16"),
                ("engine", "lmdeploy"),
                ("gpu", "h100_sxm5"),
                ("context", "4096"),
            ],
        );
    let path = file("bad_id", &text);
    for engine in ["tgi", "lmdeploy", "mlx"] {
        let (code, out, err) = export(&path, "d", Some(engine));
        assert_eq!(code, Some(1), "{engine}: {out}");
        assert!(!out.contains("rm -rf"), "{engine}: {out}");
        assert!(err.contains("`hf`"), "{engine}: {err}");
    }
}

/// The memory flags come from the engine's fields: a copy that changes `utilization` or
/// `kv_free_share` exports its own value, for vLLM as for TGI and LMDeploy.
#[test]
fn memory_flags_come_from_the_engine_fields() {
    let mut text = "engine tight_vllm extends vllm { utilization = 80% }\n\
                    engine tight_tgi extends tgi { utilization = 81% }\n\
                    engine tight_lmdeploy extends lmdeploy { kv_free_share = 50% }\n"
        .to_string();
    for (d, engine) in [
        ("v", "tight_vllm"),
        ("t", "tight_tgi"),
        ("l", "tight_lmdeploy"),
    ] {
        text.push_str(&deployment(
            d,
            &[
                ("model", "llama_3_1_8b"),
                ("quant", "bf16"),
                ("engine", engine),
                ("gpu", "h100_sxm5"),
                ("context", "4096"),
            ],
        ));
    }
    let path = file("engine_fields", &text);
    let (code, out, err) = export(&path, "v", Some("vllm"));
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("  --gpu-memory-utilization 0.8 \\\n"), "{out}");
    let (code, out, err) = export(&path, "t", None);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("  --cuda-memory-fraction 0.9 \\\n"), "{out}");
    let (code, out, err) = export(&path, "l", None);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("  --cache-max-entry-count 0.5 \\\n"), "{out}");
    // And the estimate follows the same fields: half of the free memory for the KV cache.
    let e = explain(&path, "l");
    let fixed = bytes(&e["weights_bytes"]) + bytes(&e["overhead_bytes"]);
    let expected = (fixed + 0.5 * (80.0 * GIB - fixed)).floor();
    assert!((bytes(&e["usable_bytes"]) - expected).abs() <= 1.0, "{e:#}");
}

/// The generic engine (`kernels = auto`) runs on the serving roofline where a serving engine
/// would serve the deployment (a data-centre GPU, a format the serving engines load) and on
/// llama.cpp's single-stream fit elsewhere; the choice follows the GPU's and the quant's
/// fields, so an `extends` copy of the GPU decides alike.
#[test]
fn the_generic_engine_picks_its_kernels_from_the_gpu_and_the_format() {
    let mut text = String::from(
        "// Moteur générique — « auto » : le GPU et le format décident\n\
         engine as_serving extends generic { kernels = serving }\n\
         engine as_llamacpp extends generic { kernels = llamacpp }\n\
         gpu my_h100 extends h100_sxm5 {}\n",
    );
    let cases = [
        // (deployment, gpu, quant, count)
        ("hbm_bf16", "h100_sxm5", "bf16", "2"),
        ("copy_bf16", "my_h100", "bf16", "2"),
        ("hbm_gguf", "h100_sxm5", "Q4_K_M", "1"),
        ("gddr_bf16", "rtx_4090", "bf16", "1"),
    ];
    for (name, gpu, quant, count) in cases {
        for (suffix, engine) in [
            ("", None),
            ("_serving", Some("as_serving")),
            ("_llamacpp", Some("as_llamacpp")),
        ] {
            let mut fields = vec![
                (
                    "model",
                    if quant == "Q4_K_M" || gpu == "rtx_4090" {
                        "llama_3_1_8b"
                    } else {
                        "qwen2_5_72b"
                    },
                ),
                ("quant", quant),
                ("gpu", gpu),
                ("count", count),
                ("context", "4k"),
            ];
            if let Some(engine) = engine {
                fields.push(("engine", engine));
            }
            text.push_str(&deployment(&format!("{name}{suffix}"), &fields));
        }
    }
    let path = file("generic_kernels", &text);
    let decode = |name: &str| explain(&path, name)["decode_tps"].as_f64().unwrap();
    // On two H100s in BF16 the generic engine is the serving roofline, and not llama.cpp's
    // HBM fit (about half the bandwidth: 21.7 against 29.6 tok/s for Qwen2.5-72B).
    for name in ["hbm_bf16", "copy_bf16"] {
        let (generic, serving, llamacpp) = (
            decode(name),
            decode(&format!("{name}_serving")),
            decode(&format!("{name}_llamacpp")),
        );
        assert_eq!(generic, serving, "{name}");
        assert!(
            generic > llamacpp * 1.25,
            "{name}: {generic} against {llamacpp}"
        );
    }
    assert_eq!(decode("copy_bf16"), decode("hbm_bf16"));
    // A GGUF format, even on an H100, and any format on a GeForce card: llama.cpp's fit.
    for name in ["hbm_gguf", "gddr_bf16"] {
        let generic = decode(name);
        assert_eq!(generic, decode(&format!("{name}_llamacpp")), "{name}");
        assert_ne!(generic, decode(&format!("{name}_serving")), "{name}");
    }
    // explain says which model it used, and a named engine says nothing of the kind.
    let text_of = |name: &str| {
        stdout(&deployfit(&[
            "explain",
            path.to_str().unwrap(),
            "--deployment",
            name,
        ]))
    };
    for (name, lines) in [
        (
            "hbm_bf16",
            &[
                "simulation of the engine's continuous batching",
                "engine generic: no serving engine named",
            ],
        ),
        (
            "gddr_bf16",
            &[
                "fitted to published llama.cpp measurements",
                "engine generic: no engine named, so speeds are llama.cpp's",
            ],
        ),
    ] {
        let text = text_of(name);
        for line in lines {
            assert!(text.contains(line), "{name}: {line}\n{text}");
        }
    }
    let text = text_of("hbm_bf16_serving");
    assert!(!text.contains("engine named"), "{text}");
}

/// Pipeline stages need serving kernels: the generic engine accepts them where it runs on
/// them (BF16 on H100s) and refuses them, with the field's span, where it does not.
#[test]
fn the_generic_engine_takes_a_pipeline_only_on_serving_kernels() {
    let text = "// Étages de pipeline — générique\n\
        deployment on_hbm { model = qwen2_5_72b; quant = bf16; gpu = h100_sxm5; count = 2; pipeline = 2; context = 4k }\n\
        deployment on_gddr { model = llama_3_1_8b; quant = bf16; gpu = rtx_4090; count = 1; pipeline = 2; context = 4k } // « non »\n";
    let path = file("generic_pipeline", text);
    let out = deployfit(&["check", path.to_str().unwrap(), "--format", "json"]);
    let report = json(&out);
    let diags = report["diagnostics"].as_array().unwrap();
    let unsupported: Vec<&Value> = diags
        .iter()
        .filter(|d| d["code"] == "deploy::parallel::unsupported")
        .collect();
    assert_eq!(unsupported.len(), 1, "{report:#}");
    let d = unsupported[0];
    assert_eq!(d["line"], 3, "{d:#}");
    let start = text.find("pipeline = 2; context = 4k } //").unwrap() + "pipeline = ".len();
    let column = text[..start].rsplit('\n').next().unwrap().chars().count() + 1;
    assert_eq!(d["column"], column, "{d:#}");
    assert!(
        d["help"].as_str().unwrap().contains("engine = vllm"),
        "{d:#}"
    );
}

/// ggml dequantizes every format it loads (`fallback = dequantize`): gpt-oss's MXFP4 runs on
/// llama.cpp and Ollama on a GPU without FP4 tensor cores, weight-only, and an `extends` copy
/// of llama.cpp runs it alike; vLLM on a Turing card (no Marlin kernels there) still cannot,
/// and llama.cpp still does not load an FP8 safetensors checkpoint.
#[test]
fn llamacpp_dequantizes_mxfp4_on_any_gpu() {
    let text = "// gpt-oss — MXFP4 déquantifié par ggml\n\
        engine my_llamacpp extends llamacpp {}\n\
        deployment ggml { model = gpt_oss_20b; quant = mxfp4; gpu = rtx_4090; engine = llamacpp; context = 4k }\n\
        deployment copy { model = gpt_oss_20b; quant = mxfp4; gpu = rtx_4090; engine = my_llamacpp; context = 4k }\n\
        deployment turing_vllm { model = gpt_oss_20b; quant = mxfp4; gpu = rtx_2080_ti; engine = vllm; context = 4k } // « non »\n\
        deployment fp8_ggml { model = llama_3_1_8b; quant = fp8; gpu = rtx_4090; engine = llamacpp; context = 4k }\n";
    let path = file("llamacpp_mxfp4", text);
    let report = json(&deployfit(&[
        "check",
        path.to_str().unwrap(),
        "--format",
        "json",
    ]));
    let codes_on = |line: u64| -> Vec<String> {
        report["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["line"] == line)
            .map(|d| d["code"].as_str().unwrap().to_string())
            .collect()
    };
    // ggml runs MXFP4 as it runs every GGUF type: no error, and no "not native" warning.
    for line in [3, 4] {
        let codes = codes_on(line);
        assert!(
            !codes.iter().any(|c| c.contains("unsupported")
                || c.contains("mismatch")
                || c.contains("not_native")),
            "line {line}: {codes:?}"
        );
    }
    assert!(
        codes_on(5)
            .iter()
            .any(|c| c.ends_with("quant_unsupported_on_gpu")),
        "{:?}",
        codes_on(5)
    );
    assert!(
        codes_on(6)
            .iter()
            .any(|c| c.ends_with("quant_engine_mismatch")),
        "{:?}",
        codes_on(6)
    );
    let ggml = explain(&path, "ggml");
    let copy = explain(&path, "copy");
    assert_eq!(ggml["decode_tps"], copy["decode_tps"]);
    assert!(ggml["decode_tps"].as_f64().unwrap() > 0.0);
    // On a Turing card vLLM has no way to run it: the error says why.
    let vllm = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["line"] == 5 && d["code"] == "deploy::fit::quant_unsupported_on_gpu")
        .unwrap();
    assert!(
        vllm["message"]
            .as_str()
            .unwrap()
            .contains("no FP4 tensor cores"),
        "{vllm:#}"
    );
}
