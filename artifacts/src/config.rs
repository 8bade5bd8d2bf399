//! Hugging Face `config.json`: dimensions, and the exact parameter count from the tensor shapes
//! that the transformers implementation of each architecture creates.
//!
//! Shapes per family: Hugging Face transformers `models/<family>/modeling_<family>.py`
//! (`LlamaAttention`, `Qwen2Attention` (q/k/v bias), `Qwen3Attention` (q_norm/k_norm),
//! `Gemma2DecoderLayer`/`Gemma3DecoderLayer` (4 norms), `Glm4DecoderLayer` (4 norms),
//! `MixtralSparseMoeBlock`, `Qwen2MoeSparseMoeBlock` (shared expert + shared_expert_gate),
//! `DeepseekV2Attention`/`DeepseekV3Attention` (MLA), `DeepseekV3TopkRouter`
//! (`e_score_correction_bias`), `GptOssAttention` (sinks, biases), `GptOssExperts`
//! (gate_up/down with biases)). Formulas are written out in `docs/artifacts.md`; the figures are
//! checked against published totals in `tests/it/configs.rs`.

use serde_json::{Map, Value};

use crate::error::{ArtifactError, add, mul, sum};
use crate::{Architecture, Attention, QuantConfig, Quantization};

/// Largest config.json accepted (real ones are a few KiB).
pub const MAX_CONFIG_BYTES: u64 = 4 << 20;
/// Largest dimension accepted from any file: 2^40.
pub const MAX_DIM: u64 = 1 << 40;
/// Most layers accepted (the per-layer patterns are walked layer by layer).
pub const MAX_LAYERS: u64 = 100_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    Llama,
    Mistral,
    Mixtral,
    Qwen2,
    Qwen2Moe,
    Qwen3,
    Qwen3Moe,
    /// Qwen3-Next and Qwen3.5 MoE: Qwen3 attention with an output gate on some layers,
    /// Gated DeltaNet on the others, Qwen2-MoE experts with a gated shared expert.
    Qwen3Next,
    Gemma2,
    Gemma3,
    Phi3,
    Glm4,
    DeepseekV2,
    DeepseekV3,
    GptOss,
    Generic,
}

impl Family {
    fn of(model_type: &str) -> Family {
        match model_type {
            "llama" => Family::Llama,
            "mistral" => Family::Mistral,
            "mixtral" => Family::Mixtral,
            "qwen2" => Family::Qwen2,
            "qwen2_moe" => Family::Qwen2Moe,
            "qwen3" => Family::Qwen3,
            "qwen3_moe" => Family::Qwen3Moe,
            "qwen3_next" | "qwen3_5_moe" | "qwen3_5_moe_text" => Family::Qwen3Next,
            "gemma2" => Family::Gemma2,
            "gemma3" | "gemma3_text" => Family::Gemma3,
            "phi3" => Family::Phi3,
            "glm4" => Family::Glm4,
            "deepseek_v2" => Family::DeepseekV2,
            "deepseek_v3" => Family::DeepseekV3,
            "gpt_oss" => Family::GptOss,
            _ => Family::Generic,
        }
    }
}

/// The text model's fields: `text_config` when nested (Gemma 3, multimodal), else the top level.
struct Cfg<'a> {
    top: &'a Map<String, Value>,
    text: &'a Map<String, Value>,
}

impl<'a> Cfg<'a> {
    fn get(&self, key: &str) -> Option<&'a Value> {
        match self.text.get(key) {
            Some(Value::Null) | None => match self.top.get(key) {
                Some(Value::Null) | None => None,
                Some(v) => Some(v),
            },
            Some(v) => Some(v),
        }
    }

    fn dim(&self, key: &str) -> Result<Option<u64>, ArtifactError> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => dim_value(key, v).map(Some),
        }
    }

    fn req(&self, key: &str) -> Result<u64, ArtifactError> {
        self.dim(key)?.ok_or_else(|| {
            ArtifactError::Missing(format!(
                "config.json has no `{key}`; add it or declare the model's dimensions by hand"
            ))
        })
    }

    fn flag(&self, key: &str) -> Result<Option<bool>, ArtifactError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(v) => Err(ArtifactError::Malformed(format!(
                "config.json `{key}` is {}, expected true or false",
                json_kind(v)
            ))),
        }
    }

    fn string(&self, key: &str) -> Option<&'a str> {
        self.get(key).and_then(Value::as_str)
    }
}

/// What a JSON value is, in words, for an error: never the value itself (a file that fails
/// to read as a model may be any JSON file, secrets included).
fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "true or false",
        Value::Number(n) if n.is_f64() => "a number with a fraction",
        Value::Number(n) if n.is_i64() => "a negative number",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

fn dim_value(key: &str, v: &Value) -> Result<u64, ArtifactError> {
    let n = v.as_u64().ok_or_else(|| {
        ArtifactError::Malformed(format!(
            "config.json `{key}` is {}, expected a non-negative whole number",
            json_kind(v)
        ))
    })?;
    if n > MAX_DIM {
        return Err(ArtifactError::TooLarge(format!(
            "config.json `{key}` is over the bound 2^40; is the file a model config?"
        )));
    }
    Ok(n)
}

/// Read the architecture from the text of a `config.json`.
pub fn from_config_json(text: &str) -> Result<Architecture, ArtifactError> {
    if text.len() as u64 > MAX_CONFIG_BYTES {
        return Err(ArtifactError::TooLarge(format!(
            "config.json is {} bytes, over the {MAX_CONFIG_BYTES}-byte bound",
            text.len()
        )));
    }
    let value: Value = serde_json::from_str(text).map_err(|e| {
        ArtifactError::Malformed(format!("config.json is not valid JSON ({e}); fix the file"))
    })?;
    let top = value.as_object().ok_or_else(|| {
        ArtifactError::Malformed("config.json is not a JSON object; fix the file".to_string())
    })?;
    let text = match top.get("text_config") {
        Some(Value::Object(m)) => m,
        _ => top,
    };
    let cfg = Cfg { top, text };
    compute(&cfg)
}

/// Attention projections of one layer.
enum AttnShape {
    Standard {
        qkv_bias: bool,
        o_bias: bool,
        qk_norm: bool,
        sinks: bool,
    },
    Mla {
        q_lora: Option<u64>,
        kv_lora: u64,
        nope: u64,
        rope: u64,
        v: u64,
        bias: bool,
    },
}

/// The mixture-of-experts block of an MoE layer.
struct Moe {
    experts: u64,
    active: u64,
    expert_inter: u64,
    shared_inter: u64,
    shared_gate: bool,
    router_bias: bool,
    score_bias: bool,
    expert_bias: bool,
    moe_layers: u64,
}

/// Read the architecture and count the parameters of the text model in `cfg`.
fn compute(cfg: &Cfg) -> Result<Architecture, ArtifactError> {
    let mut notes = Vec::new();
    let (model_type, family, source) = identify(cfg, &mut notes);
    let d = Dims::read(cfg, family)?;
    let tie = tie_embeddings(cfg, family, &mut notes)?;
    let attention_bias = cfg.flag("attention_bias")?;
    let mlp_bias = cfg.flag("mlp_bias")?.unwrap_or(false);
    let attn = attn_shape(cfg, family, attention_bias)?;

    let moe = moe_block(cfg, family, d.layers, &mut notes)?;
    let dense_layers = d.layers - moe.as_ref().map_or(0, |m| m.moe_layers);
    let dense_inter = dense_intermediate(d.intermediate, dense_layers > 0)?;

    // --- parameter count -------------------------------------------------------------
    let attn_params = attention_params(&attn, d.hidden, d.heads, d.kv_heads, d.head_dim)?;
    let norm_params = mul(&[norms_per_layer(family), d.hidden])?;
    let dense_layer = sum(&[
        attn_params,
        norm_params,
        mlp_params(d.hidden, dense_inter, mlp_bias)?,
    ])?;
    let embed = mul(&[d.vocab, d.hidden])?;
    let total = sum(&[
        embed,
        if tie { 0 } else { embed },
        d.hidden, // final norm
        mul(&[dense_layers, dense_layer])?,
    ])?;
    let (total, active) = match &moe {
        Some(m) => with_experts(m, d.hidden, attn_params, norm_params, total)?,
        None => (total, total),
    };
    let linear = with_linear_layers(cfg, &d, attn_params, (total, active), &mut notes)?;

    // --- windows ---------------------------------------------------------------------
    let (window, local_layers) = sliding(cfg, family, d.layers, &mut notes)?;
    let attention = attention_kind(&d, local_layers);
    let (kv_lora_rank, qk_rope_dim) = mla_dims(&attn, &mut notes);
    checkpoint_notes(cfg, &mut notes)?;

    Ok(Architecture {
        source,
        model_type,
        name: cfg.string("_name_or_path").map(str::to_string),
        params: Some(linear.total),
        active_params: Some(linear.active),
        layers: Some(d.layers),
        hidden: Some(d.hidden),
        intermediate: d.intermediate,
        heads: Some(d.heads),
        kv_heads: Some(if d.is_mla { d.heads } else { d.kv_heads }),
        head_dim: if d.is_mla { None } else { Some(d.head_dim) },
        vocab: Some(d.vocab),
        max_context: cfg.dim("max_position_embeddings")?,
        attention: Some(attention),
        window,
        local_layers,
        linear_layers: linear.layers,
        linear_state: linear.state,
        kv_lora_rank,
        qk_rope_dim,
        experts: moe.as_ref().map(|m| m.experts),
        experts_active: moe.as_ref().map(|m| m.active),
        tie_embeddings: Some(tie),
        weights: None,
        quantization: quantization(cfg.top),
        notes,
    })
}

/// The weight format a config.json declares: `quantization_config` with its `quant_method`
/// (transformers' quantizer configs: `AwqConfig` `bits`, AutoAWQ's older `w_bit`,
/// `GPTQConfig` `bits`, `FineGrainedFP8Config` `weight_block_size`, `Mxfp4Config`,
/// `BitsAndBytesConfig` `load_in_4bit`/`load_in_8bit`, compressed-tensors `config_groups`
/// and `format`, ModelOpt `quant_algo`), else MLX's `quantization` block (`bits`,
/// `group_size`, `mode`). Fields of the wrong type are left out, never an error: the
/// format is a default, and the rest of the file stands without it.
fn quantization(top: &Map<String, Value>) -> Option<Quantization> {
    let lower = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_ascii_lowercase);
    let bits = |v: Option<&Value>| v.and_then(Value::as_u64).filter(|b| (1..=64).contains(b));
    if let Some(Value::Object(q)) = top.get("quantization_config")
        && let Some(method) = lower(q.get("quant_method"))
    {
        let mut c = QuantConfig {
            bits: bits(q.get("bits")).or_else(|| bits(q.get("w_bit"))),
            block: q
                .get("weight_block_size")
                .is_some_and(|b| b.as_array().is_some_and(|a| !a.is_empty())),
            scheme: lower(q.get("format")).or_else(|| lower(q.get("quant_algo"))),
            method,
            ..QuantConfig::default()
        };
        if c.method == "bitsandbytes" {
            let on = |k: &str| q.get(k).and_then(Value::as_bool) == Some(true);
            c.bits = if on("load_in_4bit") {
                Some(4)
            } else if on("load_in_8bit") {
                Some(8)
            } else {
                None
            };
        }
        // compressed-tensors: the first scheme group (`group_0` in the files seen).
        if let Some(Value::Object(groups)) = q.get("config_groups")
            && let Some(Value::Object(group)) = groups.get("group_0").or(groups.values().next())
        {
            if let Some(Value::Object(w)) = group.get("weights") {
                c.bits = bits(w.get("num_bits")).or(c.bits);
                c.float = lower(w.get("type")).as_deref() == Some("float");
                c.block = c.block || lower(w.get("strategy")).as_deref() == Some("block");
            }
            c.activations = group.get("input_activations").is_some_and(|a| !a.is_null());
        }
        return Some(Quantization::Config(c));
    }
    if let Some(Value::Object(q)) = top.get("quantization")
        && let Some(b) = bits(q.get("bits"))
    {
        return Some(Quantization::Config(QuantConfig {
            method: "mlx".to_string(),
            bits: Some(b),
            scheme: lower(q.get("mode")),
            ..QuantConfig::default()
        }));
    }
    None
}

/// The model type, its family and the source line; notes an unknown family.
fn identify(cfg: &Cfg, notes: &mut Vec<String>) -> (Option<String>, Family, String) {
    let model_type = cfg.string("model_type").map(str::to_string);
    let family = model_type
        .as_deref()
        .map(Family::of)
        .unwrap_or(Family::Generic);
    let arch_name = cfg
        .top
        .get("architectures")
        .and_then(Value::as_array)
        .and_then(|a| a.first())
        .and_then(Value::as_str);
    let source = match (arch_name, model_type.as_deref()) {
        (Some(a), Some(m)) => format!("config.json ({a}, model_type {m})"),
        (None, Some(m)) => format!("config.json (model_type {m})"),
        (Some(a), None) => format!("config.json ({a})"),
        (None, None) => "config.json".to_string(),
    };
    if family == Family::Generic {
        notes.push(format!(
            "model_type {} is not one of the known families; counted as a llama-like decoder \
             (q/k/v/o, gated MLP, 2 norms per layer): check params against the checkpoint or \
             declare them",
            model_type.as_deref().unwrap_or("(absent)")
        ));
    }
    (model_type, family, source)
}

/// The core dimensions of the text model, read and checked.
struct Dims {
    family: Family,
    /// DeepSeek V2/V3: multi-head latent attention (no `head_dim`).
    is_mla: bool,
    hidden: u64,
    layers: u64,
    vocab: u64,
    heads: u64,
    kv_heads: u64,
    intermediate: Option<u64>,
    head_dim: u64,
}

impl Dims {
    /// Read hidden size, layers, vocabulary, heads and head size, refusing zeros and
    /// out-of-bound values.
    fn read(cfg: &Cfg, family: Family) -> Result<Dims, ArtifactError> {
        let hidden = cfg.req("hidden_size")?;
        let layers = cfg.req("num_hidden_layers")?;
        let vocab = cfg.req("vocab_size")?;
        let heads = cfg.req("num_attention_heads")?;
        if hidden == 0 || layers == 0 || heads == 0 || vocab == 0 {
            return Err(ArtifactError::Malformed(
                "config.json has a zero hidden_size, num_hidden_layers, num_attention_heads or \
                 vocab_size; fix the file"
                    .to_string(),
            ));
        }
        if layers > MAX_LAYERS {
            return Err(ArtifactError::TooLarge(format!(
                "config.json num_hidden_layers is over the bound {MAX_LAYERS}"
            )));
        }
        let kv_heads = cfg.dim("num_key_value_heads")?.unwrap_or(heads);
        if kv_heads == 0 {
            return Err(ArtifactError::Malformed(
                "config.json num_key_value_heads is 0; fix the file".to_string(),
            ));
        }
        let intermediate = cfg.dim("intermediate_size")?;
        let is_mla = matches!(family, Family::DeepseekV2 | Family::DeepseekV3);
        let head_dim = match cfg.dim("head_dim")? {
            Some(d) if !is_mla => d,
            _ => {
                if hidden % heads != 0 && !is_mla {
                    return Err(ArtifactError::Missing(
                        "config.json has no `head_dim` and hidden_size is not a multiple of \
                         num_attention_heads; add head_dim"
                            .to_string(),
                    ));
                }
                hidden / heads
            }
        };
        Ok(Dims {
            family,
            is_mla,
            hidden,
            layers,
            vocab,
            heads,
            kv_heads,
            intermediate,
            head_dim,
        })
    }
}

/// Whether the embeddings are tied: `tie_word_embeddings`, else the family default (noted).
fn tie_embeddings(
    cfg: &Cfg,
    family: Family,
    notes: &mut Vec<String>,
) -> Result<bool, ArtifactError> {
    let tie_default = matches!(family, Family::Gemma2 | Family::Gemma3);
    Ok(match cfg.flag("tie_word_embeddings")? {
        Some(t) => t,
        None => {
            notes.push(format!(
                "tie_word_embeddings absent: counted as {} (the family default)",
                if tie_default { "tied" } else { "untied" }
            ));
            tie_default
        }
    })
}

/// The attention projections of the family's layers.
fn attn_shape(
    cfg: &Cfg,
    family: Family,
    attention_bias: Option<bool>,
) -> Result<AttnShape, ArtifactError> {
    Ok(match family {
        Family::DeepseekV2 | Family::DeepseekV3 => AttnShape::Mla {
            q_lora: cfg.dim("q_lora_rank")?,
            kv_lora: cfg.req("kv_lora_rank")?,
            nope: cfg.req("qk_nope_head_dim")?,
            rope: cfg.req("qk_rope_head_dim")?,
            v: cfg.req("v_head_dim")?,
            bias: attention_bias.unwrap_or(false),
        },
        Family::Qwen2 | Family::Qwen2Moe => AttnShape::Standard {
            qkv_bias: true,
            o_bias: false,
            qk_norm: false,
            sinks: false,
        },
        Family::Glm4 => AttnShape::Standard {
            qkv_bias: attention_bias.unwrap_or(true),
            o_bias: false,
            qk_norm: false,
            sinks: false,
        },
        Family::GptOss => {
            let b = attention_bias.unwrap_or(true);
            AttnShape::Standard {
                qkv_bias: b,
                o_bias: b,
                qk_norm: false,
                sinks: true,
            }
        }
        Family::Mixtral => AttnShape::Standard {
            qkv_bias: false,
            o_bias: false,
            qk_norm: false,
            sinks: false,
        },
        _ => {
            let b = attention_bias.unwrap_or(false);
            AttnShape::Standard {
                qkv_bias: b,
                o_bias: b,
                qk_norm: matches!(
                    family,
                    Family::Qwen3 | Family::Qwen3Moe | Family::Qwen3Next | Family::Gemma3
                ),
                sinks: false,
            }
        }
    })
}

/// Norms per decoder layer: 4 in Gemma 2/3 and GLM-4, else 2.
fn norms_per_layer(family: Family) -> u64 {
    match family {
        Family::Gemma2 | Family::Gemma3 | Family::Glm4 => 4,
        _ => 2,
    }
}

/// The dense layers' FFN size: `intermediate_size`, required only when there are dense layers.
fn dense_intermediate(intermediate: Option<u64>, needs_dense: bool) -> Result<u64, ArtifactError> {
    match (intermediate, needs_dense) {
        (Some(i), _) => Ok(i),
        (None, false) => Ok(0),
        (None, true) => Err(ArtifactError::Missing(
            "config.json has no `intermediate_size`; add it".to_string(),
        )),
    }
}

/// Parameters of one gated MLP (gate, up, down) of FFN size `inter`, with its biases.
fn mlp_params(hidden: u64, inter: u64, bias: bool) -> Result<u64, ArtifactError> {
    let mut t = mul(&[3, hidden, inter])?;
    if bias {
        t = sum(&[t, mul(&[2, inter])?, hidden])?;
    }
    Ok(t)
}

/// Add the MoE layers to the dense `total`: (total, active), the active count leaving out the
/// idle experts.
fn with_experts(
    m: &Moe,
    hidden: u64,
    attn_params: u64,
    norm_params: u64,
    total: u64,
) -> Result<(u64, u64), ArtifactError> {
    let per_expert = mlp_params(hidden, m.expert_inter, m.expert_bias)?;
    let router = sum(&[
        mul(&[m.experts, hidden])?,
        if m.router_bias { m.experts } else { 0 },
        if m.score_bias { m.experts } else { 0 },
    ])?;
    let shared = sum(&[
        mul(&[3, hidden, m.shared_inter])?,
        if m.shared_gate { hidden } else { 0 },
    ])?;
    let moe_layer = sum(&[
        attn_params,
        norm_params,
        router,
        shared,
        mul(&[m.experts, per_expert])?,
    ])?;
    let total = add(total, mul(&[m.moe_layers, moe_layer])?)?;
    let idle = mul(&[m.experts - m.active, per_expert, m.moe_layers])?;
    let active = total.checked_sub(idle).ok_or_else(|| {
        ArtifactError::Malformed("idle experts exceed the total; fix the config".to_string())
    })?;
    Ok((total, active))
}

/// The parameter counts after the linear-attention layers and the attention output gates.
struct Linear {
    total: u64,
    active: u64,
    /// Layers of linear attention, if any are declared.
    layers: Option<u64>,
    /// Their recurrent state, if declared.
    state: Option<u64>,
}

/// Swap the linear-attention layers' projections in for the attention ones and add the
/// attention output gates, in both of `counts` (total, active).
fn with_linear_layers(
    cfg: &Cfg,
    d: &Dims,
    attn_params: u64,
    counts: (u64, u64),
    notes: &mut Vec<String>,
) -> Result<Linear, ArtifactError> {
    let (total, active) = counts;
    let hidden = d.hidden;
    // Qwen3-Next/3.5: gated attention doubles the query projection; the linear-attention
    // layers have their own projections in place of the attention ones.
    let gate = if d.family == Family::Qwen3Next && cfg.flag("attn_output_gate")? != Some(false) {
        mul(&[hidden, d.heads, d.head_dim])?
    } else {
        0
    };
    let (linear_layers, linear_state) = linear_attention(cfg, d.layers, notes)?;
    let linear = linear_layers.unwrap_or(0);
    let attention_layers = d.layers - linear;
    let linear_params = if linear > 0 {
        linear_layer_params(cfg, hidden)?
    } else {
        0
    };
    // Every layer above counted `attn_params`: swap the linear layers' in, add the gates.
    let swap = |n: u64| -> Result<u64, ArtifactError> {
        let n = add(n, mul(&[attention_layers, gate])?)?;
        add(n, mul(&[linear, linear_params])?)?
            .checked_sub(mul(&[linear, attn_params])?)
            .ok_or_else(|| {
                ArtifactError::Malformed("linear layers exceed the total; fix the config".into())
            })
    };
    Ok(Linear {
        total: swap(total)?,
        active: swap(active)?,
        layers: linear_layers,
        state: linear_state,
    })
}

/// Parameters of one Gated DeltaNet (linear-attention) layer's projections.
fn linear_layer_params(cfg: &Cfg, hidden: u64) -> Result<u64, ArtifactError> {
    let kd = mul(&[
        cfg.req("linear_num_key_heads")?,
        cfg.req("linear_key_head_dim")?,
    ])?;
    let value_heads = cfg.req("linear_num_value_heads")?;
    let vd = mul(&[value_heads, cfg.req("linear_value_head_dim")?])?;
    // q, k, v, z, b, a projections in; the output projection; the per-head decay and
    // time step; the convolution over q, k, v.
    let kernel = cfg.dim("linear_conv_kernel_dim")?.unwrap_or(4);
    sum(&[
        mul(&[
            hidden,
            sum(&[mul(&[2, kd])?, mul(&[2, vd])?, mul(&[2, value_heads])?])?,
        ])?,
        mul(&[vd, hidden])?,
        mul(&[2, value_heads])?,
        mul(&[kernel, sum(&[mul(&[2, kd])?, vd])?])?,
    ])
}

/// The attention kind: MLA, hybrid (some sliding-window layers), GQA or MHA.
fn attention_kind(d: &Dims, local_layers: Option<u64>) -> Attention {
    if d.is_mla {
        Attention::Mla
    } else if matches!(local_layers, Some(l) if l > 0 && l < d.layers) {
        Attention::Hybrid
    } else if d.kv_heads < d.heads {
        Attention::Gqa
    } else {
        Attention::Mha
    }
}

/// MLA's (kv_lora_rank, qk_rope_dim), noting its head sizes; (None, None) otherwise.
fn mla_dims(attn: &AttnShape, notes: &mut Vec<String>) -> (Option<u64>, Option<u64>) {
    match attn {
        AttnShape::Mla {
            kv_lora,
            rope,
            nope,
            v,
            ..
        } => {
            notes.push(format!(
                "MLA: qk_nope_head_dim {nope} + qk_rope_head_dim {rope}, v_head_dim {v}; \
                 head_dim left empty"
            ));
            (Some(*kv_lora), Some(*rope))
        }
        AttnShape::Standard { .. } => (None, None),
    }
}

/// Notes on what the count leaves out: prediction layers, a vision tower, quantization.
fn checkpoint_notes(cfg: &Cfg, notes: &mut Vec<String>) -> Result<(), ArtifactError> {
    if let Some(n) = cfg.dim("num_nextn_predict_layers")?.filter(|&n| n > 0) {
        notes.push(format!(
            "{n} multi-token-prediction layer(s) in the checkpoint are not counted in params"
        ));
    }
    if cfg.top.contains_key("vision_config") {
        notes.push(
            "multimodal config: only the text decoder is counted (vision tower excluded)"
                .to_string(),
        );
    }
    if let Some(q) = cfg.get("quantization_config") {
        let method = q
            .get("quant_method")
            .and_then(Value::as_str)
            .unwrap_or("unknown");
        notes.push(format!(
            "quantization_config (quant_method {method}): params count the model's weights; the \
             stored bytes come from the safetensors files"
        ));
    }
    Ok(())
}

fn attention_params(
    attn: &AttnShape,
    hidden: u64,
    heads: u64,
    kv_heads: u64,
    head_dim: u64,
) -> Result<u64, ArtifactError> {
    match *attn {
        AttnShape::Standard {
            qkv_bias,
            o_bias,
            qk_norm,
            sinks,
        } => {
            let q = mul(&[hidden, heads, head_dim])?;
            let kv = mul(&[2, hidden, kv_heads, head_dim])?;
            let o = mul(&[heads, head_dim, hidden])?;
            let qkv_b = if qkv_bias {
                add(mul(&[heads, head_dim])?, mul(&[2, kv_heads, head_dim])?)?
            } else {
                0
            };
            sum(&[
                q,
                kv,
                o,
                qkv_b,
                if o_bias { hidden } else { 0 },
                if qk_norm { mul(&[2, head_dim])? } else { 0 },
                if sinks { heads } else { 0 },
            ])
        }
        AttnShape::Mla {
            q_lora,
            kv_lora,
            nope,
            rope,
            v,
            bias,
        } => {
            let qk_head = add(nope, rope)?;
            let q = match q_lora {
                // q_a_proj, q_a_layernorm, q_b_proj
                Some(r) => sum(&[
                    mul(&[hidden, r])?,
                    r,
                    mul(&[r, heads, qk_head])?,
                    if bias { r } else { 0 },
                ])?,
                // q_proj directly (DeepSeek-V2-Lite: q_lora_rank null)
                None => mul(&[hidden, heads, qk_head])?,
            };
            let kv_a_out = add(kv_lora, rope)?;
            sum(&[
                q,
                mul(&[hidden, kv_a_out])?,       // kv_a_proj_with_mqa
                if bias { kv_a_out } else { 0 }, // its bias
                kv_lora,                         // kv_a_layernorm
                mul(&[kv_lora, heads, add(nope, v)?])?, // kv_b_proj
                mul(&[heads, v, hidden])?,       // o_proj
                if bias { hidden } else { 0 },
            ])
        }
    }
}

fn moe_block(
    cfg: &Cfg,
    family: Family,
    layers: u64,
    notes: &mut Vec<String>,
) -> Result<Option<Moe>, ArtifactError> {
    let nonzero = |v: Option<u64>| v.filter(|&n| n > 0);
    let moe = match family {
        Family::Mixtral | Family::GptOss => {
            let experts = cfg.req("num_local_experts")?;
            let active = match cfg.dim("num_experts_per_tok")? {
                Some(a) => a,
                None => cfg.req("experts_per_token")?,
            };
            let gpt = family == Family::GptOss;
            Some(Moe {
                experts,
                active,
                expert_inter: cfg.req("intermediate_size")?,
                shared_inter: 0,
                shared_gate: false,
                router_bias: gpt,
                score_bias: false,
                expert_bias: gpt,
                moe_layers: layers,
            })
        }
        Family::Qwen2Moe | Family::Qwen3Moe | Family::Qwen3Next => {
            match nonzero(cfg.dim("num_experts")?) {
                None => None,
                Some(experts) => {
                    let step = cfg.dim("decoder_sparse_step")?.unwrap_or(1);
                    let mlp_only = index_list(cfg, "mlp_only_layers", layers)?;
                    let moe_layers = (0..layers)
                        .filter(|i| !mlp_only.contains(i) && step > 0 && (i + 1) % step == 0)
                        .count() as u64;
                    let qwen2 = matches!(family, Family::Qwen2Moe | Family::Qwen3Next);
                    let shared_inter = if qwen2 {
                        cfg.dim("shared_expert_intermediate_size")?.unwrap_or(0)
                    } else {
                        0
                    };
                    Some(Moe {
                        experts,
                        active: cfg.req("num_experts_per_tok")?,
                        expert_inter: cfg.req("moe_intermediate_size")?,
                        shared_inter,
                        shared_gate: qwen2 && shared_inter > 0,
                        router_bias: false,
                        score_bias: false,
                        expert_bias: false,
                        moe_layers,
                    })
                }
            }
        }
        Family::DeepseekV2 | Family::DeepseekV3 => match nonzero(cfg.dim("n_routed_experts")?) {
            None => None,
            Some(experts) => {
                let first_dense = cfg.dim("first_k_dense_replace")?.unwrap_or(0);
                let freq = cfg.dim("moe_layer_freq")?.unwrap_or(1).max(1);
                let moe_layers = (0..layers)
                    .filter(|i| *i >= first_dense && i % freq == 0)
                    .count() as u64;
                let expert_inter = cfg.req("moe_intermediate_size")?;
                let shared = cfg.dim("n_shared_experts")?.unwrap_or(0);
                Some(Moe {
                    experts,
                    active: cfg.req("num_experts_per_tok")?,
                    expert_inter,
                    shared_inter: mul(&[shared, expert_inter])?,
                    shared_gate: false,
                    router_bias: false,
                    score_bias: cfg.string("topk_method") == Some("noaux_tc"),
                    expert_bias: false,
                    moe_layers,
                })
            }
        },
        _ => {
            let experts = nonzero(cfg.dim("num_local_experts")?)
                .or(nonzero(cfg.dim("num_experts")?))
                .or(nonzero(cfg.dim("n_routed_experts")?));
            if let Some(e) = experts {
                notes.push(format!(
                    "config declares {e} experts but the family is not known: the count treats \
                     every layer as dense, so params is too low; declare params/active_params"
                ));
            }
            None
        }
    };
    if let Some(m) = &moe {
        if m.active > m.experts || m.active == 0 {
            return Err(ArtifactError::Malformed(
                "config.json routes more experts per token than it has, or none \
                 (num_experts_per_tok must be 1 to the number of experts); fix the file"
                    .to_string(),
            ));
        }
        notes.push(format!(
            "MoE: {} of {} layers sparse, expert FFN size {}{}",
            m.moe_layers,
            layers,
            m.expert_inter,
            if m.shared_inter > 0 {
                format!(", shared experts' FFN size {}", m.shared_inter)
            } else {
                String::new()
            }
        ));
    }
    Ok(moe)
}

/// A list of layer indices (`mlp_only_layers`), each below `layers`.
fn index_list(cfg: &Cfg, key: &str, layers: u64) -> Result<Vec<u64>, ArtifactError> {
    match cfg.get(key) {
        None => Ok(Vec::new()),
        Some(Value::Array(items)) => {
            if items.len() as u64 > layers {
                return Err(ArtifactError::Malformed(format!(
                    "config.json `{key}` lists more entries than there are layers"
                )));
            }
            items
                .iter()
                .map(|v| {
                    let i = dim_value(key, v)?;
                    if i >= layers {
                        return Err(ArtifactError::Malformed(format!(
                            "config.json `{key}` names a layer past the last one"
                        )));
                    }
                    Ok(i)
                })
                .collect()
        }
        Some(v) => Err(ArtifactError::Malformed(format!(
            "config.json `{key}` is {}, expected a list of layer indices",
            json_kind(v)
        ))),
    }
}

/// Gated DeltaNet layers (Qwen3-Next, Qwen3.5: `layer_types` entries `linear_attention`, or
/// every layer but each `full_attention_interval`-th) and the bytes of one layer's state per
/// sequence: value heads × key dim × value dim in `mamba_ssm_dtype` (4 bytes for float32,
/// else 2), plus the convolution state, (kernel − 1) × (2 × key heads × key dim + value
/// heads × value dim) × 2 bytes (transformers `Qwen3NextGatedDeltaNet`).
fn linear_attention(
    cfg: &Cfg,
    layers: u64,
    notes: &mut Vec<String>,
) -> Result<(Option<u64>, Option<u64>), ArtifactError> {
    let Some(value_heads) = cfg.dim("linear_num_value_heads")? else {
        return Ok((None, None));
    };
    let linear = match cfg.get("layer_types") {
        Some(Value::Array(items)) => items
            .iter()
            .filter(|t| t.as_str() == Some("linear_attention"))
            .count() as u64,
        _ => match cfg.dim("full_attention_interval")? {
            Some(interval) if interval > 0 => layers - layers / interval,
            _ => return Ok((None, None)),
        },
    };
    if linear == 0 || linear >= layers {
        return Ok((None, None));
    }
    let key_heads = cfg.req("linear_num_key_heads")?;
    let key_dim = cfg.req("linear_key_head_dim")?;
    let value_dim = cfg.req("linear_value_head_dim")?;
    let kernel = cfg.dim("linear_conv_kernel_dim")?.unwrap_or(4).max(1);
    let ssm_bytes = if cfg.string("mamba_ssm_dtype") == Some("float32") {
        4
    } else {
        2
    };
    let recurrent = mul(&[value_heads, key_dim, value_dim, ssm_bytes])?;
    let conv_dim = sum(&[
        mul(&[2, key_heads, key_dim])?,
        mul(&[value_heads, value_dim])?,
    ])?;
    let state = add(recurrent, mul(&[kernel - 1, conv_dim, 2])?)?;
    notes.push(format!(
        "{linear} of {layers} layers use linear attention (Gated DeltaNet): {state} bytes of state per sequence each, no KV cache"
    ));
    Ok((Some(linear), Some(state)))
}

/// `(window, local_layers)` from `layer_types`, the family's pattern or `sliding_window`.
fn sliding(
    cfg: &Cfg,
    family: Family,
    layers: u64,
    notes: &mut Vec<String>,
) -> Result<(Option<u64>, Option<u64>), ArtifactError> {
    let window = cfg.dim("sliding_window")?;
    let from_types = match cfg.get("layer_types") {
        None => None,
        Some(Value::Array(items)) => {
            if items.len() as u64 != layers {
                return Err(ArtifactError::Malformed(
                    "config.json `layer_types` has not one entry per layer \
                     (num_hidden_layers); fix the file"
                        .to_string(),
                ));
            }
            let mut local = 0u64;
            for t in items {
                match t.as_str() {
                    Some("sliding_attention") => local += 1,
                    Some("full_attention") => {}
                    Some(other) => {
                        notes.push(format!(
                            "layer type `{other}` is not sliding/full attention; counted as full"
                        ));
                    }
                    None => {
                        return Err(ArtifactError::Malformed(
                            "config.json `layer_types` holds a non-string".to_string(),
                        ));
                    }
                }
            }
            Some(local)
        }
        Some(_) => {
            return Err(ArtifactError::Malformed(
                "config.json `layer_types` is not a list".to_string(),
            ));
        }
    };
    let Some(w) = window else {
        return Ok((None, None));
    };
    let local = match family {
        Family::Qwen2 | Family::Qwen2Moe | Family::Qwen3 | Family::Qwen3Moe | Family::Qwen3Next => {
            if cfg.flag("use_sliding_window")? != Some(true) {
                return Ok((None, None));
            }
            match from_types {
                Some(l) => l,
                // transformers Qwen2: layer i slides when i >= max_window_layers
                None => layers - cfg.dim("max_window_layers")?.unwrap_or(layers).min(layers),
            }
        }
        // Gemma 2: even layers slide (`is_sliding = not bool(layer_idx % 2)`)
        Family::Gemma2 => from_types.unwrap_or(layers.div_ceil(2)),
        // Gemma 3: every `sliding_window_pattern`-th layer is global
        Family::Gemma3 => match from_types {
            Some(l) => l,
            None => {
                let p = cfg.dim("sliding_window_pattern")?.unwrap_or(6);
                layers - layers.checked_div(p).unwrap_or(0)
            }
        },
        // gpt-oss default layer_types: even layers slide
        Family::GptOss => from_types.unwrap_or(layers.div_ceil(2)),
        _ => match from_types {
            Some(l) => l,
            None => {
                notes.push(format!(
                    "sliding_window {w} with no layer_types: every layer taken as sliding"
                ));
                layers
            }
        },
    };
    if local == 0 {
        return Ok((None, Some(0)));
    }
    Ok((Some(w), Some(local)))
}
