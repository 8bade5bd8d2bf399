//! The figures a deployment exposes: memory, fit, speed and cost.
//!
//! PRELIMINARY. The memory terms follow ../shared/design/estimation.md (weights from the
//! model's files table or params × bpw, KV per attention kind, tensor-parallel head
//! split with replication, engine overhead and utilization). The speed and cost terms
//! are PLACEHOLDERS until the speed model is fitted to the calibration data: fixed
//! efficiencies (decode 0.7 of bandwidth, prefill 0.4 of dense BF16). docs/estimation.md
//! says which is which.

use super::entry::Entry;
use super::{EvalError, Properties, Value};
use crate::units::{Dim, Quantity};

/// Everything the estimate reads, resolved from the deployment's fields.
pub struct Inputs<'a, 'db> {
    pub model: &'a Entry<'db>,
    pub model_name: &'a str,
    pub quant: &'a Entry<'db>,
    pub quant_name: &'a str,
    pub kv: &'a Entry<'db>,
    pub engine: &'a Entry<'db>,
    pub engine_name: &'a str,
    pub gpu: &'a Entry<'db>,
    pub gpu_name: &'a str,
    pub context: u64,
    pub seqs: u64,
    pub count: u64,
    pub replicas: u64,
    pub memory_utilization: Option<f64>,
    pub prompt: Option<f64>,
}

/// Placeholder decode efficiency: the share of memory bandwidth a decode step achieves.
pub const DECODE_EFFICIENCY: f64 = 0.7;
/// Placeholder prefill efficiency: the share of dense BF16 throughput prefill achieves.
pub const PREFILL_EFFICIENCY: f64 = 0.4;
/// Prompt length assumed for `ttft` when the deployment has no workload.
pub const DEFAULT_PROMPT: f64 = 2048.0;

fn missing(what: String) -> EvalError {
    EvalError::Missing(what)
}

fn need(entry: &Entry<'_>, entry_name: &str, field: &str) -> Result<f64, EvalError> {
    entry
        .number(field)
        .ok_or_else(|| missing(format!("`{entry_name}` has no `{field}`")))
}

/// The memory model, in exact bytes where the inputs are exact.
struct Memory {
    weights: f64,
    /// Bytes of KV per token of context for one sequence, over all layers, split as
    /// (layers that hold every token, layers that hold at most `window` tokens).
    kv_global: f64,
    kv_local: f64,
    window: f64,
    /// Share of the KV cache one GPU holds under tensor parallelism.
    kv_share: f64,
    overhead: f64,
    usable: Option<f64>,
}

impl Memory {
    fn kv_total(&self, context: f64, seqs: f64) -> f64 {
        (self.kv_global * context + self.kv_local * context.min(self.window)) * seqs
    }

    fn per_gpu(&self, context: f64, seqs: f64, count: f64) -> f64 {
        self.weights / count + self.kv_total(context, seqs) * self.kv_share + self.overhead
    }
}

fn memory(inputs: &Inputs<'_, '_>) -> Result<Memory, EvalError> {
    let model = inputs.model;
    let name = inputs.model_name;
    let weights = match model.files.get(inputs.quant_name) {
        Some(bytes) => *bytes as f64,
        None => {
            let params = need(model, name, "params")?;
            let bpw = need(inputs.quant, inputs.quant_name, "bpw")?;
            (params * bpw / 8.0).round()
        }
    };
    let layers = need(model, name, "layers")?;
    let heads = model.number("heads");
    let kv_heads = model.number("kv_heads").or(heads);
    let kv_bytes = need(inputs.kv, "kv_cache", "bytes")?;
    let attention = match model.fields.get("attention") {
        Some(Value::Symbol(kind)) => kind.as_str(),
        _ => "gqa",
    };
    let count = inputs.count as f64;
    let (per_layer, kv_share) = if attention == "mla" {
        let rank = need(model, name, "kv_lora_rank")?;
        let rope = need(model, name, "qk_rope_dim")?;
        // MLA's latent cache has no heads to split: every GPU holds all of it.
        ((rank + rope) * kv_bytes, 1.0)
    } else {
        let kv_heads = kv_heads.ok_or_else(|| missing(format!("`{name}` has no `kv_heads`")))?;
        let head_dim = match model.number("head_dim") {
            Some(dim) => dim,
            None => {
                let hidden = need(model, name, "hidden")?;
                let heads = heads.ok_or_else(|| missing(format!("`{name}` has no `heads`")))?;
                hidden / heads
            }
        };
        // A KV head is never split across GPUs: with fewer heads than GPUs every GPU
        // holds one whole head (replication).
        let per_gpu_heads = (kv_heads / count).ceil().max(1.0);
        (
            2.0 * kv_heads * head_dim * kv_bytes,
            per_gpu_heads / kv_heads,
        )
    };
    let (local_layers, window) = if attention == "hybrid" {
        (
            model.number("local_layers").unwrap_or(0.0).min(layers),
            model.number("window").unwrap_or(f64::INFINITY),
        )
    } else {
        (0.0, f64::INFINITY)
    };
    let overhead = need(inputs.engine, inputs.engine_name, "overhead")?
        + inputs.engine.number("overhead_ratio").unwrap_or(0.0) * weights / count;
    let utilization = inputs
        .memory_utilization
        .or_else(|| inputs.engine.number("utilization"))
        .unwrap_or(1.0);
    let usable = inputs
        .gpu
        .number("memory")
        .map(|m| (m * utilization).floor());
    Ok(Memory {
        weights,
        kv_global: per_layer * (layers - local_layers),
        kv_local: per_layer * local_layers,
        window,
        kv_share,
        overhead: overhead.round(),
        usable,
    })
}

fn bytes(value: f64) -> Value {
    Value::Q(Quantity::bytes(value.round() as i128))
}

/// Computes every property; a figure that cannot be computed says what is missing.
pub fn estimate(inputs: &Inputs<'_, '_>) -> Properties {
    let mut props = Properties::new();
    let context = inputs.context as f64;
    let seqs = inputs.seqs as f64;
    let count = inputs.count as f64;
    let engines_ok = match inputs.quant.fields.get("engines") {
        Some(Value::List(engines)) => engines
            .iter()
            .any(|e| matches!(e, Value::Ref(_, n) if n == inputs.engine_name)),
        _ => true,
    };
    props.insert("quant_runs_on_engine", Ok(Value::Bool(engines_ok)));
    let mem = match memory(inputs) {
        Ok(mem) => mem,
        Err(error) => {
            for prop in super::schema::PROPERTIES {
                props.entry(prop.name).or_insert_with(|| Err(error.clone()));
            }
            return props;
        }
    };
    let per_gpu = mem.per_gpu(context, seqs, count);
    let kv = mem.kv_total(context, seqs);
    props.insert("weights_memory", Ok(bytes(mem.weights)));
    props.insert("kv_memory", Ok(bytes(kv)));
    props.insert("overhead_memory", Ok(bytes(mem.overhead)));
    props.insert(
        "total_memory",
        Ok(bytes(mem.weights + kv + mem.overhead * count)),
    );
    props.insert("memory_per_gpu", Ok(bytes(per_gpu)));
    let no_memory = || missing(format!("`{}` has no `memory`", inputs.gpu_name));
    match mem.usable {
        Some(usable) => {
            let utilization = per_gpu / usable;
            props.insert("usable_memory", Ok(bytes(usable)));
            props.insert("utilization", Ok(Value::Q(Quantity::ratio(utilization))));
            props.insert("headroom", Ok(Value::Q(Quantity::ratio(1.0 - utilization))));
            props.insert("fits", Ok(Value::Bool(per_gpu <= usable)));
            let window = inputs.model.number("max_context").unwrap_or(f64::INFINITY);
            let largest = largest_context(|c| mem.per_gpu(c, seqs, count) <= usable);
            props.insert(
                "max_context",
                Ok(Value::Q(Quantity::real(largest.min(window), Dim::TOKENS))),
            );
            props.insert(
                "fit_advice",
                Ok(Value::Str(fit_advice(
                    inputs,
                    &mem,
                    usable,
                    largest.min(window),
                ))),
            );
        }
        None => {
            for name in [
                "usable_memory",
                "utilization",
                "headroom",
                "fits",
                "max_context",
                "fit_advice",
            ] {
                props.insert(name, Err(no_memory()));
            }
        }
    }
    speed_and_cost(inputs, &mem, &mut props);
    props
}

/// The concrete change that makes a deployment fit, or gives it room: a shorter
/// context when one fits, else the tensor-parallel count whose share of the weights
/// fits, else a larger GPU.
fn fit_advice(inputs: &Inputs<'_, '_>, mem: &Memory, usable: f64, largest: f64) -> String {
    let seqs = inputs.seqs as f64;
    let context = inputs.context as f64;
    if largest >= 1.0 {
        // Written as the user would write the field: whole kibi-tokens when possible.
        let tokens = if largest >= 1024.0 {
            format!("{}k", (largest / 1024.0).floor())
        } else {
            format!("{largest}")
        };
        return format!(
            "context = {tokens} fits (the largest context is {} tokens per sequence with seqs = {})",
            Quantity::real(largest, Dim::TOKENS).display(),
            inputs.seqs
        );
    }
    for count in [2u64, 4, 8] {
        if count > inputs.count && mem.per_gpu(context, seqs, count as f64) <= usable {
            return format!(
                "count = {count} fits: tensor parallelism splits the weights over {count} GPUs"
            );
        }
    }
    let need = mem.per_gpu(context, seqs, inputs.count as f64);
    format!(
        "even a 1-token context needs more than the {} usable on {}: choose a smaller quant or a GPU with more than {} of memory",
        Quantity::bytes(usable as i128).display(),
        inputs.gpu_name,
        Quantity::bytes(need as i128).display()
    )
}

/// The largest whole context (tokens) for which `fits` holds, by bisection over a
/// monotone predicate; 0 when not even one token fits.
fn largest_context(fits: impl Fn(f64) -> bool) -> f64 {
    if !fits(1.0) {
        return 0.0;
    }
    let (mut low, mut high) = (1.0_f64, 2.0_f64);
    while fits(high) && high < 1e12 {
        low = high;
        high *= 2.0;
    }
    while high - low > 1.0 {
        let mid = ((low + high) / 2.0).floor();
        if fits(mid) {
            low = mid;
        } else {
            high = mid;
        }
    }
    low
}

/// PLACEHOLDER speed and cost terms (see the module comment).
fn speed_and_cost(inputs: &Inputs<'_, '_>, mem: &Memory, props: &mut Properties) {
    let seqs = inputs.seqs as f64;
    let count = inputs.count as f64;
    let rate = |v: f64| Value::Q(Quantity::real(v, Dim::TOKEN_RATE));
    let decode = inputs.gpu.number("bandwidth").map(|bandwidth| {
        // One decode step reads this GPU's weights and, on average, half of every
        // sequence's full-context KV.
        let step_bytes =
            mem.weights / count + mem.kv_total(inputs.context as f64 / 2.0, seqs) * mem.kv_share;
        DECODE_EFFICIENCY * bandwidth / step_bytes
    });
    let no = |field: &str| missing(format!("`{}` has no `{field}`", inputs.gpu_name));
    props.insert(
        "decode_tps",
        decode.map(rate).ok_or_else(|| no("bandwidth")),
    );
    props.insert(
        "throughput",
        decode
            .map(|d| rate(d * seqs))
            .ok_or_else(|| no("bandwidth")),
    );
    let active = inputs
        .model
        .number("active_params")
        .or_else(|| inputs.model.number("params"));
    let prefill = match (inputs.gpu.number("bf16"), active) {
        (Some(peak), Some(active)) => Ok(PREFILL_EFFICIENCY * peak * count / (2.0 * active)),
        (None, _) => Err(no("bf16")),
        (_, None) => Err(missing(format!("`{}` has no `params`", inputs.model_name))),
    };
    props.insert("prefill_tps", prefill.clone().map(rate));
    let prompt = inputs
        .prompt
        .unwrap_or_else(|| DEFAULT_PROMPT.min(inputs.context as f64));
    props.insert(
        "ttft",
        prefill.map(|p| Value::Q(Quantity::real(prompt / p, Dim::SECONDS))),
    );
    let hourly = inputs
        .gpu
        .number("price")
        .map(|price| price * count * inputs.replicas as f64)
        .ok_or_else(|| no("price"));
    props.insert(
        "cost_per_hour",
        hourly
            .clone()
            .map(|h| Value::Q(Quantity::real(h, Dim::HOURLY))),
    );
    let per_token = match (hourly, decode) {
        (Ok(h), Some(d)) => Ok(Value::Q(Quantity::real(
            h / (d * seqs * inputs.replicas as f64),
            Dim::PER_TOKEN,
        ))),
        (Err(e), _) => Err(e),
        (_, None) => Err(no("bandwidth")),
    };
    props.insert("cost_per_mtok", per_token);
}
