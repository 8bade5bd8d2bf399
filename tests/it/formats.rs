//! Formats from artifacts (issue 34): a GGUF file's `general.file_type` (or, without one,
//! its tensor types) gives the quant and the exact weight bytes; a config.json's
//! `quantization_config` gives AWQ, GPTQ, FP8, MXFP4; a catalog model published in one
//! format (gpt-oss: MXFP4) defaults to it — each through the real binary on files the
//! tests write.

use crate::common;

use std::path::Path;

use common::{codes, deployfit_in, explanation, json, scratch, stdout, write};

/// A GGUF v3 file of a small llama (2 layers, hidden 256) with `general.file_type` when
/// given, the tensors (name, dims, ggml type) and zero-filled data; returns the tensors'
/// bytes, computed here from the block sizes.
fn gguf(path: &Path, file_type: Option<u32>, tensors: &[(&str, &[u64], u32)]) -> u64 {
    crate::common::write_gguf(path, "llama", file_type, tensors)
}

/// A Q4_K_M-like mix: most matrices Q4_K, `ffn_down` and the output Q6_K, one Q8_0, norms F32.
const MIX: &[(&str, &[u64], u32)] = &[
    ("token_embd.weight", &[256, 1024], 12),
    ("blk.0.attn_q.weight", &[256, 256], 12),
    ("blk.0.attn_k.weight", &[256, 128], 12),
    ("blk.0.attn_v.weight", &[256, 128], 14),
    ("blk.0.ffn_gate.weight", &[256, 512], 12),
    ("blk.0.ffn_down.weight", &[512, 256], 14),
    ("blk.1.attn_q.weight", &[256, 256], 12),
    ("blk.1.attn_v.weight", &[256, 128], 8),
    ("blk.0.attn_norm.weight", &[256], 0),
    ("output.weight", &[256, 1024], 14),
];

fn explain_json(dir: &Path, file: &str) -> serde_json::Value {
    let out = deployfit_in(dir, &["explain", file, "--format", "json"]);
    json(&out)
}

fn check_json(dir: &Path, file: &str) -> serde_json::Value {
    json(&deployfit_in(dir, &["check", file, "--format", "json"]))
}

/// `deployfit model PATH --format json`, run in `dir`.
fn card(dir: &Path, path: &str) -> serde_json::Value {
    let out = deployfit_in(dir, &["model", path, "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    json(&out)
}

fn deployment(name: &str, model: &str, quant: Option<&str>, rest: &str) -> String {
    let quant = quant.map_or(String::new(), |q| format!("    quant = {q}\n"));
    format!("deployment {name} {{\n    model = \"{model}\"\n{quant}{rest}}}\n")
}

const LLAMACPP: &str = "    gpu = rtx_4090\n    engine = llamacpp\n    context = 4k\n";

#[test]
fn a_gguf_without_quant_takes_its_file_type_and_weighs_its_tensors() {
    let dir = scratch("formats_gguf_file_type");
    // A name that says nothing of the format: only the header does (15 = MOSTLY_Q4_K_M).
    let total = gguf(&dir.join("model.gguf"), Some(15), MIX);
    let params: u64 = MIX.iter().map(|(_, d, _)| d.iter().product::<u64>()).sum();
    write(
        &dir,
        "g.deploy",
        &(deployment("bare", "./model.gguf", None, LLAMACPP)
            + &deployment("written", "./model.gguf", Some("Q4_K_M"), LLAMACPP)),
    );
    let report = check_json(&dir, "g.deploy");
    assert!(codes(&report).is_empty(), "{report}");
    let explained = explain_json(&dir, "g.deploy");
    for name in ["bare", "written"] {
        let d = explanation(&explained, name);
        assert_eq!(d["quant"], "Q4_K_M", "{d}");
        // The tensors' bytes as the header lists them, not params × 4.85 bits.
        assert_eq!(d["weights_bytes"], total, "{d}");
        assert_eq!(d["weights_source"], "files", "{d}");
    }
    assert_eq!(total, 698_624);
    // 1,016,064 parameters × 4.85 bits would say 615,989 B.
    assert_eq!(params, 1_016_064);
    assert_eq!((params as f64 * 4.85 / 8.0).round() as u64, 615_989);
    // The model card says where the format comes from.
    let card = card(&dir, "./model.gguf");
    let source = card["source"].as_str().unwrap();
    assert!(
        source.contains("weights in Q4_K_M (GGUF general.file_type 15 (Q4_K_M))"),
        "{source}"
    );
}

#[test]
fn the_header_wins_over_the_file_name_and_a_missing_type_is_guessed_as_llama_cpp_does() {
    let dir = scratch("formats_gguf_name");
    // The name says Q8_0; the header says Q4_K_M.
    let total = gguf(&dir.join("misnamed-Q8_0.gguf"), Some(15), MIX);
    // No general.file_type: most tensors are Q4_K, which llama.cpp's loader reads as Q4_K_M.
    gguf(&dir.join("untyped.gguf"), None, MIX);
    // No type, and a name that says Q5_K_S: the publisher's name says more than the guess.
    gguf(&dir.join("untyped-Q5_K_S.gguf"), None, MIX);
    // gpt-oss's llama.cpp type, MOSTLY_MXFP4_MOE (38), experts in MXFP4.
    let mxfp4 = gguf(
        &dir.join("moe.gguf"),
        Some(38),
        &[
            ("token_embd.weight", &[256, 1024], 8),
            ("blk.0.ffn_down_exps.weight", &[512, 256, 4], 39),
            ("blk.0.ffn_up_exps.weight", &[256, 512, 4], 39),
        ],
    );
    write(
        &dir,
        "g.deploy",
        &(deployment("misnamed", "./misnamed-Q8_0.gguf", None, LLAMACPP)
            + &deployment("untyped", "./untyped.gguf", None, LLAMACPP)
            + &deployment("named", "./untyped-Q5_K_S.gguf", None, LLAMACPP)
            + &deployment("moe", "./moe.gguf", None, LLAMACPP)),
    );
    let explained = explain_json(&dir, "g.deploy");
    let misnamed = explanation(&explained, "misnamed");
    assert_eq!(misnamed["quant"], "Q4_K_M", "{misnamed}");
    assert_eq!(misnamed["weights_bytes"], total, "{misnamed}");
    assert_eq!(explanation(&explained, "untyped")["quant"], "Q4_K_M");
    assert_eq!(explanation(&explained, "untyped")["weights_bytes"], total);
    assert_eq!(explanation(&explained, "named")["quant"], "Q5_K_S");
    let moe = explanation(&explained, "moe");
    assert_eq!(moe["quant"], "mxfp4", "{moe}");
    assert_eq!(moe["weights_bytes"], mxfp4, "{moe}");
    let source = card(&dir, "./misnamed-Q8_0.gguf")["source"].clone();
    assert!(
        source
            .as_str()
            .unwrap()
            .contains("the file name says Q8_0, the file's own type (Q4_K_M) is used"),
        "{source}"
    );
    let source = card(&dir, "./untyped.gguf")["source"].clone();
    assert!(
        source
            .as_str()
            .unwrap()
            .contains("guessed from the type most tensors have"),
        "{source}"
    );
}

#[test]
fn a_gguf_type_the_catalog_lacks_asks_for_a_quant_and_says_which_type_it_is() {
    let dir = scratch("formats_gguf_unknown");
    // 14 = MOSTLY_Q4_K_S, not a catalog quant; 9999 is no llama.cpp type at all. The names
    // say Q4_K_M, which the header overrides.
    gguf(&dir.join("s-Q4_K_M.gguf"), Some(14), MIX);
    gguf(&dir.join("odd-Q4_K_M.gguf"), Some(9999), MIX);
    write(
        &dir,
        "g.deploy",
        &(deployment("s", "./s-Q4_K_M.gguf", None, LLAMACPP)
            + &deployment("odd", "./odd-Q4_K_M.gguf", None, LLAMACPP)),
    );
    let report = check_json(&dir, "g.deploy");
    assert_eq!(
        codes(&report),
        vec!["deploy::field::missing", "deploy::field::missing"],
        "{report}"
    );
    let s = card(&dir, "./s-Q4_K_M.gguf")["source"].clone();
    assert!(
        s.as_str().unwrap().contains(
            "weights in GGUF Q4_K_S (GGUF general.file_type 14 (Q4_K_S)), a format the catalog has no quant for"
        ),
        "{s}"
    );
    let odd = card(&dir, "./odd-Q4_K_M.gguf")["source"].clone();
    assert!(
        odd.as_str()
            .unwrap()
            .contains("general.file_type 9999 (unknown)"),
        "{odd}"
    );
}

/// A Llama-style config.json (Llama-3.2-1B's shapes) with a `quantization_config`.
fn quantized_config(quantization: &str) -> String {
    format!(
        "{{\"model_type\": \"llama\", \"architectures\": [\"LlamaForCausalLM\"], \
         \"hidden_size\": 2048, \"intermediate_size\": 8192, \"num_hidden_layers\": 16, \
         \"num_attention_heads\": 32, \"num_key_value_heads\": 8, \"head_dim\": 64, \
         \"vocab_size\": 128256, \"max_position_embeddings\": 131072, \
         \"tie_word_embeddings\": true, \"quantization_config\": {quantization}}}"
    )
}

#[test]
fn a_quantization_config_gives_the_format() {
    let dir = scratch("formats_quantization_config");
    let cases: &[(&str, &str, Option<&str>)] = &[
        (
            "awq",
            r#"{"quant_method": "awq", "bits": 4, "group_size": 128, "version": "gemm", "zero_point": true}"#,
            Some("awq_int4"),
        ),
        (
            "awq_old",
            r#"{"quant_method": "awq", "w_bit": 4, "q_group_size": 128}"#,
            Some("awq_int4"),
        ),
        (
            "gptq",
            r#"{"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": false}"#,
            Some("gptq_int4"),
        ),
        (
            "fp8",
            r#"{"quant_method": "fp8", "activation_scheme": "dynamic"}"#,
            Some("fp8"),
        ),
        (
            "fp8_block",
            r#"{"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic", "weight_block_size": [128, 128]}"#,
            Some("fp8_block"),
        ),
        (
            "mxfp4",
            r#"{"quant_method": "mxfp4", "modules_to_not_convert": ["model.layers.*.self_attn"]}"#,
            Some("mxfp4"),
        ),
        (
            "ct_fp8",
            r#"{"quant_method": "compressed-tensors", "format": "float-quantized", "config_groups": {"group_0": {"targets": ["Linear"], "weights": {"num_bits": 8, "type": "float", "strategy": "channel"}, "input_activations": {"num_bits": 8, "type": "float", "dynamic": true}}}}"#,
            Some("fp8"),
        ),
        // GPTQ in 8 bits: a format, but not one the catalog has.
        (
            "gptq8",
            r#"{"quant_method": "gptq", "bits": 8, "group_size": 128}"#,
            None,
        ),
        // Fields of the wrong type: no format, no crash.
        (
            "garbled",
            r#"{"quant_method": 5, "bits": "four", "config_groups": [1, 2]}"#,
            None,
        ),
    ];
    let mut text = String::new();
    for (name, quantization, _) in cases {
        write(
            &dir,
            &format!("{name}/config.json"),
            &quantized_config(quantization),
        );
        text += &deployment(
            name,
            &format!("./{name}/config.json"),
            None,
            "    gpu = h100_sxm5\n    engine = vllm\n    context = 8k\n",
        );
    }
    write(&dir, "q.deploy", &text);
    let out = deployfit_in(&dir, &["explain", "q.deploy", "--format", "json"]);
    let explained = json(&out);
    let report = check_json(&dir, "q.deploy");
    // Llama-3.2-1B: 1,235,814,400 parameters (tied embeddings).
    let params = 1_235_814_400_f64;
    for (name, _, quant) in cases {
        match quant {
            Some(quant) => {
                let d = explanation(&explained, name);
                assert_eq!(d["quant"], *quant, "{name}: {d}");
                let bpw = match *quant {
                    "awq_int4" => 4.5,
                    "gptq_int4" => 4.16,
                    "fp8" | "fp8_block" => 8.5,
                    "mxfp4" => 4.25,
                    _ => unreachable!(),
                };
                if *quant != "mxfp4" {
                    // vLLM pads MXFP4 experts; the others are params × bpw.
                    assert_eq!(
                        d["weights_bytes"],
                        (params * bpw / 8.0).round() as u64,
                        "{name}: {d}"
                    );
                }
            }
            None => {
                let missing = report["diagnostics"].as_array().unwrap().iter().any(|x| {
                    x["code"] == "deploy::field::missing"
                        && x["message"]
                            .as_str()
                            .is_some_and(|m| m.contains(&format!("`{name}`")))
                });
                assert!(missing, "{name}: {report}");
            }
        }
    }
    let gptq8 = card(&dir, "./gptq8/config.json")["source"].clone();
    assert!(
        gptq8
            .as_str()
            .unwrap()
            .contains("weights in GPTQ int8 (config.json quantization_config (quant_method gptq, 8 bits)), a format the catalog has no quant for"),
        "{gptq8}"
    );
}

#[test]
fn gpt_oss_defaults_to_its_one_published_format() {
    let dir = scratch("formats_gpt_oss");
    write(
        &dir,
        "o.deploy",
        &(deployment(
            "big",
            "openai/gpt-oss-120b",
            None,
            "    gpu = h100_sxm5\n    context = 8k\n",
        ) + &deployment(
            "small",
            "openai/gpt-oss-20b",
            None,
            "    gpu = rtx_4090\n    context = 8k\n",
        ) + "deployment by_name {\n    model = gpt_oss_20b\n    gpu = rtx_4090\n    context = 8k\n}\n"
            + &deployment(
                "gguf",
                "openai/gpt-oss-20b",
                Some("Q4_K_M"),
                "    gpu = rtx_4090\n    engine = llamacpp\n    context = 8k\n",
            )),
    );
    let report = check_json(&dir, "o.deploy");
    let found = codes(&report);
    assert!(
        !found.contains(&"deploy::field::missing".to_string()),
        "{report}"
    );
    // A catalog model is not a file: writing another format is no mismatch.
    assert!(
        !found.contains(&"deploy::model::format_mismatch".to_string()),
        "{report}"
    );
    let explained = explain_json(&dir, "o.deploy");
    let big = explanation(&explained, "big");
    assert_eq!(big["quant"], "mxfp4", "{big}");
    // The checkpoint as released: 65,248,815,744 B (stdlib/models.deploy files).
    assert_eq!(big["weights_bytes"], 65_248_815_744_u64, "{big}");
    for name in ["small", "by_name"] {
        let d = explanation(&explained, name);
        assert_eq!(d["quant"], "mxfp4", "{d}");
        assert_eq!(d["weights_bytes"], 13_761_264_768_u64, "{d}");
    }
    // A written quant still wins.
    assert_eq!(explanation(&explained, "gguf")["quant"], "Q4_K_M");
}

#[test]
fn a_written_quant_the_file_does_not_hold_is_a_warning() {
    let dir = scratch("formats_mismatch");
    gguf(&dir.join("model.gguf"), Some(15), MIX);
    write(
        &dir,
        "m.deploy",
        &("quant my_q4 extends Q4_K_M {\n    bpw = 4.9\n}\n".to_string()
            + &deployment("other", "./model.gguf", Some("Q8_0"), LLAMACPP)
            + &deployment("same", "./model.gguf", Some("Q4_K_M"), LLAMACPP)
            + &deployment("child", "./model.gguf", Some("my_q4"), LLAMACPP)),
    );
    let report = check_json(&dir, "m.deploy");
    assert_eq!(
        codes(&report),
        vec!["deploy::model::format_mismatch"],
        "{report}"
    );
    let warning = &report["diagnostics"][0];
    assert_eq!(warning["severity"], "warning", "{warning}");
    // At the written quant (line 6: the `other` deployment's `quant`).
    assert_eq!(warning["line"], 6, "{warning}");
    assert!(
        warning["message"].as_str().unwrap().contains(
            "the model file holds Q4_K_M weights, but the deployment says `quant = Q8_0`"
        ),
        "{warning}"
    );
}
