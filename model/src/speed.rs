//! Speed: a roofline per decode step and per prefill, with efficiencies per hardware
//! family fitted to published llama.cpp measurements (docs/calibration-speed.md), and for
//! serving engines (`kernels = serving`) a roofline per engine step with continuous
//! batching and chunked prefill, fitted to published serving measurements
//! (docs/calibration-serving.md).
//!
//! A decode step reads the active weights once plus every sequence's KV cache, and does
//! 2 × active parameters × sequences FLOP; it takes the longer of the memory and compute
//! times, plus tensor-parallel all-reduces and a fixed per-step cost. Prefill is compute:
//! 2 × active parameters per prompt token plus attention's quadratic term.

use serde::Serialize;

use super::schema::{GpuFamily, Vendor};
use super::sim::Shape;
pub use super::sim::{Arrivals, Scheduling};

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
        vendor: Option<Vendor>,
        unified: bool,
        hbm: bool,
        family: Option<GpuFamily>,
    ) -> (Family, Backend) {
        if unified || vendor == Some(Vendor::Apple) || family == Some(GpuFamily::Apple) {
            return (Family::Apple, Backend::Metal);
        }
        let backend = match vendor {
            Some(Vendor::Amd) => Backend::Rocm,
            Some(Vendor::Intel) => Backend::Other,
            _ => Backend::Cuda,
        };
        let class = match family {
            Some(GpuFamily::Datacenter) => Family::Hbm,
            None if hbm => Family::Hbm,
            Some(GpuFamily::Geforce) => Family::Geforce,
            _ if matches!(vendor, Some(Vendor::Amd | Vendor::Intel)) => Family::Other,
            _ => Family::Workstation,
        };
        (class, backend)
    }
}

/// Decode efficiency η: the share of memory bandwidth a decode step reaches, fitted to
/// llama.cpp measurements (scripts/fit_speed.py, docs/calibration-speed.md). HBM's figure
/// comes from llama.cpp on three data-centre cards (A100 PCIe 80GB, A100 SXM4 80GB, H100
/// PCIe; 18 decode rows, with the other terms held at their fit on the shared rows): they
/// reach well under their bandwidth at batch 1. Serving engines take their own efficiencies
/// from their catalog fields ([`Engine`], docs/calibration-serving.md).
pub fn decode_efficiency(family: Family) -> f64 {
    match family {
        Family::Geforce => 0.975,
        Family::Workstation => 0.967,
        Family::Hbm => 0.584,
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
    /// A serving engine (vLLM, SGLang, TensorRT-LLM) rather than llama.cpp-style kernels:
    /// the estimate then calls [`serve`], not [`estimate`].
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
    /// An engine's own decode efficiency and per-token launch cost (per 32 layers, seconds),
    /// in place of llama.cpp's per-family and per-backend fit (MLX: docs/calibration-speed.md,
    /// "MLX").
    pub decode_efficiency: Option<f64>,
    pub token_overhead: Option<f64>,
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
    /// Decode tokens/s per sequence (1 / `tpot_s`), with its range.
    pub decode_tps: f64,
    pub decode_tps_low: f64,
    pub decode_tps_high: f64,
    /// Output tokens/s of all sequences, with its range.
    pub throughput_tps: f64,
    pub throughput_tps_low: f64,
    pub throughput_tps_high: f64,
    pub prefill_tps: Option<f64>,
    pub prefill_tps_low: Option<f64>,
    pub prefill_tps_high: Option<f64>,
    /// Time to first token, seconds, with its range: llama.cpp's, the prompt's prefill plus
    /// one decode step; a serving engine's, the mean over a wave of `seqs` requests.
    pub ttft_s: Option<f64>,
    pub ttft_s_low: Option<f64>,
    pub ttft_s_high: Option<f64>,
    /// Time per output token after the first (inter-token latency), seconds, with its range.
    pub tpot_s: f64,
    pub tpot_s_low: f64,
    pub tpot_s_high: f64,
    /// The 99th percentile over the requests of a wave (serving engines only).
    pub ttft_p99_s: Option<f64>,
    pub tpot_p99_s: Option<f64>,
    /// Medians over the simulated requests and their mean wait before their prompt starts
    /// (serving engines whose workload has an output length).
    pub ttft_p50_s: Option<f64>,
    pub tpot_p50_s: Option<f64>,
    pub queue_s: Option<f64>,
    /// The most requests the simulated server ran at once in its capacity run (serving
    /// engines whose workload has an output length).
    pub running_peak: Option<f64>,
    /// Whether the KV cache, not `seqs`, kept requests waiting in the capacity run.
    pub kv_bound: bool,
    /// Requests the engine preempted in the capacity run (an engine with `preemption`).
    pub preemptions: Option<f64>,
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
    let eta = inputs
        .decode_efficiency
        .unwrap_or_else(|| decode_efficiency(inputs.family));
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
    let overhead = inputs
        .token_overhead
        .unwrap_or_else(|| step_overhead_per_32_layers(inputs.backend))
        * inputs.layers.max(1.0)
        / 32.0;
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
    let ttft = prefill_time.map(|t| t + step);
    Speed {
        decode_tps: decode,
        decode_tps_low: decode * range.0,
        decode_tps_high: decode * range.1,
        throughput_tps: decode * inputs.seqs,
        throughput_tps_low: decode * inputs.seqs * range.0,
        throughput_tps_high: decode * inputs.seqs * range.1,
        prefill_tps: prefill,
        prefill_tps_low: prefill.map(|p| p * PREFILL_RANGE.0),
        prefill_tps_high: prefill.map(|p| p * PREFILL_RANGE.1),
        // A shorter time is a higher speed: the high end of the speed range is the low
        // end of the time's.
        ttft_s: ttft,
        ttft_s_low: ttft.map(|t| t / PREFILL_RANGE.1),
        ttft_s_high: ttft.map(|t| t / PREFILL_RANGE.0),
        tpot_s: step,
        tpot_s_low: step / range.1,
        tpot_s_high: step / range.0,
        ttft_p99_s: None,
        tpot_p99_s: None,
        ttft_p50_s: None,
        tpot_p50_s: None,
        queue_s: None,
        running_peak: None,
        kv_bound: false,
        preemptions: None,
        bound,
        step_bytes,
    }
}

/// How a serving engine runs a step: its catalog fields (stdlib/engines.deploy), each
/// defaulting to the pooled fit of docs/calibration-serving.md.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Engine {
    /// Share of the memory bandwidth its kernels reach reading weights and KV cache.
    pub bandwidth_efficiency: f64,
    /// Share of the dense tensor peak its matrix multiplies (and attention) reach.
    pub compute_efficiency: f64,
    /// Fixed time per engine step, seconds: scheduling, launch, sampling set-up.
    pub step_overhead: f64,
    /// Time per running sequence per step, seconds: sampling, detokenizing, bookkeeping.
    pub sequence_overhead: f64,
    /// Whether its decode steps replay CUDA graphs; without them (eager mode) every
    /// kernel of every layer is launched each step.
    pub cuda_graphs: bool,
    /// Share of the compute efficiency its mixture-of-experts matmuls reach
    /// ([`MOE_EFFICIENCY`] unless the engine says).
    pub moe_efficiency: f64,
    /// Share of the bandwidth efficiency its mixture-of-experts kernels reach streaming
    /// expert weights ([`MOE_BANDWIDTH_EFFICIENCY`] unless the engine says).
    pub moe_bandwidth_efficiency: f64,
    /// Share of a request's output counted in its KV footprint at admission
    /// ([`super::sim::Config::output_reserve`]).
    pub output_reserve: f64,
    /// Whether it admits by the cache held now and preempts when decodes outgrow it
    /// ([`super::sim::Config::preempt`]).
    pub preempt: bool,
    /// Seconds every request's first token takes beyond the engine's steps (the HTTP
    /// front end, tokenization, hand-offs between its processes).
    pub request_latency: f64,
}

impl Engine {
    /// The pooled fit over vLLM, SGLang, TensorRT-LLM and LMDeploy (94 serving
    /// measurements, tests/it/serving_accuracy.rs `fit_serving_constants`, through this
    /// model and its simulator): what an engine that sets none of the fields
    /// runs at.
    pub const POOLED: Engine = Engine {
        bandwidth_efficiency: 0.82,
        compute_efficiency: 0.73,
        step_overhead: 2.07e-3,
        sequence_overhead: 6.0e-6,
        cuda_graphs: true,
        moe_efficiency: MOE_EFFICIENCY,
        moe_bandwidth_efficiency: MOE_BANDWIDTH_EFFICIENCY,
        output_reserve: 0.5,
        preempt: false,
        request_latency: 0.0,
    };
}

/// Expert matmuls of a mixture-of-experts layer (grouped GEMMs over a few tokens per
/// expert, with routing and token permutes) reach this share of the engine's compute
/// efficiency: fitted with [`MOE_BANDWIDTH_EFFICIENCY`] on the 14 MoE rows of the serving
/// measurements other than DeepSeek-R1's (docs/calibration-serving.md, "Mixture of
/// experts").
pub const MOE_EFFICIENCY: f64 = 0.368;
/// Expert weights a mixture-of-experts layer streams reach this share of the engine's
/// bandwidth efficiency (the same fit as [`MOE_EFFICIENCY`]).
pub const MOE_BANDWIDTH_EFFICIENCY: f64 = 0.628;
/// Share of a tensor type's datasheet peak the best matrix multiplies reach on a GPU whose
/// catalog entry and architecture record no measurement (Maximum Achievable Matmul FLOPS
/// over the peak): 80.3 %, the median of the seven NVIDIA data-centre GPUs measured in
/// stas00/ml-engineering's MAMF table (the H100 SXM's own share; the AMD architectures carry
/// their own `matmul_share`; docs/calibration-serving.md, "Achievable matmul rate").
pub const MATMUL_SHARE: f64 = 0.803;
/// Tokens an engine step processes at most when the engine does not say
/// (`max_num_batched_tokens`; SGLang's, TensorRT-LLM's and LMDeploy's default).
pub const DEFAULT_BATCH_TOKENS: f64 = 8192.0;
/// Latency of one tensor-parallel all-reduce in a serving engine per doubling of the group,
/// seconds (two all-reduces per layer per step): a group of `n` GPUs pays `log2(n)` times
/// it, as a recursive-doubling or tree all-reduce takes `log2(n)` rounds. The previous
/// fit's 65 µs, one figure for groups of two, four and eight on serving.csv's
/// tensor-parallel rows, is kept at four GPUs: 32.5 µs for two, 97.5 µs for eight; chosen
/// over the flat 65 µs and 20 µs per doubling on the hold-outs
/// (docs/calibration-serving.md).
pub const SERVING_ALL_REDUCE_LATENCY: f64 = 32.5e-6;
/// The same for a small all-reduce (at most [`SMALL_ALL_REDUCE_BYTES`]: a decode step of a
/// few sequences), which the engines run as a one-shot kernel over NVLink (vLLM's and
/// SGLang's custom all-reduce) instead of NCCL's rings: 12 µs per doubling, fitted to the
/// single-sequence decodes of large models on 8 × A100, H100 and B200 in
/// tests/fixtures/calibration/low_concurrency.csv (runs 110, 128, 132, 145;
/// docs/calibration-serving.md, "Small all-reduces").
pub const SMALL_ALL_REDUCE_LATENCY: f64 = 12e-6;
/// Message size up to which an all-reduce is small: 256 KiB, 16 tokens of an 8192-wide
/// model in 16 bits.
pub const SMALL_ALL_REDUCE_BYTES: f64 = 262_144.0;
/// The 10th and 90th percentiles of measured / predicted (as speeds) on held-out rows
/// (serving.csv with one GPU family left out of the fit, and GPUStack's pages, never
/// fitted; docs/calibration-serving.md): the ranges printed beside output throughput, time
/// per output token (and decode speed), a prompt's own prefill (prefill speed, time to first
/// token) and the wait beyond it behind other requests (`QUEUE_RANGE`, as a speed).
pub const THROUGHPUT_RANGE: (f64, f64) = (0.65, 1.39);
pub const TPOT_RANGE: (f64, f64) = (0.59, 1.58);
pub const TTFT_RANGE: (f64, f64) = (0.83, 1.20);
pub const QUEUE_RANGE: (f64, f64) = (0.25, 1.33);

/// What the serving model reads beyond [`SpeedInputs`].
#[derive(Clone, Copy, Debug)]
pub struct Serving {
    pub engine: Engine,
    /// Output tokens per request, when the workload says.
    pub output: Option<f64>,
    /// Dense 16-bit peak of one GPU, FLOP/s: attention runs at it whatever the weights'
    /// format (`SpeedInputs::peak` is the format's).
    pub peak16: Option<f64>,
    /// Share of the weights that are routed experts, and the share of them one token
    /// picks (`experts_active / experts`); 0 and 1 for a dense model.
    pub expert_share: f64,
    pub expert_pick: f64,
    /// Attention FLOP per query token per context token, over the layers that see the
    /// whole context and over the sliding-window layers (whose context is at most
    /// `window`).
    pub attention_global: f64,
    pub attention_local: f64,
    pub window: f64,
    /// KV bytes one GPU reads per context token of one sequence, over the layers that keep
    /// every token and over those that keep at most `kv_window`.
    pub kv_global: f64,
    pub kv_local: f64,
    pub kv_window: f64,
    /// Average context a decode step attends to.
    pub decode_context: f64,
    /// Pipeline stages, nodes and expert parallelism ([`Parallel::NONE`] for one
    /// tensor-parallel group inside a node).
    pub parallel: Parallel,
    /// Speculative decoding's drafter, when the deployment has `speculative { }`.
    pub drafter: Option<Drafter>,
    /// The engine's token budget per step (`max_num_batched_tokens`) and how it mixes
    /// prompt chunks with decodes.
    pub batch_tokens: f64,
    pub scheduling: super::sim::Scheduling,
    /// How requests arrive at one replica, when the workload says more than the
    /// deployment's `seqs` clients: a Poisson rate or a burst.
    pub arrivals: Option<super::sim::Arrivals>,
    /// Whether request lengths vary around the workload's means (`lengths = varied`).
    pub varied: bool,
    /// Tokens of KV cache one replica holds (a token of every layer), when the engine's
    /// memory says: the simulator admits requests only while their KV fits (a benchmark's
    /// burst runs fewer at once than `seqs` when the cache is small).
    pub kv_tokens: Option<f64>,
    /// The decode attention's parallelism, where the architecture limits it (its
    /// `decode_splits`): the GPU's streaming multiprocessors, the KV heads one GPU holds
    /// per sequence and the context splits per sequence and head. A decode step's
    /// attention runs one thread block per sequence, KV head and split; with fewer blocks
    /// than multiprocessors, the KV is read at that share of the bandwidth.
    pub attention_units: Option<f64>,
    pub kv_heads_per_gpu: Option<f64>,
    pub decode_splits: Option<f64>,
}

/// The simulator's two runs of a serving deployment: its capacity (the deployment's
/// `seqs` clients, or the workload's burst) and the latencies its workload sees (Poisson
/// arrivals at the workload's rate per replica, else the capacity run).
#[derive(Clone, Copy)]
struct Simulated {
    capacity: super::sim::Outcome,
    latency: super::sim::Outcome,
}

fn simulate_serving(
    inputs: &SpeedInputs,
    serving: &Serving,
    output: f64,
    step: &dyn Fn(Shape) -> f64,
) -> Option<Simulated> {
    use super::sim::{Arrivals, Config, simulate};
    let whole = |x: f64| {
        if x.is_finite() {
            x.round().clamp(1.0, u64::MAX as f64) as u64
        } else {
            1
        }
    };
    let seqs = whole(inputs.seqs);
    let config = |arrivals| Config {
        max_running: seqs,
        batch_tokens: whole(serving.batch_tokens),
        prompt: whole(inputs.prompt),
        output: whole(output),
        varied: serving.varied,
        tokens_per_step: serving.drafter.map_or(1.0, |d| d.expected.max(1.0)),
        arrivals,
        scheduling: serving.scheduling,
        kv_tokens: serving
            .kv_tokens
            .filter(|t| t.is_finite() && *t >= 1.0)
            .map_or(u64::MAX, whole),
        kv_local_share: if serving.kv_global + serving.kv_local > 0.0 {
            serving.kv_local / (serving.kv_global + serving.kv_local)
        } else {
            0.0
        },
        kv_window: if serving.kv_window.is_finite() {
            whole(serving.kv_window)
        } else {
            u64::MAX
        },
        output_reserve: serving.engine.output_reserve,
        preempt: serving.engine.preempt,
    };
    let capacity_arrivals = match serving.arrivals {
        Some(burst @ Arrivals::Burst { .. }) => burst,
        _ => Arrivals::Closed { clients: seqs },
    };
    let capacity = simulate(&config(capacity_arrivals), step);
    if capacity.completed == 0 {
        return None;
    }
    let latency = match serving.arrivals {
        Some(poisson @ Arrivals::Poisson { .. }) => {
            let run = simulate(&config(poisson), step);
            if run.completed == 0 {
                return None;
            }
            run
        }
        _ => capacity,
    };
    Some(Simulated { capacity, latency })
}

/// A time to first token as (the prompt's prefill alone, the wait beyond it).
fn split_wait(ttft: f64, alone: f64) -> (f64, f64) {
    let alone = alone.min(ttft).max(0.0);
    (alone, ttft - alone)
}

/// The closed-form wave model (`seqs` requests prefilled together, then decoding together),
/// used where the simulator cannot run: no output length, or no compute peak.
/// Returns (throughput, mean TTFT, TPOT, p99 TTFT, p99 TPOT).
fn waves(
    step: &dyn Fn(f64, f64, f64, f64) -> Step,
    serving: &Serving,
    seqs: f64,
    prompt: f64,
    decode_time: f64,
    computable: bool,
) -> (f64, Option<f64>, f64, Option<f64>, f64) {
    let wave_prefill = step(0.0, seqs * prompt, 0.0, prompt / 2.0).time;
    let later = serving.output.map(|output| (output - 1.0).max(0.0));
    let (throughput, tpot, tpot_p99) = match (serving.output, later) {
        (Some(output), Some(later)) if later > 0.0 => {
            let wave = wave_prefill + later * decode_time;
            (
                seqs * output / wave,
                decode_time + wave_prefill * (seqs - 1.0) / (2.0 * seqs) / later,
                decode_time + wave_prefill * (seqs - 1.0) / seqs / later,
            )
        }
        // One output token: it comes out of the prefill.
        (Some(output), _) => (seqs * output / wave_prefill, decode_time, decode_time),
        _ => (seqs / decode_time, decode_time, decode_time),
    };
    let ttft = computable.then(|| wave_prefill * (seqs + 1.0) / (2.0 * seqs));
    let ttft_p99 = computable.then(|| wave_prefill * (0.99 * seqs).ceil() / seqs);
    (throughput, ttft, tpot, ttft_p99, tpot_p99)
}

/// How a replica's GPUs are laid out beyond tensor parallelism
/// (docs/calibration-serving.md, "Pipeline and expert parallelism").
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Parallel {
    /// Pipeline-parallel stages, each a tensor-parallel group of `count` GPUs holding
    /// `1 / stages` of the layers.
    pub stages: f64,
    /// GPUs in one node (`gpus_per_node`), when the catalog says; a tensor-parallel group
    /// larger than a node all-reduces over `node_link`.
    pub gpus_per_node: Option<f64>,
    /// Network bandwidth per GPU between nodes, bytes/s, per direction.
    pub node_link: f64,
    /// Experts spread whole over the tensor-parallel GPUs: each MoE layer's all-reduce
    /// becomes two all-to-alls (dispatch and combine) of each token to its `experts_active`
    /// experts.
    pub expert_parallel: bool,
    pub experts_active: f64,
    /// The prompt tokens of one request: a prefill of `p` tokens is `p / prompt`
    /// requests, which a pipeline runs as separate micro-batches.
    pub prompt: f64,
}

impl Parallel {
    pub const NONE: Parallel = Parallel {
        stages: 1.0,
        gpus_per_node: None,
        node_link: DEFAULT_NODE_LINK,
        expert_parallel: false,
        experts_active: 1.0,
        prompt: 1.0,
    };
}

/// Network bandwidth per GPU between nodes when a GPU lists none: 400 Gb/s InfiniBand
/// NDR or RoCE, 50 GB/s, what DGX/HGX H100-class nodes carry per GPU.
pub const DEFAULT_NODE_LINK: f64 = 50e9;
/// Latency added to each all-reduce that crosses nodes, seconds: NCCL's ring and tree
/// algorithms add a network round (a few microseconds on InfiniBand) plus the proxy
/// thread's hand-off per step; assumed, not fitted (no multi-node rows in the data).
pub const NODE_ALL_REDUCE_LATENCY: f64 = 25e-6;
/// Latency of one point-to-point activation send between pipeline stages, seconds
/// (NCCL send/recv of a small message, kernel launch included); assumed, not fitted.
pub const PIPELINE_SEND_LATENCY: f64 = 20e-6;
/// Latency of one expert-parallel all-to-all (dispatch or combine), seconds; assumed:
/// the tensor-parallel all-reduce latency of four GPUs ([`SERVING_ALL_REDUCE_LATENCY`]).
pub const ALL_TO_ALL_LATENCY: f64 = 2.0 * SERVING_ALL_REDUCE_LATENCY;
/// Fixed time of one drafter forward pass (one drafted token for the batch), seconds:
/// a small CUDA graph's replay and the draft sampling; assumed, not fitted (the
/// speculative rows of the data are on models or attention layouts the catalog lacks).
pub const DRAFT_FORWARD_OVERHEAD: f64 = 60e-6;

/// Speculative decoding's drafter (docs/calibration-serving.md, "Speculative decoding").
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Drafter {
    /// Tokens drafted per step, `k`: the target verifies `k + 1` per sequence.
    pub tokens: f64,
    /// Expected tokens a target step yields per sequence, `(1 − a^(k+1)) / (1 − a)`.
    pub expected: f64,
    /// Bytes of drafter weights one GPU reads per drafted token, and the parameters one
    /// drafted token multiplies (0 for n-gram lookup, which runs on the CPU).
    pub weights_bytes: f64,
    pub params: f64,
    /// Drafter KV bytes one GPU reads per context token of one sequence.
    pub kv_per_token: f64,
}

/// Time of the drafter's `k` forward passes for `decode` sequences at `context`: each
/// reads the drafter's weights and KV and multiplies its parameters, at the engine's
/// efficiencies, plus [`DRAFT_FORWARD_OVERHEAD`]; nothing for n-gram lookup.
fn draft_time(
    drafter: &Drafter,
    decode: f64,
    context: f64,
    eta: f64,
    rate: Option<f64>,
    count: f64,
) -> f64 {
    if decode <= 0.0 || (drafter.weights_bytes <= 0.0 && drafter.params <= 0.0) {
        return 0.0;
    }
    let memory = (drafter.weights_bytes + drafter.kv_per_token * context * decode) / eta;
    let compute = rate.map_or(0.0, |rate| 2.0 * drafter.params * decode / count / rate);
    drafter.tokens * (memory.max(compute) + DRAFT_FORWARD_OVERHEAD)
}

/// How many micro-batches a pipeline runs a step's work as: one per request in it (a
/// decoding sequence or a prompt), at most one per stage.
fn micro_batches(parallel: &Parallel, decode: f64, prefill: f64) -> f64 {
    if parallel.stages <= 1.0 {
        return 1.0;
    }
    (decode + prefill / parallel.prompt.max(1.0)).clamp(1.0, parallel.stages)
}

/// Time of a micro-batch of `tokens` tokens crossing the pipeline's `stages − 1` stage
/// boundaries: each sends its activations (`hidden` × 16 bits per token) point to point,
/// over `node_link` where the boundary is between nodes, else over the GPUs' link.
fn pipeline_send_time(parallel: &Parallel, count: f64, tokens: f64, hidden: f64, link: f64) -> f64 {
    let boundaries = (parallel.stages - 1.0).max(0.0);
    if boundaries == 0.0 {
        return 0.0;
    }
    let crossing = match parallel.gpus_per_node {
        Some(node) if count >= node => boundaries,
        Some(node) => {
            let per_node = (node / count).floor().max(1.0);
            ((parallel.stages / per_node).ceil() - 1.0).clamp(0.0, boundaries)
        }
        None => 0.0,
    };
    let bytes = tokens * hidden * ACTIVATION_BYTES;
    crossing * (bytes / parallel.node_link + PIPELINE_SEND_LATENCY)
        + (boundaries - crossing) * (bytes / link + PIPELINE_SEND_LATENCY)
}

/// Time of the tensor-parallel communication of one step over `tokens` tokens on
/// `count` GPUs: two all-reduces per layer over the GPUs' link, or over `node_link`
/// (plus [`NODE_ALL_REDUCE_LATENCY`]) when the group spans nodes; with expert
/// parallelism the MoE half becomes two all-to-alls sending each token's activations
/// to its `experts_active` experts, `(count − 1) / count` of them off the GPU.
fn tensor_parallel_time(
    parallel: &Parallel,
    count: f64,
    tokens: f64,
    hidden: f64,
    layers: f64,
    link: f64,
    moe: bool,
) -> f64 {
    if count <= 1.0 {
        return 0.0;
    }
    let across = parallel.gpus_per_node.is_some_and(|node| count > node);
    let per_round = if tokens * hidden * ACTIVATION_BYTES <= SMALL_ALL_REDUCE_BYTES && !across {
        SMALL_ALL_REDUCE_LATENCY
    } else {
        SERVING_ALL_REDUCE_LATENCY
    };
    let rounds = per_round * count.log2();
    let (bandwidth, latency) = if across {
        (
            parallel.node_link.min(link),
            rounds + NODE_ALL_REDUCE_LATENCY,
        )
    } else {
        (link, rounds)
    };
    let all_reduce =
        tokens * hidden * ACTIVATION_BYTES * 2.0 * (count - 1.0) / count / bandwidth + latency;
    if parallel.expert_parallel && moe {
        let sent =
            tokens / count * parallel.experts_active * hidden * ACTIVATION_BYTES * (count - 1.0)
                / count;
        let all_to_all = sent / bandwidth + ALL_TO_ALL_LATENCY;
        layers * (all_reduce + 2.0 * all_to_all)
    } else {
        2.0 * layers * all_reduce
    }
}

/// One serving engine step: its time and which resource bounds it.
struct Step {
    time: f64,
    compute_bound: bool,
    bytes: f64,
    /// Expected output tokens each decoding sequence gains in the step: 1, or with
    /// speculative decoding the accepted drafts plus the target's own token.
    accepted: f64,
}

/// A serving engine under continuous batching (docs/calibration-serving.md).
///
/// An engine step decodes `d` sequences and prefills `p` prompt tokens: it reads the
/// dense weights and the experts the `d + p` tokens touch (expected distinct experts:
/// `1 − (1 − k/E)^(d + p)` of them), and the KV cache of every decoding sequence, at the
/// engine's bandwidth efficiency; it computes `2 × active × (d + p)` FLOP of matmuls at its
/// compute efficiency and the attention FLOP at the 16-bit peak. Matmuls and attention are
/// separate kernels, each bound by its own resource: step = max(weights, matmuls) +
/// max(KV, attention) + all-reduces + step overhead (+ per-layer launches without CUDA
/// graphs) + per-sequence cost × `d`.
///
/// The requests themselves run through the discrete-event simulator of [`super::sim`]:
/// at most `seqs` running, prompt chunks within the engine's token budget, arrivals as the
/// workload says (`seqs` clients each keeping one request open; a `burst`; Poisson arrivals
/// at its `rate` per replica). Output throughput is the capacity run's (the clients or the
/// burst); times to first token and per output token are the workload's distributions.
/// Without an output length, or without a compute peak, the closed-form [`waves`] stand in.
pub fn serve(inputs: &SpeedInputs, serving: &Serving) -> Speed {
    let model = StepModel::new(inputs, serving);
    let step = |all_decode: f64, all_prefill: f64, decode_context: f64, prefill_context: f64| {
        model.step(all_decode, all_prefill, decode_context, prefill_context)
    };
    let seqs = inputs.seqs.max(1.0);
    let prompt = inputs.prompt;
    let decode = step(seqs, 0.0, serving.decode_context, 0.0);
    // The time per output token of a decode step (with speculative decoding a step
    // yields `accepted` tokens per sequence).
    let decode = Step {
        time: decode.time / decode.accepted,
        ..decode
    };
    // Prefill needs a compute peak: without one there is no prefill or first-token time.
    let computable = model.matmul_rate.is_some();
    let single_prefill = step(0.0, prompt, 0.0, prompt / 2.0).time;
    let simulated = match serving.output {
        Some(output) if computable && output >= 1.0 => {
            let shape_time = |shape: Shape| {
                step(
                    shape.decode,
                    shape.prefill,
                    shape.decode_context,
                    shape.prefill_context,
                )
                .time
            };
            simulate_serving(inputs, serving, output, &shape_time)
        }
        _ => None,
    };
    let (throughput, ttft, tpot, ttft_p99, tpot_p99) = match simulated {
        Some(s) => (
            s.capacity.throughput,
            Some(s.latency.ttft_mean),
            s.latency.tpot_mean,
            Some(s.latency.ttft_p99),
            s.latency.tpot_p99,
        ),
        None => waves(&step, serving, seqs, prompt, decode.time, computable),
    };
    let tpot = if tpot > 0.0 { tpot } else { decode.time };
    let tpot_p99 = if tpot_p99 > 0.0 { tpot_p99 } else { tpot };
    speed(&Figures {
        decode,
        single_prefill,
        prefill: computable.then(|| prompt / single_prefill),
        throughput,
        ttft,
        tpot,
        ttft_p99,
        tpot_p99,
        simulated: simulated.as_ref(),
        request_latency: serving.engine.request_latency.max(0.0),
    })
}

/// The step-time roofline of one engine on one deployment: what every step shares.
struct StepModel<'a> {
    inputs: &'a SpeedInputs,
    serving: &'a Serving,
    count: f64,
    /// Bytes per second the engine reads.
    eta: f64,
    /// Per-step overhead, with the per-layer launches when there are no CUDA graphs.
    overhead: f64,
    /// Active parameters in the experts and in the dense part.
    expert_active: f64,
    dense_active: f64,
    /// FLOP per second of the matmuls and of attention, when the GPU has a peak.
    matmul_rate: Option<f64>,
    attention_rate: Option<f64>,
    moe: bool,
    /// Query tokens a decoding sequence verifies per step.
    verified: f64,
}

impl<'a> StepModel<'a> {
    /// The roofline's rates and shares for `inputs` served as `serving` says.
    fn new(inputs: &'a SpeedInputs, serving: &'a Serving) -> StepModel<'a> {
        let engine = serving.engine;
        let launches = if engine.cuda_graphs {
            0.0
        } else {
            step_overhead_per_32_layers(Backend::Cuda) * inputs.layers.max(1.0) / 32.0
        };
        let expert_active = inputs.params * serving.expert_share * serving.expert_pick;
        StepModel {
            inputs,
            serving,
            count: inputs.count.max(1.0),
            eta: engine.bandwidth_efficiency * inputs.bandwidth,
            overhead: engine.step_overhead + launches,
            expert_active,
            dense_active: (inputs.active_params - expert_active).max(0.0),
            matmul_rate: inputs.peak.map(|peak| engine.compute_efficiency * peak),
            attention_rate: serving
                .peak16
                .or(inputs.peak)
                .map(|peak| engine.compute_efficiency * peak),
            moe: serving.expert_share > 0.0,
            // Speculative decoding: each decoding sequence verifies its `k` drafts and the
            // next token together, `k + 1` query tokens that read its KV once.
            verified: serving.drafter.map_or(1.0, |d| d.tokens + 1.0),
        }
    }

    /// Tensor-parallel communication of a step over `tokens` tokens.
    fn all_reduce(&self, tokens: f64) -> f64 {
        tensor_parallel_time(
            &self.serving.parallel,
            self.count,
            tokens,
            self.inputs.hidden,
            self.inputs.layers,
            self.inputs.link_bandwidth,
            self.moe,
        )
    }

    /// Attention FLOP of `queries` query tokens over `context` tokens of context.
    fn attention(&self, queries: f64, context: f64) -> f64 {
        let serving = self.serving;
        queries
            * (serving.attention_global * context
                + serving.attention_local * context.min(serving.window))
    }

    /// One step decoding `all_decode` sequences at `decode_context` and prefilling
    /// `all_prefill` prompt tokens at `prefill_context`.
    fn step(
        &self,
        all_decode: f64,
        all_prefill: f64,
        decode_context: f64,
        prefill_context: f64,
    ) -> Step {
        let (inputs, serving, engine) = (self.inputs, self.serving, &self.serving.engine);
        let (parallel, count, eta) = (&serving.parallel, self.count, self.eta);
        // A pipeline runs the step's requests as micro-batches, one stage each at a time:
        // a sequence advances when its micro-batch has passed every stage, which takes
        // the whole model's time for that micro-batch (docs/calibration-serving.md).
        let micro = micro_batches(parallel, all_decode, all_prefill);
        let (decode, prefill) = (all_decode / micro, all_prefill / micro);
        let queries = decode * self.verified;
        let tokens = queries + prefill;
        let touched = 1.0 - (1.0 - serving.expert_pick).powf(tokens.max(1.0));
        let dense = inputs.weights_bytes / count * (1.0 - serving.expert_share);
        let experts = inputs.weights_bytes / count * serving.expert_share * touched;
        let kv = decode
            * (serving.kv_global * decode_context
                + serving.kv_local * decode_context.min(serving.kv_window));
        let weights_time = (dense + experts / engine.moe_bandwidth_efficiency) / eta;
        // Few sequences over few KV heads leave most multiprocessors idle while the KV is
        // read.
        let occupancy = match (
            serving.attention_units,
            serving.kv_heads_per_gpu,
            serving.decode_splits,
        ) {
            (Some(units), Some(heads), Some(splits))
                if units > 0.0 && heads > 0.0 && splits > 0.0 && decode > 0.0 =>
            {
                (decode * heads * splits / units).clamp(0.05, 1.0)
            }
            _ => 1.0,
        };
        let kv_time = kv / (eta * occupancy);
        let matmul_time = self
            .matmul_rate
            .map(|rate| {
                2.0 * (self.dense_active + self.expert_active / engine.moe_efficiency) * tokens
                    / count
                    / rate
            })
            .unwrap_or(0.0);
        let attention_time = self
            .attention_rate
            .map(|rate| {
                (self.attention(queries, decode_context) + self.attention(prefill, prefill_context))
                    / count
                    / rate
            })
            .unwrap_or(0.0);
        let drafting = serving.drafter.map_or(0.0, |drafter| {
            draft_time(
                &drafter,
                decode,
                decode_context,
                eta,
                self.matmul_rate,
                count,
            )
        });
        let sends = pipeline_send_time(
            parallel,
            count,
            tokens,
            inputs.hidden,
            inputs.link_bandwidth,
        );
        Step {
            time: weights_time.max(matmul_time)
                + kv_time.max(attention_time)
                + self.all_reduce(tokens)
                + sends
                + drafting
                + self.overhead
                + engine.sequence_overhead * all_decode,
            compute_bound: matmul_time + attention_time > weights_time + kv_time,
            bytes: (dense + experts + kv) / parallel.stages.max(1.0),
            accepted: match serving.drafter {
                Some(drafter) if all_decode > 0.0 => drafter.expected,
                _ => 1.0,
            },
        }
    }
}

/// The figures [`serve`] reports from: the decode step, the prefill, and the simulated or
/// closed-form latencies.
struct Figures<'a> {
    /// A decode step of `seqs` sequences, its time per output token.
    decode: Step,
    /// Time of one prompt's prefill alone, and the prefill rate (with a compute peak).
    single_prefill: f64,
    prefill: Option<f64>,
    throughput: f64,
    ttft: Option<f64>,
    tpot: f64,
    ttft_p99: Option<f64>,
    tpot_p99: f64,
    simulated: Option<&'a Simulated>,
    /// The engine's time per request outside its steps, added to every first token.
    request_latency: f64,
}

/// The [`Speed`] of these figures, with their ranges.
fn speed(f: &Figures) -> Speed {
    let (ttft, tpot, prefill, throughput) = (f.ttft, f.tpot, f.prefill, f.throughput);
    let (single_prefill, simulated) = (f.single_prefill, f.simulated);
    let decode_tps = 1.0 / tpot;
    let latency = f.request_latency;
    Speed {
        decode_tps,
        decode_tps_low: decode_tps * TPOT_RANGE.0,
        decode_tps_high: decode_tps * TPOT_RANGE.1,
        throughput_tps: throughput,
        throughput_tps_low: throughput * THROUGHPUT_RANGE.0,
        throughput_tps_high: throughput * THROUGHPUT_RANGE.1,
        prefill_tps: prefill,
        prefill_tps_low: prefill.map(|p| p * TTFT_RANGE.0),
        prefill_tps_high: prefill.map(|p| p * TTFT_RANGE.1),
        ttft_s: ttft.map(|t| t + latency),
        // A first token's time is the prompt's own prefill, sized by the prefill range,
        // plus what it waited behind other requests' work, sized by the queue range.
        ttft_s_low: ttft.map(|t| {
            let (alone, waited) = split_wait(t, single_prefill);
            alone / TTFT_RANGE.1 + waited / QUEUE_RANGE.1 + latency
        }),
        ttft_s_high: ttft.map(|t| {
            let (alone, waited) = split_wait(t, single_prefill);
            alone / TTFT_RANGE.0 + waited / QUEUE_RANGE.0 + latency
        }),
        tpot_s: tpot,
        tpot_s_low: tpot / TPOT_RANGE.1,
        tpot_s_high: tpot / TPOT_RANGE.0,
        ttft_p99_s: f.ttft_p99.map(|t| t + latency),
        tpot_p99_s: Some(f.tpot_p99),
        ttft_p50_s: simulated.map(|s| s.latency.ttft_p50 + latency),
        tpot_p50_s: simulated
            .map(|s| s.latency.tpot_p50)
            .filter(|t| *t > 0.0)
            .or(simulated.map(|_| tpot)),
        queue_s: simulated.map(|s| s.latency.queue_mean),
        running_peak: simulated.map(|s| s.capacity.peak_running as f64),
        kv_bound: simulated.is_some_and(|s| s.capacity.kv_bound),
        preemptions: simulated.map(|s| s.capacity.preemptions as f64),
        bound: if f.decode.compute_bound {
            Bound::Compute
        } else {
            Bound::Bandwidth
        },
        step_bytes: f.decode.bytes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A one-token all-reduce is all latency: a group of eight pays three rounds, a group
    /// of two one, four two (the previous flat fit's 65 µs).
    #[test]
    fn all_reduce_latency_grows_with_the_rounds_of_the_group() {
        // A large message (64 tokens of an 8192-wide model) takes NCCL's rounds.
        let time = |count: f64| {
            tensor_parallel_time(&Parallel::NONE, count, 64.0, 8192.0, 1.0, 1e18, false) / 2.0
        };
        assert_eq!(time(1.0), 0.0);
        assert!((time(2.0) - 32.5e-6).abs() < 1e-9, "{}", time(2.0));
        assert!((time(4.0) - 65e-6).abs() < 1e-9, "{}", time(4.0));
        // One token's is the one-shot kernel's.
        let small = tensor_parallel_time(&Parallel::NONE, 8.0, 1.0, 8192.0, 1.0, 1e18, false) / 2.0;
        assert!(
            (small - 3.0 * SMALL_ALL_REDUCE_LATENCY).abs() < 1e-9,
            "{small}"
        );
        assert!((time(8.0) / time(2.0) - 3.0).abs() < 1e-6);
        // Across nodes (four GPUs per node) the network round is added.
        let nodes = Parallel {
            gpus_per_node: Some(4.0),
            node_link: 1e18,
            ..Parallel::NONE
        };
        let across = tensor_parallel_time(&nodes, 8.0, 64.0, 8192.0, 1.0, 1e18, false) / 2.0;
        assert!((across - time(8.0) - NODE_ALL_REDUCE_LATENCY).abs() < 1e-9);
    }
}
