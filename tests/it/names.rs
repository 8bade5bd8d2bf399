//! Issue 34: the names a user types resolve to the right entry — GPUs by marketing or
//! `nvidia-smi` name, quoted or not, ambiguous names listed, curated models by every id
//! they own — through the real binary and the real language server.

use crate::common::{deployfit_in, json, scratch, stdout};
use crate::lsp_support::{Session, position_of, uri_of};
use serde_json::{Value, json};

/// Writes `text` as `name` in a fresh folder and runs `deployfit check --format json`.
fn check(dir: &str, text: &str) -> Value {
    let dir = scratch(dir);
    std::fs::write(dir.join("d.deploy"), text).unwrap();
    json(&deployfit_in(
        &dir,
        &["check", "d.deploy", "--format", "json"],
    ))
}

fn deployment(model: &str, gpu: &str, extra: &str) -> String {
    format!(
        "// ü — a file as a user writes it\ndeployment chat {{\n    model = {model}\n    gpu = {gpu}\n    context = 32k\n{extra}}}\n"
    )
}

fn figures(report: &Value) -> Value {
    assert_eq!(report["diagnostics"], json!([]), "{report}");
    report["deployments"][0]["figures"].clone()
}

#[test]
fn a_gpu_by_marketing_name_nvidia_smi_name_or_id_gives_identical_figures() {
    let written = [
        "\"RTX 4090\"",
        "\"NVIDIA GeForce RTX 4090\"",
        "rtx_4090",
        "RTX_4090",
        "\"rtx-4090\"",
    ];
    let all: Vec<Value> = written
        .iter()
        .enumerate()
        .map(|(i, gpu)| {
            figures(&check(
                &format!("names_gpu_{i}"),
                &deployment("qwen3_8b", gpu, "    quant = Q4_K_M\n"),
            ))
        })
        .collect();
    assert!(all[0]["memory_per_gpu_bytes"].as_u64().unwrap() > 0);
    for (gpu, figures) in written.iter().zip(&all) {
        assert_eq!(figures, &all[2], "{gpu} differs from rtx_4090");
    }
    // nvidia-smi's name for the H100 SXM5 (an alias) is that card.
    let smi = figures(&check(
        "names_gpu_smi",
        &deployment(
            "qwen3_8b",
            "\"NVIDIA H100 80GB HBM3\"",
            "    quant = Q4_K_M\n",
        ),
    ));
    let id = figures(&check(
        "names_gpu_smi_id",
        &deployment("qwen3_8b", "h100_sxm5", "    quant = Q4_K_M\n"),
    ));
    assert_eq!(smi, id);
}

#[test]
fn an_ambiguous_gpu_name_lists_every_card_with_a_fix_for_each() {
    for written in ["\"H100\"", "H100"] {
        let text = deployment("qwen3_8b", written, "    quant = Q4_K_M\n");
        let report = check("names_ambiguous", &text);
        let diag = crate::common::diagnostic(&report, "deploy::name::ambiguous");
        let help = diag["help"].as_str().unwrap();
        assert!(
            help.contains("`h100_sxm5`") && help.contains("`h100_pcie`"),
            "{help}"
        );
        // The span is the value as written (after a non-ASCII comment line).
        let start = text.find(written).unwrap();
        assert_eq!(diag["span"]["start"].as_u64(), Some(start as u64), "{diag}");
        assert_eq!(
            diag["span"]["end"].as_u64(),
            Some((start + written.len()) as u64)
        );
        // One fix per card, each replacing the value with the card's name.
        let fixes: Vec<&str> = diag["suggestions"]
            .as_array()
            .unwrap_or_else(|| panic!("suggestions in {diag}"))
            .iter()
            .map(|f| f["replacement"].as_str().unwrap())
            .collect();
        assert!(
            fixes.contains(&"h100_sxm5") && fixes.contains(&"h100_pcie"),
            "{fixes:?}"
        );
    }
}

#[test]
fn a_near_name_suggests_the_card_that_shares_its_words_first() {
    let report = check(
        "names_3060",
        &deployment("qwen3_8b", "rtx_3060", "    quant = Q4_K_M\n"),
    );
    let diag = &report["diagnostics"][0];
    let help = diag["help"].as_str().unwrap();
    let first = help.find('`').map(|i| &help[i..]).unwrap_or_default();
    assert!(first.starts_with("`rtx_3060_12gb`"), "{help}");
    // A name in another spacing is the model; a family without a size suggests that
    // family's models, not another's (`llama3` once suggested `llama_2_13b`).
    let spaced = check(
        "names_llama3",
        &deployment("llama3_1_8b", "rtx_4090", "    quant = Q4_K_M\n"),
    );
    let named = check(
        "names_llama3_id",
        &deployment("llama_3_1_8b", "rtx_4090", "    quant = Q4_K_M\n"),
    );
    assert_eq!(figures(&spaced), figures(&named));
    let report = check(
        "names_llama3_family",
        &deployment("llama3", "rtx_4090", "    quant = Q4_K_M\n"),
    );
    let help = report["diagnostics"][0]["help"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(help.starts_with("did you mean `llama_3_"), "{help}");
    assert!(!help.contains("llama_2"), "{help}");
}

#[test]
fn gpu_flags_take_the_names_users_type() {
    let dir = scratch("names_flags");
    let out = deployfit_in(
        &dir,
        &["gpus", "qwen3_8b", "--gpu", "RTX 4090", "--format", "json"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout(&out).contains("\"rtx_4090\""), "{}", stdout(&out));
    let out = deployfit_in(&dir, &["models", "--gpu", "NVIDIA GeForce RTX 4090"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = deployfit_in(&dir, &["gpus", "qwen3_8b", "--gpu", "H100"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("h100_sxm5") && err.contains("h100_pcie"),
        "{err}"
    );
}

#[test]
fn gemma_3_by_its_hub_id_ollama_tag_or_catalog_name_is_the_curated_model() {
    let mut kv = Vec::new();
    for model in ["\"google/gemma-3-27b-it\"", "\"gemma3:27b\"", "gemma_3_27b"] {
        let figures = figures(&check(
            "names_gemma",
            &deployment(model, "rtx_4090", "    quant = Q4_K_M\n"),
        ));
        kv.push((
            model,
            figures["kv_memory_bytes"].clone(),
            figures["fits"].clone(),
        ));
    }
    for (model, bytes, fits) in &kv {
        assert_eq!(bytes, &kv[2].1, "{model}");
        assert_eq!(fits, &json!(true), "{model}: Q4_K_M at 32k fits a 4090");
    }
    let dir = scratch("names_gemma_card");
    for id in [
        "google/gemma-3-27b-it",
        "gemma3:27b",
        "google/gemma-3-27b-pt",
    ] {
        let card = json(&deployfit_in(&dir, &["model", id, "--format", "json"]));
        assert_eq!(card["name"], "gemma_3_27b", "{id}");
        assert_eq!(card["window"], 1024, "{id}");
        assert_eq!(card["local_layers"], 52, "{id}");
    }
    // The Ollama tag's format is the default quant on the curated model.
    let report = check(
        "names_gemma_tag",
        &deployment("\"gemma3:27b\"", "rtx_4090", ""),
    );
    let tagged = figures(&report);
    assert_eq!(tagged["kv_memory_bytes"], kv[0].1);
}

#[test]
fn curated_models_own_their_ids() {
    let dir = scratch("names_curated");
    for (id, name) in [
        ("Qwen/Qwen3-8B", "qwen3_8b"),
        ("qwen/qwen3-8b", "qwen3_8b"),
        ("Qwen/Qwen3-8B-Base", "qwen3_8b"),
        ("Qwen/Qwen3-8B-AWQ", "qwen3_8b"),
        ("meta-llama/Llama-3.1-8B-Instruct", "llama_3_1_8b"),
        ("meta-llama/Llama-3.1-8B", "llama_3_1_8b"),
        ("llama3.1:8b", "llama_3_1_8b"),
        ("mistralai/Mistral-7B-Instruct-v0.3", "mistral_7b"),
    ] {
        let card = json(&deployfit_in(&dir, &["model", id, "--format", "json"]));
        assert_eq!(card["name"], name, "{id}");
    }
    // A quantized re-upload is the curated model in the re-upload's format.
    let report = check(
        "names_awq",
        &deployment("\"Qwen/Qwen3-8B-AWQ\"", "rtx_4090", ""),
    );
    let awq = figures(&report);
    let plain = figures(&check(
        "names_awq_plain",
        &deployment("qwen3_8b", "rtx_4090", "    quant = awq_int4\n"),
    ));
    assert_eq!(awq["weights_memory_bytes"], plain["weights_memory_bytes"]);
}

#[test]
fn export_serves_the_id_the_deployment_wrote() {
    for id in [
        "meta-llama/Llama-3.1-8B-Instruct",
        "meta-llama/Llama-3.1-8B",
    ] {
        let dir = scratch("names_export");
        std::fs::write(
            dir.join("d.deploy"),
            format!(
                "deployment chat {{\n    model = \"{id}\"\n    quant = bf16\n    gpu = \"H100 SXM\"\n    engine = vllm\n}}\n"
            ),
        )
        .unwrap();
        let out = deployfit_in(&dir, &["export", "d.deploy", "--deployment", "chat"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let first = stdout(&out).lines().next().unwrap_or_default().to_string();
        assert_eq!(first, format!("vllm serve {id} \\"));
    }
    // A catalog name exports the instruct id people serve.
    let dir = scratch("names_export_catalog");
    std::fs::write(
        dir.join("d.deploy"),
        "deployment chat {\n    model = llama_3_1_8b\n    quant = bf16\n    gpu = h100_sxm5\n    engine = vllm\n}\n",
    )
    .unwrap();
    let out = deployfit_in(&dir, &["export", "d.deploy", "--deployment", "chat"]);
    assert!(stdout(&out).starts_with("vllm serve meta-llama/Llama-3.1-8B-Instruct "));
}

#[test]
fn the_solver_takes_quoted_names_in_one_of() {
    let report = check(
        "names_solve",
        "deployment chat {\n    model = qwen3_8b\n    quant = Q4_K_M\n    gpu = one_of [\"RTX 4090\", \"NVIDIA H100 80GB HBM3\"]\n    context = 8k\n    minimize cost_per_hour\n}\n",
    );
    assert!(
        !crate::common::codes(&report)
            .iter()
            .any(|c| c.starts_with("deploy::name")),
        "{report}"
    );
    let setup = &report["deployments"][0];
    assert!(setup.to_string().contains("rtx_4090"), "{setup}");
}

#[test]
fn the_server_hovers_and_jumps_from_a_quoted_name() {
    let dir = scratch("names_lsp");
    let path = dir.join("d.deploy");
    let text = deployment(
        "\"google/gemma-3-27b-it\"",
        "\"RTX 4090\"",
        "    quant = Q4_K_M\n",
    );
    let uri = uri_of(&path);
    let mut session = Session::start();
    let diagnostics = session.open(&uri, &text);
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let inside = text.find("RTX 4090").unwrap() + 2;
    let hover = session.request(
        "textDocument/hover",
        json!({ "textDocument": { "uri": uri }, "position": position_of(&text, inside) }),
    );
    let markdown = hover["contents"]["value"].as_str().unwrap_or_default();
    assert!(markdown.contains("rtx_4090"), "{hover}");
    let definition = session.request(
        "textDocument/definition",
        json!({ "textDocument": { "uri": uri }, "position": position_of(&text, inside) }),
    );
    assert!(
        definition.to_string().contains("gpus.deploy"),
        "{definition}"
    );
    let model = text.find("gemma-3").unwrap();
    let hover = session.request(
        "textDocument/hover",
        json!({ "textDocument": { "uri": uri }, "position": position_of(&text, model) }),
    );
    assert!(
        hover["contents"]["value"]
            .as_str()
            .unwrap_or_default()
            .contains("gemma_3_27b"),
        "{hover}"
    );
    // The ambiguity reaches the editor with a quick fix per card.
    let ambiguous = text.replace("\"RTX 4090\"", "\"H100\"");
    session.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": uri, "version": 2 }, "contentChanges": [{ "text": ambiguous }] }),
    );
    let published = session.diagnostics(&uri, Some(2));
    assert_eq!(
        published[0]["code"], "deploy::name::ambiguous",
        "{published:?}"
    );
    let start = ambiguous.find("\"H100\"").unwrap();
    assert_eq!(
        published[0]["range"]["start"],
        position_of(&ambiguous, start)
    );
    let actions = session.request(
        "textDocument/codeAction",
        json!({
            "textDocument": { "uri": uri },
            "range": { "start": position_of(&ambiguous, start), "end": position_of(&ambiguous, start + 6) },
            "context": { "diagnostics": published }
        }),
    );
    let titles = actions.to_string();
    assert!(
        titles.contains("h100_sxm5") && titles.contains("h100_pcie"),
        "{actions}"
    );
    session.finish();
}

#[test]
fn the_server_completes_a_name_typed_in_the_users_words() {
    let dir = scratch("names_completion");
    let path = dir.join("d.deploy");
    let uri = uri_of(&path);
    let mut session = Session::start();
    for (typed, wanted, not) in [
        ("\"RTX 409", "rtx_4090", "rtx_3090"),
        ("H10", "h100_sxm5", "a100_sxm4_80gb"),
        ("\"GeForce RTX 30", "rtx_3090", "rtx_4090"),
    ] {
        // ü: a non-ASCII line above the cursor.
        let text =
            format!("// ü\ndeployment chat {{\n    model = qwen3_8b\n    gpu = {typed}\n}}\n");
        session.open(&uri, &text);
        let cursor = text.find(typed).unwrap() + typed.len();
        let answer = session.request(
            "textDocument/completion",
            json!({ "textDocument": { "uri": uri }, "position": position_of(&text, cursor) }),
        );
        let items = answer.as_array().unwrap_or_else(|| panic!("{answer}"));
        let item = items
            .iter()
            .find(|i| i["label"] == wanted)
            .unwrap_or_else(|| panic!("{wanted} not offered for {typed}: {answer}"));
        assert!(
            !items.iter().any(|i| i["label"] == not),
            "{not} for {typed}"
        );
        // The edit replaces what was typed (quote included) with the name; the client
        // filters on the typed text.
        let start = text.find(typed).unwrap();
        assert_eq!(item["textEdit"]["newText"], wanted);
        assert_eq!(
            item["textEdit"]["range"]["start"],
            position_of(&text, start)
        );
        assert_eq!(item["textEdit"]["range"]["end"], position_of(&text, cursor));
        assert_eq!(item["filterText"], typed);
        session.notify(
            "textDocument/didClose",
            json!({ "textDocument": { "uri": uri } }),
        );
    }
    session.finish();
}

#[test]
fn quants_and_engines_take_the_names_their_projects_use() {
    let pairs = [
        (
            "    quant = \"q4_k_m\"\n    engine = \"llama.cpp\"\n",
            "    quant = Q4_K_M\n    engine = llamacpp\n",
        ),
        (
            "    quant = bf16\n    engine = \"text-generation-inference\"\n    context = 8k\n",
            "    quant = bf16\n    engine = tgi\n    context = 8k\n",
        ),
        (
            "    quant = bf16\n    engine = \"TRT-LLM\"\n    context = 8k\n",
            "    quant = bf16\n    engine = tensorrt_llm\n    context = 8k\n",
        ),
    ];
    for (i, (written, named)) in pairs.iter().enumerate() {
        let text = |extra: &str| {
            format!(
                "// ü\ndeployment chat {{\n    model = qwen3_8b\n    gpu = h100_sxm5\n{extra}}}\n"
            )
        };
        let a = check(&format!("names_engine_{i}"), &text(written));
        let b = check(&format!("names_engine_named_{i}"), &text(named));
        assert_eq!(figures(&a), figures(&b), "{written}");
    }
}
