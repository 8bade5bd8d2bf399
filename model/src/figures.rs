//! The figures of a deployment, typed: one field per property, each a value or the
//! reason it has none. [`PROPERTIES`] is the language's one table of property names: it
//! maps each name to its field, type, dependencies and documentation (a test checks it
//! against docs/language.md). Figures are kept in SI base units (bytes, seconds, $/s,
//! $/token); conversions to GiB, $/h or $/Mtok happen once, when a value is displayed.

use super::schema::FieldTy;
use super::value::{EvalError, Value};
use crate::units::{Dim, MAX_MAGNITUDE, Num, Quantity};

/// A figure, or why it could not be computed (a missing input, an invalid one, a result
/// that is not a finite number).
pub type Figure<T> = Result<T, EvalError>;

/// A property a deployment exposes to `require`, `when`, messages and every output.
pub struct Property {
    pub name: &'static str,
    pub ty: FieldTy,
    /// The deployment fields the figure depends on: labelled when a rule reads it.
    pub deps: &'static [&'static str],
    pub doc: &'static str,
    /// The property's value in a deployment's figures.
    pub get: fn(&Figures) -> Figure<Value>,
}

const MEM: &[&str] = &[
    "model", "quant", "context", "seqs", "kv_cache", "engine", "count",
];
const FIT: &[&str] = &[
    "model",
    "quant",
    "context",
    "seqs",
    "kv_cache",
    "engine",
    "gpu",
    "count",
    "memory_utilization",
    "offload",
    "host",
    "host_memory",
];
const SPEED: &[&str] = &[
    "model",
    "quant",
    "gpu",
    "count",
    "context",
    "seqs",
    "kv_cache",
    "offload",
    "host",
    "host_bandwidth",
];
const PRICE: &[&str] = &[
    "gpu", "count", "replicas", "pricing", "spot", "provider", "region", "offer", "owned",
];
const ENGINE_MEM: &[&str] = &[
    "engine",
    "model",
    "quant",
    "count",
    "seqs",
    "gpu",
    "enforce_eager",
    "batched_tokens",
];
const STARTUP: &[&str] = &[
    "model",
    "quant",
    "context",
    "kv_cache",
    "engine",
    "gpu",
    "count",
    "seqs",
    "memory_utilization",
    "enforce_eager",
    "batched_tokens",
];
const OFFLOAD: &[&str] = &[
    "model", "quant", "context", "seqs", "kv_cache", "engine", "gpu", "count", "offload",
];

/// A figure's language value, by the property's type: bytes exact when they fit an
/// integer, ratios, counts, quantities in their dimension.
trait IntoValue {
    fn into_value(self, ty: FieldTy) -> Value;
}

impl IntoValue for f64 {
    fn into_value(self, ty: FieldTy) -> Value {
        match ty {
            FieldTy::Q(dim) if dim == Dim::BYTES => bytes(self),
            FieldTy::Q(dim) => Value::Q(Quantity::real(self, dim)),
            FieldTy::Ratio => Value::Q(Quantity::ratio(self)),
            // Kept as a real when it is not a sane count, so that an overflow is seen.
            _ if self.fract() == 0.0 && self.abs() < 1e36 => {
                Value::Q(Quantity::new(Num::Int(self as i128), Dim::NONE))
            }
            _ => Value::Q(Quantity::new(Num::Real(self), Dim::NONE)),
        }
    }
}

impl IntoValue for bool {
    fn into_value(self, _: FieldTy) -> Value {
        Value::Bool(self)
    }
}

impl IntoValue for String {
    fn into_value(self, _: FieldTy) -> Value {
        Value::Str(self)
    }
}

/// A byte figure: exact when it fits an integer, else kept as a real so that an overflow
/// stays visible (a saturated integer would look like a plausible size).
fn bytes(value: f64) -> Value {
    if value.abs() < 1e36 {
        Value::Q(Quantity::bytes(value.round() as i128))
    } else {
        Value::Q(Quantity::new(Num::Real(value), Dim::BYTES))
    }
}

/// Turns a figure that is not a finite number into an error naming it, so that nothing
/// reads an infinite or undefined value as if it were a result.
trait Finite: Sized {
    fn reject_non_finite(figure: &mut Figure<Self>, name: &str);
}

impl Finite for f64 {
    fn reject_non_finite(figure: &mut Figure<f64>, name: &str) {
        // The language's own bound (±1e300), so that a figure stays finite in every
        // unit it is printed in.
        if let Ok(value) = figure
            && (value.is_nan() || value.abs() > MAX_MAGNITUDE)
        {
            *figure = Err(EvalError::NotFinite {
                span: None,
                figure: Some(name.to_string()),
                nan: value.is_nan(),
            });
        }
    }
}

impl Finite for bool {
    fn reject_non_finite(_: &mut Figure<bool>, _: &str) {}
}

impl Finite for String {
    fn reject_non_finite(_: &mut Figure<String>, _: &str) {}
}

/// Declares the figures once: the struct's fields and the property table come from the
/// same list, so that they cannot drift apart.
macro_rules! figures {
    ($($name:ident: $t:ty, $ty:expr, $deps:expr, $doc:literal;)*) => {
        /// Every figure of one deployment configuration.
        #[derive(Clone, Debug, PartialEq)]
        pub struct Figures {
            $(#[doc = $doc] pub $name: Figure<$t>,)*
        }

        impl Figures {
            /// Figures of which none could be computed, for one reason.
            pub fn unavailable(why: &EvalError) -> Figures {
                Figures { $($name: Err(why.clone()),)* }
            }

            /// Turns every figure that is not a finite number into an error naming it.
            pub fn reject_non_finite(&mut self) {
                $(<$t as Finite>::reject_non_finite(&mut self.$name, stringify!($name));)*
            }
        }

        /// The properties (docs/language.md, "Properties", lists the same names).
        pub const PROPERTIES: &[Property] = &[
            $(Property {
                name: stringify!($name),
                ty: $ty,
                deps: $deps,
                doc: $doc,
                get: |figures| figures.$name.clone().map(|v| IntoValue::into_value(v, $ty)),
            },)*
        ];
    };
}

figures! {
    weights_memory: f64, FieldTy::Q(Dim::BYTES), &["model", "quant"], "bytes of weights in total";
    kv_memory: f64, FieldTy::Q(Dim::BYTES), &["model", "context", "seqs", "kv_cache"], "bytes of KV cache in total";
    overhead_memory: f64, FieldTy::Q(Dim::BYTES), &["engine", "model", "quant", "count"], "runtime overhead per GPU";
    total_memory: f64, FieldTy::Q(Dim::BYTES), MEM, "weights + KV + overhead on every GPU";
    memory_per_gpu: f64, FieldTy::Q(Dim::BYTES), MEM, "what one GPU holds";
    usable_memory: f64, FieldTy::Q(Dim::BYTES), &["gpu", "engine", "memory_utilization"], "memory the engine may use per GPU";
    utilization: f64, FieldTy::Ratio, FIT, "memory_per_gpu / usable_memory";
    headroom: f64, FieldTy::Ratio, FIT, "1 - utilization";
    fits: bool, FieldTy::Predicate, FIT, "memory_per_gpu <= usable_memory";
    max_context: f64, FieldTy::Q(Dim::TOKENS), FIT, "largest context that fits, capped at the model's window";
    fit_advice: String, FieldTy::Str, FIT, "the concrete change that makes the deployment fit (or leaves more room)";
    engine_memory: f64, FieldTy::Q(Dim::BYTES), ENGINE_MEM, "the engine's memory per GPU beside weights and KV cache: overhead_memory plus CUDA graphs kept outside the usable share";
    activation_memory: f64, FieldTy::Q(Dim::BYTES), ENGINE_MEM, "activation peak of the engine's startup profiling run per GPU: the larger of its forward pass over the batched tokens and its sampler pass over `seqs` logits";
    cuda_graph_memory: f64, FieldTy::Q(Dim::BYTES), ENGINE_MEM, "the engine's CUDA-graph capture pool per GPU (0 with `enforce_eager = yes`)";
    kv_budget: f64, FieldTy::Q(Dim::BYTES), STARTUP, "memory per GPU left for the KV cache at startup: usable_memory - weights per GPU - overhead_memory (negative when none is left)";
    kv_capacity: f64, FieldTy::Q(Dim::TOKENS), STARTUP, "tokens of context (one sequence) the KV budget holds (vLLM's `GPU KV cache size`)";
    starts: bool, FieldTy::Predicate, STARTUP, "the engine starts: a KV budget above 0, a context its KV cache holds, room for CUDA graphs outside its share";
    no_kv_budget: bool, FieldTy::Predicate, STARTUP, "an engine with `startup_check = yes` gets no KV budget: weights and engine memory fill its usable share";
    context_exceeds_kv_capacity: bool, FieldTy::Predicate, STARTUP, "an engine with `startup_check = yes` refuses a context longer than its KV cache holds";
    cuda_graphs_oom: bool, FieldTy::Predicate, STARTUP, "CUDA graphs kept outside the usable share do not fit in the rest of the GPU's memory";
    startup_advice: String, FieldTy::Str, STARTUP, "the change that lets the engine start (memory_utilization, enforce_eager, context, or the GPU)";
    decode_tps: f64, FieldTy::Q(Dim::TOKEN_RATE), SPEED, "decode tokens/s per sequence";
    throughput: f64, FieldTy::Q(Dim::TOKEN_RATE), SPEED, "decode tokens/s of all sequences";
    decode_tps_low: f64, FieldTy::Q(Dim::TOKEN_RATE), SPEED, "low end of the decode range (10th percentile of measured / predicted)";
    decode_tps_high: f64, FieldTy::Q(Dim::TOKEN_RATE), SPEED, "high end of the decode range (90th percentile of measured / predicted)";
    prefill_tps_low: f64, FieldTy::Q(Dim::TOKEN_RATE), &["model", "gpu", "count"], "low end of the prefill range (10th percentile of measured / predicted)";
    prefill_tps_high: f64, FieldTy::Q(Dim::TOKEN_RATE), &["model", "gpu", "count"], "high end of the prefill range (90th percentile of measured / predicted)";
    bound: String, FieldTy::Str, SPEED, "what limits a decode step: `bandwidth-bound` or `compute-bound`";
    required_throughput: f64, FieldTy::Q(Dim::TOKEN_RATE), &["workload"], "output tokens per second the workload asks for (rate × output)";
    replicas_needed: f64, FieldTy::Number, &["workload", "model", "quant", "gpu", "count", "seqs"], "replicas that hold the workload's requests in flight (Little's law)";
    load: f64, FieldTy::Ratio, &[ "workload", "model", "quant", "gpu", "count", "seqs", "replicas", ], "requests in flight / (seqs × replicas)";
    prefill_tps: f64, FieldTy::Q(Dim::TOKEN_RATE), &["model", "gpu", "count"], "prompt tokens/s";
    ttft: f64, FieldTy::Q(Dim::SECONDS), &["model", "gpu", "count", "workload", "context"], "time to first token";
    cost_per_hour: f64, FieldTy::Q(Dim::HOURLY), PRICE, "price of the GPUs per hour: the instances rented (`pricing = cloud`) or the owned GPUs' amortised price, power and host (`pricing = owned`)";
    pricing: String, FieldTy::Str, PRICE, "how `cost_per_hour` is computed: `cloud` (whole instances of an offer) or `owned` (amortised purchase price and power)";
    provider: String, FieldTy::Str, PRICE, "the cloud the GPUs are rented from (`pricing = cloud`)";
    offer: String, FieldTy::Str, PRICE, "the catalog offer rented: the cheapest that carries the GPU and passes `provider`, `region` and `spot`, or the deployment's `offer`";
    instances: f64, FieldTy::Number, PRICE, "whole instances of the offer rented for `count` × `pipeline` × `replicas` GPUs";
    cost_per_mtok: f64, FieldTy::Q(Dim::PER_TOKEN), &[ "gpu", "count", "replicas", "model", "quant", "seqs", "context", "kv_cache", ], "price per generated token";
    comfortable_context: f64, FieldTy::Q(Dim::TOKENS), FIT, "largest context that keeps 10 % of usable memory free";
    kv_heads_replicated: bool, FieldTy::Predicate, &["model", "count"], "the KV cache cannot be split evenly over the GPUs (MLA, or KV heads not divisible by count): parts of it are held by several GPUs";
    quant_runs_on_engine: bool, FieldTy::Predicate, &["quant", "engine"], "the engine runs the weight format";
    kv_runs_on_engine: bool, FieldTy::Predicate, &["kv_cache", "engine"], "the engine stores a KV cache of this type";
    engine_runs_on_gpu: bool, FieldTy::Predicate, &["engine", "gpu"], "the engine is documented to run on the GPU's architecture (its `archs`; an engine without `archs` runs on every GPU)";
    quant_support: String, FieldTy::Str, &["quant", "gpu", "engine"], "how the engine runs the weight format on the GPU: `native`, `weight-only`, `upcast` or `unsupported` (the quant's `tensor` type against the GPU's `arch`)";
    quant_runs_on_gpu: bool, FieldTy::Predicate, &["quant", "gpu", "engine"], "the engine can run the weight format on the GPU (natively, weight-only or upcast)";
    quant_emulated: bool, FieldTy::Predicate, &["quant", "gpu", "engine"], "the GPU lacks tensor cores for the weight format: the engine runs it weight-only or upcast to 16 bit (not with `fallback = dequantize`, whose kernels dequantize every format alike)";
    quant_support_note: String, FieldTy::Str, &["quant", "gpu", "engine"], "why the weight format is not native on the GPU, and what the engine does instead";
    quant_support_advice: String, FieldTy::Str, &["quant", "gpu", "engine"], "weight formats that run natively on the GPU, and GPUs that run the format natively";
    gpu_layers: f64, FieldTy::Number, OFFLOAD, "layers on the GPUs: all of them unless `offload = auto` keeps some in system RAM; 0 with `gpu = cpu`";
    offloaded: bool, FieldTy::Predicate, OFFLOAD, "`offload = auto` keeps some layers in system RAM, run on the CPU";
    engine_holds_share: bool, FieldTy::Predicate, FIT, "on a unified-memory GPU whose system keeps part of the pool (`system_reserved`), the engine allocates its whole share at startup: `memory_per_gpu` is that share, `usable_memory` what the system leaves";
    gpu_share: f64, FieldTy::Ratio, OFFLOAD, "share of the deployment's memory on the GPUs, as `ollama ps` prints it (1: \"100% GPU\"; 0.82: \"18%/82% CPU/GPU\"; 0 with `gpu = cpu`)";
    gpu_max_context: f64, FieldTy::Q(Dim::TOKENS), FIT, "largest context that keeps every layer on the GPUs (with `offload = auto`, or an engine that offloads on its own), capped at the model's window";
    host_memory: f64, FieldTy::Q(Dim::BYTES), OFFLOAD, "bytes in system RAM: offloaded layers with their KV cache and the input embeddings; everything with `gpu = cpu`; 0 otherwise";
    host_usable_memory: f64, FieldTy::Q(Dim::BYTES), &["host", "host_memory"], "the host's system RAM (its `memory`, or the deployment's `host_memory`)";
    throughput_low: f64, FieldTy::Q(Dim::TOKEN_RATE), SPEED, "low end of the throughput range (10th percentile of measured / predicted)";
    throughput_high: f64, FieldTy::Q(Dim::TOKEN_RATE), SPEED, "high end of the throughput range (90th percentile of measured / predicted)";
    tpot: f64, FieldTy::Q(Dim::SECONDS), SPEED, "time per output token after the first (inter-token latency), seconds";
    tpot_low: f64, FieldTy::Q(Dim::SECONDS), SPEED, "low end of the time-per-output-token range";
    tpot_high: f64, FieldTy::Q(Dim::SECONDS), SPEED, "high end of the time-per-output-token range";
    ttft_low: f64, FieldTy::Q(Dim::SECONDS), &["model", "gpu", "count", "workload", "context"], "low end of the time-to-first-token range";
    ttft_high: f64, FieldTy::Q(Dim::SECONDS), &["model", "gpu", "count", "workload", "context"], "high end of the time-to-first-token range";
    ttft_p99: f64, FieldTy::Q(Dim::SECONDS), &["model", "gpu", "count", "workload", "context", "seqs"], "99th-percentile time to first token over a wave of `seqs` requests (serving engines)";
    tpot_p99: f64, FieldTy::Q(Dim::SECONDS), SPEED, "99th-percentile time per output token over a wave of `seqs` requests (serving engines)";
    ttft_p50: f64, FieldTy::Q(Dim::SECONDS), &["model", "gpu", "count", "workload", "context", "seqs"], "median time to first token over the simulated requests (serving engines with a workload)";
    tpot_p50: f64, FieldTy::Q(Dim::SECONDS), SPEED, "median time per output token over the simulated requests (serving engines with a workload)";
    queue: f64, FieldTy::Q(Dim::SECONDS), &["model", "gpu", "count", "workload", "context", "seqs"], "mean time a request waits before the server starts its prompt (serving engines with a workload)";
    running: f64, FieldTy::Number, &["model", "gpu", "count", "workload", "context", "seqs", "engine"], "the most requests the simulated server runs at once: `seqs`, or fewer when its KV cache holds fewer (serving engines with a workload)";
    kv_bound: bool, FieldTy::Predicate, &["model", "gpu", "count", "workload", "context", "seqs", "engine"], "the engine's KV cache, not `seqs`, keeps requests waiting in the simulated server (serving engines with a workload)";
    preempted: f64, FieldTy::Number, &["model", "gpu", "count", "workload", "context", "seqs", "engine"], "requests the simulated server preempted when their new tokens outgrew the KV cache: 0 for an engine without `preemption` (serving engines with a workload)";
}

impl Figures {
    /// A property's value by its name in the language; `None` for a name that is not a
    /// property.
    pub fn get(&self, name: &str) -> Option<Figure<Value>> {
        property(name).map(|prop| (prop.get)(self))
    }

    /// Every property with its value, in table order.
    pub fn values(&self) -> impl Iterator<Item = (&'static str, Figure<Value>)> + '_ {
        PROPERTIES.iter().map(|prop| (prop.name, (prop.get)(self)))
    }
}

/// A property by name.
pub fn property(name: &str) -> Option<&'static Property> {
    PROPERTIES.iter().find(|prop| prop.name == name)
}

/// A figure as the JSON outputs give it (docs/cli.md, "Figures in JSON"): a number in the
/// unit its key names, a flag, or a word. Never a formatted string.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(untagged)]
pub enum JsonFigure {
    /// Bytes, tokens and counts that are whole.
    Integer(i128),
    Number(f64),
    Flag(bool),
    Text(String),
}

/// The key a property has in JSON output, and the factor from its base unit to the
/// key's: the unit is in the key. Bytes `_bytes`, tokens `_tokens`, seconds `_seconds`;
/// token rates in tokens per second (`decode_tps`, `throughput_tps`); prices in US dollars
/// per hour (`cost_per_hour_usd`) and per million tokens (`cost_per_mtok_usd`); ratios
/// (`utilization`, `headroom`, `load`) and counts keep the property's name.
pub fn json_key(name: &str, ty: FieldTy) -> (String, f64) {
    let suffixed = |suffix: &str| {
        if name.contains(suffix) {
            name.to_string()
        } else {
            format!("{name}_{suffix}")
        }
    };
    match ty {
        FieldTy::Q(dim) if dim == Dim::BYTES => (suffixed("bytes"), 1.0),
        FieldTy::Q(dim) if dim == Dim::TOKENS => (suffixed("tokens"), 1.0),
        FieldTy::Q(dim) if dim == Dim::SECONDS => (suffixed("seconds"), 1.0),
        FieldTy::Q(dim) if dim == Dim::TOKEN_RATE => (suffixed("tps"), 1.0),
        FieldTy::Q(dim) if dim == Dim::HOURLY => (priced(name, "hour"), 3600.0),
        FieldTy::Q(dim) if dim == Dim::PER_TOKEN => (priced(name, "mtok"), 1e6),
        _ => (name.to_string(), 1.0),
    }
}

/// A price's key: `NAME_usd` when the name says what it is per (`cost_per_hour`), else
/// `NAME_usd_per_PER`.
fn priced(name: &str, per: &str) -> String {
    if name.contains(&format!("per_{per}")) {
        format!("{name}_usd")
    } else {
        format!("{name}_usd_per_{per}")
    }
}

impl JsonFigure {
    /// A property's value in the unit [`json_key`] names.
    pub fn of(value: &Value, ty: FieldTy, scale: f64) -> Option<JsonFigure> {
        Some(match value {
            Value::Bool(flag) => JsonFigure::Flag(*flag),
            Value::Str(text) | Value::Symbol(text) | Value::Ref(_, text) => {
                JsonFigure::Text(text.clone())
            }
            Value::Q(q) => {
                let number = q.value() * scale;
                let whole = matches!(ty, FieldTy::Q(dim) if dim == Dim::BYTES || dim == Dim::TOKENS)
                    || matches!(ty, FieldTy::Number);
                if !number.is_finite() {
                    return None;
                }
                if whole && number.fract() == 0.0 && number.abs() < 1e36 {
                    JsonFigure::Integer(number as i128)
                } else {
                    JsonFigure::Number(number)
                }
            }
            Value::List(_) => return None,
        })
    }
}

impl Figures {
    /// Every computed figure under its JSON key ([`json_key`]), as a number, flag or word.
    pub fn json(&self) -> std::collections::BTreeMap<String, JsonFigure> {
        PROPERTIES
            .iter()
            .filter_map(|prop| {
                let value = (prop.get)(self).ok()?;
                let (key, scale) = json_key(prop.name, prop.ty);
                Some((key, JsonFigure::of(&value, prop.ty, scale)?))
            })
            .collect()
    }
}
