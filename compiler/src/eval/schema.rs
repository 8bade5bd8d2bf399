//! What fields each declaration kind has, and what each deployment property is.

use crate::syntax::ast::DeclKind;
use crate::units::Dim;

/// The type a field or property holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldTy {
    /// A quantity of this dimension (a bare count is accepted for tokens).
    Q(Dim),
    /// A bare number (a count, bits per weight).
    Number,
    /// A ratio: `95%` or `0.95`.
    Ratio,
    Str,
    /// One of a fixed set of words.
    Symbol(&'static [&'static str]),
    /// A catalog entry of a kind, by name.
    Ref(DeclKind),
    /// A list of catalog entries of a kind.
    RefList(DeclKind),
    /// A condition over the deployment's properties (rules' `when`).
    Predicate,
    /// An interpolated message (rules' `message` and `help`).
    Message,
    /// A nested block (`files { }`, `workload { }`).
    Block,
}

impl FieldTy {
    pub fn describe(self) -> String {
        match self {
            FieldTy::Q(dim) => dim.describe(),
            FieldTy::Number => "a number".into(),
            FieldTy::Ratio => "a ratio (`95%` or `0.95`)".into(),
            FieldTy::Str => "a string".into(),
            FieldTy::Symbol(words) => format!("one of {}", quote_list(words)),
            FieldTy::Ref(kind) => format!("{} name", kind.describe()),
            FieldTy::RefList(kind) => format!("a list of {} names", kind.keyword()),
            FieldTy::Predicate => "a condition".into(),
            FieldTy::Message => "a message string".into(),
            FieldTy::Block => "a block `{ ... }`".into(),
        }
    }
}

pub fn quote_list(words: &[&str]) -> String {
    words
        .iter()
        .map(|w| format!("`{w}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

pub struct FieldSpec {
    pub name: &'static str,
    pub ty: FieldTy,
    pub doc: &'static str,
}

const fn f(name: &'static str, ty: FieldTy, doc: &'static str) -> FieldSpec {
    FieldSpec { name, ty, doc }
}

pub const VENDORS: &[&str] = &["nvidia", "amd", "apple", "intel"];
pub const INTERCONNECTS: &[&str] = &["nvlink", "pcie", "unified"];
pub const ATTENTION: &[&str] = &["mha", "gqa", "mla", "hybrid"];
pub const QUANT_KINDS: &[&str] = &["gguf", "awq", "gptq", "fp"];
pub const LEVELS: &[&str] = &["error", "warn", "info"];
pub const WINDOW_KV: &[&str] = &["windowed", "full"];

const GPU: &[FieldSpec] = &[
    f("name", FieldTy::Str, "display name"),
    f("vendor", FieldTy::Symbol(VENDORS), "maker"),
    f("memory", FieldTy::Q(Dim::BYTES), "memory per GPU"),
    f("bandwidth", FieldTy::Q(Dim::BANDWIDTH), "memory bandwidth"),
    f(
        "bf16",
        FieldTy::Q(Dim::COMPUTE),
        "dense BF16 tensor throughput",
    ),
    f(
        "fp8",
        FieldTy::Q(Dim::COMPUTE),
        "dense FP8 tensor throughput",
    ),
    f(
        "int8",
        FieldTy::Q(Dim::COMPUTE),
        "dense INT8 tensor throughput",
    ),
    f("tdp", FieldTy::Q(Dim::WATTS), "board power"),
    f(
        "price",
        FieldTy::Q(Dim::HOURLY),
        "hourly on-demand price per GPU",
    ),
    f("msrp", FieldTy::Q(Dim::DOLLARS), "launch price"),
    f(
        "interconnect",
        FieldTy::Symbol(INTERCONNECTS),
        "link between GPUs",
    ),
    f(
        "link_bandwidth",
        FieldTy::Q(Dim::BANDWIDTH),
        "GPU-to-GPU bandwidth",
    ),
];

const MODEL: &[FieldSpec] = &[
    f("hf", FieldTy::Str, "Hugging Face checkpoint id"),
    f("ollama", FieldTy::Str, "Ollama tag"),
    f("params", FieldTy::Number, "total parameters"),
    f(
        "active_params",
        FieldTy::Number,
        "parameters used per token (MoE)",
    ),
    f("layers", FieldTy::Number, "transformer layers"),
    f("hidden", FieldTy::Number, "hidden size"),
    f("intermediate", FieldTy::Number, "MLP intermediate size"),
    f("heads", FieldTy::Number, "attention heads"),
    f("kv_heads", FieldTy::Number, "key/value heads"),
    f("head_dim", FieldTy::Number, "dimension per head"),
    f("vocab", FieldTy::Number, "vocabulary size"),
    f(
        "max_context",
        FieldTy::Q(Dim::TOKENS),
        "trained context window",
    ),
    f("attention", FieldTy::Symbol(ATTENTION), "attention kind"),
    f(
        "window",
        FieldTy::Q(Dim::TOKENS),
        "sliding window of local layers",
    ),
    f(
        "local_layers",
        FieldTy::Number,
        "layers with sliding-window attention",
    ),
    f("kv_lora_rank", FieldTy::Number, "MLA compressed KV rank"),
    f(
        "qk_rope_dim",
        FieldTy::Number,
        "MLA decoupled RoPE dimension",
    ),
    f("experts", FieldTy::Number, "MoE experts"),
    f(
        "experts_active",
        FieldTy::Number,
        "MoE experts used per token",
    ),
    f("files", FieldTy::Block, "exact artifact sizes per quant"),
];

const QUANT: &[FieldSpec] = &[
    f(
        "bits",
        FieldTy::Number,
        "nominal bits of the packed weights",
    ),
    f("bpw", FieldTy::Number, "effective bits per weight"),
    f("kind", FieldTy::Symbol(QUANT_KINDS), "format family"),
    f(
        "engines",
        FieldTy::RefList(DeclKind::Engine),
        "engines that run it",
    ),
];

const KV: &[FieldSpec] = &[f("bytes", FieldTy::Number, "bytes per element")];

const ENGINE: &[FieldSpec] = &[
    f(
        "utilization",
        FieldTy::Ratio,
        "share of GPU memory the engine uses",
    ),
    f(
        "overhead",
        FieldTy::Q(Dim::BYTES),
        "runtime overhead per GPU",
    ),
    f(
        "overhead_ratio",
        FieldTy::Ratio,
        "extra overhead as a share of weights",
    ),
    f(
        "overhead_per_vocab",
        FieldTy::Q(Dim::BYTES),
        "extra overhead per vocabulary entry (sampler buffers)",
    ),
    f(
        "overhead_tensor_parallel",
        FieldTy::Q(Dim::BYTES),
        "extra overhead per GPU when count > 1 (communication buffers)",
    ),
    f(
        "window_kv",
        FieldTy::Symbol(WINDOW_KV),
        "`windowed`: sliding-window layers keep only the window; `full`: every token",
    ),
];

const RULE: &[FieldSpec] = &[
    f("level", FieldTy::Symbol(LEVELS), "severity"),
    f("when", FieldTy::Predicate, "when the rule fires"),
    f("message", FieldTy::Message, "what the diagnostic says"),
    f("help", FieldTy::Message, "the fix the diagnostic suggests"),
    f("code", FieldTy::Str, "stable diagnostic code"),
];

const DEPLOYMENT: &[FieldSpec] = &[
    f("model", FieldTy::Ref(DeclKind::Model), "the model served"),
    f("quant", FieldTy::Ref(DeclKind::Quant), "weight format"),
    f("context", FieldTy::Q(Dim::TOKENS), "tokens per sequence"),
    f("seqs", FieldTy::Number, "concurrent sequences"),
    f("kv_cache", FieldTy::Ref(DeclKind::Kv), "KV-cache dtype"),
    f("engine", FieldTy::Ref(DeclKind::Engine), "serving engine"),
    f("gpu", FieldTy::Ref(DeclKind::Gpu), "GPU"),
    f("count", FieldTy::Number, "tensor-parallel GPUs per replica"),
    f("replicas", FieldTy::Number, "copies of the deployment"),
    f(
        "memory_utilization",
        FieldTy::Ratio,
        "override of the engine's memory share",
    ),
    f(
        "allow",
        FieldTy::RefList(DeclKind::Rule),
        "rules silenced here",
    ),
    f("workload", FieldTy::Block, "traffic: rate, prompt, output"),
];

pub const WORKLOAD: &[FieldSpec] = &[
    f("rate", FieldTy::Q(Dim::REQUEST_RATE), "requests per second"),
    f(
        "prompt",
        FieldTy::Q(Dim::TOKENS),
        "prompt tokens per request",
    ),
    f(
        "output",
        FieldTy::Q(Dim::TOKENS),
        "output tokens per request",
    ),
];

pub fn schema(kind: DeclKind) -> &'static [FieldSpec] {
    match kind {
        DeclKind::Gpu => GPU,
        DeclKind::Model => MODEL,
        DeclKind::Quant => QUANT,
        DeclKind::Kv => KV,
        DeclKind::Engine => ENGINE,
        DeclKind::Rule => RULE,
        DeclKind::Deployment => DEPLOYMENT,
    }
}

pub fn field_spec(kind: DeclKind, name: &str) -> Option<&'static FieldSpec> {
    schema(kind).iter().find(|spec| spec.name == name)
}

/// A property a deployment exposes to `require`, `when` and messages.
pub struct Property {
    pub name: &'static str,
    pub ty: FieldTy,
    /// The deployment fields the figure depends on: labelled when a rule reads it.
    pub deps: &'static [&'static str],
    pub doc: &'static str,
}

const fn p(
    name: &'static str,
    ty: FieldTy,
    deps: &'static [&'static str],
    doc: &'static str,
) -> Property {
    Property {
        name,
        ty,
        deps,
        doc,
    }
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
];
const SPEED: &[&str] = &[
    "model", "quant", "gpu", "count", "context", "seqs", "kv_cache",
];

pub const PROPERTIES: &[Property] = &[
    p(
        "weights_memory",
        FieldTy::Q(Dim::BYTES),
        &["model", "quant"],
        "bytes of weights in total",
    ),
    p(
        "kv_memory",
        FieldTy::Q(Dim::BYTES),
        &["model", "context", "seqs", "kv_cache"],
        "bytes of KV cache in total",
    ),
    p(
        "overhead_memory",
        FieldTy::Q(Dim::BYTES),
        &["engine", "model", "quant", "count"],
        "runtime overhead per GPU",
    ),
    p(
        "total_memory",
        FieldTy::Q(Dim::BYTES),
        MEM,
        "weights + KV + overhead on every GPU",
    ),
    p(
        "memory_per_gpu",
        FieldTy::Q(Dim::BYTES),
        MEM,
        "what one GPU holds",
    ),
    p(
        "usable_memory",
        FieldTy::Q(Dim::BYTES),
        &["gpu", "engine", "memory_utilization"],
        "memory the engine may use per GPU",
    ),
    p(
        "utilization",
        FieldTy::Ratio,
        FIT,
        "memory_per_gpu / usable_memory",
    ),
    p("headroom", FieldTy::Ratio, FIT, "1 - utilization"),
    p(
        "fits",
        FieldTy::Predicate,
        FIT,
        "memory_per_gpu <= usable_memory",
    ),
    p(
        "max_context",
        FieldTy::Q(Dim::TOKENS),
        FIT,
        "largest context that fits, capped at the model's window",
    ),
    p(
        "fit_advice",
        FieldTy::Str,
        FIT,
        "the concrete change that makes the deployment fit (or leaves more room)",
    ),
    p(
        "decode_tps",
        FieldTy::Q(Dim::TOKEN_RATE),
        SPEED,
        "decode tokens/s per sequence",
    ),
    p(
        "throughput",
        FieldTy::Q(Dim::TOKEN_RATE),
        SPEED,
        "decode tokens/s of all sequences",
    ),
    p(
        "decode_tps_low",
        FieldTy::Q(Dim::TOKEN_RATE),
        SPEED,
        "low end of the decode range (10th percentile of measured / predicted)",
    ),
    p(
        "decode_tps_high",
        FieldTy::Q(Dim::TOKEN_RATE),
        SPEED,
        "high end of the decode range (90th percentile of measured / predicted)",
    ),
    p(
        "prefill_tps_low",
        FieldTy::Q(Dim::TOKEN_RATE),
        &["model", "gpu", "count"],
        "low end of the prefill range (10th percentile of measured / predicted)",
    ),
    p(
        "prefill_tps_high",
        FieldTy::Q(Dim::TOKEN_RATE),
        &["model", "gpu", "count"],
        "high end of the prefill range (90th percentile of measured / predicted)",
    ),
    p(
        "bound",
        FieldTy::Str,
        SPEED,
        "what limits a decode step: `bandwidth-bound` or `compute-bound`",
    ),
    p(
        "required_throughput",
        FieldTy::Q(Dim::TOKEN_RATE),
        &["workload"],
        "output tokens per second the workload asks for (rate × output)",
    ),
    p(
        "replicas_needed",
        FieldTy::Number,
        &["workload", "model", "quant", "gpu", "count", "seqs"],
        "replicas that hold the workload's requests in flight (Little's law)",
    ),
    p(
        "load",
        FieldTy::Ratio,
        &[
            "workload", "model", "quant", "gpu", "count", "seqs", "replicas",
        ],
        "requests in flight / (seqs × replicas)",
    ),
    p(
        "prefill_tps",
        FieldTy::Q(Dim::TOKEN_RATE),
        &["model", "gpu", "count"],
        "prompt tokens/s",
    ),
    p(
        "ttft",
        FieldTy::Q(Dim::SECONDS),
        &["model", "gpu", "count", "workload", "context"],
        "time to first token",
    ),
    p(
        "cost_per_hour",
        FieldTy::Q(Dim::HOURLY),
        &["gpu", "count", "replicas"],
        "price of the GPUs per hour",
    ),
    p(
        "cost_per_mtok",
        FieldTy::Q(Dim::PER_TOKEN),
        &[
            "gpu", "count", "replicas", "model", "quant", "seqs", "context", "kv_cache",
        ],
        "price per generated token",
    ),
    p(
        "comfortable_context",
        FieldTy::Q(Dim::TOKENS),
        FIT,
        "largest context that keeps 10 % of usable memory free",
    ),
    p(
        "kv_heads_replicated",
        FieldTy::Predicate,
        &["model", "count"],
        "the KV cache cannot be split evenly over the GPUs (MLA, or KV heads not divisible by count): parts of it are held by several GPUs",
    ),
    p(
        "quant_runs_on_engine",
        FieldTy::Predicate,
        &["quant", "engine"],
        "the engine runs the weight format",
    ),
];

pub fn property(name: &str) -> Option<&'static Property> {
    PROPERTIES.iter().find(|prop| prop.name == name)
}
