//! Models a user names: registry ids and Ollama tags, files (config.json, GGUF), the
//! model card and list commands, and `import` — through the real binary.

use crate::common;

use std::path::Path;
use std::process::{Command, Output};

use common::{codes, deployfit, deployfit_in, explanation, json, scratch, stdout, write};

/// `deployfit model ID --format json`.
fn model_card(id: &str) -> serde_json::Value {
    json(&deployfit(&["model", id, "--format", "json"]))
}

/// `explain --format json` of a one-deployment file written to a scratch directory: the
/// deployment's object, after checking the run succeeded.
fn explain_only(dir: &str, text: &str) -> serde_json::Value {
    let dir = scratch(dir);
    write(&dir, "only.deploy", text);
    let out = deployfit_in(&dir, &["explain", "only.deploy", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    json(&out)[0].clone()
}

/// Qwen3.5/3.6-35B-A3B's cache at a 131,072-token context, FP8: 10 attention layers × 1,024
/// bytes a token and 30 Gated DeltaNet layers × 2,146,304 bytes of state (2,096 tokens of
/// 1,024 bytes), with explain's assumption line.
fn assert_qwen3_5_35b_linear_kv(q: &serde_json::Value) {
    assert_eq!(
        q["kv_bytes"],
        10 * 1024 * 131_072 + 30 * 1024 * 2096_i64,
        "{q}"
    );
    assert!(
        q["assumptions"]
            .to_string()
            .contains("30 of the model's layers use linear attention"),
        "{q}"
    );
}

fn check_json(dir: &Path, file: &str) -> serde_json::Value {
    json(&deployfit_in(dir, &["check", file, "--format", "json"]))
}

/// A deployment's figures from a JSON report, by name.
fn figures<'a>(report: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    report["deployments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["name"] == name)
        .unwrap_or_else(|| panic!("no deployment {name}: {report}"))
        .get("display")
        .unwrap()
}

fn explain_json(dir: &Path, file: &str) -> serde_json::Value {
    json(&deployfit_in(dir, &["explain", file, "--format", "json"]))
}

const PASTED: &str = "\
// Modèles collés tels quels — ids, tags, renamed organisations (ünïcödé around spans)
deployment llama {
    model   = \"meta-llama/Llama-3.1-8B-Instruct\"
    quant   = bf16
    gpu     = h100_sxm5
    context = 8k
}

deployment qwen72 {
    model = \"Qwen/Qwen2.5-72B-Instruct\"
    quant = bf16
    gpu   = h100_sxm5
    count = 4
}

deployment tag {
    model  = \"llama3.1:8b\"
    gpu    = rtx_4090
    engine = llamacpp
}

deployment glm {
    model = \"zai-org/GLM-4-9B-0414\"
    quant = Q4_K_M
    gpu   = rtx_4090
}

deployment awq {
    model = \"Qwen/Qwen2.5-7B-Instruct-AWQ\"
    gpu   = rtx_4090
    engine = vllm
}

// Qwens eigene FP8-Dateien skalieren 128 × 128 Blöcke — NVIDIAs pro Tensor.
deployment qwen_fp8 {
    model  = \"Qwen/Qwen3-8B-FP8\"
    gpu    = h100_sxm5
    engine = vllm
}

deployment nvidia_fp8 {
    model  = \"nvidia/Qwen3-8B-FP8\"
    gpu    = h100_sxm5
    engine = vllm
}
";

#[test]
fn pasted_ids_and_tags_resolve_with_bf16_weights_twice_the_parameters() {
    let dir = scratch("models_pasted");
    write(&dir, "pasted.deploy", PASTED);
    let report = check_json(&dir, "pasted.deploy");
    let errors: Vec<_> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["severity"] == "error")
        .collect();
    assert!(errors.is_empty(), "{report}");
    // Llama-3.1-8B has 8,030,261,248 parameters: bf16 weights are 16,060,522,496 B.
    assert_eq!(figures(&report, "llama")["weights_memory"], "14.96 GiB");
    let explained = explain_json(&dir, "pasted.deploy");
    let llama = explanation(&explained, "llama");
    assert_eq!(llama["weights_bytes"], 16_060_522_496_i64, "{llama}");
    // Qwen2.5-72B: 72,706,203,648 parameters.
    assert_eq!(
        explanation(&explained, "qwen72")["weights_bytes"],
        145_412_407_296_i64
    );
    // The instruct id is the curated model's own (issue 34: curated entries own their
    // ids), and explain names that entry.
    assert_eq!(llama["model"], "llama_3_1_8b", "{llama}");
    // An Ollama tag brings its default weight format: no `quant` needed.
    let tag = explanation(&explained, "tag");
    assert_eq!(tag["quant"], "Q4_K_M", "{tag}");
    assert!(
        tag["assumptions"]
            .to_string()
            .contains("Ollama tag llama3.1:8b")
    );
    // THUDM was renamed zai-org: the curated GLM-4-9B answers (its exact Q4_K_M file).
    let glm = explanation(&explained, "glm");
    assert_eq!(glm["model"], "glm4_9b", "{glm}");
    assert_eq!(glm["weights_bytes"], 6_166_574_944_i64);
    // A quantized re-upload names its format.
    assert_eq!(explanation(&explained, "awq")["quant"], "awq_int4");
    // Qwen's own FP8 checkpoints are block-scaled; NVIDIA's ModelOpt ones are per tensor.
    assert_eq!(explanation(&explained, "qwen_fp8")["quant"], "fp8_block");
    assert_eq!(explanation(&explained, "nvidia_fp8")["quant"], "fp8");
    // Labels on a materialized model do not show its generated name.
    let human = stdout(&deployfit_in(&dir, &["check", "pasted.deploy"]));
    assert!(human.contains("weights 4.53 GiB"), "{human}");
    assert!(!human.contains("hub_"), "{human}");
}

#[test]
fn an_unknown_id_suggests_the_closest_and_the_span_is_the_string() {
    let dir = scratch("models_unknown");
    let text = "// ✓ ünïcödé\ndeployment d {\n    model = \"Qwen/Qwen2.5-72B-Instruc\"\n    quant = bf16\n    gpu = h100_sxm5\n}\n";
    write(&dir, "u.deploy", text);
    let report = check_json(&dir, "u.deploy");
    assert_eq!(codes(&report), vec!["deploy::name::unknown"], "{report}");
    let diag = &report["diagnostics"][0];
    let (start, end) = (
        diag["span"]["start"].as_u64().unwrap() as usize,
        diag["span"]["end"].as_u64().unwrap() as usize,
    );
    assert_eq!(&text[start..end], "\"Qwen/Qwen2.5-72B-Instruc\"");
    let suggestion = &diag["suggestions"][0];
    assert!(
        suggestion["replacement"]
            .as_str()
            .unwrap()
            .starts_with("\"Qwen/Qwen2.5-72B-Instruct"),
        "{diag}"
    );
}

#[test]
fn a_config_json_gives_exact_parameters_and_mla_latent_kv() {
    let dir = scratch("models_config");
    let fixtures = common::root().join("artifacts/tests/fixtures/configs");
    for (folder, fixture) in [
        ("Qwen3-14B", "qwen3_14b.json"),
        ("DeepSeek-V2-Lite", "deepseek_v2_lite.json"),
    ] {
        let text = std::fs::read_to_string(fixtures.join(fixture)).unwrap();
        write(&dir, &format!("models/{folder}/config.json"), &text);
    }
    write(
        &dir,
        "f.deploy",
        "deployment qwen {\n    model = \"./models/Qwen3-14B/config.json\"\n    quant = bf16\n    gpu = h100_sxm5\n    context = 8k\n}\n\
         deployment lite {\n    model = \"./models/DeepSeek-V2-Lite\"\n    quant = bf16\n    gpu = h100_sxm5\n    context = 8k\n}\n",
    );
    let report = check_json(&dir, "f.deploy");
    assert!(
        !codes(&report)
            .iter()
            .any(|c| c.starts_with("deploy::model")),
        "{report}"
    );
    let explained = explain_json(&dir, "f.deploy");
    // Qwen3-14B: exactly 14,768,307,200 parameters, so bf16 weights are twice that.
    let qwen = explanation(&explained, "qwen");
    assert_eq!(qwen["weights_bytes"], 29_536_614_400_i64, "{qwen}");
    // DeepSeek-V2-Lite: MLA, (512 + 64) latent values per layer and token, 27 layers.
    let lite = explanation(&explained, "lite");
    assert_eq!(lite["weights_bytes"], 31_412_968_448_i64, "{lite}");
    assert_eq!(lite["kv_bytes"], (512 + 64) * 27 * 2 * 8192_i64, "{lite}");
    let card = json(&deployfit_in(
        &dir,
        &[
            "model",
            "./models/DeepSeek-V2-Lite/config.json",
            "--format",
            "json",
        ],
    ));
    assert_eq!(card["params"], 15_706_484_224_i64, "{card}");
    assert_eq!(card["kv_lora_rank"], 512);
    assert_eq!(card["attention"], "mla");
}

/// A GGUF v3 file with the given architecture and tensors (name, dims, ggml type), tensor
/// data zero-filled: enough for the header reader (tests/it/common).
fn gguf(path: &Path, arch: &str, tensors: &[(&str, &[u64], u32)]) -> u64 {
    crate::common::write_gguf(path, arch, None, tensors)
}

#[test]
fn a_gguf_file_weighs_the_sum_of_its_tensors() {
    let dir = scratch("models_gguf");
    let total = gguf(
        &dir.join("tiny-Q4_K_M.gguf"),
        "llama",
        &[
            ("token_embd.weight", &[256, 1024], 12),
            ("blk.0.attn_q.weight", &[256, 256], 12),
            ("blk.0.ffn_down.weight", &[512, 256], 14),
            ("blk.1.attn_v.weight", &[256, 128], 8),
            ("output_norm.weight", &[256], 0),
        ],
    );
    write(
        &dir,
        "g.deploy",
        "deployment tiny {\n    model = \"./tiny-Q4_K_M.gguf\"\n    gpu = rtx_4090\n    engine = llamacpp\n    context = 4k\n}\n",
    );
    let explained = explain_json(&dir, "g.deploy");
    let tiny = explanation(&explained, "tiny");
    // The file says its format (Q4_K_M), and its weights are exactly its tensors' bytes.
    assert_eq!(tiny["quant"], "Q4_K_M", "{tiny}");
    assert_eq!(tiny["weights_bytes"], total as i64, "{tiny}");
    assert!(tiny["assumptions"].to_string().contains("Q6_K"), "{tiny}");
    // `import` prints a declaration that checks.
    let declaration = stdout(&deployfit_in(&dir, &["import", "tiny-Q4_K_M.gguf"]));
    assert!(declaration.contains("model tiny_q4_k_m {"), "{declaration}");
    assert!(
        declaration.contains(&format!("Q4_K_M = {total} B")),
        "{declaration}"
    );
    write(&dir, "imported.deploy", &declaration);
    let report = check_json(&dir, "imported.deploy");
    assert!(codes(&report).is_empty(), "{report}");
}

#[test]
fn an_unreadable_model_file_is_an_error_not_a_crash() {
    let dir = scratch("models_unreadable");
    write(
        &dir,
        "bad/config.json",
        "{ \"model_type\": \"llama\", \"num_hidden_layers\": ",
    );
    write(&dir, "not-a.gguf", "GGUF but not really");
    write(
        &dir,
        "b.deploy",
        "deployment a {\n    model = \"./bad/config.json\"\n    quant = bf16\n    gpu = h100_sxm5\n}\n\
         deployment b {\n    model = \"./not-a.gguf\"\n    quant = bf16\n    gpu = h100_sxm5\n}\n",
    );
    let report = check_json(&dir, "b.deploy");
    assert_eq!(
        codes(&report),
        vec!["deploy::model::unreadable", "deploy::model::unreadable"],
        "{report}"
    );
}

#[test]
fn the_model_card_and_the_list_answer_in_json() {
    let card = json(&deployfit(&["model", "Qwen/Qwen3-14B", "--format", "json"]));
    assert_eq!(card["params"], 14_768_307_200_i64, "{card}");
    assert_eq!(card["active_params"], 14_768_307_200_i64);
    assert_eq!(card["layers"], 40);
    assert_eq!(card["heads"], 40);
    assert_eq!(card["kv_heads"], 8);
    assert_eq!(card["head_dim"], 128);
    assert_eq!(card["max_context_tokens"], 40960);
    // Qwen3-14B is curated: its own id names the curated entry, not a registry row.
    assert_eq!(card["name"], "qwen3_14b");
    assert!(
        card["source"].as_str().unwrap().contains("curated"),
        "{card}"
    );
    // A curated model's card comes from the catalog.
    let glm = json(&deployfit(&["model", "glm4:9b", "--format", "json"]));
    assert_eq!(glm["params"], 9_400_279_040_i64);
    assert!(glm["source"].as_str().unwrap().contains("catalog"), "{glm}");
    // An MoE row whose shape has no published expert layout says what is missing.
    let moe = model_card("baidu/ERNIE-4.5-21B-A3B-Thinking");
    assert!(
        moe["incomplete"].as_str().unwrap().contains("experts"),
        "{moe}"
    );
    assert!(moe["active_params"].is_null());

    let list = json(&deployfit(&[
        "models", "--search", "qwen3", "--format", "json",
    ]));
    let rows = list.as_array().unwrap();
    assert!(rows.len() >= 10, "{list}");
    assert!(rows.iter().all(|r| {
        r["id"]
            .as_str()
            .unwrap()
            .to_ascii_lowercase()
            .contains("qwen3")
            || r["catalog"].as_str().is_some_and(|c| c.contains("qwen3"))
    }));
    assert!(rows.iter().any(|r| r["source"] == "catalog"));
    assert!(rows.iter().any(|r| r["source"] == "registry"));
    let family = json(&deployfit(&[
        "models",
        "--family",
        "qwen3_moe",
        "--limit",
        "0",
        "--format",
        "json",
    ]));
    assert!(
        family
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["family"] == "qwen3_moe"),
        "{family}"
    );
    // The old spelling still answers "what runs on this GPU".
    let on_gpu = json(&deployfit(&[
        "models", "--gpu", "rtx_4090", "--format", "json",
    ]));
    assert!(
        on_gpu
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["model"] == "glm4_9b")
    );
    let unknown = deployfit(&["model", "Qwen/Qwen3-14Bx"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("did you mean"));
}

#[test]
fn a_bare_id_is_found_in_the_local_hugging_face_cache() {
    let dir = scratch("models_hub_cache");
    let snapshot = dir.join("hub/models--acme--tiny-14b/snapshots/0123abcd");
    let config = std::fs::read_to_string(
        common::root().join("artifacts/tests/fixtures/configs/qwen3_14b.json"),
    )
    .unwrap();
    write(&snapshot, "config.json", &config);
    let output: Output = Command::new(env!("CARGO_BIN_EXE_deployfit"))
        .args(["model", "acme/tiny-14b", "--format", "json"])
        .env("HF_HUB_CACHE", dir.join("hub"))
        .env("HF_HUB_OFFLINE", "1")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let card = json(&output);
    assert_eq!(card["params"], 14_768_307_200_i64, "{card}");
    assert_eq!(card["id"], "acme/tiny-14b");
}

/// Curated models win over registry rows, and the two must agree on architecture: a
/// disagreement is a defect in one of them, to investigate.
#[test]
fn curated_models_agree_with_their_registry_rows() {
    let list = json(&deployfit(&["models", "--limit", "0", "--format", "json"]));
    let mut compared = 0;
    for row in list.as_array().unwrap() {
        let Some(catalog) = row["catalog"].as_str() else {
            continue;
        };
        let curated = json(&deployfit(&["model", catalog, "--format", "json"]));
        let Some(id) = curated["id"].as_str() else {
            continue;
        };
        let Some(record) = deployfit_registry::get(id) else {
            continue;
        };
        compared += 1;
        let field = |name: &str| curated[name].as_u64();
        assert_eq!(field("layers"), record.layers.map(u64::from), "{id} layers");
        assert_eq!(field("hidden"), record.hidden.map(u64::from), "{id} hidden");
        assert_eq!(field("heads"), record.heads.map(u64::from), "{id} heads");
        assert_eq!(field("vocab"), record.vocab.map(u64::from), "{id} vocab");
        if curated["attention"] != "mla" {
            assert_eq!(
                field("kv_heads"),
                record.kv_heads.map(u64::from),
                "{id} kv_heads"
            );
        }
    }
    assert!(
        compared >= 5,
        "only {compared} curated models have registry rows"
    );
}

#[test]
fn a_model_can_be_declared_from_a_file_or_an_id() {
    let dir = scratch("models_from");
    let config = std::fs::read_to_string(
        common::root().join("artifacts/tests/fixtures/configs/qwen3_14b.json"),
    )
    .unwrap();
    write(&dir, "models/Qwen3-14B/config.json", &config);
    let text = "\
// Déclarés depuis un fichier — ünï
model qwen3_14b_local from \"./models/Qwen3-14B\"

model llama_long from \"meta-llama/Llama-3.1-8B-Instruct\" {
    max_context = 64k
}

model nope from \"./nope/config.json\"

gpu weird from \"x\"

deployment a {
    model = qwen3_14b_local
    quant = bf16
    gpu   = h100_sxm5
    context = 8k
}

deployment b {
    model = llama_long
    quant = bf16
    gpu   = h100_sxm5
}
";
    write(&dir, "f.deploy", text);
    let report = check_json(&dir, "f.deploy");
    assert_eq!(
        codes(&report),
        vec!["deploy::model::unreadable", "deploy::syntax::unexpected"],
        "{report}"
    );
    let unreadable = &report["diagnostics"][0];
    let (start, end) = (
        unreadable["span"]["start"].as_u64().unwrap() as usize,
        unreadable["span"]["end"].as_u64().unwrap() as usize,
    );
    assert_eq!(&text[start..end], "\"./nope/config.json\"");
    let explained = explain_json(&dir, "f.deploy");
    assert_eq!(
        explanation(&explained, "a")["weights_bytes"],
        29_536_614_400_i64
    );
    // The block overrides what the id gives.
    let b = explanation(&explained, "b");
    assert_eq!(b["context_tokens"], 65536, "{b}");
    assert_eq!(b["weights_bytes"], 16_060_522_496_i64);
    // The formatter keeps `from` (with and without a block) and is idempotent.
    let formatted = dir.join("f.deploy");
    deployfit_in(&dir, &["fmt", "f.deploy"]);
    let once = std::fs::read_to_string(&formatted).unwrap();
    assert!(
        once.contains("model qwen3_14b_local from \"./models/Qwen3-14B\"\n"),
        "{once}"
    );
    assert!(once.contains("model llama_long from \"meta-llama/Llama-3.1-8B-Instruct\" {"));
    let check = deployfit_in(&dir, &["fmt", "--check", "f.deploy"]);
    assert_eq!(check.status.code(), Some(0), "{once}");
}

/// A registry MLA row whose shape has no published layout has no latent sizes (Kimi-VL:
/// DeepSeek-V3's language model in a shape no layout covers): the weights are still given,
/// the KV cache (and what needs it) says what is missing, and a warning says how to supply
/// it.
#[test]
fn an_incomplete_registry_model_still_gives_its_weights() {
    let dir = scratch("models_incomplete");
    write(
        &dir,
        "k.deploy",
        "deployment kimi {\n    model = \"moonshotai/Kimi-VL-A3B-Instruct\"\n    quant = fp8\n    gpu   = h200_sxm\n}\n",
    );
    let report = check_json(&dir, "k.deploy");
    let codes = codes(&report);
    assert!(
        codes.contains(&"deploy::model::incomplete".to_string()),
        "{report}"
    );
    let figures = figures(&report, "kimi");
    assert!(
        figures["weights_memory"].as_str().unwrap().ends_with("GiB"),
        "{report}"
    );
    assert!(figures.get("kv_memory").is_none(), "{report}");
    let warning = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "deploy::model::incomplete")
        .unwrap();
    assert!(
        warning["message"]
            .as_str()
            .unwrap()
            .contains("kv_lora_rank")
    );
}

/// A registry MoE row whose shape (architecture, layers, hidden, expert FFN, vocabulary) is
/// in registry/data/layouts.csv takes that expert layout: experts, experts per token,
/// active parameters, and the MLA latent or sliding-window layout; its speed is then the
/// curated model's, not a dense model's.
#[test]
fn a_registry_moe_row_takes_its_expert_layout() {
    // Qwen3-Coder-30B-A3B has Qwen3-30B-A3B's shape: 128 experts, 8 per token, 48 layers.
    let coder = model_card("Qwen/Qwen3-Coder-30B-A3B-Instruct");
    assert_eq!(coder["experts"], 128, "{coder}");
    assert_eq!(coder["experts_active"], 8, "{coder}");
    // The active count is Qwen3-30B-A3B's, as the curated catalog has it.
    assert_eq!(coder["active_params"], 3_353_032_704_i64, "{coder}");
    assert!(coder["incomplete"].is_null(), "{coder}");
    assert!(
        coder["source"]
            .as_str()
            .unwrap()
            .contains("8 of 128 experts per token in 48 of 48 layers"),
        "{coder}"
    );
    // Kimi K2: MLA latent sizes and 384 experts come with the layout.
    let kimi = model_card("moonshotai/Kimi-K2-Instruct");
    assert_eq!(kimi["attention"], "mla", "{kimi}");
    assert_eq!(kimi["kv_lora_rank"], 512, "{kimi}");
    assert_eq!(kimi["experts"], 384, "{kimi}");
    assert!(kimi["incomplete"].is_null(), "{kimi}");

    // Through explain: the registry row decodes as fast as the curated Qwen3-30B-A3B (same
    // layout), several times a dense 30B.
    let dir = scratch("models_moe_layout");
    let deployment = |name: &str, model: &str| {
        format!(
            "deployment {name} {{\n    model = {model}\n    quant = bf16\n    engine = vllm\n    gpu = h100_sxm5\n    seqs = 1\n    context = 4k\n}}\n"
        )
    };
    write(
        &dir,
        "m.deploy",
        &[
            deployment("registry", "\"Qwen/Qwen3-Coder-30B-A3B-Instruct\""),
            deployment("curated", "qwen3_30b_a3b"),
            deployment("dense", "qwen2_5_32b"),
        ]
        .concat(),
    );
    let out = deployfit_in(&dir, &["explain", "m.deploy", "--format", "json"]);
    let explained = json(&out);
    let decode = |name: &str| {
        explanation(&explained, name)["decode_tps"]
            .as_f64()
            .unwrap()
    };
    let (registry, curated, dense) = (decode("registry"), decode("curated"), decode("dense"));
    assert!(
        (registry / curated - 1.0).abs() < 0.03,
        "registry {registry} against curated {curated}"
    );
    assert!(
        registry > 3.0 * dense,
        "registry {registry} against dense {dense}"
    );
}

/// Qwen3.6-35B-A3B by id: 30 of its 40 layers are Gated DeltaNet with a fixed state per
/// sequence (registry/data/layouts.csv, from Qwen3.5-35B-A3B's config.json). vLLM's log
/// of it on an RTX 5090 with an FP8 KV cache (calibration vllm_logs.csv, github.com/
/// noonghunna/club-3090/issues/612) has 5.98 GiB of KV cache holding 4.33 requests of
/// 131,072 tokens: 1.483 GB each. Counted as 40 attention layers it would be 5.37 GB.
#[test]
fn a_linear_attention_model_keeps_a_state_not_a_kv_cache() {
    let dir = scratch("models_linear_attention");
    write(
        &dir,
        "q.deploy",
        "// Zustand statt KV — 线性注意力\ndeployment q {\n    model    = \"nvidia/Qwen3.6-35B-A3B-NVFP4\" // ü\n    kv_cache = fp8\n    engine   = vllm\n    gpu      = rtx_5090\n    seqs     = 1\n    context  = 128k\n}\n",
    );
    let explained = explain_json(&dir, "q.deploy");
    let q = explanation(&explained, "q");
    // 10 full layers × 2 KV heads × 256 × 2 (K, V) × 1 byte × 131,072 tokens, and 30
    // layers × 2,146,304 bytes of state (counted as 2,096 tokens of 1,024 bytes).
    assert_qwen3_5_35b_linear_kv(q);
    let logged = 5.98 * (1u64 << 30) as f64 / 4.33;
    let ours = q["kv_bytes"].as_f64().unwrap();
    assert!((ours / logged - 1.0).abs() < 0.1, "{ours} against {logged}");
}

/// A dense linear-attention model: Qwen3.8-27B has Qwen3.5-27B's shape (48 of 64 layers
/// Gated DeltaNet; registry/data/layouts.csv). vLLM's log of its FP8 checkpoint on two
/// RTX 5090s at a 262,144-token window (calibration vllm_logs.csv, github.com/vllm-project/
/// recipes/pull/810) starts with a KV cache of 377,456 tokens; counting all 64 layers as
/// attention would hold about a quarter of that, and vLLM would refuse the window.
#[test]
fn a_dense_linear_attention_model_starts_where_vllm_did() {
    let dir = scratch("models_linear_dense");
    write(
        &dir,
        "q.deploy",
        "deployment q {\n    model    = \"Qwen/Qwen3.8-27B\"\n    quant    = fp8_block\n    engine   = vllm\n    gpu      = rtx_5090\n    count    = 2\n    seqs     = 1\n    context  = 256k\n}\n",
    );
    let explained = explain_json(&dir, "q.deploy");
    let q = explanation(&explained, "q");
    assert!(q["startup_failure"].is_null(), "{q}");
    let tokens = q["kv_capacity_tokens"].as_f64().unwrap();
    assert!(
        (tokens / 377_456.0 - 1.0).abs() < 0.05,
        "{tokens} tokens against vLLM's 377,456"
    );
}

/// A Qwen3.5 config.json given by path: its 30 Gated DeltaNet layers and their state reach
/// the KV cache through the binary (the same bytes as the registry layout of its shape).
#[test]
fn a_qwen3_5_config_json_keeps_its_linear_state() {
    let dir = scratch("models_config_linear");
    let fixtures = common::root().join("artifacts/tests/fixtures/configs");
    let text = std::fs::read_to_string(fixtures.join("qwen3_5_35b_a3b.json")).unwrap();
    write(&dir, "models/Qwen3.5-35B-A3B/config.json", &text);
    write(
        &dir,
        "f.deploy",
        "// Zustand — 状态\ndeployment q {\n    model    = \"./models/Qwen3.5-35B-A3B\"\n    quant    = bf16\n    kv_cache = fp8\n    engine   = vllm\n    gpu      = h100_sxm5\n    seqs     = 1\n    context  = 128k\n}\n",
    );
    let explained = explain_json(&dir, "f.deploy");
    let q = explanation(&explained, "q");
    // As the registry layout: 10 attention layers × 1,024 bytes a token, 30 × 2,146,304.
    assert_qwen3_5_35b_linear_kv(q);
}

/// DeepSeek-V2-Lite (and its Chat and Coder fine-tunes) named by id take DeepSeek's own
/// 16B inference config: 6 of 64 experts and a 512 + 64 latent KV, so a deployment is
/// evaluated (it stopped at the missing latent sizes before) and its KV cache is the
/// latent's 27 × 576 × 2 B per token, not 16 full heads'.
#[test]
fn deepseek_v2_lite_by_id_runs_with_its_latent_kv() {
    let card = model_card("deepseek-ai/DeepSeek-Coder-V2-Lite-Instruct");
    assert_eq!(card["attention"], "mla", "{card}");
    assert_eq!(card["kv_lora_rank"], 512, "{card}");
    assert_eq!(card["experts"], 64, "{card}");
    assert_eq!(card["experts_active"], 6, "{card}");
    assert!(card["incomplete"].is_null(), "{card}");
    assert!(
        card["source"]
            .as_str()
            .unwrap()
            .contains("inference/configs/config_16B.json"),
        "{card}"
    );
    let e = &explain_only(
        "models_deepseek_v2_lite",
        "// DeepSeek-V2-Lite — 深度求索 (Überprüfung)\ndeployment lite {\n    model   = \"deepseek-ai/DeepSeek-V2-Lite-Chat\" // ü\n    quant   = bf16\n    engine  = vllm\n    gpu     = h100_sxm5\n    context = 8k\n}\n",
    );
    // 8,192 tokens × 31,104 B.
    assert_eq!(
        e["kv_bytes"].as_f64(),
        Some(8192.0 * 27.0 * 576.0 * 2.0),
        "{e}"
    );
    assert!(e["decode_tps"].as_f64().is_some_and(|d| d > 0.0), "{e}");
}

/// Step-3.7-Flash by id: the layout's config.json gives it 288 experts (8 active), 8
/// key/value heads where the bulk row has 64, and a 512-token window on 33 of 45 layers, so
/// an 8,192-token request holds 12 full layers × 4,096 B × 8,192 plus 33 windowed layers ×
/// 4,096 B × 512: 471,859,200 B, where the bulk row alone priced 12.08 GB.
#[test]
fn step_3_7_flash_by_id_takes_its_config_heads_and_window() {
    let card = model_card("stepfun-ai/Step-3.7-Flash");
    assert_eq!(card["kv_heads"], 8, "{card}");
    assert_eq!(card["experts"], 288, "{card}");
    assert_eq!(card["experts_active"], 8, "{card}");
    assert_eq!(card["window"], 512, "{card}");
    assert_eq!(card["local_layers"], 33, "{card}");
    assert!(card["incomplete"].is_null(), "{card}");
    assert!(
        card["source"]
            .as_str()
            .unwrap()
            .contains("8 key/value heads, from that config.json (the bulk row has 64)"),
        "{card}"
    );
    let e = &explain_only(
        "models_step_3_7_flash",
        "// Step-3.7-Flash — 阶跃星辰 (Überprüfung)\ndeployment step {\n    model   = \"stepfun-ai/Step-3.7-Flash\" // ü\n    quant   = fp8\n    gpu     = h200_sxm\n    count   = 2\n    context = 8k\n}\n",
    );
    assert_eq!(
        e["kv_bytes"].as_f64(),
        Some((12.0 * 8192.0 + 33.0 * 512.0) * 8.0 * 128.0 * 2.0 * 2.0),
        "{e}"
    );
}

/// A registry row whose parameter count is far above what its own dense shape holds is a
/// mixture of experts whose experts it does not give (Step-3.5-Flash: 199.4 B parameters,
/// 25.6x its dense shape): `check` warns `deploy::model::incomplete` at the model's span,
/// past non-ASCII text, and names why and what to supply; the card says it too.
#[test]
fn a_model_far_larger_than_its_dense_shape_is_an_incomplete_mixture_of_experts() {
    let card = model_card("stepfun-ai/Step-3.5-Flash");
    let incomplete = card["incomplete"].as_str().expect("incomplete");
    assert!(
        incomplete.contains("it is a mixture of experts by its size (199.4 B parameters, 25.6 × what its dense shape of 45 layers holds), and the row lacks the number of experts"),
        "{card}"
    );
    let dir = scratch("models_step_3_5_flash");
    write(
        &dir,
        "s.deploy",
        "// Step-3.5-Flash — 阶跃星辰 (Überprüfung)\ndeployment s {\n    model   = \"stepfun-ai/Step-3.5-Flash\" // ü\n    quant   = fp8\n    gpu     = h200_sxm\n    count   = 4\n    context = 8k\n}\n",
    );
    let out = deployfit_in(&dir, &["check", "s.deploy", "--format", "json"]);
    let report = json(&out);
    let d = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "deploy::model::incomplete")
        .unwrap_or_else(|| panic!("{report}"))
        .clone();
    assert_eq!(
        (d["line"].as_u64(), d["column"].as_u64()),
        (Some(3), Some(15)),
        "{d}"
    );
    assert!(d["message"].as_str().unwrap().contains("25.6 ×"), "{d}");
    assert!(d["help"].as_str().unwrap().contains("config.json"), "{d}");
}

/// gpt-oss's released checkpoints (MXFP4 experts, BF16 elsewhere) are what the weights
/// weigh, through the binary: 60.77 GiB and 12.82 GiB, not params × 4.25 bits. On one H100
/// under vLLM the 120B model's cache then holds 116,351 tokens, and at its 128k window the
/// engine does not start (vllm-project/vllm #23278, #27508); a 32k context starts
/// (GPUStack's `--max-model-len 32768` runs). An `extends` copy weighs the same.
#[test]
fn gpt_oss_weighs_its_released_checkpoint() {
    let one = |name: &str, model: &str, context: &str| {
        format!(
            "deployment {name} {{ // Prüfpunkt — 检查点\n    model    = {model}\n    quant    = mxfp4\n    engine   = vllm\n    gpu      = h100_sxm5\n    context  = {context}\n    seqs     = 1\n}}\n"
        )
    };
    let dir = scratch("models_gpt_oss");
    let text = [
        "// Kopie — 副本\nmodel oss_copy extends gpt_oss_120b {}\n".to_string(),
        one("big", "gpt_oss_120b", "128k"),
        one("big_32k", "gpt_oss_120b", "32k"),
        one("copy", "oss_copy", "128k"),
        one("small", "gpt_oss_20b", "128k"),
        one("two", "gpt_oss_120b", "32k").replace("seqs", "count    = 2\n    seqs"),
        one("experts", "gpt_oss_120b", "32k")
            .replace("seqs", "count    = 2\n    expert_parallel = true\n    seqs"),
        one("sglang", "gpt_oss_120b", "32k").replace("vllm", "sglang"),
    ]
    .concat();
    write(&dir, "oss.deploy", &text);
    let report = explain_json(&dir, "oss.deploy");
    let by = |name: &str| explanation(&report, name);
    let (big, big_32k, copy, small) = (by("big"), by("big_32k"), by("copy"), by("small"));
    assert_eq!(big["weights_bytes"], 65_248_815_744_i64, "{big}");
    assert_eq!(big["weights_source"], "files", "{big}");
    assert_eq!(small["weights_bytes"], 13_761_264_768_i64, "{small}");
    // vLLM's Marlin MXFP4 MoE layout pads hidden 2880 -> 3072 and each GPU's share of an
    // expert's width (2881 from the parameter counts) -> 2944: 9.0 % of the 60.94 GB of
    // experts, the 5.11 GiB between the checkpoint and vLLM's logged 65.97 GiB load.
    let padding = |e: &serde_json::Value| e["engine_memory"]["weight_padding_bytes"].clone();
    assert_eq!(padding(big), 5_483_676_672_i64, "{big}");
    assert_eq!(padding(small), 913_946_112_i64, "{small}");
    // Two GPUs: each holds half the experts, every expert's width halved (1440.5 -> 1536)
    // under tensor parallelism, whole (2881 -> 2944) with expert parallelism.
    let (two, experts, sglang) = (by("two"), by("experts"), by("sglang"));
    assert_eq!(padding(two), 4_185_727_488_i64, "{two}");
    assert_eq!(padding(experts), 2_741_838_336_i64, "{experts}");
    assert_eq!(padding(sglang), 0, "{sglang}");
    assert!(
        big["assumptions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a.as_str().unwrap().contains("padded layout")),
        "{big}"
    );
    // The human report names it on the overhead line.
    let human = deployfit_in(&dir, &["explain", "oss.deploy"]);
    let human = String::from_utf8_lossy(&human.stdout);
    assert!(
        human.contains("expert padding 5.11 GiB (the MoE kernel's layout)"),
        "{human}"
    );
    // The padding is memory the KV cache does not get: 41,974 tokens where the checkpoint
    // alone would leave 116,351.
    assert_eq!(big["kv_capacity_tokens"], 41_974, "{big}");
    assert_eq!(
        big["startup_failure"], "context_exceeds_kv_capacity",
        "{big}"
    );
    assert!(big_32k["startup_failure"].is_null(), "{big_32k}");
    assert!(small["startup_failure"].is_null(), "{small}");
    for key in [
        "weights_bytes",
        "kv_capacity_tokens",
        "startup_failure",
        "engine_memory",
    ] {
        assert_eq!(
            copy[key], big[key],
            "{key}: the copy weighs as the original"
        );
    }
}

/// `models --gpu`: the registry's rows join the catalog's, each estimated from its registry
/// facts without a declaration (ide/src/registry_models.rs), ranked with them.
#[test]
fn models_on_a_gpu_rank_the_registry_rows_that_fit() {
    let output = deployfit(&["models", "--gpu", "rtx_4090", "--format", "json"]);
    assert_eq!(output.status.code(), Some(0));
    let rows = json(&output);
    let rows = rows.as_array().unwrap();
    assert!(rows.len() > 1000, "only {} models", rows.len());
    let registry: Vec<&serde_json::Value> = rows
        .iter()
        .filter(|r| r["model"].as_str().unwrap().contains('/'))
        .collect();
    assert!(
        registry.len() > 1000,
        "only {} registry rows",
        registry.len()
    );
    // Every registry row listed fits, with a format and a speed.
    for row in &registry {
        assert_eq!(row["fits"], true, "{row}");
        assert!(row["quant"].is_string(), "{row}");
        assert!(row["decode_tps"].as_f64().is_some_and(|t| t > 0.0), "{row}");
        assert_eq!(row["gpu"], "rtx_4090", "{row}");
    }
    // Ranked: the catalog's models that fit (fastest first), then the registry's, most
    // downloaded first (the registry's own order: Qwen2.5-Coder-32B-Instruct-AWQ, with
    // 1,117,465 downloads, before the 11,130 of unsloth/Qwen2.5-Coder-32B), then the
    // catalog's that do not fit.
    let is_registry = |r: &serde_json::Value| r["model"].as_str().unwrap().contains('/');
    let place = |r: &serde_json::Value| match (r["fits"] == true, is_registry(r)) {
        (true, false) => 0,
        (true, true) => 1,
        (false, _) => 2,
    };
    for pair in rows.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        assert!(place(a) <= place(b), "{a} before {b}");
        if place(a) == 0 && place(b) == 0 {
            assert!(
                a["decode_tps"].as_f64() >= b["decode_tps"].as_f64(),
                "{a} before {b}"
            );
        }
    }
    let at = |id: &str| rows.iter().position(|r| r["model"] == id);
    let popular = at("Qwen/Qwen2.5-Coder-32B-Instruct-AWQ").expect("the AWQ upload fits a 4090");
    if let Some(rare) = at("unsloth/Qwen2.5-Coder-32B") {
        assert!(popular < rare);
    }
    // No toy checkpoint heads the list.
    assert!(
        !rows[0]["model"].as_str().unwrap().contains("tiny"),
        "{}",
        rows[0]
    );
    // Catalog models keep their rows, and their registry rows are not listed twice.
    assert!(rows.iter().any(|r| r["model"] == "qwen3_8b"));
    let card = model_card("qwen3_8b");
    let hf = card["id"].as_str().unwrap().to_ascii_lowercase();
    assert!(
        !registry
            .iter()
            .any(|r| r["model"].as_str().unwrap().to_ascii_lowercase() == hf),
        "{hf} is listed twice"
    );
    // No listed format is below 4 bits unless asked (the quant's `bits`).
    let low = ["Q2_K", "Q3_K_M"];
    assert!(
        rows.iter()
            .all(|r| !low.contains(&r["quant"].as_str().unwrap_or(""))),
        "a format below 4 bits"
    );
}

/// A registry row's fast estimate is the estimate of the model declaration `gpus` generates
/// for the same id: the same format, memory and speed.
#[test]
fn a_registry_row_matches_its_declaration() {
    let rows = json(&deployfit(&[
        "models",
        "--gpu",
        "rtx_4090",
        "--context",
        "4k",
        "--format",
        "json",
    ]));
    let rows = rows.as_array().unwrap();
    let ids = [
        "Qwen/WebWorld-14B",
        "OzdowntheR/Qwen3-0.6B-SciGen-SLERP",
        "0xSero/Qwen3.6-28B",
    ];
    for id in ids {
        let listed = rows
            .iter()
            .find(|r| r["model"] == id)
            .unwrap_or_else(|| panic!("{id} is not listed"));
        let report = json(&deployfit(&[
            "gpus",
            id,
            "--gpu",
            "rtx_4090",
            "--context",
            "4k",
            "--format",
            "json",
        ]));
        let declared = &report["rows"][0];
        for field in ["quant", "needed_bytes", "usable_bytes", "verdict", "fits"] {
            assert_eq!(listed[field], declared[field], "{id}: {field}");
        }
        let (a, b) = (
            listed["decode_tps"].as_f64().unwrap(),
            declared["decode_tps"].as_f64().unwrap(),
        );
        assert!((a - b).abs() <= 1e-9 * b, "{id}: {a} vs {b}");
    }
}

/// Listings choose formats of 4 bits and up unless the user asks lower: Mixtral does not
/// fit one RTX 4090 at 4 bits, and the smallest GPU for GLM-4-9B holds a 4-bit format.
#[test]
fn answers_default_to_four_bits_and_up() {
    let rows = json(&deployfit(&[
        "models", "--gpu", "rtx_4090", "--format", "json",
    ]));
    let mixtral = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["model"] == "mixtral_8x7b")
        .unwrap();
    assert_ne!(mixtral["quant"], "Q2_K", "{mixtral}");
    assert_eq!(mixtral["fits"], false, "{mixtral}");
    let report = json(&deployfit(&["gpus", "glm4_9b", "--format", "json"]));
    let smallest = report["smallest"].as_str().unwrap();
    let row = report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["gpu"] == smallest)
        .unwrap();
    assert!(row["bpw"].as_f64().unwrap() >= 4.0, "{row}");
    for row in report["rows"].as_array().unwrap() {
        assert!(
            !["Q2_K", "Q3_K_M"].contains(&row["quant"].as_str().unwrap_or("")),
            "{row}"
        );
    }
    // Asked lower, lower it is.
    let low = json(&deployfit(&[
        "gpus",
        "glm4_9b",
        "--min-quant",
        "Q2_K",
        "--format",
        "json",
    ]));
    assert!(
        low["rows"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["quant"] == "Q2_K"),
        "--min-quant Q2_K allows Q2_K"
    );
}
