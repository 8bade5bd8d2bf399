//! Speed: a roofline per decode step and per prefill, with efficiencies per hardware
//! family fitted to published llama.cpp measurements (docs/calibration-speed.md).
//!
//! A decode step reads the active weights once plus every sequence's KV cache, and does
//! 2 × active parameters × sequences FLOP; it takes the longer of the memory and compute
//! times, plus tensor-parallel all-reduces and a fixed per-step cost. Prefill is compute:
//! 2 × active parameters per prompt token plus attention's quadratic term.

use serde::Serialize;

/// Hardware families with their own fitted decode efficiency.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    /// NVIDIA GeForce: GDDR memory; the catalog's dense figures use FP32 accumulate, half
    /// of the FP16-accumulate rate llama.cpp's half-precision GEMMs run at.
    Geforce,
    /// NVIDIA workstation and inference cards with GDDR memory (RTX A/Ada, L4, L40S, A10).
    Workstation,
    /// HBM datacenter parts (A100, H100, H200, B200, Instinct MI…).
    Hbm,
    Apple,
    /// Everything else (AMD Radeon, Intel): the pooled fit.
    Other,
    /// No GPU (`gpu = cpu`): the CPU decodes from system memory.
    Cpu,
}

/// The kernel backend a GPU runs llama.cpp-style kernels with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Backend {
    Cuda,
    Metal,
    Vulkan,
    Rocm,
    Other,
    /// llama.cpp's CPU backend: no kernel launches (its per-token cost is inside the
    /// fitted host efficiency).
    Cpu,
}

impl Family {
    /// Classifies a catalog GPU by its fields, never by its name (an `extends` copy
    /// classifies as its original): unified memory (`interconnect = unified` or
    /// `memory_kind = unified`) or Apple is [`Family::Apple`]; `family = datacenter`, or no
    /// `family` and `memory_kind = hbm`, is [`Family::Hbm`] (its bandwidth is not reached by
    /// a single decode stream); `family = geforce` is [`Family::Geforce`]; other AMD and
    /// Intel parts are [`Family::Other`]; other NVIDIA parts [`Family::Workstation`].
    pub fn classify(
        vendor: Option<&str>,
        unified: bool,
        hbm: bool,
        family: Option<&str>,
    ) -> (Family, Backend) {
        if unified || vendor == Some("apple") || family == Some("apple") {
            return (Family::Apple, Backend::Metal);
        }
        let backend = match vendor {
            Some("amd") => Backend::Rocm,
            Some("intel") => Backend::Other,
            _ => Backend::Cuda,
        };
        let class = match family {
            Some("datacenter") => Family::Hbm,
            None if hbm => Family::Hbm,
            Some("geforce") => Family::Geforce,
            _ if matches!(vendor, Some("amd" | "intel")) => Family::Other,
            _ => Family::Workstation,
        };
        (class, backend)
    }
}

/// Decode efficiency η: the share of memory bandwidth a decode step reaches, fitted to
/// llama.cpp measurements (scripts/fit_speed.py, docs/calibration-speed.md). HBM's figure
/// comes from llama.cpp on an A100; serving engines reach about 1.5× that on HBM parts
/// (the 2 × H100 serving rows of other_tps.csv), hence `SERVING_HBM_BANDWIDTH`.
pub fn decode_efficiency(family: Family) -> f64 {
    match family {
        Family::Geforce => 0.975,
        Family::Workstation => 0.967,
        Family::Hbm => 0.557,
        Family::Apple => 0.874,
        Family::Other => 0.879,
        Family::Cpu => HOST_EFFICIENCY_CPU,
    }
}

/// Share of the host's theoretical memory bandwidth llama.cpp's CPU backend reaches in
/// decode with the whole model in system RAM: the median of four published CPU-only runs
/// (docs/calibration-offload.md, scripts/fit_offload.py).
pub const HOST_EFFICIENCY_CPU: f64 = 0.768;
/// The same share for the layers a partial offload keeps in system RAM: the median of
/// three published `-ngl` runs. Lower than CPU-only: the GPU and the CPU wait for each
/// other every token, and activations cross the bus twice.
pub const HOST_EFFICIENCY_OFFLOAD: f64 = 0.577;
/// The 10th and 90th percentiles of measured / predicted over the seven host-memory runs
/// (CPU-only and partial offload pooled): the range printed beside a decode speed that
/// reads system memory.
pub const HOST_RANGE: (f64, f64) = (0.72, 1.07);
/// Prompt tokens llama.cpp processes per micro-batch (`-ub`, default 512): with offload,
/// each micro-batch copies the host layers' weights to the GPU (batches of 32 tokens or
/// more run there, ggml-org/llama.cpp#6083).
pub const UBATCH: f64 = 512.0;

/// η of serving engines (vLLM, SGLang, TensorRT-LLM) on HBM parts.
pub const SERVING_HBM_BANDWIDTH: f64 = 0.557 * 1.5;

/// Fixed time per decode step for a 32-layer model, seconds, scaling with layers:
/// kernel launches and synchronisation. ROCm and other backends reuse CUDA's (no data).
pub fn step_overhead_per_32_layers(backend: Backend) -> f64 {
    match backend {
        Backend::Metal => 5.95e-3,
        Backend::Vulkan => 1.13e-3,
        Backend::Cuda | Backend::Rocm | Backend::Other => 2.89e-3,
        Backend::Cpu => 0.0,
    }
}

/// Prefill model FLOP utilisation of the dense 16-bit peak.
pub fn prefill_mfu(family: Family) -> f64 {
    match family {
        Family::Geforce | Family::Workstation | Family::Hbm => 0.398,
        Family::Apple => 0.671,
        Family::Other | Family::Cpu => 0.597,
    }
}

/// Attention's FLOP per prompt token are `ATTENTION_FACTOR × 4 × layers × hidden × prompt`:
/// fitted above 1 because most measured runs had flash attention off.
pub const ATTENTION_FACTOR: f64 = 2.15;

/// The 10th and 90th percentiles of measured / predicted on held-out devices: the range
/// printed beside each speed.
pub const DECODE_RANGE: (f64, f64) = (0.75, 1.15);
pub const PREFILL_RANGE: (f64, f64) = (0.65, 1.35);

/// Bytes each GPU moves and sends per token of all-reduce: activations in 16 bits.
const ACTIVATION_BYTES: f64 = 2.0;
/// Link bandwidth assumed when a GPU lists none: PCIe 4.0 x16, 32 GB/s per direction.
pub const DEFAULT_LINK_BANDWIDTH: f64 = 32e9;
/// Latency of one all-reduce over the link, seconds.
pub const ALL_REDUCE_LATENCY: f64 = 10e-6;

/// What the speed model needs, as plain numbers (bytes, FLOP/s, tokens).
#[derive(Clone, Copy, Debug)]
pub struct SpeedInputs {
    pub family: Family,
    pub backend: Backend,
    /// A serving engine (vLLM, SGLang, TensorRT-LLM) rather than llama.cpp-style kernels.
    pub serving_engine: bool,
    /// llama.cpp and Ollama split a model over GPUs by layers: a token passes through the
    /// GPUs one after another, so a decode step streams all the weights at one card's
    /// bandwidth and needs no all-reduce.
    pub layer_split: bool,
    pub bandwidth: f64,
    /// Dense 16-bit peak of one GPU, FLOP/s, when known (FP16-accumulate rate).
    pub peak: Option<f64>,
    pub link_bandwidth: f64,
    pub count: f64,
    pub weights_bytes: f64,
    pub params: f64,
    pub active_params: f64,
    pub layers: f64,
    pub hidden: f64,
    pub seqs: f64,
    /// KV bytes one GPU reads per decode step, all sequences together.
    pub kv_read_bytes: f64,
    /// Prompt tokens per request.
    pub prompt: f64,
    /// With `offload = auto`: weights of the layers in system RAM (`weights_bytes` is
    /// then the GPUs' share), the KV those layers read per step, the host's memory
    /// bandwidth and its bus to the GPU.
    pub host_weights_bytes: f64,
    pub host_kv_read_bytes: f64,
    pub host_bandwidth: f64,
    pub pcie_bandwidth: f64,
}

/// Which resource bounds a decode step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    Bandwidth,
    Compute,
}

impl Bound {
    pub fn describe(self) -> &'static str {
        match self {
            Bound::Bandwidth => "bandwidth-bound",
            Bound::Compute => "compute-bound",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Speed {
    /// Decode tokens/s per sequence, with its range.
    pub decode_tps: f64,
    pub decode_tps_low: f64,
    pub decode_tps_high: f64,
    /// Decode tokens/s of all sequences.
    pub throughput_tps: f64,
    pub prefill_tps: Option<f64>,
    pub prefill_tps_low: Option<f64>,
    pub prefill_tps_high: Option<f64>,
    /// Time to first token: the prompt's prefill plus one decode step, seconds.
    pub ttft_s: Option<f64>,
    pub bound: Bound,
    /// Bytes one GPU reads per decode step.
    pub step_bytes: f64,
}

/// The share of the weights a decode step reads: with mixture-of-experts, each of `seqs`
/// tokens touches the active share, and together they touch 1 − (1 − a)^seqs of it.
fn weights_read_share(params: f64, active: f64, seqs: f64) -> f64 {
    if params <= 0.0 || active >= params {
        return 1.0;
    }
    let share = active / params;
    1.0 - (1.0 - share).powf(seqs.max(1.0))
}

/// Time of the all-reduces of one step over `tokens` tokens: two per layer.
fn all_reduce_time(inputs: &SpeedInputs, tokens: f64) -> f64 {
    if inputs.count <= 1.0 || inputs.layer_split {
        return 0.0;
    }
    let bytes =
        tokens * inputs.hidden * ACTIVATION_BYTES * 2.0 * (inputs.count - 1.0) / inputs.count;
    2.0 * inputs.layers * (bytes / inputs.link_bandwidth + ALL_REDUCE_LATENCY)
}

pub fn estimate(inputs: &SpeedInputs) -> Speed {
    let eta = if inputs.serving_engine && inputs.family == Family::Hbm {
        SERVING_HBM_BANDWIDTH
    } else {
        decode_efficiency(inputs.family)
    };
    let mfu = prefill_mfu(inputs.family);
    let share = weights_read_share(inputs.params, inputs.active_params, inputs.seqs);
    let step_bytes = if inputs.layer_split {
        inputs.weights_bytes * share + inputs.kv_read_bytes * inputs.count
    } else {
        inputs.weights_bytes * share / inputs.count + inputs.kv_read_bytes
    };
    // Layers in system RAM stream their weights from it each token, on the CPU, after
    // (or before) the GPU's layers: the times add.
    let host_bytes = inputs.host_weights_bytes * share + inputs.host_kv_read_bytes;
    let offloaded = host_bytes > 0.0 && inputs.host_bandwidth > 0.0;
    let host_time = if offloaded {
        host_bytes / (HOST_EFFICIENCY_OFFLOAD * inputs.host_bandwidth)
    } else {
        0.0
    };
    let memory_time = step_bytes / (eta * inputs.bandwidth) + host_time;
    let compute_time = inputs
        .peak
        .map(|peak| 2.0 * inputs.active_params * inputs.seqs / inputs.count / (mfu * peak))
        .unwrap_or(0.0);
    let bound = if compute_time > memory_time {
        Bound::Compute
    } else {
        Bound::Bandwidth
    };
    let overhead = step_overhead_per_32_layers(inputs.backend) * inputs.layers.max(1.0) / 32.0;
    let step = memory_time.max(compute_time) + all_reduce_time(inputs, inputs.seqs) + overhead;
    let decode = 1.0 / step;
    let prefill_time = inputs.peak.map(|peak| {
        let per_token = 2.0 * inputs.active_params
            + ATTENTION_FACTOR * 4.0 * inputs.layers * inputs.hidden * inputs.prompt;
        // With a layer split the GPUs work on the prompt one after another.
        let parallel = if inputs.layer_split {
            1.0
        } else {
            inputs.count
        };
        // Offloaded layers' weights cross the bus once per micro-batch.
        let copies = if offloaded {
            (inputs.prompt / UBATCH).ceil() * inputs.host_weights_bytes / inputs.pcie_bandwidth
        } else {
            0.0
        };
        inputs.prompt * per_token / (mfu * peak * parallel)
            + all_reduce_time(inputs, inputs.prompt)
            + copies
    });
    let prefill = prefill_time.map(|t| inputs.prompt / t);
    let range = if offloaded || inputs.family == Family::Cpu {
        HOST_RANGE
    } else {
        DECODE_RANGE
    };
    Speed {
        decode_tps: decode,
        decode_tps_low: decode * range.0,
        decode_tps_high: decode * range.1,
        throughput_tps: decode * inputs.seqs,
        prefill_tps: prefill,
        prefill_tps_low: prefill.map(|p| p * PREFILL_RANGE.0),
        prefill_tps_high: prefill.map(|p| p * PREFILL_RANGE.1),
        ttft_s: prefill_time.map(|t| t + step),
        bound,
        step_bytes,
    }
}
