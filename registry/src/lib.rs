//! The embedded model registry: 9,441 Hugging Face model architectures (from
//! `data/hf_models.csv`, see `data/README.md` for provenance and licence), compiled into static
//! sorted arrays by `build.rs`, plus the aliases that make user-written names resolve:
//! case-insensitive ids, gated originals read from unquantized re-uploads, quantized re-uploads,
//! renamed organisations and Ollama library tags. See `docs/registry.md`.
//!
//! Nothing is parsed at run time; [`get`] is a binary search over a static index.

use std::cmp::Ordering;
use std::fmt;

// The CSV rules build.rs applies; the library reads its shape arithmetic
// (`Record::moe_size_ratio`), the tests the rest.
mod csv_rows;
mod ollama;
mod quant;

pub use ollama::{OllamaTag, ollama_tags};
pub use quant::WeightFormat;

/// One registry row. Empty CSV cells (and zeros) are `None`: unknown, never zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record {
    /// Hugging Face repository id, as spelled in the source.
    pub id: &'static str,
    /// The config.json `model_type` (e.g. `llama`, `qwen3_moe`).
    pub architecture: &'static str,
    /// Total parameter count (the source's `parameters_raw`; for quantized re-uploads this may
    /// be the packed tensor count, not the original count).
    pub params: Option<u64>,
    pub layers: Option<u32>,
    pub hidden: Option<u32>,
    /// Attention (query) heads.
    pub heads: Option<u32>,
    pub kv_heads: Option<u32>,
    /// Per-head dimension. For MLA rows this is hidden/heads, not the real latent sizes.
    pub head_dim: Option<u32>,
    pub vocab: Option<u32>,
    pub context_length: Option<u64>,
    /// Dense MLP intermediate size; only for dense models (the source column
    /// `moe_intermediate_size` holds it for dense rows).
    pub intermediate: Option<u32>,
    /// Per-expert intermediate size; only for MoE models (the same source column).
    pub expert_intermediate: Option<u32>,
    /// Shared-expert intermediate size, when the source has it (Qwen MoE families).
    pub shared_expert_intermediate: Option<u32>,
    pub license: Option<&'static str>,
    /// `YYYY-MM-DD`.
    pub release_date: Option<&'static str>,
    /// Hugging Face downloads at the source's snapshot.
    pub downloads: u64,
    /// `text-generation` or `image-text-to-text`.
    pub pipeline: &'static str,
    moe: bool,
    /// Index into [`layouts`] (`data/layouts.csv`) of this row's layout.
    shape: Option<u16>,
}

/// What the bulk data lacks of an architecture, from a published config.json
/// (`data/layouts.csv`; `scripts/layouts.py` writes it): a mixture of experts' expert layout
/// and active parameters, MLA latent sizes, sliding-window and linear-attention layers. A
/// registry row has it when its architecture, layers, hidden size, FFN size and vocabulary
/// are this layout's (and both are MoE, or both dense).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// config.json `model_type`, as the registry spells it.
    pub architecture: &'static str,
    pub layers: u32,
    pub hidden: u32,
    /// The registry row's FFN size: one routed expert's (`moe_intermediate_size`) for a MoE
    /// layout, the dense MLP's otherwise.
    pub intermediate: u32,
    pub vocab: u32,
    /// Routed experts per MoE layer (None: dense).
    pub experts: Option<u32>,
    /// Routed experts each token picks.
    pub experts_active: Option<u32>,
    /// Layers with routed experts (the rest are dense).
    pub moe_layers: Option<u32>,
    /// The reference model's parameter count (its registry row).
    pub params: u64,
    /// The parameters one token reads in the reference model's main network (embeddings and
    /// output layer, attention, dense MLPs, router, shared experts and the experts it picks;
    /// multi-token-prediction layers left out), from its config.json.
    pub active_params: u64,
    /// Multi-head latent attention: the latent KV rank and the decoupled RoPE key size.
    pub kv_lora_rank: Option<u32>,
    pub qk_rope_dim: Option<u32>,
    /// Sliding-window layers: the window and how many layers use it.
    pub window: Option<u32>,
    pub local_layers: Option<u32>,
    /// Linear-attention (Gated DeltaNet) layers and the bytes of one layer's state per
    /// sequence (recurrent state in the config's `mamba_ssm_dtype`, convolution state).
    pub linear_layers: Option<u32>,
    pub linear_state: Option<u64>,
    /// Key/value heads (not MLA): where the bulk data's count differs (Step-3.7-Flash's
    /// config names 8 where the bulk row copied the 64 attention heads), the config's wins.
    pub kv_heads: Option<u32>,
    /// The Hugging Face id whose config.json this is.
    pub reference: &'static str,
    /// Where the layout was read (a URL pinned to a commit).
    pub source: &'static str,
}

/// All layouts the registry knows.
pub fn layouts() -> &'static [Layout] {
    &LAYOUTS
}

/// Total and active parameters of a MoE record (see [`Record::moe_params`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MoeParams {
    pub total: u64,
    pub active: u64,
    /// The total is the reference model's: the row's own count is more than 20 % away from
    /// it (a quantized re-upload counting packed tensors) or absent.
    pub total_from_reference: bool,
}

include!(concat!(env!("OUT_DIR"), "/registry_data.rs"));

/// Attention layout, as far as the registry can tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attention {
    /// Multi-head: kv_heads == heads.
    Mha,
    /// Grouped-query (including multi-query, kv_heads == 1): kv_heads < heads.
    Gqa,
    /// Multi-head latent attention (DeepSeek V2/V3, Kimi K2, MiniCPM3): the KV cache holds a
    /// compressed latent whose sizes are not in the registry.
    Mla,
    /// Heads unknown or inconsistent.
    Unknown,
}

/// `model_type`s using multi-head latent attention. Sources: transformers
/// `models/deepseek_v2/configuration_deepseek_v2.py`, `models/deepseek_v3/...` (`kv_lora_rank`),
/// moonshotai/Kimi-K2-Instruct config.json (`model_type: kimi_k2`, `kv_lora_rank: 512`),
/// openbmb/MiniCPM3-4B config.json (`kv_lora_rank: 256`); Kimi-VL (`kimi_vl`): its language
/// model is DeepSeek-V2/V3's (vllm-project/vllm
/// vllm/model_executor/models/kimi_vl.py@0322cc0e288e08969696a3c9e0295c168e2c5034 builds it
/// as `DeepseekV2ForCausalLM`), and vLLM's startup logs of Kimi-VL-A3B-Instruct
/// (../shared/calibration/vllm_logs.csv rows 29 and 30) hold 1,426,368 and 1,890,896 KV tokens
/// in 41.32 and 54.78 GiB: 31,104 B per token, 27 layers × 576 latent values × 2 B, not the
/// 221,184 B of 16 full KV heads.
const MLA_ARCHITECTURES: &[&str] = &[
    "deepseek_v2",
    "deepseek_v3",
    "deepseek_v32",
    "kimi_k2",
    "kimi_vl",
    "minicpm3",
];

/// `model_type`s with interleaved sliding-window / local-attention layers, whose layout the
/// registry lacks. Sources: transformers configuration files (`sliding_window` with
/// `layer_types` / `sliding_window_pattern`) of gemma2, gemma3, gemma3n, cohere2, gpt_oss;
/// llama4 (chunked local attention, `attention_chunk_size`); google/gemma-4 config.json
/// (`layer_types`).
const SLIDING_WINDOW_ARCHITECTURES: &[&str] = &[
    "gemma2",
    "gemma3",
    "gemma3_text",
    "gemma3n",
    "gemma4",
    "gemma4_text",
    "gemma4_unified",
    "gpt_oss",
    "cohere2",
    "llama4",
];

/// A fact the registry does not have for a record, with how a user can supply it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Missing {
    /// MoE: no expert counts, so active parameters are unknown.
    MoeExpertCounts,
    /// MLA: no latent KV sizes (`kv_lora_rank`, `qk_rope_head_dim`), so the KV cache is unknown.
    MlaLatent,
    /// Sliding-window / local layers: which layers are local and the window are unknown.
    SlidingWindowLayout,
}

impl Missing {
    /// Short code, stable for diagnostics.
    pub fn code(self) -> &'static str {
        match self {
            Missing::MoeExpertCounts => "moe-expert-counts",
            Missing::MlaLatent => "mla-latent",
            Missing::SlidingWindowLayout => "sliding-window-layout",
        }
    }
    /// What is missing.
    pub fn what(self) -> &'static str {
        match self {
            Missing::MoeExpertCounts => {
                "the number of experts and of experts active per token (so active parameters are unknown)"
            }
            Missing::MlaLatent => {
                "the multi-head latent attention sizes (kv_lora_rank, qk_rope_head_dim), so the KV cache size is unknown"
            }
            Missing::SlidingWindowLayout => {
                "which layers use sliding-window (local) attention and the window size"
            }
        }
    }
    /// How to supply it.
    pub fn how_to_supply(self) -> &'static str {
        match self {
            Missing::MoeExpertCounts => {
                "supply a config.json (model = \"./path/config.json\") or set `experts` and `experts_active`"
            }
            Missing::MlaLatent => {
                "supply a config.json (model = \"./path/config.json\") that has kv_lora_rank and qk_rope_head_dim"
            }
            Missing::SlidingWindowLayout => {
                "supply a config.json (model = \"./path/config.json\") that has sliding_window and layer_types"
            }
        }
    }
}

impl fmt::Display for Missing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "missing {}: {}", self.what(), self.how_to_supply())
    }
}

impl Record {
    /// Mixture of experts: from the architecture (`*moe*`, mixtral, deepseek_v2/v3, gpt_oss,
    /// llama4, …), a shared-expert size, or an `-A<n>B` / `<n>x<m>B` marker in the name.
    pub fn is_moe(&self) -> bool {
        self.moe
    }

    /// How many times the parameters its own dense shape holds the row counts, when that
    /// makes it a mixture of experts by size alone (above [`csv_rows::MOE_SIZE_RATIO`]:
    /// Step-3.5-Flash, 25.6×).
    pub fn moe_size_ratio(&self) -> Option<f64> {
        csv_rows::moe_size_ratio(&csv_rows::DenseShape {
            params: self.params,
            layers: self.layers,
            hidden: self.hidden,
            heads: self.heads,
            kv_heads: self.kv_heads,
            head_dim: self.head_dim,
            vocab: self.vocab,
            intermediate: self.expert_intermediate.or(self.intermediate),
        })
    }

    /// The layout, when this row's shape is in `data/layouts.csv`.
    pub fn layout(&self) -> Option<&'static Layout> {
        self.shape.and_then(|i| LAYOUTS.get(usize::from(i)))
    }

    /// Total and active parameters from the expert layout: the active count is the
    /// reference model's (a fine-tune or re-upload of one architecture reads the same
    /// weights per token). The total is the row's own count when it is within 20 % of the
    /// reference model's, else the reference's (quantized re-uploads often count packed
    /// tensors). None without a layout.
    pub fn moe_params(&self) -> Option<MoeParams> {
        let shape = self.layout().filter(|s| s.experts.is_some())?;
        let own = self.params.filter(|&p| {
            let (p, r) = (p as f64, shape.params as f64);
            (p - r).abs() <= 0.2 * r && p > shape.active_params as f64
        });
        Some(MoeParams {
            total: own.unwrap_or(shape.params),
            active: shape.active_params,
            total_from_reference: own.is_none(),
        })
    }

    /// Key/value heads: the layout's (from a published config.json) where the row has one,
    /// else the bulk row's.
    pub fn key_value_heads(&self) -> Option<u32> {
        self.layout().and_then(|s| s.kv_heads).or(self.kv_heads)
    }

    /// The attention layout: MLA from the architecture, otherwise from heads vs kv_heads.
    pub fn attention(&self) -> Attention {
        let latent = self.layout().is_some_and(|s| s.kv_lora_rank.is_some());
        if latent || MLA_ARCHITECTURES.contains(&self.architecture) {
            return Attention::Mla;
        }
        match (self.heads, self.key_value_heads()) {
            (Some(h), Some(kv)) if kv == h => Attention::Mha,
            (Some(h), Some(kv)) if kv < h && h % kv == 0 => Attention::Gqa,
            _ => Attention::Unknown,
        }
    }

    /// The facts this record lacks for a full memory estimate, each with how to supply it.
    pub fn missing(&self) -> Vec<Missing> {
        let mut v = Vec::new();
        let shape = self.layout();
        if self.is_moe() && self.moe_params().is_none() {
            v.push(Missing::MoeExpertCounts);
        }
        if self.attention() == Attention::Mla && shape.and_then(|s| s.kv_lora_rank).is_none() {
            v.push(Missing::MlaLatent);
        }
        if SLIDING_WINDOW_ARCHITECTURES.contains(&self.architecture)
            && shape.and_then(|s| s.window).is_none()
        {
            v.push(Missing::SlidingWindowLayout);
        }
        v
    }

    /// The organisation part of the id.
    pub fn org(&self) -> &'static str {
        self.id.split_once('/').map_or("", |(o, _)| o)
    }

    /// The model-name part of the id.
    pub fn name(&self) -> &'static str {
        self.id.split_once('/').map_or(self.id, |(_, n)| n)
    }
}

/// One step taken to resolve a name; renders (Display) to a sentence for `explain`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// The name is a registry id, spelled exactly.
    Exact,
    /// The name matches a registry id up to ASCII case.
    CaseInsensitive { written: String, id: &'static str },
    /// The organisation was renamed; the id was found under the other name.
    OrgRenamed {
        from: &'static str,
        to: &'static str,
        source: &'static str,
    },
    /// The original is absent; the architecture is read from an unquantized re-upload.
    OriginalFromReupload {
        original: String,
        reupload: &'static str,
    },
    /// A quantized re-upload: architecture from `base`, weights in `format`.
    QuantizedReupload {
        written: String,
        base: &'static str,
        format: WeightFormat,
    },
    /// An Ollama library tag mapped to a Hugging Face id.
    OllamaTag {
        tag: String,
        id: &'static str,
        source: &'static str,
    },
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Step::Exact => write!(f, "the name is a registry id"),
            Step::CaseInsensitive { written, id } => {
                write!(
                    f,
                    "{written} matches the registry id {id} up to letter case"
                )
            }
            Step::OrgRenamed { from, to, source } => write!(
                f,
                "the Hugging Face organisation {from} was renamed {to}; the model is looked up under {to} (source: {source})"
            ),
            Step::OriginalFromReupload { original, reupload } => write!(
                f,
                "{original} is absent from the registry (gated originals often are); its architecture is read from the unquantized re-upload {reupload}"
            ),
            Step::QuantizedReupload {
                written,
                base,
                format,
            } => write!(
                f,
                "{written} holds {format} weights (from its name); its architecture is read from {base}"
            ),
            Step::OllamaTag { tag, id, source } => {
                write!(f, "the Ollama tag {tag} is {id} (source: {source})")
            }
        }
    }
}

/// The result of [`resolve`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    pub record: &'static Record,
    /// The steps taken, outermost first (e.g. OllamaTag, then OriginalFromReupload).
    pub steps: Vec<Step>,
    /// The weight format, when the name or the tag says it.
    pub format: Option<WeightFormat>,
}

/// Renamed Hugging Face organisations: (old, new, source). Resolution tries both directions.
pub const ORG_RENAMES: &[(&str, &str, &str)] = &[(
    "THUDM",
    "zai-org",
    "THUDM was renamed zai-org on Hugging Face in July 2025: https://huggingface.co/zai-org; \
     noted in https://github.com/xorbitsai/inference/pull/3870 and \
     https://github.com/hiyouga/LlamaFactory/pull/8770",
)];

/// Longest name [`resolve`] accepts (the longest registry id is 111 bytes).
pub const MAX_NAME_LEN: usize = 256;

/// Number of records.
pub fn len() -> usize {
    RECORDS.len()
}

/// True when the registry is empty (never, for the shipped data).
pub fn is_empty() -> bool {
    RECORDS.is_empty()
}

/// All records, most-downloaded first.
pub fn records() -> &'static [Record] {
    &RECORDS
}

/// Rows of the CSV skipped at build time (malformed or duplicate ids).
pub fn skipped_rows() -> usize {
    SKIPPED_ROWS
}

fn cmp_ascii_ci(a: &str, b: &str) -> Ordering {
    a.bytes()
        .map(|c| c.to_ascii_lowercase())
        .cmp(b.bytes().map(|c| c.to_ascii_lowercase()))
}

/// The records whose id equals `id` up to ASCII case, most-downloaded first.
fn id_range(id: &str) -> &'static [u32] {
    let lo = BY_ID.partition_point(|&i| cmp_ascii_ci(RECORDS[i as usize].id, id) == Ordering::Less);
    let hi = lo
        + BY_ID[lo..]
            .partition_point(|&i| cmp_ascii_ci(RECORDS[i as usize].id, id) == Ordering::Equal);
    &BY_ID[lo..hi]
}

/// Case-insensitive exact lookup by id; an exact-case match wins over other spellings, then the
/// most-downloaded spelling.
pub fn get(id: &str) -> Option<&'static Record> {
    let range = id_range(id);
    range
        .iter()
        .map(|&i| &RECORDS[i as usize])
        .find(|r| r.id == id)
        .or_else(|| range.first().map(|&i| &RECORDS[i as usize]))
}

/// Records whose id contains `text` (ASCII case-insensitive), most-downloaded first.
pub fn search(text: &str) -> impl Iterator<Item = &'static Record> {
    let needle = text.to_ascii_lowercase();
    RECORDS.iter().filter(move |r| contains_ci(r.id, &needle))
}

fn contains_ci(hay: &str, needle_lower: &str) -> bool {
    let n = needle_lower.as_bytes();
    if n.is_empty() {
        return true;
    }
    hay.as_bytes()
        .windows(n.len())
        .any(|w| w.iter().zip(n).all(|(a, b)| a.to_ascii_lowercase() == *b))
}

/// The registry id (or Ollama tag) nearest to `name`, for "did you mean"; None when nothing is
/// close (Jaro–Winkler similarity below 0.85 on the lowercased id and on the name part).
pub fn closest(name: &str) -> Option<&'static str> {
    let name = name.trim();
    if name.is_empty() || name.len() > MAX_NAME_LEN {
        return None;
    }
    let q = name.to_ascii_lowercase();
    let q_name = q.split_once('/').map_or(q.as_str(), |(_, n)| n);
    let mut best: Option<(f64, &'static str)> = None;
    let mut consider = |score: f64, cand: &'static str| {
        if best.is_none_or(|(s, _)| score > s) {
            best = Some((score, cand));
        }
    };
    for r in RECORDS.iter() {
        let id = r.id.to_ascii_lowercase();
        let mut score = strsim::jaro_winkler(&q, &id);
        if q_name.len() != q.len() || !q.contains('/') {
            let n = id.split_once('/').map_or(id.as_str(), |(_, n)| n);
            score = score.max(strsim::jaro_winkler(q_name, n) - 0.01);
        }
        consider(score, r.id);
    }
    for t in ollama_tags() {
        consider(strsim::jaro_winkler(&q, t.tag), t.tag);
    }
    best.filter(|(s, _)| *s >= 0.85).map(|(_, c)| c)
}

/// Normalized model name: the part after the org, ASCII-lowercased, a leading `meta-` removed.
/// Must match `normalize_name` in build.rs.
fn normalize_name(name: &str) -> String {
    let lower = name.to_ascii_lowercase();
    match lower.strip_prefix("meta-") {
        Some(rest) if !rest.is_empty() => rest.to_string(),
        _ => lower,
    }
}

/// Records whose normalized name equals `norm`, most-downloaded first.
fn name_range(norm: &str) -> &'static [(&'static str, u32)] {
    let lo = BY_NAME.partition_point(|(n, _)| *n < norm);
    let hi = lo + BY_NAME[lo..].partition_point(|(n, _)| *n == norm);
    &BY_NAME[lo..hi]
}

/// The org/name syntax check: ASCII letters, digits, `-_.`, exactly one `/`, both parts
/// non-empty. Everything else (spaces, control characters, non-ASCII) is rejected.
fn split_id(name: &str) -> Option<(&str, &str)> {
    let (org, model) = name.split_once('/')?;
    let ok = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    };
    (ok(org) && ok(model)).then_some((org, model))
}

/// The id of the unquantized model a quantized re-upload's name points at
/// (`Qwen/Qwen3-8B-AWQ` → `Qwen/Qwen3-8B`, `bartowski/gemma-2-9b-it-GGUF` →
/// `bartowski/gemma-2-9b-it`), by the suffixes of rule 3; `None` for a name without one.
pub fn unquantized_id(id: &str) -> Option<String> {
    let (org, name) = split_id(id)?;
    let (base, _) = quant::strip_suffix(org, name)?;
    Some(format!("{org}/{base}"))
}

/// Resolves a user-written model name: a Hugging Face id (any case), a renamed organisation,
/// a gated original via an unquantized re-upload, a quantized re-upload, or an Ollama tag.
/// None when nothing matches (use [`closest`] for a suggestion) or the name is malformed.
pub fn resolve(name: &str) -> Option<Resolved> {
    let name = name.trim_matches(|c: char| c.is_ascii_whitespace());
    if name.is_empty() || name.len() > MAX_NAME_LEN || !name.is_ascii() {
        return None;
    }
    if name.bytes().any(|b| b.is_ascii_control() || b == b' ') {
        return None;
    }
    if name.contains('/') {
        return resolve_hf(name, true);
    }
    let tag = ollama::lookup(name)?;
    let mut r = resolve_hf(tag.id, false)?;
    r.steps.insert(
        0,
        Step::OllamaTag {
            tag: tag.tag.to_string(),
            id: tag.id,
            source: tag.source,
        },
    );
    r.format = Some(tag.format.clone());
    Some(r)
}

/// Rules 1–4 of docs/registry.md for an `org/name` id. `allow_quant`: whether rule 3
/// (quantized re-upload) applies.
fn resolve_hf(name: &str, allow_quant: bool) -> Option<Resolved> {
    let (org, model) = split_id(name)?;
    let written_format = quant::format_of(org, model);

    // Rule 1: the id itself, any case. A quantized re-upload in the registry resolves to itself
    // with the format its name says (rule 3, first half).
    if let Some(r) = direct(name) {
        return Some(Resolved {
            record: r.0,
            steps: r.1,
            format: written_format,
        });
    }
    // Rule 2: renamed organisations.
    if let Some(r) = renamed(org, model) {
        return Some(Resolved {
            record: r.0,
            steps: r.1,
            format: written_format,
        });
    }
    // Rule 3, second half: strip the quantization suffix and resolve the base (rules 1, 2, 4).
    if allow_quant && let Some((base_model, format)) = quant::strip_suffix(org, model) {
        let base_id = format!("{org}/{base_model}");
        let mut base = resolve_hf(&base_id, false)?;
        base.steps.insert(
            0,
            Step::QuantizedReupload {
                written: name.to_string(),
                base: base.record.id,
                format: format.clone(),
            },
        );
        base.format = Some(format);
        return Some(base);
    }
    // Rule 4: a gated original, read from an unquantized re-upload of the same model name
    // (trusted re-uploaders first, then by downloads). A quantized name reaching here is the
    // stripped base of a quantized name that still has a suffix: not an original.
    if quant::strip_suffix(org, model).is_some() {
        return None;
    }
    let norm = normalize_name(model);
    let candidates = || {
        name_range(&norm)
            .iter()
            .map(|&(_, i)| &RECORDS[i as usize])
            .filter(|r| quant::is_unquantized_reupload(r))
    };
    // Known verbatim re-uploaders first (most-downloaded among them), then anyone.
    let reupload = candidates()
        .find(|r| {
            quant::TRUSTED_REUPLOADERS
                .iter()
                .any(|o| r.org().eq_ignore_ascii_case(o))
        })
        .or_else(|| candidates().next())?;
    Some(Resolved {
        record: reupload,
        steps: vec![Step::OriginalFromReupload {
            original: name.to_string(),
            reupload: reupload.id,
        }],
        format: None,
    })
}

fn direct(name: &str) -> Option<(&'static Record, Vec<Step>)> {
    let r = get(name)?;
    let step = if r.id == name {
        Step::Exact
    } else {
        Step::CaseInsensitive {
            written: name.to_string(),
            id: r.id,
        }
    };
    Some((r, vec![step]))
}

fn renamed(org: &str, model: &str) -> Option<(&'static Record, Vec<Step>)> {
    for &(old, new, source) in ORG_RENAMES {
        let (from, to) = if org.eq_ignore_ascii_case(old) {
            (old, new)
        } else if org.eq_ignore_ascii_case(new) {
            (new, old)
        } else {
            continue;
        };
        let candidate = format!("{to}/{model}");
        if let Some(r) = get(&candidate) {
            return Some((r, vec![Step::OrgRenamed { from, to, source }]));
        }
    }
    None
}
