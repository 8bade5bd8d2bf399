//! Resolution tests against the shipped registry data (data/hf_models.csv).

use deployfit_registry::{
    Attention, Missing, Record, Step, WeightFormat, closest, get, len, ollama_tags, records,
    resolve, search, skipped_rows,
};

/// The ids of data/hf_models.csv, read independently of build.rs (first column; the file's ids
/// contain no quotes or commas, which this asserts).
fn csv_ids() -> Vec<String> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/data/hf_models.csv");
    let text = std::fs::read_to_string(path).expect("read data/hf_models.csv");
    let mut lines = text.lines();
    assert!(
        lines
            .next()
            .expect("header")
            .starts_with("hf_id,architecture,")
    );
    lines
        .filter(|l| !l.is_empty())
        .map(|l| {
            let id = l.split(',').next().expect("first field");
            assert!(!id.contains('"'), "quoted id {id}");
            id.to_string()
        })
        .collect()
}

fn gb(bytes: u64) -> f64 {
    bytes as f64 / 1e9
}

#[test]
fn registry_has_every_csv_row() {
    let ids = csv_ids();
    assert_eq!(ids.len(), 9441);
    assert_eq!(len(), 9441);
    assert_eq!(skipped_rows(), 0);
    // Most-downloaded first.
    assert!(
        records()
            .windows(2)
            .all(|w| w[0].downloads >= w[1].downloads)
    );
    assert_eq!(records()[0].id, "Qwen/Qwen3-0.6B");
}

#[test]
fn every_csv_id_resolves_to_itself_in_any_case() {
    for id in csv_ids() {
        let r = resolve(&id).unwrap_or_else(|| panic!("{id} does not resolve"));
        assert_eq!(r.record.id, id);
        assert_eq!(r.steps, vec![Step::Exact], "{id}");
        assert_eq!(get(&id).map(|r| r.id), Some(id.as_str()));

        let upper = id.to_ascii_uppercase();
        let r = resolve(&upper).unwrap_or_else(|| panic!("{upper} does not resolve"));
        // Three ids differ only in case from another id (e.g. microsoft/phi-3-mini-4k-instruct
        // and microsoft/Phi-3-mini-4k-instruct); either spelling is the same model.
        assert!(
            r.record.id.eq_ignore_ascii_case(&id),
            "{upper} -> {}",
            r.record.id
        );
        if upper != r.record.id {
            assert_eq!(
                r.steps,
                vec![Step::CaseInsensitive {
                    written: upper.clone(),
                    id: r.record.id
                }]
            );
        }
    }
}

#[test]
fn case_duplicates_prefer_exact_spelling_then_downloads() {
    assert_eq!(
        get("RedHatAI/gemma-4-26B-A4B-it-FP8-dynamic").map(|r| r.id),
        Some("RedHatAI/gemma-4-26B-A4B-it-FP8-dynamic")
    );
    assert_eq!(
        get("RedHatAI/gemma-4-26B-A4B-it-FP8-Dynamic").map(|r| r.id),
        Some("RedHatAI/gemma-4-26B-A4B-it-FP8-Dynamic")
    );
    // Neither spelling: the more-downloaded one (931,212 vs 887,687 downloads).
    assert_eq!(
        get("redhatai/gemma-4-26b-a4b-it-fp8-DYNAMIC").map(|r| r.id),
        Some("RedHatAI/gemma-4-26B-A4B-it-FP8-Dynamic")
    );
}

#[test]
fn gated_llama_reads_an_unquantized_reupload() {
    let r = resolve("meta-llama/Llama-3.1-8B-Instruct").expect("resolves");
    assert_eq!(r.record.id, "NousResearch/Meta-Llama-3.1-8B-Instruct");
    assert_eq!(
        r.steps,
        vec![Step::OriginalFromReupload {
            original: "meta-llama/Llama-3.1-8B-Instruct".into(),
            reupload: "NousResearch/Meta-Llama-3.1-8B-Instruct"
        }]
    );
    assert_eq!(r.format, None);
    assert_eq!(
        r.steps[0].to_string(),
        "meta-llama/Llama-3.1-8B-Instruct is absent from the registry (gated originals often are); \
         its architecture is read from the unquantized re-upload NousResearch/Meta-Llama-3.1-8B-Instruct"
    );
    let rec = r.record;
    // Llama 3.1 8B config.json: 32 layers, hidden 4096, 32 heads, 8 KV heads, vocab 128256.
    assert_eq!(
        (
            rec.layers,
            rec.hidden,
            rec.heads,
            rec.kv_heads,
            rec.vocab,
            rec.intermediate
        ),
        (
            Some(32),
            Some(4096),
            Some(32),
            Some(8),
            Some(128256),
            Some(14336)
        )
    );
    assert_eq!(rec.params, Some(8_030_261_248));
    assert_eq!(rec.params.unwrap() * 2, 16_060_522_496); // bf16 weights ≈ 16.06 GB
    assert_eq!(rec.attention(), Attention::Gqa);
    assert!(rec.missing().is_empty());

    // The "Meta-" prefix is tolerated in both directions.
    let r = resolve("meta-llama/Meta-Llama-3-8B-Instruct").expect("resolves");
    assert_eq!(r.record.id, "NousResearch/Meta-Llama-3-8B-Instruct");
    let r = resolve("meta-llama/Llama-3.3-70B-Instruct").expect("resolves");
    assert_eq!(r.record.id, "unsloth/Llama-3.3-70B-Instruct");
    assert_eq!(r.record.params, Some(70_553_706_496));
}

#[test]
fn gated_gemma_and_mistral_read_unsloth() {
    let r = resolve("google/gemma-3-27b-it").expect("resolves");
    assert_eq!(r.record.id, "unsloth/gemma-3-27b-it");
    assert!(matches!(r.steps[..], [Step::OriginalFromReupload { .. }]));
    let p = r.record.params.expect("params");
    assert!((54.0..56.0).contains(&gb(p * 2)), "bf16 {} GB", gb(p * 2));
    assert_eq!(r.record.missing(), vec![Missing::SlidingWindowLayout]);

    let r = resolve("mistralai/Mistral-7B-Instruct-v0.3").expect("resolves");
    assert_eq!(r.record.id, "unsloth/mistral-7b-instruct-v0.3");
    assert_eq!(r.record.vocab, Some(32768)); // v0.3's extended vocabulary
    assert_eq!(r.record.params, Some(7_248_023_552));
}

#[test]
fn original_in_registry_is_exact() {
    let r = resolve("Qwen/Qwen2.5-72B-Instruct").expect("resolves");
    assert_eq!(r.record.id, "Qwen/Qwen2.5-72B-Instruct");
    assert_eq!(r.steps, vec![Step::Exact]);
    assert_eq!(r.record.params, Some(72_706_203_648));
    assert!((145.0..146.0).contains(&gb(r.record.params.unwrap() * 2)));
    assert_eq!((r.record.layers, r.record.kv_heads), (Some(80), Some(8)));
}

#[test]
fn renamed_org_both_spellings() {
    let r = resolve("zai-org/GLM-4-9B-0414").expect("resolves");
    assert_eq!(
        (r.record.id, r.steps.clone()),
        ("zai-org/GLM-4-9B-0414", vec![Step::Exact])
    );
    let p = r.record.params.expect("params");
    assert!((9e9..10e9).contains(&(p as f64)), "{p}");

    for written in ["THUDM/GLM-4-9B-0414", "thudm/GLM-4-9B-0414"] {
        let r = resolve(written).expect("resolves");
        assert_eq!(r.record.id, "zai-org/GLM-4-9B-0414");
        match &r.steps[..] {
            [Step::OrgRenamed { from, to, source }] => {
                assert_eq!((*from, *to), ("THUDM", "zai-org"));
                assert!(source.contains("https://"));
            }
            s => panic!("steps {s:?}"),
        }
    }
}

#[test]
fn quantized_reupload_in_registry_keeps_its_row_and_names_its_format() {
    let r = resolve("hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4").expect("resolves");
    assert_eq!(
        r.record.id,
        "hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4"
    );
    assert_eq!(r.steps, vec![Step::Exact]);
    assert_eq!(r.format, Some(WeightFormat::Awq { bits: 4 }));
    assert_eq!(
        r.format.as_ref().and_then(WeightFormat::stdlib_quant),
        Some("awq_int4")
    );

    let r = resolve("mlx-community/Qwen2.5-7B-Instruct-4bit").expect("resolves");
    assert_eq!(r.record.id, "mlx-community/Qwen2.5-7B-Instruct-4bit");
    assert_eq!(r.format, Some(WeightFormat::Mlx4bit));
    assert_eq!(r.format.as_ref().and_then(WeightFormat::stdlib_quant), None);

    let r = resolve("Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4").expect("resolves");
    assert_eq!(r.format, Some(WeightFormat::Gptq { bits: 4 }));
    let r = resolve("RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8-dynamic").expect("resolves");
    assert_eq!(r.format, Some(WeightFormat::Fp8));
    assert_eq!(
        r.format.as_ref().and_then(WeightFormat::stdlib_quant),
        Some("fp8")
    );
}

#[test]
fn quantized_reupload_not_in_registry_reads_the_base() {
    let r = resolve("Qwen/Qwen2.5-7B-Instruct-GGUF").expect("resolves");
    assert_eq!(r.record.id, "Qwen/Qwen2.5-7B-Instruct");
    assert_eq!(
        r.steps,
        vec![
            Step::QuantizedReupload {
                written: "Qwen/Qwen2.5-7B-Instruct-GGUF".into(),
                base: "Qwen/Qwen2.5-7B-Instruct",
                format: WeightFormat::Gguf(None)
            },
            Step::Exact
        ]
    );
    assert_eq!(r.format, Some(WeightFormat::Gguf(None)));
    assert_eq!(r.record.params, Some(7_615_616_512));

    // A GGUF name with its type, from a re-uploader, of a gated original.
    let r = resolve("someone/Llama-3.1-8B-Instruct-Q4_K_M-GGUF").expect("resolves");
    assert_eq!(r.record.id, "NousResearch/Meta-Llama-3.1-8B-Instruct");
    assert_eq!(r.format, Some(WeightFormat::Gguf(Some("Q4_K_M".into()))));
    assert_eq!(
        r.format.as_ref().and_then(WeightFormat::stdlib_quant),
        Some("Q4_K_M")
    );
    assert!(matches!(
        r.steps[..],
        [
            Step::QuantizedReupload { .. },
            Step::OriginalFromReupload { .. }
        ]
    ));

    let r = resolve("someone/Qwen2.5-72B-Instruct-FP8-Dynamic").expect("resolves");
    assert_eq!(
        (r.record.id, r.format),
        ("Qwen/Qwen2.5-72B-Instruct", Some(WeightFormat::Fp8))
    );
    let r = resolve("mlx-community/Qwen2.5-14B-Instruct-8bit").map(|r| (r.record.id, r.format));
    assert!(matches!(r, Some((_, Some(WeightFormat::Mlx8bit)))), "{r:?}");
    // Unknown base: nothing.
    assert!(resolve("someone/No-Such-Model-7B-AWQ").is_none());
}

#[test]
fn ollama_tag_resolves_with_default_format() {
    let r = resolve("llama3.1:8b").expect("resolves");
    assert_eq!(r.record.id, "NousResearch/Meta-Llama-3.1-8B-Instruct");
    match &r.steps[..] {
        [
            Step::OllamaTag { tag, id, source },
            Step::OriginalFromReupload { .. },
        ] => {
            assert_eq!(
                (tag.as_str(), *id),
                ("llama3.1:8b", "meta-llama/Llama-3.1-8B-Instruct")
            );
            assert_eq!(*source, "https://ollama.com/library/llama3.1");
        }
        s => panic!("steps {s:?}"),
    }
    assert_eq!(r.format, Some(WeightFormat::Gguf(Some("Q4_K_M".into()))));

    let r = resolve("gpt-oss:120b").expect("resolves");
    assert_eq!(
        (r.record.id, r.format),
        ("openai/gpt-oss-120b", Some(WeightFormat::Mxfp4))
    );
    assert!(r.record.is_moe());

    // Bare names and :latest mean the latest tag.
    for (bare, id) in [
        ("mistral", "unsloth/mistral-7b-instruct-v0.3"),
        ("phi4", "microsoft/phi-4"),
        ("llama3.1", "NousResearch/Meta-Llama-3.1-8B-Instruct"),
        ("qwen3:latest", "Qwen/Qwen3-8B"),
        ("LLAMA3.2", "unsloth/Llama-3.2-3B-Instruct"),
    ] {
        assert_eq!(resolve(bare).map(|r| r.record.id), Some(id), "{bare}");
    }
    assert!(resolve("llama3.1:9b").is_none());
    assert!(resolve("nosuchmodel").is_none());
    assert!(resolve("mistral:").is_none());
}

#[test]
fn every_ollama_tag_resolves_and_each_family_has_one_latest() {
    let tags: Vec<_> = ollama_tags().collect();
    assert!(tags.len() >= 50, "{}", tags.len());
    let mut families: Vec<&str> = Vec::new();
    for t in &tags {
        let r = resolve(t.tag).unwrap_or_else(|| panic!("{} does not resolve", t.tag));
        assert_eq!(r.format.as_ref(), Some(&t.format));
        assert!(matches!(&r.steps[0], Step::OllamaTag { id, .. } if *id == t.id));
        // The mapped id itself resolves (without the tag) to the same record.
        assert_eq!(
            resolve(t.id).map(|x| x.record.id),
            Some(r.record.id),
            "{}",
            t.id
        );
        let p = r.record.params.unwrap_or(0);
        assert!(
            p > 400_000_000 && p < 1_000_000_000_000,
            "{}: params {p}",
            t.tag
        );
        let family = t.tag.split_once(':').expect("model:size").0;
        if !families.contains(&family) {
            families.push(family);
        }
        assert!(
            t.source.starts_with("https://ollama.com/library/"),
            "{}",
            t.tag
        );
    }
    for f in families {
        let latest = tags
            .iter()
            .filter(|t| t.latest && t.tag.starts_with(&format!("{f}:")))
            .count();
        assert_eq!(latest, 1, "family {f}");
        assert!(resolve(f).is_some(), "bare {f}");
    }
}

#[test]
fn malformed_names_are_none_without_panic() {
    let long = "a".repeat(10 * 1024);
    let long_id = format!("org/{}", "b".repeat(10 * 1024));
    let cases = [
        "",
        " ",
        "/",
        "org/",
        "/name",
        "a/b/c",
        ":",
        "llama3.1:8b:extra",
        long.as_str(),
        long_id.as_str(),
        "Qwen/Qwen3-8B\u{0}",
        "Qwen/Qwen3\n-8B",
        "Qwen/Qwen3 8B",
        "Qwen/Qwen3-8B\u{7f}",
        "Ｑwen/Qwen3-8B",
        "Qwen/Qwen3-8Bé",
        "日本語/モデル",
        "\u{202e}Qwen/Qwen3-8B",
    ];
    for c in cases {
        assert!(resolve(c).is_none(), "{c:?}");
        let _ = closest(c); // must not panic
        let _ = search(c).count();
        let _ = get(c);
    }
    // Surrounding ASCII whitespace is tolerated.
    assert_eq!(
        resolve("  Qwen/Qwen3-8B\t").map(|r| r.record.id),
        Some("Qwen/Qwen3-8B")
    );
}

#[test]
fn get_search_closest() {
    assert_eq!(get("qwen/qwen3-8b").map(|r| r.id), Some("Qwen/Qwen3-8B"));
    assert!(get("qwen/qwen3-8").is_none());
    let hits: Vec<_> = search("QWEN3-8B").take(5).collect();
    assert_eq!(hits[0].id, "Qwen/Qwen3-8B");
    assert!(
        hits.iter()
            .all(|r| r.id.to_ascii_lowercase().contains("qwen3-8b"))
    );
    assert!(hits.windows(2).all(|w| w[0].downloads >= w[1].downloads));
    assert_eq!(search("").count(), len());

    assert_eq!(
        closest("Qwen/Qwen2.5-7B-Instuct"),
        Some("Qwen/Qwen2.5-7B-Instruct")
    );
    assert_eq!(closest("qwen3:8"), Some("qwen3:8b"));
    assert_eq!(closest("zzzzzzzzzzzzzzzzzzzz/qqqqqqqqqqqqqqq"), None);
}

#[test]
fn moe_mla_and_dense_fields() {
    let dense = get("Qwen/Qwen3-8B").expect("row");
    assert!(!dense.is_moe());
    assert_eq!(
        (dense.intermediate, dense.expert_intermediate),
        (Some(12288), None)
    );

    let moe = get("Qwen/Qwen3-30B-A3B").expect("row");
    assert!(moe.is_moe());
    // The source column holds the per-expert size for MoE rows (768 in Qwen3-30B-A3B's config).
    assert_eq!(
        (moe.intermediate, moe.expert_intermediate),
        (None, Some(768))
    );
    // Its expert layout comes from data/layouts.csv: nothing is missing, and the active
    // parameters are the curated figure (30,532,122,624 − 120 × 3 × 2048 × 768 × 48).
    assert_eq!(moe.missing(), vec![]);
    let shape = moe.layout().expect("Qwen3-30B-A3B's layout");
    assert_eq!(
        (shape.experts, shape.experts_active, shape.moe_layers),
        (Some(128), Some(8), Some(48))
    );
    let p = moe.moe_params().expect("params");
    assert_eq!((p.total, p.active), (30_532_122_624, 3_353_032_704));
    assert_eq!(p.active, shape.active_params);
    assert!(!p.total_from_reference);
    // A MoE shape with no published layout stays incomplete.
    let ernie = get("baidu/ERNIE-4.5-21B-A3B-Thinking").expect("row");
    assert!(ernie.is_moe() && ernie.layout().is_none());
    assert_eq!(ernie.missing(), vec![Missing::MoeExpertCounts]);

    // MoE from the name only (architecture gemma4 is shared with dense Gemma 4 models).
    let g = get("google/gemma-4-26B-A4B-it").expect("row");
    assert!(g.is_moe());
    assert!(!get("google/gemma-4-31B-it").expect("row").is_moe());

    // DeepSeek-V2-Lite's and DeepSeek-V2's layouts are DeepSeek's own inference configs
    // (config_16B.json, config_236B.json): 6 of 64 and of 160 experts, latent 512 + 64, and
    // the activated parameters DeepSeek states (2.4 B and 21 B) plus the embedding table that
    // this count includes and theirs leaves out (102,400 × 2048 and × 5120).
    let ds = get("deepseek-ai/DeepSeek-V2-Lite").expect("row");
    assert_eq!(ds.attention(), Attention::Mla);
    assert_eq!(ds.missing(), vec![]);
    let lite = ds.layout().expect("DeepSeek-V2-Lite's layout");
    assert_eq!(
        (
            lite.experts,
            lite.experts_active,
            lite.kv_lora_rank,
            lite.qk_rope_dim
        ),
        (Some(64), Some(6), Some(512), Some(64))
    );
    let active = lite.active_params as f64 - 102_400.0 * 2048.0;
    assert!((active / 2.4e9 - 1.0).abs() < 0.03, "{active}");
    let v2 = get("deepseek-ai/DeepSeek-V2.5")
        .expect("row")
        .layout()
        .expect("V2's layout");
    let active = v2.active_params as f64 - 102_400.0 * 5120.0;
    assert!((active / 21e9 - 1.0).abs() < 0.03, "{active}");
    assert_eq!(v2.experts, Some(160));
    // Step-3.7-Flash: the bulk row copies its 64 attention heads as key/value heads and lists
    // it as dense; its config.json (the layout) has 288 experts, 8 active, and 8 KV heads, so
    // the config's count wins and the cache is grouped-query, not multi-head.
    let step = get("stepfun-ai/Step-3.7-Flash").expect("row");
    assert_eq!(step.kv_heads, Some(64));
    assert_eq!(step.key_value_heads(), Some(8));
    assert_eq!(step.attention(), Attention::Gqa);
    assert!(step.is_moe());
    assert_eq!(step.missing(), vec![]);
    let layout = step.layout().expect("Step-3.7-Flash's layout");
    assert_eq!(
        (
            layout.experts,
            layout.experts_active,
            layout.moe_layers,
            layout.window,
            layout.local_layers
        ),
        (Some(288), Some(8), Some(42), Some(512), Some(33))
    );
    // About 11 B active of 201 B (StepFun's Flash models: 11 B active).
    assert!((layout.active_params as f64 / 11e9 - 1.0).abs() < 0.05);
    // Its FP8 re-upload has the same shape, so the same layout.
    let fp8 = get("stepfun-ai/Step-3.7-Flash-FP8").expect("row");
    assert_eq!(fp8.key_value_heads(), Some(8));
    // Kimi-VL runs DeepSeek-V3's language model: latent attention whose sizes the bulk
    // table lacks (no layout for its shape), not 16 full KV heads.
    let kimi = get("moonshotai/Kimi-VL-A3B-Instruct").expect("row");
    assert_eq!(kimi.attention(), Attention::Mla);
    assert!(kimi.missing().contains(&Missing::MlaLatent));
    // DeepSeek-V3's layout holds its latent sizes; GLM-5's turns its heads into MLA.
    let v3 = get("deepseek-ai/DeepSeek-V3").expect("row");
    assert_eq!(v3.missing(), vec![]);
    assert_eq!(v3.layout().and_then(|s| s.kv_lora_rank), Some(512));
    let glm5 = get("zai-org/GLM-5").expect("row");
    assert_eq!(glm5.attention(), Attention::Mla);
    // A dense layout: Qwen3.8-27B has Qwen3.5-27B's shape, 48 of 64 layers Gated DeltaNet.
    let q38 = get("Qwen/Qwen3.8-27B").expect("row");
    assert!(!q38.is_moe() && q38.moe_params().is_none());
    let dense = q38.layout().expect("Qwen3.5-27B's layout");
    assert_eq!((dense.experts, dense.linear_layers), (None, Some(48)));
    // Qwen3.5/3.6 MoE: 30 of 40 layers are Gated DeltaNet, 2,146,304 bytes of state each.
    let q36 = get("nvidia/Qwen3.6-35B-A3B-NVFP4").expect("row");
    let shape = q36.layout().expect("Qwen3.5-35B-A3B's layout");
    assert_eq!(
        (shape.linear_layers, shape.linear_state),
        (Some(30), Some(2_146_304))
    );
    // gpt-oss: the sliding-window layout comes with it.
    let oss = get("openai/gpt-oss-120b").expect("row");
    assert_eq!(oss.missing(), vec![]);
    let shape = oss.layout().unwrap();
    assert_eq!((shape.window, shape.local_layers), (Some(128), Some(18)));
    assert!(
        Missing::MoeExpertCounts
            .to_string()
            .contains("experts_active")
    );
    assert!(Missing::MlaLatent.how_to_supply().contains("config.json"));

    // Step-3.5-Flash has Step-3.7-Flash's bulk shape but no layout: its 199 B parameters
    // are 25.6x what 45 layers of hidden 4096 and an FFN of 1280 hold densely, so it is a
    // mixture of experts by its size, whose experts the row lacks.
    let step35 = get("stepfun-ai/Step-3.5-Flash").expect("row");
    assert!(step35.is_moe());
    let ratio = step35.moe_size_ratio().expect("MoE by size");
    assert!((25.0..26.5).contains(&ratio), "{ratio}");
    assert!(step35.missing().contains(&Missing::MoeExpertCounts));
    assert_eq!(
        (step35.intermediate, step35.expert_intermediate),
        (None, Some(1280))
    );
    // Dense rows sit near 1: not by size. Gemma 4 E2B (per-layer embeddings, 2.5x) stays dense.
    for id in [
        "Qwen/Qwen3-8B",
        "unsloth/gemma-4-E2B-it",
        "Qwen/Qwen2.5-VL-7B-Instruct",
    ] {
        let r = get(id).expect("row");
        assert!(!r.is_moe() && r.moe_size_ratio().is_none(), "{id}");
    }

    let phi = get("microsoft/Phi-3-mini-4k-instruct").expect("row");
    assert_eq!(phi.attention(), Attention::Mha);
    let mixtral = get("RedHatAI/Mixtral-8x7B-Instruct-v0.1").expect("row");
    assert!(mixtral.is_moe());
    assert_eq!(mixtral.intermediate, None);
}

#[test]
fn step_sentences() {
    assert_eq!(Step::Exact.to_string(), "the name is a registry id");
    let s = Step::QuantizedReupload {
        written: "a/X-GGUF".into(),
        base: "b/X",
        format: WeightFormat::Gguf(Some("Q4_K_M".into())),
    };
    assert_eq!(
        s.to_string(),
        "a/X-GGUF holds GGUF Q4_K_M weights (from its name); its architecture is read from b/X"
    );
    let s = Step::CaseInsensitive {
        written: "qwen/qwen3-8b".into(),
        id: "Qwen/Qwen3-8B",
    };
    assert_eq!(
        s.to_string(),
        "qwen/qwen3-8b matches the registry id Qwen/Qwen3-8B up to letter case"
    );
}

/// Timing: `cargo test -p deployfit-registry --release -- --ignored --nocapture lookup_timing`.
#[test]
#[ignore]
fn lookup_timing() {
    let ids = csv_ids();
    let upper: Vec<String> = ids.iter().map(|s| s.to_ascii_uppercase()).collect();
    let rounds = 20;
    let t = std::time::Instant::now();
    let mut found = 0usize;
    for _ in 0..rounds {
        for id in &upper {
            found += usize::from(get(std::hint::black_box(id)).is_some());
        }
    }
    let ns_get = t.elapsed().as_nanos() as f64 / (rounds * upper.len()) as f64;
    assert_eq!(found, rounds * upper.len());
    let t = std::time::Instant::now();
    for _ in 0..rounds {
        for id in &ids {
            found += usize::from(resolve(std::hint::black_box(id)).is_some());
        }
    }
    let ns_resolve = t.elapsed().as_nanos() as f64 / (rounds * ids.len()) as f64;
    let names = [
        "meta-llama/Llama-3.1-8B-Instruct",
        "llama3.1:8b",
        "someone/Llama-3.1-8B-Instruct-Q4_K_M-GGUF",
    ];
    let t = std::time::Instant::now();
    for _ in 0..1000 {
        for n in names {
            found += usize::from(resolve(std::hint::black_box(n)).is_some());
        }
    }
    let ns_alias = t.elapsed().as_nanos() as f64 / 3000.0;
    assert_eq!(found, 2 * rounds * ids.len() + 3000);
    println!(
        "get (case-insensitive): {ns_get:.0} ns/lookup; resolve (exact ids): {ns_resolve:.0} ns; resolve (aliases): {ns_alias:.0} ns"
    );
    assert!(ns_get < 100_000.0 && ns_alias < 1_000_000.0);
}

/// Every layout in data/layouts.csv is cited, consistent, and leaves a positive active
/// count for its reference model; two layouts with one key differ in parameters (the nearer
/// one is taken).
#[test]
fn layouts_are_cited_and_consistent() {
    let shapes = deployfit_registry::layouts();
    assert!(shapes.len() >= 20, "{}", shapes.len());
    for s in shapes {
        assert!(s.source.starts_with("https://github.com/"), "{s:?}");
        let active = s.active_params;
        match (s.experts, s.experts_active, s.moe_layers) {
            (Some(e), Some(k), Some(m)) => {
                assert!(k < e && m <= s.layers, "{s:?}");
                assert!(
                    active > s.params / 100 && active < s.params / 2,
                    "{s:?}: active {active}"
                );
            }
            _ => assert!(
                active <= s.params && active > s.params / 2,
                "{s:?}: active {active}"
            ),
        }
    }
    // Each reference in the registry resolves to its own layout.
    for s in shapes {
        let same = |r: &&Record| r.architecture == s.architecture && r.vocab == Some(s.vocab);
        if let Some(r) = get(s.reference).filter(same) {
            assert_eq!(r.layout(), Some(s), "{}", s.reference);
        }
    }
    // Stated active sizes (model cards; some leave the embeddings out): GLM-4.5-Air 12B,
    // GLM-5 40B, Kimi K2 32B, Qwen3.5-397B-A17B, MiniMax-M2 10B, Llama 4 Scout 17B;
    // gpt-oss-120b and DeepSeek-V3 as the curated catalog (tests/models.rs checks those).
    let active = |id: &str| get(id).and_then(|r| r.moe_params()).unwrap().active as f64 / 1e9;
    for (id, low, high) in [
        ("zai-org/GLM-4.5-Air", 12.0, 13.6),
        ("zai-org/GLM-5", 40.0, 42.0),
        ("moonshotai/Kimi-K2-Instruct", 32.0, 34.0),
        ("Qwen/Qwen3.5-397B-A17B", 17.0, 18.0),
        ("MiniMaxAI/MiniMax-M2.5", 10.0, 11.5),
        ("unsloth/Llama-4-Scout-17B-16E-Instruct", 17.0, 18.0),
        ("deepseek-ai/DeepSeek-V3", 37.0, 38.0),
        ("openai/gpt-oss-120b", 5.5, 5.8),
    ] {
        let a = active(id);
        assert!((low..high).contains(&a), "{id}: {a}");
    }
}
