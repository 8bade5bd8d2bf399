//! Ollama library tags → Hugging Face ids, with the tag's default weight format.
//!
//! Source of each row: the model's page in the Ollama library, `https://ollama.com/library/<model>`
//! (tags list, "latest" marker, model description), cited per row. Ollama library tags without a
//! quantization suffix are instruct/chat models. A bare model name (`mistral`) or `<model>:latest`
//! is the tag the library marks `latest` (rows with `latest: true`).
//!
//! Default quantization: Q4_K_M for the families published since mid-2024 (llama3.1 and later,
//! qwen2.5, qwen3, gemma3, phi4, deepseek-r1, glm4); Q4_0 for the older families (llama3,
//! mistral, mixtral, codellama, phi3, gemma2), whose `latest` download sizes on the library pages
//! match Q4_0 files (e.g. mistral:latest 4.1 GB; a Q4_K_M 7.2B file is 4.4 GB). gpt-oss ships
//! its native MXFP4 MoE weights (https://ollama.com/library/gpt-oss: "Quantization - MXFP4
//! format"). These defaults were not re-checked against each tag's blob in this session; verify
//! with `ollama show <tag>` when it matters (see docs/registry.md).

use crate::WeightFormat;

/// One Ollama library tag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OllamaTag {
    /// `model:size`, lowercase, as on ollama.com.
    pub tag: &'static str,
    /// The Hugging Face id it maps to (resolvable with `resolve`).
    pub id: &'static str,
    /// The default weight format of the tag.
    pub format: WeightFormat,
    /// Whether `model` / `model:latest` means this tag.
    pub latest: bool,
    /// Citation.
    pub source: &'static str,
}

macro_rules! tags {
    ($( $tag:literal => $id:literal, $fmt:ident, $latest:literal, $src:literal; )*) => {
        &[ $( Row { tag: $tag, id: $id, fmt: Fmt::$fmt, latest: $latest, source: $src }, )* ]
    };
}

#[derive(Clone, Copy)]
enum Fmt {
    Q4KM,
    Q40,
    Mxfp4,
}

struct Row {
    tag: &'static str,
    id: &'static str,
    fmt: Fmt,
    latest: bool,
    source: &'static str,
}

const ROWS: &[Row] = tags! {
    "llama3.1:8b" => "meta-llama/Llama-3.1-8B-Instruct", Q4KM, true, "https://ollama.com/library/llama3.1";
    "llama3.1:70b" => "meta-llama/Llama-3.1-70B-Instruct", Q4KM, false, "https://ollama.com/library/llama3.1";
    "llama3.1:405b" => "meta-llama/Llama-3.1-405B-Instruct", Q4KM, false, "https://ollama.com/library/llama3.1";
    "llama3.2:1b" => "meta-llama/Llama-3.2-1B-Instruct", Q4KM, false, "https://ollama.com/library/llama3.2";
    "llama3.2:3b" => "meta-llama/Llama-3.2-3B-Instruct", Q4KM, true, "https://ollama.com/library/llama3.2";
    "llama3.3:70b" => "meta-llama/Llama-3.3-70B-Instruct", Q4KM, true, "https://ollama.com/library/llama3.3";
    "llama3:8b" => "meta-llama/Meta-Llama-3-8B-Instruct", Q40, true, "https://ollama.com/library/llama3";
    "llama3:70b" => "meta-llama/Meta-Llama-3-70B-Instruct", Q40, false, "https://ollama.com/library/llama3";
    "qwen2.5:0.5b" => "Qwen/Qwen2.5-0.5B-Instruct", Q4KM, false, "https://ollama.com/library/qwen2.5";
    "qwen2.5:1.5b" => "Qwen/Qwen2.5-1.5B-Instruct", Q4KM, false, "https://ollama.com/library/qwen2.5";
    "qwen2.5:3b" => "Qwen/Qwen2.5-3B-Instruct", Q4KM, false, "https://ollama.com/library/qwen2.5";
    "qwen2.5:7b" => "Qwen/Qwen2.5-7B-Instruct", Q4KM, true, "https://ollama.com/library/qwen2.5";
    "qwen2.5:14b" => "Qwen/Qwen2.5-14B-Instruct", Q4KM, false, "https://ollama.com/library/qwen2.5";
    "qwen2.5:32b" => "Qwen/Qwen2.5-32B-Instruct", Q4KM, false, "https://ollama.com/library/qwen2.5";
    "qwen2.5:72b" => "Qwen/Qwen2.5-72B-Instruct", Q4KM, false, "https://ollama.com/library/qwen2.5";
    "qwen2.5-coder:0.5b" => "Qwen/Qwen2.5-Coder-0.5B-Instruct", Q4KM, false, "https://ollama.com/library/qwen2.5-coder";
    "qwen2.5-coder:1.5b" => "Qwen/Qwen2.5-Coder-1.5B-Instruct", Q4KM, false, "https://ollama.com/library/qwen2.5-coder";
    "qwen2.5-coder:3b" => "Qwen/Qwen2.5-Coder-3B-Instruct", Q4KM, false, "https://ollama.com/library/qwen2.5-coder";
    "qwen2.5-coder:7b" => "Qwen/Qwen2.5-Coder-7B-Instruct", Q4KM, true, "https://ollama.com/library/qwen2.5-coder";
    "qwen2.5-coder:14b" => "Qwen/Qwen2.5-Coder-14B-Instruct", Q4KM, false, "https://ollama.com/library/qwen2.5-coder";
    "qwen2.5-coder:32b" => "Qwen/Qwen2.5-Coder-32B-Instruct", Q4KM, false, "https://ollama.com/library/qwen2.5-coder";
    "qwen3:0.6b" => "Qwen/Qwen3-0.6B", Q4KM, false, "https://ollama.com/library/qwen3";
    "qwen3:1.7b" => "Qwen/Qwen3-1.7B", Q4KM, false, "https://ollama.com/library/qwen3";
    "qwen3:4b" => "Qwen/Qwen3-4B", Q4KM, false, "https://ollama.com/library/qwen3";
    "qwen3:8b" => "Qwen/Qwen3-8B", Q4KM, true, "https://ollama.com/library/qwen3";
    "qwen3:14b" => "Qwen/Qwen3-14B", Q4KM, false, "https://ollama.com/library/qwen3";
    "qwen3:32b" => "Qwen/Qwen3-32B", Q4KM, false, "https://ollama.com/library/qwen3";
    "qwen3:30b-a3b" => "Qwen/Qwen3-30B-A3B", Q4KM, false, "https://ollama.com/library/qwen3";
    "qwen3:30b" => "Qwen/Qwen3-30B-A3B", Q4KM, false, "https://ollama.com/library/qwen3";
    "qwen3:235b-a22b" => "Qwen/Qwen3-235B-A22B", Q4KM, false, "https://ollama.com/library/qwen3";
    "qwen3:235b" => "Qwen/Qwen3-235B-A22B", Q4KM, false, "https://ollama.com/library/qwen3";
    "gemma2:2b" => "google/gemma-2-2b-it", Q40, false, "https://ollama.com/library/gemma2";
    "gemma2:9b" => "google/gemma-2-9b-it", Q40, true, "https://ollama.com/library/gemma2";
    "gemma2:27b" => "google/gemma-2-27b-it", Q40, false, "https://ollama.com/library/gemma2";
    "gemma3:1b" => "google/gemma-3-1b-it", Q4KM, false, "https://ollama.com/library/gemma3";
    "gemma3:4b" => "google/gemma-3-4b-it", Q4KM, true, "https://ollama.com/library/gemma3";
    "gemma3:12b" => "google/gemma-3-12b-it", Q4KM, false, "https://ollama.com/library/gemma3";
    "gemma3:27b" => "google/gemma-3-27b-it", Q4KM, false, "https://ollama.com/library/gemma3";
    "mistral:7b" => "mistralai/Mistral-7B-Instruct-v0.3", Q40, true, "https://ollama.com/library/mistral (latest = v0.3)";
    "mixtral:8x7b" => "mistralai/Mixtral-8x7B-Instruct-v0.1", Q40, true, "https://ollama.com/library/mixtral";
    "phi3:3.8b" => "microsoft/Phi-3-mini-4k-instruct", Q40, true, "https://ollama.com/library/phi3 (3.8b = mini, 4k context)";
    "phi3:mini" => "microsoft/Phi-3-mini-4k-instruct", Q40, false, "https://ollama.com/library/phi3";
    "phi3:14b" => "microsoft/Phi-3-medium-4k-instruct", Q40, false, "https://ollama.com/library/phi3 (14b = medium, 4k context)";
    "phi3:medium" => "microsoft/Phi-3-medium-4k-instruct", Q40, false, "https://ollama.com/library/phi3";
    "phi4:14b" => "microsoft/phi-4", Q4KM, true, "https://ollama.com/library/phi4";
    "deepseek-r1:1.5b" => "deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B", Q4KM, false, "https://ollama.com/library/deepseek-r1";
    "deepseek-r1:7b" => "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", Q4KM, false, "https://ollama.com/library/deepseek-r1";
    "deepseek-r1:8b" => "deepseek-ai/DeepSeek-R1-0528-Qwen3-8B", Q4KM, true, "https://ollama.com/library/deepseek-r1 (8b updated to DeepSeek-R1-0528-Qwen3-8B in May 2025; before: DeepSeek-R1-Distill-Llama-8B)";
    "deepseek-r1:14b" => "deepseek-ai/DeepSeek-R1-Distill-Qwen-14B", Q4KM, false, "https://ollama.com/library/deepseek-r1";
    "deepseek-r1:32b" => "deepseek-ai/DeepSeek-R1-Distill-Qwen-32B", Q4KM, false, "https://ollama.com/library/deepseek-r1";
    "deepseek-r1:70b" => "deepseek-ai/DeepSeek-R1-Distill-Llama-70B", Q4KM, false, "https://ollama.com/library/deepseek-r1";
    "deepseek-r1:671b" => "deepseek-ai/DeepSeek-R1-0528", Q4KM, false, "https://ollama.com/library/deepseek-r1";
    "gpt-oss:20b" => "openai/gpt-oss-20b", Mxfp4, true, "https://ollama.com/library/gpt-oss";
    "gpt-oss:120b" => "openai/gpt-oss-120b", Mxfp4, false, "https://ollama.com/library/gpt-oss";
    "glm4:9b" => "zai-org/glm-4-9b-chat-hf", Q4KM, true, "https://ollama.com/library/glm4 (GLM-4-9B-Chat; the registry has its transformers-format upload THUDM/glm-4-9b-chat-hf, now zai-org)";
    "codellama:7b" => "codellama/CodeLlama-7b-Instruct-hf", Q40, true, "https://ollama.com/library/codellama";
    "codellama:13b" => "codellama/CodeLlama-13b-Instruct-hf", Q40, false, "https://ollama.com/library/codellama";
    "codellama:34b" => "codellama/CodeLlama-34b-Instruct-hf", Q40, false, "https://ollama.com/library/codellama";
    "codellama:70b" => "codellama/CodeLlama-70b-Instruct-hf", Q40, false, "https://ollama.com/library/codellama";
};

fn build(row: &Row) -> OllamaTag {
    let format = match row.fmt {
        Fmt::Q4KM => WeightFormat::Gguf(Some("Q4_K_M".to_string())),
        Fmt::Q40 => WeightFormat::Gguf(Some("Q4_0".to_string())),
        Fmt::Mxfp4 => WeightFormat::Mxfp4,
    };
    OllamaTag {
        tag: row.tag,
        id: row.id,
        format,
        latest: row.latest,
        source: row.source,
    }
}

/// All Ollama tags the registry maps, in table order.
pub fn ollama_tags() -> impl Iterator<Item = OllamaTag> {
    ROWS.iter().map(build)
}

/// Looks up `model`, `model:latest` or `model:size` (ASCII case-insensitive).
pub(crate) fn lookup(name: &str) -> Option<OllamaTag> {
    let (model, size) = match name.split_once(':') {
        Some((m, s)) => (m, s),
        None => (name, "latest"),
    };
    if model.is_empty() || size.is_empty() || size.contains(':') {
        return None;
    }
    let row = if size.eq_ignore_ascii_case("latest") {
        ROWS.iter().find(|r| {
            r.latest
                && r.tag
                    .split_once(':')
                    .is_some_and(|(m, _)| m.eq_ignore_ascii_case(model))
        })
    } else {
        ROWS.iter().find(|r| {
            r.tag
                .split_once(':')
                .is_some_and(|(m, s)| m.eq_ignore_ascii_case(model) && s.eq_ignore_ascii_case(size))
        })
    }?;
    Some(build(row))
}
