//! config.json → exact parameter counts, checked against published / curated totals.
//! Fixtures: real config.json files, sources in tests/fixtures/configs/README.md.

use std::path::{Path, PathBuf};

use deployfit_artifacts::{Architecture, ArtifactError, Attention, from_config_json, read};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/configs")
        .join(format!("{name}.json"))
}

fn load(name: &str) -> Architecture {
    read(&fixture(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn qwen3_14b_exact_params() {
    // acceptance figure of the brief: 14,768,307,200
    let a = load("qwen3_14b");
    assert_eq!(a.params, Some(14_768_307_200));
    assert_eq!(a.active_params, Some(14_768_307_200));
    assert_eq!(a.model_type.as_deref(), Some("qwen3"));
    assert_eq!(a.source, "config.json (Qwen3ForCausalLM, model_type qwen3)");
    assert_eq!(a.layers, Some(40));
    assert_eq!(a.hidden, Some(5120));
    assert_eq!(a.intermediate, Some(17408));
    assert_eq!(a.heads, Some(40));
    assert_eq!(a.kv_heads, Some(8));
    assert_eq!(a.head_dim, Some(128));
    assert_eq!(a.vocab, Some(151936));
    assert_eq!(a.max_context, Some(40960));
    assert_eq!(a.attention, Some(Attention::Gqa));
    assert_eq!(a.tie_embeddings, Some(false));
    assert_eq!(a.window, None, "use_sliding_window false");
    assert_eq!(a.experts, None);
}

#[test]
fn qwen3_0_6b_tied_matches_stdlib() {
    // stdlib/models.deploy qwen3_0_6b: params 596_049_920 (tied embeddings)
    let a = load("qwen3_0_6b");
    assert_eq!(a.tie_embeddings, Some(true));
    assert_eq!(a.params, Some(596_049_920));
}

#[test]
fn llama_3_1_8b_matches_stdlib() {
    // stdlib/models.deploy llama_3_1_8b: 8_030_261_248
    let a = load("llama_3_1_8b");
    assert_eq!(a.params, Some(8_030_261_248));
    assert_eq!(a.max_context, Some(131072));
    assert_eq!(
        a.head_dim,
        Some(128),
        "hidden / heads when head_dim is absent"
    );
    assert_eq!(a.attention, Some(Attention::Gqa));
}

#[test]
fn qwen3_30b_a3b_total_and_active() {
    // stdlib/models.deploy qwen3_30b_a3b: 30_532_122_624 total, 3_353_032_704 active
    let a = load("qwen3_30b_a3b");
    assert_eq!(a.params, Some(30_532_122_624));
    assert_eq!(a.active_params, Some(3_353_032_704));
    assert_eq!(a.experts, Some(128));
    assert_eq!(a.experts_active, Some(8));
    assert_eq!(a.intermediate, Some(6144));
}

#[test]
fn mixtral_8x7b_total_and_active() {
    // stdlib/models.deploy mixtral_8x7b: 46_702_792_704 / 12_879_925_248
    let a = load("mixtral_8x7b");
    assert_eq!(a.params, Some(46_702_792_704));
    assert_eq!(a.active_params, Some(12_879_925_248));
    assert_eq!(a.window, None, "sliding_window null");
}

#[test]
fn gpt_oss_20b_total_active_and_windows() {
    // stdlib/models.deploy gpt_oss_20b: 20_914_757_184 / 4_187_440_704, window 128, 12 local
    let a = load("gpt_oss_20b");
    assert_eq!(a.params, Some(20_914_757_184));
    assert_eq!(a.active_params, Some(4_187_440_704));
    assert_eq!(a.window, Some(128));
    assert_eq!(a.local_layers, Some(12));
    assert_eq!(a.attention, Some(Attention::Hybrid));
    assert_eq!(a.experts, Some(32));
    assert_eq!(a.experts_active, Some(4));
    assert_eq!(a.head_dim, Some(64));
    assert!(a.notes.iter().any(|n| n.contains("mxfp4")), "{:?}", a.notes);
}

#[test]
fn deepseek_v2_lite_mla_and_exact_params() {
    // 15,706,484,224 = model.safetensors.index.json metadata.total_size 31,412,968,448 / 2 (BF16)
    let a = load("deepseek_v2_lite");
    assert_eq!(a.params, Some(15_706_484_224));
    // total - (64 - 6) routed experts x 3*2048*1408 x 26 MoE layers
    assert_eq!(a.active_params, Some(2_661_150_208));
    assert_eq!(a.attention, Some(Attention::Mla));
    assert_eq!(a.kv_lora_rank, Some(512));
    assert_eq!(a.qk_rope_dim, Some(64));
    assert_eq!(a.head_dim, None, "MLA: head_dim left empty");
    assert_eq!(a.experts, Some(64));
    assert_eq!(a.experts_active, Some(6));
    assert_eq!(a.layers, Some(27));
}

#[test]
fn deepseek_v3_matches_stdlib_without_mtp() {
    // stdlib/models.deploy deepseek_v3: 671_026_419_200 / 37_552_297_472 (MTP excluded)
    let a = load("deepseek_v3");
    assert_eq!(a.params, Some(671_026_419_200));
    assert_eq!(a.active_params, Some(37_552_297_472));
    assert_eq!(a.attention, Some(Attention::Mla));
    assert!(a.notes.iter().any(|n| n.contains("multi-token-prediction")));
}

#[test]
fn gemma3_nested_text_config() {
    // dims of gemma-3-4b-pt as recorded in stdlib/models.deploy gemma_3_4b (params
    // 3_880_263_168, 29 local layers of window 1024); the JSON shape (text_config nested, tie
    // absent) is that of Gemma3ForConditionalGeneration configs.
    let text = r#"{
      "architectures": ["Gemma3ForConditionalGeneration"],
      "model_type": "gemma3",
      "text_config": {
        "model_type": "gemma3_text", "hidden_size": 2560, "intermediate_size": 10240,
        "num_hidden_layers": 34, "num_attention_heads": 8, "num_key_value_heads": 4,
        "head_dim": 256, "sliding_window": 1024, "vocab_size": 262208,
        "max_position_embeddings": 131072
      },
      "vision_config": {"hidden_size": 1152}
    }"#;
    let a = from_config_json(text).unwrap();
    assert_eq!(a.params, Some(3_880_263_168));
    assert_eq!(a.local_layers, Some(29));
    assert_eq!(a.window, Some(1024));
    assert_eq!(a.attention, Some(Attention::Hybrid));
    assert_eq!(a.tie_embeddings, Some(true));
    assert!(a.notes.iter().any(|n| n.contains("vision tower")));
}

#[test]
fn gemma2_9b_four_norms() {
    // stdlib gemma_2_9b: 9_241_705_984, 21 local layers
    let text = r#"{"model_type": "gemma2", "hidden_size": 3584, "intermediate_size": 14336,
      "num_hidden_layers": 42, "num_attention_heads": 16, "num_key_value_heads": 8,
      "head_dim": 256, "vocab_size": 256000, "sliding_window": 4096,
      "max_position_embeddings": 8192}"#;
    let a = from_config_json(text).unwrap();
    assert_eq!(a.params, Some(9_241_705_984));
    assert_eq!(a.local_layers, Some(21));
}

#[test]
fn glm4_9b_qkv_bias_four_norms() {
    // stdlib glm4_9b: 9_400_279_040 (published total)
    let text = r#"{"model_type": "glm4", "hidden_size": 4096, "intermediate_size": 13696,
      "num_hidden_layers": 40, "num_attention_heads": 32, "num_key_value_heads": 2,
      "head_dim": 128, "vocab_size": 151552, "attention_bias": true,
      "tie_word_embeddings": false}"#;
    assert_eq!(from_config_json(text).unwrap().params, Some(9_400_279_040));
}

#[test]
fn qwen2_5_7b_qkv_bias() {
    // stdlib qwen2_5_7b: 7_615_616_512; sliding_window set but use_sliding_window false
    let text = r#"{"model_type": "qwen2", "hidden_size": 3584, "intermediate_size": 18944,
      "num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4,
      "vocab_size": 152064, "sliding_window": 131072, "use_sliding_window": false,
      "tie_word_embeddings": false}"#;
    let a = from_config_json(text).unwrap();
    assert_eq!(a.params, Some(7_615_616_512));
    assert_eq!(a.window, None);
}

#[test]
fn phi3_mini_all_layers_sliding() {
    // dims of microsoft/Phi-3-mini-4k-instruct config.json; 3,821,079,552 is the parameter total
    // Hugging Face shows for that checkpoint ("3.82B")
    let text = r#"{"model_type": "phi3", "hidden_size": 3072, "intermediate_size": 8192,
      "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32,
      "vocab_size": 32064, "sliding_window": 2047, "max_position_embeddings": 4096,
      "tie_word_embeddings": false}"#;
    let a = from_config_json(text).unwrap();
    assert_eq!(a.params, Some(3_821_079_552));
    assert_eq!(a.window, Some(2047));
    assert_eq!(a.local_layers, Some(32));
    assert_eq!(
        a.attention,
        Some(Attention::Mha),
        "every layer slides: not hybrid"
    );
}

#[test]
fn qwen2_moe_shared_expert_and_gate() {
    // Qwen1.5-MoE-A2.7B dims; counted by hand: embed 2*151936*2048, final norm 2048, per layer
    // attention 4*2048*2048 + qkv bias 3*2048, norms 2*2048, router 60*2048, experts
    // 60*3*2048*1408, shared 3*2048*5632 + shared gate 2048; 24 layers
    let text = r#"{"model_type": "qwen2_moe", "hidden_size": 2048, "intermediate_size": 5632,
      "num_hidden_layers": 24, "num_attention_heads": 16, "num_key_value_heads": 16,
      "vocab_size": 151936, "num_experts": 60, "num_experts_per_tok": 4,
      "moe_intermediate_size": 1408, "shared_expert_intermediate_size": 5632,
      "decoder_sparse_step": 1, "mlp_only_layers": [], "tie_word_embeddings": false}"#;
    let per_layer: u64 = 4 * 2048 * 2048
        + 3 * 2048
        + 2 * 2048
        + 60 * 2048
        + 60 * 3 * 2048 * 1408
        + 3 * 2048 * 5632
        + 2048;
    let total = 2 * 151_936 * 2048 + 2048 + 24 * per_layer;
    let a = from_config_json(text).unwrap();
    assert_eq!(a.params, Some(total));
    assert_eq!(a.active_params, Some(total - 56 * 3 * 2048 * 1408 * 24));
    // mlp_only_layers turns layers dense
    let dense = text.replace(r#""mlp_only_layers": []"#, r#""mlp_only_layers": [0, 5]"#);
    let b = from_config_json(&dense).unwrap();
    let dense_layer = 4 * 2048 * 2048 + 3 * 2048 + 2 * 2048 + 3 * 2048 * 5632;
    assert_eq!(b.params, Some(total - 2 * per_layer + 2 * dense_layer));
}

#[test]
fn unknown_family_falls_back_with_note() {
    let text = r#"{"model_type": "mystery", "hidden_size": 64, "intermediate_size": 128,
      "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100}"#;
    let a = from_config_json(text).unwrap();
    // 2*(100*64) + 64 + 2*(4*64*64 + 3*64*128 + 2*64)
    assert_eq!(
        a.params,
        Some(2 * 100 * 64 + 64 + 2 * (4 * 64 * 64 + 3 * 64 * 128 + 2 * 64))
    );
    assert_eq!(a.attention, Some(Attention::Mha));
    assert!(
        a.notes
            .iter()
            .any(|n| n.contains("not one of the known families"))
    );
}

#[test]
fn malformed_configs_are_errors() {
    let cases: &[(&str, &str)] = &[
        ("not json", "malformed"),
        ("[1, 2]", "malformed"),
        (r#"{"model_type": "llama"}"#, "missing"),
        (
            r#"{"model_type": "llama", "hidden_size": -4, "num_hidden_layers": 2,
               "num_attention_heads": 2, "vocab_size": 10, "intermediate_size": 8}"#,
            "malformed",
        ),
        (
            r#"{"model_type": "llama", "hidden_size": 2199023255553, "num_hidden_layers": 2,
               "num_attention_heads": 1, "vocab_size": 10, "intermediate_size": 8}"#,
            "too-large",
        ),
        (
            // every dimension within 2^40 but the product overflows u64
            r#"{"model_type": "llama", "hidden_size": 1099511627776, "num_hidden_layers": 2,
               "num_attention_heads": 1, "vocab_size": 1099511627776,
               "intermediate_size": 1099511627776}"#,
            "overflow",
        ),
        (
            r#"{"model_type": "mixtral", "hidden_size": 8, "num_hidden_layers": 2,
               "num_attention_heads": 2, "vocab_size": 10, "intermediate_size": 8,
               "num_local_experts": 2, "num_experts_per_tok": 3}"#,
            "malformed",
        ),
        (
            r#"{"model_type": "gpt_oss", "hidden_size": 8, "num_hidden_layers": 2,
               "num_attention_heads": 2, "vocab_size": 10, "intermediate_size": 8,
               "num_local_experts": 2, "num_experts_per_tok": 1, "sliding_window": 4,
               "layer_types": ["sliding_attention"]}"#,
            "malformed",
        ),
        (
            r#"{"model_type": "llama", "hidden_size": 8, "num_hidden_layers": 100000000,
               "num_attention_heads": 2, "vocab_size": 10, "intermediate_size": 8}"#,
            "too-large",
        ),
    ];
    for (text, kind) in cases {
        let e: ArtifactError = from_config_json(text).expect_err(text);
        assert_eq!(e.kind(), *kind, "{text}: {e}");
    }
    let big = " ".repeat(5 << 20) + "{}";
    assert_eq!(from_config_json(&big).unwrap_err().kind(), "too-large");
}

#[test]
fn read_names_the_file_in_errors() {
    let dir = std::env::temp_dir().join(format!("deployfit-artifacts-cfg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("config.json");
    std::fs::write(&p, "{").unwrap();
    let e = read(&p).unwrap_err();
    assert_eq!(e.kind(), "malformed");
    assert!(e.message().contains("config.json"), "{e}");
    let e = read(&dir.join("absent.json")).unwrap_err();
    assert_eq!(e.kind(), "io");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Qwen3.5's Gated DeltaNet layers: 30 of 40 (`layer_types`), each with a state of
/// 32 value heads × 128 × 128 in float32 (`mamba_ssm_dtype`) = 2,097,152 bytes plus the
/// convolution state 3 × (2 × 16 × 128 + 32 × 128) × 2 = 49,152 bytes per sequence.
#[test]
fn qwen3_5_linear_attention_layers_and_state() {
    let a = load("qwen3_5_35b_a3b");
    assert_eq!(a.layers, Some(40));
    assert_eq!(a.linear_layers, Some(30));
    assert_eq!(a.linear_state, Some(2_097_152 + 49_152));
    assert!(
        a.notes
            .iter()
            .any(|n| n.contains("30 of 40 layers use linear attention")),
        "{:?}",
        a.notes
    );
    // A dense model has none.
    let dense = load("qwen3_14b");
    assert_eq!((dense.linear_layers, dense.linear_state), (None, None));
}

#[test]
fn qwen3_5_moe_counts_its_experts() {
    // Qwen3.5-35B-A3B: 256 experts, 8 and a shared one per token; "35B" total (the text
    // model; the vision tower is left out), "A3B" active. scripts/layouts.py counts
    // 3,453,933,568 active without the biases and the convolutions.
    let a = load("qwen3_5_35b_a3b");
    assert_eq!((a.experts, a.experts_active), (Some(256), Some(8)));
    let total = a.params.unwrap() as f64 / 1e9;
    let active = a.active_params.unwrap() as f64 / 1e9;
    assert!((33.5..35.5).contains(&total), "total {total}");
    assert!((3.4..3.6).contains(&active), "active {active}");
}
