//! Estimates a deployment configuration's figures ([`Figures`]): memory, fit, speed and
//! cost.
//!
//! The memory terms follow docs/estimation.md (weights from the model's files table or
//! params × bpw, KV per attention kind, tensor-parallel head split with replication,
//! engine overhead and utilization); speed comes from the fitted roofline in
//! [`super::speed`]; cost from the GPU's price and the workload.

use super::entry::Entry;
use super::figures::Figures;
use super::schema::{
    self, Attention, Device, Fallback, GpuFamily, Interconnect, Kernels, MemoryKind, OffloadKind,
    OffloadMode, Placement as EnginePlacement, QuantKind, Split, TensorType, Vendor, WindowKv,
    YesNo,
};
use super::support::{self, Support};
use super::value::EvalError;
use super::{ollama, speed};
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
    /// The GPU's architecture entry (its `arch`), which says what runs natively.
    pub arch: Option<&'a Entry<'db>>,
    pub context: u64,
    pub seqs: u64,
    pub count: u64,
    pub replicas: u64,
    pub memory_utilization: Option<f64>,
    pub prompt: Option<f64>,
    /// The workload's output tokens per request and request rate, when it has them.
    pub output: Option<f64>,
    pub rate: Option<f64>,
    /// Requests the workload sends at once (`burst`).
    pub burst: Option<f64>,
    /// `lengths = varied`.
    pub varied: bool,
    /// Weights from `params × bpw` even when the model lists artifact sizes (the seed
    /// pages' matrices compute them this way).
    pub theoretical_weights: bool,
    /// `offload = auto`: the layers that do not fit on the GPUs stay in host memory and
    /// run on the CPU (engines with `offload = layers`).
    pub offload: bool,
    /// The deployment's host machine (its `host`, with `host_memory` and
    /// `host_bandwidth` applied); `None` for the catalog queries.
    pub host: Option<HostFigures>,
    pub host_name: Option<&'a str>,
    /// `enforce_eager = yes`: the serving engine runs without CUDA graphs.
    pub enforce_eager: bool,
    /// `batched_tokens`: the deployment's override of the engine's token budget per step.
    pub batched_tokens: Option<f64>,
    /// `flash_attention`: on or off as written; `None` leaves it to the engine's default.
    pub flash_attention: Option<bool>,
    /// How the GPUs are paid for (`pricing`, `owned { }`, the offers that may be rented);
    /// `None` for the catalog queries, which list the GPU's own `price` or `msrp`
    /// ([`hourly_price`]).
    pub pricing: Option<Pricing<'a, 'db>>,
    /// Pipeline stages, expert parallelism and speculative decoding
    /// ([`super::parallel`]); none for the catalog queries.
    pub plan: super::parallel::Plan<'a, 'db>,
}

impl Rental {
    /// `2 × lambda gpu_1x_h100_sxm5 at $3.29/h (offer lambda_gpu_1x_h100_sxm5)`.
    pub fn describe(&self) -> String {
        format!(
            "{} × {} {} at ${:.2}/h{} (offer {})",
            self.instances,
            self.provider,
            self.instance,
            self.instance_price_per_hour,
            if self.spot { " spot" } else { "" },
            self.offer
        )
    }
}

/// `pricing = cloud` or `owned` (docs/cost.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PricingMode {
    /// Whole instances of a catalog `offer`.
    Cloud,
    /// The purchase price amortised, plus power and the rest of the machine.
    Owned,
}

impl PricingMode {
    pub fn keyword(self) -> &'static str {
        match self {
            PricingMode::Cloud => "cloud",
            PricingMode::Owned => "owned",
        }
    }
}

/// `owned { amortize power pue host }`, in base units (seconds, $/J, a ratio, $/s).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Owned {
    pub amortize: f64,
    pub power: f64,
    pub pue: f64,
    pub host: f64,
}

/// Years over which an owned GPU's purchase price is spread by default: three, the
/// depreciation period cloud providers and most hardware budgets use for servers
/// (docs/cost.md).
pub const DEFAULT_AMORTIZE_YEARS: f64 = 3.0;
/// Electricity price assumed for owned GPUs, $/kWh: the US average retail price for
/// commercial customers was about $0.13/kWh in 2024 (EIA, Electric Power Monthly, table
/// 5.3); $0.15 leaves room for the cooling and distribution not in `pue`.
pub const DEFAULT_POWER_PER_KWH: f64 = 0.15;
/// Power usage effectiveness assumed for owned GPUs: the Uptime Institute's 2023 global
/// survey average was 1.58, hyperscale facilities report 1.1–1.2; 1.3 is a well-run
/// enterprise room.
pub const DEFAULT_PUE: f64 = 1.3;

impl Default for Owned {
    fn default() -> Self {
        Owned {
            amortize: DEFAULT_AMORTIZE_YEARS * crate::units::SECONDS_PER_YEAR as f64,
            power: DEFAULT_POWER_PER_KWH / crate::units::JOULES_PER_KWH as f64,
            pue: DEFAULT_PUE,
            host: 0.0,
        }
    }
}

/// How a deployment pays for its GPUs.
#[derive(Clone, Copy)]
pub struct Pricing<'a, 'db> {
    pub mode: PricingMode,
    /// `spot = true`: offers at their spot price; offers without one are left out.
    pub spot: bool,
    /// The offers the deployment may rent, by name: those in scope that pass its
    /// `provider`, `region` and `offer`. Which of them carry the deployment's GPU is
    /// decided per configuration ([`offer_gpu_matches`]).
    pub offers: &'a [(&'a str, &'a Entry<'db>)],
    /// The deployment's filters in words (`provider = aws, region = "us-east-1"`), for
    /// the reason when no offer matches; empty without filters.
    pub filters: &'a str,
    pub owned: Owned,
}

/// The rented configuration `pricing = cloud` chose.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Rental {
    pub offer: String,
    pub provider: String,
    pub instance: String,
    pub region: Option<String>,
    /// Whole instances rented, and GPUs on each.
    pub instances: u64,
    pub gpus_per_instance: u64,
    /// The price of one instance per second (on demand or spot), and per hour.
    #[serde(skip)]
    pub instance_price: f64,
    #[serde(rename = "instance_price_usd_per_hour")]
    pub instance_price_per_hour: f64,
    pub spot: bool,
    /// The offer's `network` (bytes per second per GPU, each way) when the tensor-parallel
    /// group spans its instances and all-reduces over it; absent when one instance holds
    /// the group.
    #[serde(
        rename = "network_bytes_per_second",
        skip_serializing_if = "Option::is_none"
    )]
    pub network: Option<f64>,
}

/// A host machine's figures, in bytes and bytes per second.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct HostFigures {
    pub memory: Option<f64>,
    pub bandwidth: Option<f64>,
    /// Host-to-GPU bandwidth per direction.
    pub pcie: Option<f64>,
}

/// Prompt length assumed for `ttft` when the deployment has no workload.
pub const DEFAULT_PROMPT: f64 = 2048.0;
/// Share of usable memory above which a fit is tight.
pub const TIGHT_ABOVE: f64 = 0.9;

impl<'a, 'db> Inputs<'a, 'db> {
    /// How the engine runs the weight format on this GPU.
    pub fn support(&self) -> Support {
        support::support(self.quant, self.arch, self.engine)
    }

    /// A hypothetical configuration on one GPU, one replica, without a workload: what the
    /// catalog queries (`matrix`, `gpus`, `models`) evaluate. Each entry comes with its name.
    pub fn on_one_gpu(
        model: (&'a Entry<'db>, &'a str),
        quant: (&'a Entry<'db>, &'a str),
        kv: &'a Entry<'db>,
        engine: (&'a Entry<'db>, &'a str),
        gpu: (&'a Entry<'db>, &'a str),
        context: u64,
        seqs: u64,
    ) -> Self {
        Inputs {
            model: model.0,
            model_name: model.1,
            quant: quant.0,
            quant_name: quant.1,
            kv,
            engine: engine.0,
            engine_name: engine.1,
            gpu: gpu.0,
            gpu_name: gpu.1,
            arch: None,
            context,
            seqs,
            count: 1,
            replicas: 1,
            memory_utilization: None,
            prompt: None,
            output: None,
            rate: None,
            burst: None,
            varied: false,
            theoretical_weights: false,
            offload: false,
            flash_attention: None,
            host: None,
            host_name: None,
            enforce_eager: false,
            batched_tokens: None,
            pricing: None,
            plan: super::parallel::Plan::default(),
        }
    }

    /// GPUs one replica uses: `count` per pipeline stage.
    pub fn gpus_per_replica(&self) -> u64 {
        self.count.saturating_mul(self.plan.pipeline.max(1))
    }

    /// Whether the `gpu` entry is the host's CPU (`device = cpu`).
    pub fn on_cpu(&self) -> bool {
        self.gpu.as_gpu().device == Some(Device::Cpu)
    }

    /// Whether layers may be kept in host memory: `offload = auto` on an engine with
    /// `offload = layers`, on a GPU.
    fn may_offload(&self) -> bool {
        self.offload
            && self.engine.as_engine().offload == Some(OffloadKind::Layers)
            && !self.on_cpu()
    }
}

/// The share of unified memory macOS lets the GPU wire by default
/// (`recommendedMaxWorkingSetSize`): two thirds up to 36 GiB, three quarters above.
/// Logged values: 10,922.67 MB on 16 GB (abetlen/llama-cpp-python#687), 21,845.34 MB on
/// 32 GB (ggml-org/llama.cpp#2011, ollama/ollama#434), "around 47 GB" on 64 GB
/// (ggml-org/llama.cpp#1870); a 128 GiB machine on macOS 26 logs 107.52 GiB (0.84,
/// antirez/ds4#893), so three quarters is conservative for the largest machines.
pub fn unified_memory_share(memory_bytes: f64) -> f64 {
    if memory_bytes <= 36.0 * (1u64 << 30) as f64 {
        2.0 / 3.0
    } else {
        0.75
    }
}

/// How a deployment fits: comfortably, tightly (above 90 % of usable memory), or not.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Comfortable,
    Tight,
    /// `offload = auto`: some layers run from host memory on the CPU.
    FitsWithOffload,
    DoesNotFit,
}

impl Verdict {
    pub fn describe(self) -> &'static str {
        match self {
            Verdict::Comfortable => "fits comfortably",
            Verdict::Tight => "tight fit",
            Verdict::FitsWithOffload => "fits with offload",
            Verdict::DoesNotFit => "does not fit",
        }
    }
}

/// The memory figures of one deployment in exact bytes, for `explain`.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Breakdown {
    pub weights_bytes: i128,
    /// `"files"` when the model lists the artifact, else `"params × bpw"`.
    pub weights_source: &'static str,
    pub kv_bytes: i128,
    /// Runtime overhead on each GPU.
    pub overhead_bytes: i128,
    pub total_bytes: i128,
    pub per_gpu_bytes: i128,
    pub usable_bytes: Option<i128>,
    pub utilization: Option<f64>,
    pub verdict: Option<Verdict>,
    #[serde(rename = "max_context_tokens")]
    pub max_context: Option<u64>,
    /// The largest context the memory holds, not capped at the model's window: past the
    /// window it is physical room only (seed pages 000/001 print it as "max context
    /// before OOM").
    #[serde(rename = "physical_max_context_tokens")]
    pub physical_max_context: Option<u64>,
    #[serde(rename = "model_max_context_tokens")]
    pub model_max_context: Option<u64>,
    /// The KV cache the same model would need with plain multi-head attention at the
    /// same dtype, context and sequences: what GQA/MLA saves.
    pub mha_kv_bytes: Option<i128>,
    /// KV heads each GPU holds, and whether heads are replicated across GPUs.
    pub kv_heads_per_gpu: Option<u64>,
    pub kv_heads_replicated: bool,
    /// `auto` or `none`; present with `offload = auto` or `gpu = cpu` (as are the host
    /// figures below).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offload: Option<OffloadMode>,
    /// Layers on the GPUs, of `layers`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_layers: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layers: Option<u64>,
    /// Bytes in host memory: offloaded layers with their KV cache and the input
    /// embeddings; with `gpu = cpu`, everything.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_bytes: Option<i128>,
    /// The host's memory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_memory_bytes: Option<i128>,
    /// The host's name (the deployment's `host`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// The engine's memory per GPU beside weights and KV cache, by component
    /// (`overhead_bytes` is what of it counts inside the usable share).
    pub engine_memory: EngineMemory,
    /// Memory per GPU left for the KV cache at startup: usable − weights per GPU −
    /// `overhead_bytes`; negative when nothing is left.
    pub kv_budget_bytes: Option<i128>,
    /// Tokens of context (one sequence) the KV budget holds: vLLM's "GPU KV cache size".
    pub kv_capacity_tokens: Option<u64>,
    /// What the process holds on each GPU once started: an engine that sizes its KV cache
    /// at startup fills the usable share; CUDA graphs outside it come on top.
    pub peak_per_gpu_bytes: Option<i128>,
    /// Why the engine would not start, if it would not.
    pub startup_failure: Option<StartupFailure>,
}

/// The engine's memory per GPU beside weights and KV cache, by component, in bytes
/// (docs/estimation.md, "Engine memory").
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct EngineMemory {
    /// The engine's `overhead` (+ `overhead_ratio`, `overhead_per_vocab`): what the other
    /// components do not name.
    pub base_bytes: i128,
    /// CUDA context and other memory outside the framework's allocator.
    pub cuda_context_bytes: i128,
    /// Communication buffers when count > 1.
    pub communication_bytes: i128,
    /// The startup profiling run's forward pass over `profile_tokens` tokens.
    pub activation_bytes: i128,
    pub profile_tokens: u64,
    /// The profiling run's sampler pass over `sampler_rows` logits rows; the run's peak is
    /// the larger of this and `activation_bytes`.
    pub sampler_bytes: i128,
    pub sampler_rows: u64,
    /// The CUDA-graph capture pool (0 with `enforce_eager = yes`).
    pub cuda_graph_bytes: i128,
    /// Whether the graphs count inside the usable share (else they come on top of it).
    pub cuda_graphs_in_budget: bool,
    /// Zeros the engine's kernel layout adds to the weights (vLLM's padded MXFP4 experts).
    pub weight_padding_bytes: i128,
}

impl EngineMemory {
    fn of(parts: &EngineParts) -> EngineMemory {
        let bytes = |b: f64| b.round() as i128;
        EngineMemory {
            base_bytes: bytes(parts.base),
            cuda_context_bytes: bytes(parts.context),
            communication_bytes: bytes(parts.communication),
            activation_bytes: bytes(parts.activation),
            profile_tokens: parts.profile_tokens as u64,
            sampler_bytes: bytes(parts.sampler),
            sampler_rows: parts.sampler_rows as u64,
            cuda_graph_bytes: bytes(parts.graphs),
            cuda_graphs_in_budget: parts.graphs_in_budget,
            weight_padding_bytes: bytes(parts.padding),
        }
    }
}

fn missing(what: String) -> EvalError {
    EvalError::Missing(what)
}

/// A figure the estimate cannot go without: `field` of entry `entry_name`.
fn need(value: Option<f64>, entry_name: &str, field: &str) -> Result<f64, EvalError> {
    value.ok_or_else(|| missing(format!("`{entry_name}` has no `{field}`")))
}

/// The memory model, in exact bytes where the inputs are exact.
struct Memory {
    weights: f64,
    from_files: bool,
    /// Bytes of KV per token of context for one sequence, over all layers, split as
    /// (layers that hold every token, layers that hold at most `window` tokens).
    kv_global: f64,
    kv_local: f64,
    window: f64,
    /// Linear-attention layers and the window whose tokens' KV equals their state, when
    /// they hold the `kv_local` share (see [`linear_layout`]).
    linear: Option<(f64, f64)>,
    /// Share of the KV cache one GPU holds under tensor parallelism.
    kv_share: f64,
    /// KV bytes per token per sequence with every query head keeping its own K and V.
    mha_per_token: Option<f64>,
    kv_heads_per_gpu: Option<f64>,
    replicated: bool,
    /// Engine memory per GPU inside the usable share: every component of `engine` but
    /// CUDA graphs kept outside it.
    overhead: f64,
    /// The engine's memory beyond weights and KV cache, by component.
    engine: EngineParts,
    /// The GPU's memory (the unified share of it on Apple GPUs): what CUDA graphs kept
    /// outside the usable share must fit in.
    gpu_memory: Option<f64>,
    usable: Option<f64>,
    layers: f64,
    /// Weights of one repeating layer, of the input embeddings and of the output layer
    /// (the embeddings and output at the weights' average bits per weight).
    layer_weights: f64,
    embeddings: f64,
    output: f64,
    /// Pipeline stages, expert parallelism and the drafter ([`plan_memory`]).
    plan: PlanMemory,
    /// An engine with `placement = ollama`: Ollama's estimate decides the fit and the
    /// layer split ([`OllamaSetup`]).
    ollama: Option<OllamaSetup>,
    /// On a unified-memory GPU whose system keeps part of the pool (`system_reserved`), an
    /// engine that allocates its share at startup (`startup_check`) holds that whole share
    /// of the GPU's `visible_memory`, whatever the deployment needs; `usable` is then what
    /// the system leaves.
    engine_share: Option<f64>,
}

/// What Ollama's memory estimate reads of a deployment, all but the context and the
/// parallel sequences (model/src/ollama.rs; docs/engines.md, "Ollama's scheduler").
#[derive(Clone, Copy, Debug)]
struct OllamaSetup {
    shape: ollama::Shape,
    weights: ollama::Weights,
    /// `num_batch`.
    batch: u64,
    kv_bytes: f64,
    flash_attention: bool,
    /// Free memory per GPU as Ollama finds it.
    free: f64,
    minimum: f64,
    metal: bool,
    /// The model's trained context: Ollama caps `num_ctx` there.
    max_context: Option<f64>,
}

impl OllamaSetup {
    fn run(&self, context: f64, seqs: f64, count: f64) -> ollama::Estimate {
        let num_ctx = self.max_context.map_or(context, |m| context.min(m));
        let settings = ollama::Settings {
            num_ctx: num_ctx.max(1.0) as u64,
            parallel: seqs.max(1.0) as u64,
            num_batch: self.batch,
            kv_bytes: self.kv_bytes,
            flash_attention: self.flash_attention,
            gpus: count.max(1.0) as u64,
            free: self.free,
            minimum: self.minimum,
            metal: self.metal,
        };
        ollama::estimate(&self.shape, &self.weights, &settings)
    }
}

/// Where the layers go with `offload = auto` when the GPUs cannot hold them all.
#[derive(Clone, Copy, Debug)]
struct Placement {
    gpu_layers: f64,
    /// Bytes on each GPU: its share of the GPU layers, their KV cache and the engine's
    /// overhead.
    per_gpu: f64,
    /// Bytes in host memory: the other layers, their KV cache, the input embeddings and
    /// the output layer.
    host: f64,
    /// Weights resident on the GPUs (all of them together) and in host memory.
    gpu_weights: f64,
    host_weights: f64,
}

impl Memory {
    /// The placement of `offload = auto` at a context, or `None` when every layer fits
    /// on the GPUs. As llama.cpp's `-ngl N` with N up to the layer count: N repeating
    /// layers on the GPUs, split evenly over `count` of them; the output layer (only
    /// offloaded with N above the layer count) and the input embeddings (never) stay in
    /// host memory; a layer's KV cache lives with the layer.
    fn place(&self, context: f64, seqs: f64, count: f64) -> Option<Placement> {
        if let Some(setup) = &self.ollama {
            return self.ollama_place(setup, context, seqs, count);
        }
        let usable = self.usable?;
        if self.per_gpu(context, seqs, count) <= usable {
            return None;
        }
        let layers = self.layers.max(1.0);
        let kv_layer = self.kv_total(context, seqs) / layers;
        let layer = self.layer_weights + kv_layer;
        let room = (usable - self.overhead) * count;
        let gpu_layers = if layer > 0.0 {
            (room / layer).floor().clamp(0.0, (layers - 1.0).max(0.0))
        } else {
            0.0
        };
        let host_layers = layers - gpu_layers;
        Some(Placement {
            gpu_layers,
            per_gpu: gpu_layers * layer / count + self.overhead,
            host: host_layers * layer + self.embeddings + self.output,
            gpu_weights: gpu_layers * self.layer_weights,
            host_weights: host_layers * self.layer_weights + self.output,
        })
    }

    /// Ollama's split: the layers its estimate lets fit stay on the GPUs, the output layer
    /// last (`None` at "100% GPU").
    fn ollama_place(
        &self,
        setup: &OllamaSetup,
        context: f64,
        seqs: f64,
        count: f64,
    ) -> Option<Placement> {
        let est = setup.run(context, seqs, count);
        if est.full(&setup.shape) {
            return None;
        }
        let layers = self.layers.max(1.0);
        let gpu_layers = est.gpu_layers as f64;
        let kv_layer = self.kv_total(context, seqs) / layers;
        let output = if est.output_on_gpu {
            0.0
        } else {
            setup.weights.output
        };
        let host_layers = layers - gpu_layers;
        Some(Placement {
            gpu_layers,
            per_gpu: est.per_gpu,
            host: host_layers * (setup.weights.layer + kv_layer) + output + self.embeddings,
            gpu_weights: gpu_layers * setup.weights.layer,
            host_weights: host_layers * setup.weights.layer + output,
        })
    }

    fn kv_total(&self, context: f64, seqs: f64) -> f64 {
        (self.kv_global * context + self.kv_local * context.min(self.window)) * seqs
    }

    /// The drafter's weights and KV, all GPUs of a stage together.
    fn drafter_total(&self, context: f64, seqs: f64) -> f64 {
        self.plan.drafter_weights + self.plan.drafter_kv_per_token * context * seqs
    }

    fn per_gpu(&self, context: f64, seqs: f64, count: f64) -> f64 {
        if let Some(setup) = &self.ollama {
            return setup.run(context, seqs, count).per_gpu_full;
        }
        if let Some(share) = self.engine_share {
            return self.need_per_gpu(context, seqs, count).max(share);
        }
        self.need_per_gpu(context, seqs, count)
    }

    /// What the weights, KV cache and engine memory need per GPU.
    fn need_per_gpu(&self, context: f64, seqs: f64, count: f64) -> f64 {
        let stages = self.plan.stages.max(1.0);
        (self.weights / count + self.kv_total(context, seqs) * self.kv_share) / stages
            + self.plan.expert_extra
            + self.plan.drafter_weights / count
            + self.plan.drafter_kv_per_token * context * seqs * self.kv_share
            + self.overhead
    }
}

/// The weights in bytes, and whether they come from the model's files table: the size
/// listed for the quant (or for the entry it `extends`, the same format), else
/// `params × bpw / 8`.
fn weights(inputs: &Inputs<'_, '_>) -> Result<(f64, bool), EvalError> {
    let model = inputs.model;
    let file = std::iter::once(inputs.quant_name)
        .chain(inputs.quant.ancestor_names.iter().map(String::as_str))
        .find_map(|quant| model.files.get(quant))
        .filter(|_| !inputs.theoretical_weights);
    let upcast = inputs.support() == Support::Upcast;
    Ok(match file.filter(|_| !upcast) {
        Some(bytes) => (*bytes as f64, true),
        None => {
            let params = need(model.as_model().params, inputs.model_name, "params")?;
            // An engine that upcasts a format it cannot run stores 16-bit weights.
            let bpw = if upcast {
                16.0
            } else {
                need(inputs.quant.as_quant().bpw, inputs.quant_name, "bpw")?
            };
            ((params * bpw / 8.0).round(), false)
        }
    })
}

fn memory(inputs: &Inputs<'_, '_>) -> Result<Memory, EvalError> {
    let model = inputs.model;
    let name = inputs.model_name;
    let (weights, from_files) = weights(inputs)?;
    let layers = need(model.as_model().layers, name, "layers")?;
    let heads = model.as_model().heads;
    let kv_bytes = need(inputs.kv.as_kv().bytes, "kv_cache", "bytes")?;
    let ollama_arch = ollama_placement(inputs)
        .then(|| ollama::arch_info(model.as_model().architecture.as_deref()));
    let flash_attention = ollama_arch.is_some_and(|arch| ollama_flash_attention(inputs, &arch));
    // Ollama keeps a quantized KV cache only with flash attention; without, it stores
    // f16 (llm/server.go: "quantized kv cache requested but flash attention disabled").
    let kv_bytes = if ollama_arch.is_some() && !flash_attention {
        kv_bytes.max(2.0)
    } else {
        kv_bytes
    };
    let attention = model.as_model().attention.unwrap_or(Attention::Gqa);
    let count = inputs.count as f64;
    let head_dim = match model.as_model().head_dim {
        Some(dim) => Some(dim),
        None => match (model.as_model().hidden, heads) {
            (Some(hidden), Some(heads)) => Some(hidden / heads),
            _ => None,
        },
    };
    // MLA heads have their own K and V widths, which the catalog does not record, so
    // the MHA comparison needs an explicit `head_dim` there.
    let mha_head_dim = if attention == Attention::Mla {
        model.as_model().head_dim
    } else {
        head_dim
    };
    let mha_per_token = match (heads, mha_head_dim) {
        (Some(heads), Some(head_dim)) => Some(2.0 * layers * heads * head_dim * kv_bytes),
        _ => None,
    };
    let mut kv_heads_per_gpu = None;
    let replicated;
    let (per_layer, kv_share) = if attention == Attention::Mla {
        let rank = need(model.as_model().kv_lora_rank, name, "kv_lora_rank")?;
        let rope = need(model.as_model().qk_rope_dim, name, "qk_rope_dim")?;
        // MLA's latent cache has no heads to split: every GPU holds all of it.
        replicated = count > 1.0;
        ((rank + rope) * kv_bytes, 1.0)
    } else {
        let kv_heads = model
            .as_model()
            .kv_heads
            .or(heads)
            .ok_or_else(|| missing(format!("`{name}` has no `kv_heads`")))?;
        let head_dim =
            head_dim.ok_or_else(|| missing(format!("`{name}` has no `head_dim` or `hidden`")))?;
        // A KV head is never split across GPUs: with fewer heads than GPUs every GPU
        // holds one whole head (replication).
        let per_gpu_heads = (kv_heads / count).ceil().max(1.0);
        kv_heads_per_gpu = Some(per_gpu_heads);
        replicated = per_gpu_heads * count > kv_heads;
        (
            2.0 * kv_heads * head_dim * kv_bytes,
            per_gpu_heads / kv_heads,
        )
    };
    let windowed = inputs.engine.as_engine().window_kv != Some(WindowKv::Full);
    let linear = linear_layout(model, per_layer, layers);
    let (local_layers, window) = if attention == Attention::Hybrid && windowed {
        (
            model.as_model().local_layers.unwrap_or(0.0).min(layers),
            model.as_model().window.unwrap_or(f64::INFINITY),
        )
    } else {
        linear.unwrap_or((0.0, f64::INFINITY))
    };
    let engine = inputs.engine;
    let vocab = model.as_model().vocab.unwrap_or(0.0);
    let parts = engine_parts(inputs, weights, layers)?;
    let overhead = parts.in_budget();
    // `kv_free_share` (LMDeploy's --cache-max-entry-count): the KV cache may take that share
    // of what is left after the weights and the overhead; the deployment's
    // `memory_utilization` then overrides this share rather than `utilization`.
    let free_share = engine.as_engine().kv_free_share;
    let utilization = match free_share {
        Some(_) => engine.as_engine().utilization,
        None => inputs
            .memory_utilization
            .or_else(|| engine.as_engine().utilization),
    }
    .unwrap_or(1.0);
    let free_share = free_share.map(|share| inputs.memory_utilization.unwrap_or(share));
    let unified = inputs.gpu.unified_memory();
    let gpu_memory = if inputs.on_cpu() {
        None
    } else {
        inputs.gpu.as_gpu().memory.map(|memory| {
            if unified {
                memory * unified_memory_share(memory)
            } else {
                memory
            }
        })
    };
    let usable = if inputs.on_cpu() {
        // The whole model in system RAM: the host's memory, no GPU share.
        inputs.host.and_then(|host| host.memory).map(f64::floor)
    } else {
        inputs.gpu.as_gpu().memory.map(|memory| {
            let share = if unified {
                unified_memory_share(memory)
            } else {
                1.0
            };
            let usable = memory * share * utilization;
            match free_share {
                Some(free_share) => {
                    let fixed = weights / count + overhead.round();
                    (fixed + free_share * (usable - fixed).max(0.0)).floor()
                }
                None => usable.floor(),
            }
        })
    };
    // The input embeddings and the output layer are `vocab × hidden` each, at the
    // weights' average bits per weight; the rest is split evenly over the layers.
    let hidden = model.as_model().hidden.unwrap_or(0.0);
    let params = model.as_model().params.unwrap_or(0.0);
    let matrix = if params > 0.0 {
        vocab * hidden / params * weights
    } else {
        0.0
    };
    // A model whose embeddings would be most of its weights is not split that way.
    let matrix = if 2.0 * matrix < 0.5 * weights {
        matrix
    } else {
        0.0
    };
    let layer_weights = (weights - 2.0 * matrix) / layers.max(1.0);
    let plan = plan_memory(inputs, weights, per_layer * layers, layers);
    let ollama = ollama_arch.map(|arch| OllamaSetup {
        shape: ollama::Shape {
            arch,
            layers: layers as u64,
            embedding: hidden as u64,
            heads: heads.unwrap_or(1.0) as u64,
            kv_heads: model.as_model().kv_heads.or(heads).unwrap_or(1.0) as u64,
            head_dim: head_dim.unwrap_or(0.0) as u64,
            vocab: vocab as u64,
            local_layers: if attention == Attention::Hybrid {
                model.as_model().local_layers.unwrap_or(0.0).min(layers) as u64
            } else {
                0
            },
            window: model.as_model().window.unwrap_or(0.0) as u64,
            linear_layers: linear.map_or(0, |(l, _)| l as u64),
            linear_state: model.as_model().linear_state.unwrap_or(0.0),
        },
        weights: ollama_weights(inputs, weights, matrix, layers),
        batch: inputs
            .batched_tokens
            .unwrap_or_else(|| batch_tokens(inputs)) as u64,
        kv_bytes: ollama_kv_bytes(kv_bytes),
        flash_attention,
        // A catalog query without a GPU's memory: every layer on the GPU.
        free: ollama_free(inputs).unwrap_or(f64::INFINITY),
        minimum: ollama_minimum(inputs),
        metal: inputs.gpu.as_gpu().vendor == Some(Vendor::Apple),
        max_context: model.as_model().max_context,
    });
    let usable = match ollama {
        Some(_) => ollama_free(inputs).map(f64::floor),
        None => usable,
    };
    // A unified-memory GPU whose system keeps part of the pool: the engine's share is of the
    // memory the driver reports, and what the system leaves bounds it.
    let system = unified_system(inputs);
    let (usable, engine_share, gpu_memory) = match system {
        Some((visible, free)) if ollama.is_none() && !inputs.on_cpu() => {
            let share = (visible * utilization).floor();
            if parts.startup_check {
                (Some(free.floor()), Some(share), Some(free))
            } else {
                (Some(share.min(free).floor()), None, Some(free))
            }
        }
        _ => (usable, None, gpu_memory),
    };
    Ok(Memory {
        plan,
        weights,
        from_files,
        kv_global: per_layer * (layers - local_layers),
        kv_local: per_layer * local_layers,
        window,
        linear,
        kv_share,
        mha_per_token,
        kv_heads_per_gpu,
        replicated,
        overhead: overhead.round(),
        engine: parts,
        gpu_memory,
        usable,
        layers,
        layer_weights,
        embeddings: matrix,
        output: matrix,
        ollama,
        engine_share,
    })
}

/// A unified-memory GPU with `system_reserved`: the memory its driver reports (its
/// `visible_memory`, else its `memory`) and what the system leaves of it.
fn unified_system(inputs: &Inputs<'_, '_>) -> Option<(f64, f64)> {
    let gpu = inputs.gpu.as_gpu();
    if !inputs.gpu.unified_memory() {
        return None;
    }
    let reserved = gpu.system_reserved?;
    let visible = gpu.visible_memory.or(gpu.memory)?;
    Some((visible, (visible - reserved).max(0.0)))
}

/// Whether Ollama's estimate places the layers: an engine with `placement = ollama` on
/// a GPU.
fn ollama_placement(inputs: &Inputs<'_, '_>) -> bool {
    inputs.engine.as_engine().placement == Some(EnginePlacement::Ollama) && !inputs.on_cpu()
}

/// Whether Ollama runs the deployment with flash attention, under `placement = ollama`.
pub fn ollama_flash(inputs: &Inputs<'_, '_>) -> Option<bool> {
    ollama_placement(inputs).then(|| {
        let arch = ollama::arch_info(inputs.model.as_model().architecture.as_deref());
        ollama_flash_attention(inputs, &arch)
    })
}

/// Flash attention under Ollama: the deployment's `flash_attention`, else on for the
/// architectures Ollama enables it for; never where the architecture cannot run it.
fn ollama_flash_attention(inputs: &Inputs<'_, '_>, arch: &ollama::ArchInfo) -> bool {
    arch.flash_attention_supported && inputs.flash_attention.unwrap_or(arch.flash_attention)
}

/// `kvCacheBytesPerElement`: the estimate counts q8_0 as 1 byte and q4_0 as half, not
/// their block sizes.
fn ollama_kv_bytes(bytes: f64) -> f64 {
    if bytes >= 2.0 {
        2.0
    } else if bytes >= 1.0 {
        1.0
    } else {
        0.5
    }
}

/// Free memory per GPU as Ollama's discovery finds it: on unified memory the GPU's wired
/// share (Metal's recommendedMaxWorkingSetSize); on a discrete GPU its memory less what
/// the driver and other processes hold (`gpu_reserved` + `gpu_reserved_ratio`).
fn ollama_free(inputs: &Inputs<'_, '_>) -> Option<f64> {
    let memory = inputs.gpu.as_gpu().memory?;
    if let Some((_, free)) = unified_system(inputs) {
        return Some(free);
    }
    if inputs.gpu.unified_memory() {
        return Some(memory * unified_memory_share(memory));
    }
    let engine = inputs.engine.as_engine();
    let reserved =
        engine.gpu_reserved.unwrap_or(0.0) + engine.gpu_reserved_ratio.unwrap_or(0.0) * memory;
    Some((memory - reserved).max(0.0))
}

/// `MinimumMemory()`: the engine's `minimum_memory`, or `minimum_memory_unified` on a
/// unified-memory GPU.
fn ollama_minimum(inputs: &Inputs<'_, '_>) -> f64 {
    let engine = inputs.engine.as_engine();
    let unified = inputs.gpu.unified_memory();
    if unified {
        engine.minimum_memory_unified.or(engine.minimum_memory)
    } else {
        engine.minimum_memory
    }
    .unwrap_or(0.0)
}

/// The weights as Ollama groups them: a repeating layer and the output layer. llama.cpp's
/// quantizer stores the output matrix at Q6_K (6.5625 bits per weight) for every GGUF
/// format below it (`llama_tensor_get_type`: `new_type = GGML_TYPE_Q6_K` for
/// `output.weight` unless the format is Q8_0), so the output is counted at that width and
/// the repeating layers share the rest; other formats keep the weights' average.
fn ollama_weights(
    inputs: &Inputs<'_, '_>,
    weights: f64,
    matrix: f64,
    layers: f64,
) -> ollama::Weights {
    let layers = layers.max(1.0);
    if matrix <= 0.0 {
        return ollama::Weights {
            layer: weights / layers,
            output: 0.0,
            projector: ollama_projector(inputs),
        };
    }
    let params = inputs.model.as_model().params.unwrap_or(0.0);
    let bpw = if params > 0.0 {
        weights * 8.0 / params
    } else {
        16.0
    };
    const Q6_K_BPW: f64 = 6.5625;
    let output = if inputs.quant.as_quant().kind == Some(QuantKind::Gguf) && bpw < Q6_K_BPW {
        matrix * Q6_K_BPW / bpw
    } else {
        matrix
    };
    // Tied embeddings: the one matrix is the output layer (`token_embd` stands in for
    // `output`), nothing else stays behind.
    let input = if inputs.model.as_model().tied_embeddings == Some(YesNo::Yes) {
        0.0
    } else {
        matrix
    };
    ollama::Weights {
        layer: ((weights - input - output) / layers).max(0.0),
        output,
        projector: ollama_projector(inputs),
    }
}

/// A vision model's encoder as Ollama counts it with the output layer: its weights at 16
/// bits (Ollama's GGUFs keep the `v.*` tensors in F16) and its graph
/// (`VisionGraphSize`), from the model's `vision_params` and `vision_graph`.
fn ollama_projector(inputs: &Inputs<'_, '_>) -> f64 {
    let model = inputs.model.as_model();
    model.vision_params.unwrap_or(0.0) * 2.0 + model.vision_graph.unwrap_or(0.0)
}

/// A model's linear-attention layers and the bytes of one layer's state per sequence
/// (`linear_layers`, `linear_state`), when both are given and positive and the model is
/// neither MLA nor a sliding-window `hybrid` (whose local layers hold that place; its linear
/// layers then count as full attention).
pub fn linear_attention(model: &Entry<'_>) -> Option<(f64, f64)> {
    if matches!(
        model.as_model().attention,
        Some(Attention::Mla | Attention::Hybrid)
    ) {
        return None;
    }
    let linear = model.as_model().linear_layers?;
    let state = model.as_model().linear_state?;
    (linear > 0.0 && state > 0.0).then_some((linear, state))
}

/// [`linear_attention`]'s layers as (layers, window): a layer that keeps a fixed state per
/// sequence is a layer whose KV stops growing at the window of as many tokens as the
/// state's bytes (`per_layer` bytes a token), so the memory, the KV read per step and the
/// cache's admission all follow the sliding-window layers' terms.
fn linear_layout(model: &Entry<'_>, per_layer: f64, layers: f64) -> Option<(f64, f64)> {
    let (linear, state) = linear_attention(model).filter(|_| per_layer > 0.0)?;
    Some((linear.min(layers), (state / per_layer).max(1.0)))
}

/// The engine's memory beyond weights and KV cache on each GPU, by component, in bytes
/// (docs/estimation.md, "Engine memory"). Each component comes from engine fields
/// (stdlib/engines.deploy, each with its source); an engine without a field has none of
/// that component.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct EngineParts {
    /// `overhead` + `overhead_ratio` × the weights on the GPU + `overhead_per_vocab` ×
    /// vocab: what the components below do not name.
    base: f64,
    /// `context_memory`: the CUDA context and what else lives outside the allocator.
    context: f64,
    /// `overhead_tensor_parallel` when count > 1: communication buffers (NCCL, all-reduce).
    communication: f64,
    /// The profiling run's forward pass: `profile_tokens` × (hidden ×
    /// `activation_per_hidden` + intermediate × `activation_per_intermediate`).
    activation: f64,
    profile_tokens: f64,
    /// The profiling run's sampler pass: rows × vocab × `sampler_per_logit`, over
    /// max(seqs, `profile_seqs`) rows.
    sampler: f64,
    sampler_rows: f64,
    /// The CUDA-graph pool: `graph_memory` + `graph_memory_per_layer` × layers; 0 with
    /// `enforce_eager = yes` or `cuda_graphs = no`.
    graphs: f64,
    /// Whether the graphs count inside the usable share (`graphs_in_budget`).
    graphs_in_budget: bool,
    /// `startup_check = yes`: the engine sizes its KV cache from the profile at startup.
    startup_check: bool,
    /// Zeros the engine's kernel layout adds to the weights on each GPU
    /// ([`expert_padding`]); they are loaded and streamed like the weights.
    padding: f64,
}

impl EngineParts {
    /// The profiling run's peak: the forward pass, then the sampler pass on its last
    /// tokens' hidden states, so the larger of the two (vLLM's profile_run,
    /// vllm/v1/worker/gpu_model_runner.py: `_dummy_run(max_num_tokens)` then
    /// `_dummy_sampler_run` over max_num_seqs requests).
    fn peak(&self) -> f64 {
        self.activation.max(self.sampler)
    }

    /// What counts inside the usable share.
    fn in_budget(&self) -> f64 {
        self.base
            + self.context
            + self.communication
            + self.peak()
            + self.graphs_inside()
            + self.padding
    }

    fn graphs_inside(&self) -> f64 {
        if self.graphs_in_budget {
            self.graphs
        } else {
            0.0
        }
    }

    /// CUDA graphs that come on top of the usable share.
    fn graphs_outside(&self) -> f64 {
        self.graphs - self.graphs_inside()
    }
}

/// The engine's memory components for a deployment (see [`EngineParts`]).
fn engine_parts(
    inputs: &Inputs<'_, '_>,
    weights: f64,
    layers: f64,
) -> Result<EngineParts, EvalError> {
    let engine = inputs.engine;
    let model = inputs.model;
    // With pipeline stages each GPU holds `1 / stages` of the weights, and talks to others.
    let count = inputs.gpus_per_replica().max(1) as f64;
    let view = engine.as_engine();
    let number = |value: Option<f64>| value.unwrap_or(0.0);
    let yes = |value: Option<YesNo>, default: bool| match value {
        Some(YesNo::Yes) => true,
        Some(YesNo::No) => false,
        None => default,
    };
    let vocab = model.as_model().vocab.unwrap_or(0.0);
    let hidden = model.as_model().hidden.unwrap_or(0.0);
    let intermediate = model.as_model().intermediate.unwrap_or(0.0);
    let base = need(engine.as_engine().overhead, inputs.engine_name, "overhead")?
        + number(view.overhead_ratio) * weights / count
        + number(view.overhead_per_vocab) * vocab;
    let communication = if count > 1.0 {
        number(view.overhead_tensor_parallel)
    } else {
        0.0
    };
    // The profiling pass's token count: the engine's default max_num_batched_tokens, which
    // may depend on the GPU's memory; without chunked prefill a whole context is one pass.
    // A GPU without a memory figure (the matrix's GPU-less totals) takes the large-GPU
    // defaults: the larger sampler pass, the conservative side.
    let large = large_gpu_defaults(inputs);
    let by_memory = |field: Option<f64>, small: Option<f64>| {
        if large { field } else { small.or(field) }.unwrap_or(0.0)
    };
    let batched = inputs
        .batched_tokens
        .unwrap_or_else(|| by_memory(view.batched_tokens, view.batched_tokens_small));
    // The sampler pass covers max_num_seqs rows: the deployment's `seqs` (which `export`
    // writes as --max-num-seqs), and no fewer than the engine's default, which is what a run
    // without the flag profiles (conservative for an exported command with fewer).
    let sampler_rows =
        (inputs.seqs as f64).max(by_memory(view.profile_seqs, view.profile_seqs_small));
    let profile_tokens = if yes(view.chunked_prefill, true) {
        batched
    } else {
        batched.max(inputs.context as f64)
    };
    let graphs = if yes(view.cuda_graphs, true) && !inputs.enforce_eager {
        number(view.graph_memory) + number(view.graph_memory_per_layer) * layers
    } else {
        0.0
    };
    Ok(EngineParts {
        base,
        context: number(view.context_memory),
        communication,
        activation: profile_tokens
            * (hidden * number(view.activation_per_hidden)
                + intermediate * number(view.activation_per_intermediate)),
        profile_tokens,
        sampler: sampler_rows * vocab * number(view.sampler_per_logit),
        sampler_rows,
        graphs,
        graphs_in_budget: yes(view.graphs_in_budget, true),
        startup_check: yes(view.startup_check, false),
        padding: expert_padding(inputs) / count,
    })
}

/// Bytes vLLM adds to a mixture of experts' routed expert matrices by storing them in its
/// MoE kernel's padded layout: the format's `vllm_expert_align_hidden` and
/// `vllm_expert_align_width` (MXFP4: Marlin's n % 256 and k % 128,
/// vllm/model_executor/layers/quantization/mxfp4.py `Mxfp4MoEMethod.create_weights`). The
/// hidden size is padded whole; an expert's FFN width is split over the tensor-parallel
/// GPUs first (whole experts with `expert_parallel`), and it is what one expert's
/// parameters ([`expert_shares`]) give per layer over `3 × hidden` (gate, up and down). 0
/// for an engine without `expert_padding = yes`, a format without the fields, or a model
/// without `experts`.
fn expert_padding(inputs: &Inputs<'_, '_>) -> f64 {
    let (model, quant) = (inputs.model, inputs.quant);
    if inputs.engine.as_engine().expert_padding != Some(YesNo::Yes) {
        return 0.0;
    }
    let (Some(align_hidden), Some(align_width), Some(bpw)) = (
        quant.as_quant().vllm_expert_align_hidden,
        quant.as_quant().vllm_expert_align_width,
        quant.as_quant().bpw,
    ) else {
        return 0.0;
    };
    let view = model.as_model();
    let (params, hidden, layers, experts) = (
        view.params.unwrap_or(0.0),
        view.hidden.unwrap_or(0.0),
        view.layers.unwrap_or(0.0),
        view.experts.unwrap_or(0.0),
    );
    let (share, _) = expert_shares(model);
    let expert_params = share * params;
    if experts <= 0.0 || expert_params <= 0.0 || hidden <= 0.0 || layers <= 0.0 {
        return 0.0;
    }
    let split = if inputs.plan.expert_parallel {
        1.0
    } else {
        inputs.count.max(1) as f64
    };
    let width = expert_params / experts / layers / (3.0 * hidden) / split;
    let padded = |size: f64, align: f64| (size / align).ceil() * align;
    let ratio = padded(hidden, align_hidden) / hidden * padded(width, align_width) / width;
    expert_params * bpw / 8.0 * (ratio - 1.0).max(0.0)
}

/// Why an engine would not start (docs/estimation.md, "Engine memory").
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StartupFailure {
    /// The weights alone take more than the usable share (the plain `does_not_fit`).
    WeightsExceedUsable,
    /// The weights fit, but with the engine's memory they take the whole usable share:
    /// no KV budget.
    NoKvBudget,
    /// The KV budget holds fewer tokens than one sequence of `context`.
    ContextExceedsKvCapacity,
    /// The CUDA graphs captured on top of the usable share do not fit in what is left.
    CudaGraphsOom,
}

/// What the engine's startup does with a deployment's memory, per GPU.
#[derive(Clone, Copy, Debug)]
struct Startup {
    /// usable − weights on the GPU − in-budget engine memory.
    kv_budget: f64,
    /// Tokens of context (one sequence) the KV budget holds.
    kv_capacity: f64,
    /// What the process holds on each GPU once started: an engine with a startup check
    /// fills its usable share with KV cache; CUDA graphs outside it come on top.
    peak_per_gpu: f64,
    failure: Option<StartupFailure>,
}

impl Memory {
    /// The startup of the engine on one GPU, when the GPU's usable memory is known.
    /// Offloaded and CPU deployments have no startup check.
    fn startup(&self, context: f64, seqs: f64, count: f64, checked: bool) -> Option<Startup> {
        // The engine sizes its KV cache in its own share, even where the system leaves less.
        let usable = self.engine_share.or(self.usable)?;
        let kv_budget = usable - self.weights / count - self.overhead;
        let kv_capacity = if kv_budget > 0.0 {
            largest_context(|c| self.kv_total(c, 1.0) * self.kv_share <= kv_budget)
        } else {
            0.0
        };
        let outside = self.engine.graphs_outside();
        let need = self.need_per_gpu(context, seqs, count);
        let filled = if self.engine.startup_check {
            need.max(usable)
        } else {
            need
        };
        let room = self.gpu_memory.map_or(f64::INFINITY, |m| m - usable);
        let failure = if !checked {
            None
        } else if self.engine.startup_check && kv_budget <= 0.0 {
            // (An engine with `kv_free_share` counts the weights inside its usable share
            // whatever their size: the GPU's memory bounds them there.)
            let bound = self.gpu_memory.map_or(usable, |m| usable.min(m));
            Some(if self.weights / count > bound {
                StartupFailure::WeightsExceedUsable
            } else {
                StartupFailure::NoKvBudget
            })
        } else if self.engine.startup_check && context > kv_capacity {
            Some(StartupFailure::ContextExceedsKvCapacity)
        } else if outside > 0.0
            && outside > room
            // A share larger than the unified memory the system leaves is the plain
            // `does_not_fit` (its help names the memory_utilization that fits).
            && self
                .engine_share
                .is_none_or(|share| self.usable.is_none_or(|free| share <= free))
        {
            Some(StartupFailure::CudaGraphsOom)
        } else {
            None
        };
        Some(Startup {
            kv_budget,
            kv_capacity,
            peak_per_gpu: filled + outside,
            failure,
        })
    }
}

/// The change that lets an engine start: the memory_utilization that gives the context a
/// KV budget (or leaves room for the CUDA graphs), `enforce_eager = yes`, a shorter
/// context, more GPUs or a larger one.
fn startup_advice(inputs: &Inputs<'_, '_>, mem: &Memory, startup: &Startup) -> String {
    let bytes = |b: f64| Quantity::bytes(b.round() as i128).display();
    let count = inputs.count as f64;
    let context = inputs.context as f64;
    let Some(memory) = mem.gpu_memory.filter(|m| *m > 0.0) else {
        return "choose a GPU with more memory".to_string();
    };
    let outside = mem.engine.graphs_outside();
    // The share that holds the weights, the engine memory and one sequence's KV cache.
    let need = mem.weights / count + mem.overhead + mem.kv_total(context, 1.0) * mem.kv_share;
    let share_needed = (need / memory * 100.0).ceil();
    let share_allowed = ((memory - outside) / memory * 100.0).floor();
    // `enforce_eager` frees KV budget only where the graphs count inside the share.
    let eager = if mem.engine.graphs_inside() > 0.0 {
        format!(
            "; `enforce_eager = yes` frees the {} of CUDA graphs",
            bytes(mem.engine.graphs_inside())
        )
    } else {
        String::new()
    };
    match startup.failure {
        Some(StartupFailure::CudaGraphsOom) => format!(
            "set memory_utilization = {share_allowed}% or less to leave room for the {} of CUDA graphs, or enforce_eager = yes (no graphs, slower decode)",
            bytes(outside)
        ),
        Some(StartupFailure::ContextExceedsKvCapacity) if startup.kv_capacity >= 1.0 => {
            let tokens = if startup.kv_capacity >= 1024.0 {
                format!("{}k", (startup.kv_capacity / 1024.0).floor())
            } else {
                format!("{}", startup.kv_capacity)
            };
            let share = if share_needed <= share_allowed && share_needed <= 99.0 {
                format!(", or memory_utilization = {share_needed}% (room for the context)")
            } else {
                String::new()
            };
            format!(
                "context = {tokens} or less fits the KV cache{share}, or a GPU with more memory{eager}"
            )
        }
        _ if share_needed <= share_allowed && share_needed <= 99.0 => format!(
            "memory_utilization = {share_needed}% gives the KV cache room for one context; or choose a smaller quant, more GPUs (count), or a GPU with more memory{eager}"
        ),
        // As a plain misfit: more GPUs when a count fits, else a smaller quant or a GPU.
        _ => format!(
            "{}{eager}",
            fit_advice(inputs, mem, mem.usable.unwrap_or(0.0), 0.0)
        ),
    }
}

/// The figures of a deployment and, when memory could be estimated, its breakdown.
pub struct Estimate {
    pub figures: Figures,
    pub breakdown: Option<Breakdown>,
}

/// Whether a variant of a deployment fits (for the helps that suggest another quant or
/// GPU); `None` when it cannot be estimated.
pub fn fits(inputs: &Inputs<'_, '_>) -> Option<bool> {
    if uses_rejected_figures(inputs) {
        return None;
    }
    let mem = memory(inputs).ok()?;
    let usable = mem.usable?;
    let (context, seqs, count) = (
        inputs.context as f64,
        inputs.seqs as f64,
        inputs.count as f64,
    );
    if inputs.may_offload()
        && let Some(placement) = mem.place(context, seqs, count)
    {
        return inputs
            .host
            .and_then(|host| host.memory)
            .map(|memory| placement.host <= memory);
    }
    let started = mem
        .startup(context, seqs, count, !inputs.on_cpu())
        .is_none_or(|startup| startup.failure.is_none());
    Some(mem.per_gpu(context, seqs, count) <= usable && started)
}

/// Whether a catalog entry the estimate reads has a figure whose value was rejected
/// (reported on the entry, and on the deployment by `rules::check`).
pub fn uses_rejected_figures(inputs: &Inputs<'_, '_>) -> bool {
    [
        inputs.model,
        inputs.quant,
        inputs.kv,
        inputs.engine,
        inputs.gpu,
    ]
    .iter()
    .any(|entry| entry.rejected_figures().next().is_some())
}

/// The figures that say how the engine runs the weight format on this GPU. The advice is
/// generic here; a deployment's check adds the catalog's alternatives.
fn support_figures(inputs: &Inputs<'_, '_>, figures: &mut Figures) {
    let mode = inputs.support();
    figures.quant_support = Ok(mode.describe().to_string());
    figures.kv_runs_on_engine = Ok(inputs.kv.runs_on_engine(inputs.engine_name, inputs.engine));
    figures.engine_runs_on_gpu = Ok(engine_runs_on_gpu(inputs.engine, inputs.gpu, inputs.arch));
    figures.quant_runs_on_gpu = Ok(mode != Support::Unsupported);
    // An engine whose own kernels dequantize every format it loads (ggml: `fallback =
    // dequantize`) runs this one as it runs all the others: nothing to warn about.
    figures.quant_emulated = Ok(matches!(mode, Support::WeightOnly | Support::Upcast)
        && inputs.engine.as_engine().fallback != Some(Fallback::Dequantize));
    figures.quant_support_note = Ok(support::note(
        inputs.quant,
        inputs.quant_name,
        inputs.arch,
        inputs.engine_name,
        inputs.engine,
        inputs.gpu_name,
    ));
    figures.quant_support_advice = Ok(if mode == Support::Native {
        "nothing to change: the format runs natively".to_string()
    } else {
        format!(
            "choose a weight format that {} runs natively, or a GPU with tensor cores for {}",
            inputs.gpu_name, inputs.quant_name
        )
    });
}

/// Computes every figure; a figure that cannot be computed says what is missing.
pub fn estimate(inputs: &Inputs<'_, '_>) -> Estimate {
    let engines_ok = inputs
        .quant
        .runs_on_engine(inputs.engine_name, inputs.engine);
    let unavailable = |why: EvalError| {
        let mut figures = Figures::unavailable(&why);
        figures.quant_runs_on_engine = Ok(engines_ok);
        support_figures(inputs, &mut figures);
        Estimate {
            figures,
            breakdown: None,
        }
    };
    if uses_rejected_figures(inputs) {
        // Not evaluated with an invalid figure, nor with a default in its place.
        return unavailable(EvalError::Invalid);
    }
    let mem = match memory(inputs) {
        Ok(mem) => mem,
        Err(error) => {
            // The weights may be determined when the rest is not (an MLA model without
            // its latent sizes): they are given, the figures that need the rest are not.
            let mut estimate = unavailable(error);
            if let Ok((weights, _)) = weights(inputs) {
                estimate.figures.weights_memory = Ok(weights);
            }
            return estimate;
        }
    };
    let sizing = Sizing::new(inputs, &mem);
    let mut figures = sizing.figures(engines_ok);
    support_figures(inputs, &mut figures);
    let mut breakdown = sizing.breakdown();
    let startup = mem.startup(
        sizing.context,
        sizing.seqs,
        sizing.count,
        sizing.placement.is_none() && !inputs.on_cpu(),
    );
    engine_figures(inputs, &mem, startup.as_ref(), &mut figures, &mut breakdown);
    let started = startup.is_none_or(|s| s.failure.is_none());
    if let Some(usable) = mem.usable {
        sizing.fit_figures(usable, started, &mut figures, &mut breakdown);
    }
    // The KV budget the engine allocates at startup: what the simulator admits requests
    // against.
    let kv_budget = startup.as_ref().map(|s| s.kv_budget);
    speed_and_cost(inputs, &mem, sizing.placement, kv_budget, &mut figures);
    figures.reject_non_finite();
    Estimate {
        figures,
        breakdown: Some(breakdown),
    }
}

/// What an estimate's memory figures share: the memory model, where `offload = auto`
/// places the layers at the deployment's context, and the sizes that follow.
struct Sizing<'s, 'a, 'db> {
    inputs: &'s Inputs<'a, 'db>,
    mem: &'s Memory,
    context: f64,
    seqs: f64,
    count: f64,
    offloading: bool,
    placement: Option<Placement>,
    host_memory: Option<f64>,
    per_gpu: f64,
    kv: f64,
    total: f64,
    /// The engine's memory per GPU beside weights and KV cache (under `placement =
    /// ollama` it grows with the context: the graph).
    overhead: f64,
    /// Share of the memory on the GPUs (`ollama ps`'s processor column).
    gpu_share: f64,
    window: Option<f64>,
    gpu_layers: f64,
    host_bytes: f64,
}

/// The largest contexts that fit: on the hardware, within the model's window, and with
/// room to spare.
struct FitContexts {
    physical: f64,
    largest: f64,
    comfortable: f64,
    /// With every layer on the GPUs.
    on_gpus: f64,
}

impl<'s, 'a, 'db> Sizing<'s, 'a, 'db> {
    /// The placement and sizes at the deployment's context.
    fn new(inputs: &'s Inputs<'a, 'db>, mem: &'s Memory) -> Self {
        let context = inputs.context as f64;
        let seqs = inputs.seqs as f64;
        let count = inputs.count as f64;
        let offloading = inputs.may_offload();
        let placement = if offloading {
            mem.place(context, seqs, count)
        } else {
            None
        };
        let host_memory = inputs.host.and_then(|host| host.memory);
        let per_gpu = placement.map_or_else(|| mem.per_gpu(context, seqs, count), |p| p.per_gpu);
        let kv = mem.kv_total(context, seqs);
        // Under `placement = ollama`: `ollama ps`'s SIZE (every GPU's allocation and what
        // overflows to the CPU) and the memory beside weights and KV cache per GPU (the
        // minimum, the buffer layer and the graph).
        let ollama = mem.ollama.map(|setup| setup.run(context, seqs, count));
        let total = ollama.map_or_else(
            || {
                mem.weights
                    + kv
                    + mem.drafter_total(context, seqs)
                    + mem.overhead * count * mem.plan.stages.max(1.0)
            },
            |est| est.total,
        );
        let overhead = ollama.map_or(mem.overhead, |est| est.overhead);
        // What `ollama ps` prints as the processor split: bytes on the GPUs of all bytes.
        let gpu_share = if inputs.on_cpu() {
            0.0
        } else {
            match (placement, ollama) {
                (None, _) => 1.0,
                (Some(_), Some(est)) => {
                    if est.total > 0.0 {
                        est.vram / est.total
                    } else {
                        0.0
                    }
                }
                (Some(p), None) => {
                    let on_gpus = p.per_gpu * count;
                    on_gpus / (on_gpus + p.host).max(1.0)
                }
            }
        };
        let window = inputs.model.as_model().max_context;
        let (gpu_layers, host_bytes) = match placement {
            Some(p) => (p.gpu_layers, p.host),
            None if inputs.on_cpu() => (0.0, per_gpu),
            None => (mem.layers, 0.0),
        };
        Sizing {
            inputs,
            mem,
            context,
            seqs,
            count,
            offloading,
            placement,
            host_memory,
            per_gpu,
            kv,
            total,
            overhead,
            gpu_share,
            window,
            gpu_layers,
            host_bytes,
        }
    }

    /// The placement at context `c`: `None` without offload or when every layer fits.
    fn place(&self, c: f64) -> Option<Placement> {
        if self.offloading {
            self.mem.place(c, self.seqs, self.count)
        } else {
            None
        }
    }

    /// The memory figures; those that need the GPU's memory say it is missing until
    /// [`Sizing::fit_figures`] fills them.
    fn figures(&self, engines_ok: bool) -> Figures {
        let (inputs, mem) = (self.inputs, self.mem);
        let no_memory = if inputs.on_cpu() {
            missing("the deployment's host has no `memory`".to_string())
        } else {
            missing(format!("`{}` has no `memory`", inputs.gpu_name))
        };
        Figures {
            weights_memory: Ok(mem.weights),
            kv_memory: Ok(self.kv),
            overhead_memory: Ok(self.overhead),
            total_memory: Ok(self.total),
            memory_per_gpu: Ok(self.per_gpu),
            kv_heads_replicated: Ok(mem.replicated),
            quant_runs_on_engine: Ok(engines_ok),
            gpu_layers: Ok(self.gpu_layers),
            host_memory: Ok(self.host_bytes),
            offloaded: Ok(self.placement.is_some()),
            gpu_share: Ok(self.gpu_share),
            engine_holds_share: Ok(mem.engine_share.is_some()),
            host_usable_memory: self
                .host_memory
                .ok_or_else(|| missing("the deployment's host has no `memory`".to_string())),
            usable_memory: Err(no_memory.clone()),
            utilization: Err(no_memory.clone()),
            headroom: Err(no_memory.clone()),
            fits: Err(no_memory.clone()),
            max_context: Err(no_memory.clone()),
            fit_advice: Err(no_memory.clone()),
            comfortable_context: Err(no_memory.clone()),
            ..Figures::unavailable(&EvalError::Invalid)
        }
    }

    /// The memory breakdown; the fit and the engine's startup are filled in later.
    fn breakdown(&self) -> Breakdown {
        let (inputs, mem) = (self.inputs, self.mem);
        let (context, seqs) = (self.context, self.seqs);
        let shown = self.offloading || inputs.on_cpu();
        Breakdown {
            weights_bytes: mem.weights.round() as i128,
            weights_source: if mem.from_files {
                "files"
            } else if inputs.support() == Support::Upcast {
                "params × 16 bits (upcast)"
            } else {
                "params × bpw"
            },
            kv_bytes: self.kv.round() as i128,
            overhead_bytes: self.overhead.round() as i128,
            total_bytes: self.total.round() as i128,
            per_gpu_bytes: self.per_gpu.round() as i128,
            usable_bytes: None,
            utilization: None,
            verdict: None,
            max_context: None,
            physical_max_context: None,
            model_max_context: self.window.map(|w| w as u64),
            mha_kv_bytes: mem
                .mha_per_token
                .map(|m| (m * context * seqs).round() as i128),
            kv_heads_per_gpu: mem.kv_heads_per_gpu.map(|h| h as u64),
            kv_heads_replicated: mem.replicated,
            offload: shown.then_some(if self.offloading {
                OffloadMode::Auto
            } else {
                OffloadMode::None
            }),
            gpu_layers: shown.then_some(self.gpu_layers as u64),
            layers: shown.then_some(mem.layers as u64),
            host_bytes: shown.then_some(self.host_bytes.round() as i128),
            host_memory_bytes: self
                .host_memory
                .filter(|_| shown)
                .map(|m| m.round() as i128),
            host: inputs.host_name.filter(|_| shown).map(str::to_string),
            engine_memory: EngineMemory::of(&mem.engine),
            kv_budget_bytes: None,
            kv_capacity_tokens: None,
            peak_per_gpu_bytes: None,
            startup_failure: None,
        }
    }

    /// The largest contexts that fit in `usable` bytes per GPU.
    fn fit_contexts(&self, usable: f64) -> FitContexts {
        let (mem, seqs, count) = (self.mem, self.seqs, self.count);
        let host_memory = self.host_memory;
        let window = self.window;
        // Whether a context fits with a share of the memory: with offload, the host's
        // memory holds what the GPUs cannot.
        let fits_at = |c: f64, share: f64| match self.place(c) {
            Some(p) => host_memory.is_some_and(|m| p.host <= m * share),
            None => mem.per_gpu(c, seqs, count) <= usable * share,
        };
        let physical = largest_context(|c| fits_at(c, 1.0));
        // Ollama caps `num_ctx` at the trained window, so its memory stops growing there.
        let physical = if mem.ollama.is_some() {
            physical.min(window.unwrap_or(f64::INFINITY))
        } else {
            physical
        };
        let largest = physical.min(window.unwrap_or(f64::INFINITY));
        let comfortable = if self.offloading {
            // Offload fills the GPUs by design: room is kept in host memory.
            largest_context(|c| {
                self.place(c)
                    .is_none_or(|p| host_memory.is_some_and(|m| p.host <= m * TIGHT_ABOVE))
            })
        } else {
            largest_context(|c| fits_at(c, TIGHT_ABOVE))
        }
        .min(window.unwrap_or(f64::INFINITY));
        // Rounded down to whole kibi-tokens, so that the help reads as a field value.
        let comfortable = if comfortable >= 1024.0 {
            (comfortable / 1024.0).floor() * 1024.0
        } else {
            comfortable
        };
        // Every layer on the GPUs: without offload that is the physical fit.
        let on_gpus = if self.offloading {
            largest_context(|c| self.place(c).is_none() && mem.per_gpu(c, seqs, count) <= usable)
        } else {
            physical
        }
        .min(window.unwrap_or(f64::INFINITY));
        FitContexts {
            physical,
            largest,
            comfortable,
            on_gpus,
        }
    }

    /// The figures and breakdown entries that need the GPU's usable memory: utilization,
    /// whether the deployment fits, the largest contexts and the advice.
    fn fit_figures(
        &self,
        usable: f64,
        started: bool,
        figures: &mut Figures,
        breakdown: &mut Breakdown,
    ) {
        let (inputs, mem) = (self.inputs, self.mem);
        let (placement, per_gpu, host_memory) = (self.placement, self.per_gpu, self.host_memory);
        let utilization = per_gpu / usable;
        let fits_now = match placement {
            Some(p) => host_memory.map(|m| p.host <= m),
            None => Some(per_gpu <= usable && started),
        };
        let FitContexts {
            physical,
            largest,
            comfortable,
            on_gpus,
        } = self.fit_contexts(usable);
        figures.gpu_max_context = Ok(on_gpus);
        figures.usable_memory = Ok(usable);
        figures.utilization = Ok(utilization);
        figures.headroom = Ok(1.0 - utilization);
        figures.max_context = Ok(largest);
        figures.comfortable_context = Ok(comfortable);
        match fits_now {
            Some(fits) => {
                figures.fits = Ok(fits);
                figures.fit_advice = Ok(match placement {
                    Some(p) => offload_advice(inputs, mem, &p, host_memory, largest),
                    None => fit_advice(inputs, mem, usable, largest),
                });
            }
            None => {
                let why = missing("the deployment's host has no `memory`".to_string());
                figures.fits = Err(why.clone());
                figures.fit_advice = Err(why);
            }
        }
        breakdown.usable_bytes = Some(usable as i128);
        breakdown.utilization = Some(utilization);
        breakdown.verdict = fits_now.map(|fits| {
            if !fits {
                Verdict::DoesNotFit
            } else if placement.is_some() {
                Verdict::FitsWithOffload
            } else if utilization > TIGHT_ABOVE {
                Verdict::Tight
            } else {
                Verdict::Comfortable
            }
        });
        breakdown.max_context = Some(largest as u64);
        breakdown.physical_max_context = Some(physical as u64);
    }
}

/// The engine-memory figures and breakdown entries: the components, the KV budget and
/// capacity, whether the engine starts and what would make it.
fn engine_figures(
    inputs: &Inputs<'_, '_>,
    mem: &Memory,
    startup: Option<&Startup>,
    figures: &mut Figures,
    breakdown: &mut Breakdown,
) {
    let parts = &mem.engine;
    figures.engine_memory = Ok(mem.overhead + parts.graphs_outside());
    figures.activation_memory = Ok(parts.peak());
    figures.cuda_graph_memory = Ok(parts.graphs);
    let Some(startup) = startup else {
        let why = if inputs.on_cpu() {
            missing("the deployment's host has no `memory`".to_string())
        } else {
            missing(format!("`{}` has no `memory`", inputs.gpu_name))
        };
        for figure in [&mut figures.kv_budget, &mut figures.kv_capacity] {
            *figure = Err(why.clone());
        }
        for figure in [
            &mut figures.starts,
            &mut figures.no_kv_budget,
            &mut figures.context_exceeds_kv_capacity,
            &mut figures.cuda_graphs_oom,
        ] {
            *figure = Err(why.clone());
        }
        figures.startup_advice = Err(why);
        return;
    };
    let failure = startup.failure;
    figures.kv_budget = Ok(startup.kv_budget);
    figures.kv_capacity = Ok(startup.kv_capacity);
    figures.starts = Ok(failure.is_none());
    figures.no_kv_budget = Ok(failure == Some(StartupFailure::NoKvBudget));
    figures.context_exceeds_kv_capacity =
        Ok(failure == Some(StartupFailure::ContextExceedsKvCapacity));
    figures.cuda_graphs_oom = Ok(failure == Some(StartupFailure::CudaGraphsOom));
    figures.startup_advice = Ok(match failure {
        Some(_) => startup_advice(inputs, mem, startup),
        None => "nothing to change: the engine starts".to_string(),
    });
    breakdown.kv_budget_bytes = Some(startup.kv_budget.round() as i128);
    breakdown.kv_capacity_tokens = Some(startup.kv_capacity.max(0.0) as u64);
    breakdown.peak_per_gpu_bytes = Some(startup.peak_per_gpu.round() as i128);
    breakdown.startup_failure = failure;
}

/// The concrete change that makes a deployment fit, or gives it room: a shorter
/// context when one fits, else the tensor-parallel count whose share of the weights
/// fits, else a larger GPU.
/// On unified memory the system shares, the `memory_utilization` that leaves the system room:
/// 10 % of what it leaves when the engine's share fills more than 90 % of it, or the most
/// that fits when the share exceeds it; `None` when the share is not the problem.
fn unified_share_advice(inputs: &Inputs<'_, '_>, mem: &Memory, usable: f64) -> Option<String> {
    let share = mem.engine_share?;
    let (visible, free) = unified_system(inputs)?;
    if visible <= 0.0 || share <= usable * TIGHT_ABOVE {
        return None;
    }
    let bytes = |b: f64| Quantity::bytes(b as i128).display();
    // CUDA graphs captured outside the share need their room too.
    let graphs = mem.engine.graphs_outside();
    if share <= usable {
        let keep = ((free * TIGHT_ABOVE - graphs) / visible * 100.0).floor();
        return Some(format!(
            "memory_utilization = {keep}% keeps 10 % of the {} of unified memory the system leaves on {} free: {} holds its whole share of the {} the driver reports from startup",
            bytes(free),
            inputs.gpu_name,
            inputs.engine_name,
            bytes(visible)
        ));
    }
    let need = mem.need_per_gpu(
        inputs.context as f64,
        inputs.seqs as f64,
        inputs.count as f64,
    );
    let most = ((free - graphs) / visible * 100.0).floor();
    let least = (need / visible * 100.0).ceil();
    Some(if least <= most {
        format!(
            "memory_utilization = {most}% or less: {} keeps its share of {}'s {} of unified memory at startup, and the system leaves {}",
            inputs.engine_name,
            inputs.gpu_name,
            bytes(visible),
            bytes(free)
        )
    } else {
        format!(
            "the deployment needs {} and {} leaves {} of unified memory beside the system: a smaller quant or a shorter context",
            bytes(need),
            inputs.gpu_name,
            bytes(free)
        )
    })
}

fn fit_advice(inputs: &Inputs<'_, '_>, mem: &Memory, usable: f64, largest: f64) -> String {
    let seqs = inputs.seqs as f64;
    let context = inputs.context as f64;
    if let Some(advice) = unified_share_advice(inputs, mem, usable) {
        return advice;
    }
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

/// The advice of an offloaded deployment: what its host memory must hold, and what
/// makes it hold that (or, when it fits, what would put every layer on the GPUs).
fn offload_advice(
    inputs: &Inputs<'_, '_>,
    mem: &Memory,
    placement: &Placement,
    host_memory: Option<f64>,
    largest: f64,
) -> String {
    let bytes = |b: f64| Quantity::bytes(b.round() as i128).display();
    let layers = mem.layers;
    let host = inputs.host_name.unwrap_or("the host");
    match host_memory {
        Some(memory) if placement.host > memory => {
            // Whole GiB, as the field would be written.
            let need = (placement.host / (1u64 << 30) as f64).ceil();
            let context = if largest >= 1024.0 {
                format!(
                    ", or context = {}k (the largest that fits this host)",
                    (largest / 1024.0).floor()
                )
            } else {
                String::new()
            };
            format!(
                "host memory: {} of {} layers fit on {}, and the other {} with their KV cache need {} of system RAM, more than the {} of {host}: set host_memory = {need} GiB or more (or a `host` with more memory){context}, or choose a smaller quant",
                placement.gpu_layers,
                layers,
                inputs.gpu_name,
                layers - placement.gpu_layers,
                bytes(placement.host),
                bytes(memory)
            )
        }
        _ => format!(
            "{} of {} layers fit on {}; the rest run from host memory on the CPU ({} of system RAM). A GPU with more than {} of memory holds every layer",
            placement.gpu_layers,
            layers,
            inputs.gpu_name,
            bytes(placement.host),
            bytes(mem.per_gpu(
                inputs.context as f64,
                inputs.seqs as f64,
                inputs.count as f64
            ))
        ),
    }
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

/// Hours over which a card's launch price is amortised when it has no hourly price:
/// three years of continuous use.
pub const AMORTISATION_HOURS: f64 = 3.0 * 8760.0;
/// NVLink bandwidth assumed per direction when an NVLink GPU lists none: NVLink 3 on the
/// A100, 600 GB/s bidirectional.
pub const DEFAULT_NVLINK_BANDWIDTH: f64 = 300e9;
/// One xGMI (Infinity Fabric) link's usable bandwidth in each direction on an `xgmi` GPU
/// that states no `link_bandwidth`: 48 GB/s of its rated 64, after CRC and protocol
/// overhead (AMD ROCm blog, "Understanding RCCL Bandwidth and xGMI Performance on AMD
/// Instinct MI300X", 2025-03-02, rocm.blogs.amd.com/software-tools-optimization/mi300x-rccl-xgmi).
pub const DEFAULT_XGMI_LINK_BANDWIDTH: f64 = 48e9;

/// The hourly price of one GPU: its cloud price, else its launch price amortised.
pub fn hourly_price(gpu: &Entry<'_>) -> Option<f64> {
    gpu.as_gpu().price.or_else(|| {
        gpu.as_gpu()
            .msrp
            .map(|msrp| msrp / (AMORTISATION_HOURS * crate::units::SECONDS_PER_HOUR))
    })
}

/// Speed, throughput, workload and cost.
fn speed_and_cost(
    inputs: &Inputs<'_, '_>,
    mem: &Memory,
    placement: Option<Placement>,
    kv_budget: Option<f64>,
    figures: &mut Figures,
) {
    let on_cpu = inputs.on_cpu();
    let host = inputs.host.unwrap_or_default();
    let no_host = || missing("the deployment's host has no `bandwidth`".to_string());
    // `gpu = cpu` decodes from the host's memory; offloaded layers need its bandwidth too.
    let bandwidth = if on_cpu {
        host.bandwidth
    } else if placement.is_some() && host.bandwidth.is_none() {
        None
    } else {
        inputs.gpu.as_gpu().bandwidth
    };
    let Some(bandwidth) = bandwidth else {
        let why = if on_cpu || placement.is_some() {
            no_host()
        } else {
            gpu_lacks(inputs, "bandwidth")
        };
        no_speed(figures, why);
        insert_cost(inputs, figures, None);
        return;
    };
    let (speed_inputs, decode_context) = speed_inputs(inputs, mem, placement, bandwidth);
    // Attention kernels multiply at 16 bit, at the share of that peak the GPU's best matrix
    // multiplies reach.
    let bf16_peak = sixteen_bit_peak(inputs.gpu, inputs.arch)
        .map(|peak| peak * matmul_share(inputs.gpu, inputs.arch, TensorType::Bf16).0)
        .filter(|_| !on_cpu);
    // Serving engines (`kernels = serving`) batch continuously on the GPUs; llama.cpp-style
    // kernels, offloaded layers and the CPU take the single-stream roofline.
    let serving = speed_inputs.serving_engine && placement.is_none() && !on_cpu;
    let speed = if serving {
        speed::serve(
            &speed_inputs,
            &serving_inputs(inputs, mem, decode_context, bf16_peak, kv_budget),
        )
    } else {
        speed::estimate(&speed_inputs)
    };
    speed_figures(inputs, &speed, serving, figures);
    let served = workload_figures(inputs, &speed, figures);
    let produced = served.unwrap_or(speed.throughput_tps * inputs.replicas as f64);
    insert_cost(inputs, figures, Some(produced));
}

/// The error of a figure that needs `field` of the deployment's GPU, which it lacks.
fn gpu_lacks(inputs: &Inputs<'_, '_>, field: &str) -> EvalError {
    missing(format!("`{}` has no `{field}`", inputs.gpu_name))
}

/// Without a memory bandwidth: every speed, latency and workload figure is `why`.
fn no_speed(figures: &mut Figures, why: EvalError) {
    for figure in [
        &mut figures.decode_tps,
        &mut figures.decode_tps_low,
        &mut figures.decode_tps_high,
        &mut figures.throughput,
        &mut figures.prefill_tps,
        &mut figures.prefill_tps_low,
        &mut figures.prefill_tps_high,
        &mut figures.ttft,
        &mut figures.throughput_low,
        &mut figures.throughput_high,
        &mut figures.tpot,
        &mut figures.tpot_low,
        &mut figures.tpot_high,
        &mut figures.ttft_low,
        &mut figures.ttft_high,
        &mut figures.ttft_p99,
        &mut figures.tpot_p99,
        &mut figures.ttft_p50,
        &mut figures.tpot_p50,
        &mut figures.queue,
        &mut figures.running,
        &mut figures.cost_per_mtok,
        &mut figures.replicas_needed,
        &mut figures.load,
        &mut figures.required_throughput,
    ] {
        *figure = Err(why.clone());
    }
    figures.bound = Err(why);
}

/// A tensor-parallel group's GPU-to-GPU bandwidth in each direction. NVLink and PCIe
/// GPUs each send through one switch port (`link_bandwidth`); an `xgmi` GPU sits in a
/// fully connected mesh with one link to each peer, so a group of `count` GPUs sends over
/// `count - 1` of them (docs/language.md, `interconnect`).
fn group_link_bandwidth(gpu: &deployfit_model::views::Gpu, count: u64) -> f64 {
    match gpu.interconnect {
        Some(Interconnect::Xgmi) => {
            let per_node = gpu.gpus_per_node.map_or(u64::MAX, |n| n.max(1.0) as u64);
            let peers = count.clamp(2, per_node.max(2)) - 1;
            gpu.link_bandwidth.unwrap_or(DEFAULT_XGMI_LINK_BANDWIDTH) * peers as f64
        }
        Some(Interconnect::Nvlink) => gpu.link_bandwidth.unwrap_or(DEFAULT_NVLINK_BANDWIDTH),
        _ => gpu.link_bandwidth.unwrap_or(speed::DEFAULT_LINK_BANDWIDTH),
    }
}

/// The speed model's inputs at memory bandwidth `bandwidth`, and the context decode
/// reads the KV of on average.
fn speed_inputs(
    inputs: &Inputs<'_, '_>,
    mem: &Memory,
    placement: Option<Placement>,
    bandwidth: f64,
) -> (speed::SpeedInputs, f64) {
    let seqs = inputs.seqs as f64;
    let count = inputs.count as f64;
    let model = inputs.model;
    let gpu = inputs.gpu;
    let on_cpu = inputs.on_cpu();
    let host = inputs.host.unwrap_or_default();
    let unified = gpu.unified_memory();
    let link = group_link_bandwidth(gpu.as_gpu(), inputs.count);
    let params = model.as_model().params.unwrap_or(mem.weights * 2.0);
    let context = inputs.context as f64;
    let prompt = inputs.prompt.unwrap_or_else(|| DEFAULT_PROMPT.min(context));
    // Decode reads, on average, the KV of half the generation beyond the prompt; without a
    // workload, of half the context.
    let decode_context = match (inputs.prompt, inputs.output) {
        (Some(prompt), Some(output)) => (prompt + output / 2.0).min(context),
        _ => context / 2.0,
    };
    let (family, backend) = if on_cpu {
        (speed::Family::Cpu, speed::Backend::Cpu)
    } else {
        speed::Family::classify(
            gpu.as_gpu().vendor,
            unified,
            gpu.as_gpu().memory_kind == Some(MemoryKind::Hbm),
            gpu.as_gpu().family,
        )
    };
    let serving_kernels = serving_kernels(inputs.engine, Some(inputs.quant), Some(gpu));
    let peak = matmul_peak(inputs, family, serving_kernels);
    let speed_inputs = speed::SpeedInputs {
        family,
        backend,
        serving_engine: serving_kernels,
        layer_split: inputs.engine.as_engine().split == Some(Split::Layers),
        bandwidth,
        peak,
        link_bandwidth: link,
        count,
        // The kernel layout's padding is streamed with the weights it pads.
        weights_bytes: placement.map_or(
            mem.weights + mem.engine.padding * inputs.gpus_per_replica() as f64,
            |p| p.gpu_weights,
        ),
        params,
        active_params: model.as_model().active_params.unwrap_or(params),
        layers: model.as_model().layers.unwrap_or(0.0),
        hidden: model.as_model().hidden.unwrap_or(0.0),
        seqs,
        kv_read_bytes: match placement {
            // A layer's KV lives with the layer: the GPUs' share, split over them.
            Some(p) => {
                mem.kv_total(decode_context, seqs) * p.gpu_layers / mem.layers.max(1.0) / count
            }
            None => mem.kv_total(decode_context, seqs) * mem.kv_share,
        },
        prompt,
        host_weights_bytes: placement.map_or(0.0, |p| p.host_weights),
        host_kv_read_bytes: placement.map_or(0.0, |p| {
            mem.kv_total(decode_context, seqs) * (1.0 - p.gpu_layers / mem.layers.max(1.0))
        }),
        host_bandwidth: host.bandwidth.unwrap_or(0.0),
        pcie_bandwidth: host.pcie.unwrap_or(speed::DEFAULT_LINK_BANDWIDTH),
        decode_efficiency: inputs.engine.as_engine().decode_efficiency,
        token_overhead: inputs.engine.as_engine().token_overhead,
    };
    (speed_inputs, decode_context)
}

/// The peak rate of the model's matrix multiplies on the GPU; `None` on the CPU.
fn matmul_peak(
    inputs: &Inputs<'_, '_>,
    family: speed::Family,
    serving_kernels: bool,
) -> Option<f64> {
    let gpu = inputs.gpu;
    // The catalog records GeForce tensor figures with FP32 accumulate; half-precision
    // inference kernels accumulate in FP16 at twice that rate.
    // A format that runs natively on lower-precision tensor cores (FP8 on Ada/Hopper)
    // multiplies at that type's peak; weight-only kernels and upcast weights at 16 bit.
    let tensor_peak = match (inputs.support(), inputs.quant.as_quant().tensor) {
        (Support::Native, Some(TensorType::Fp8)) => {
            gpu.as_gpu().fp8.map(|peak| peak * tensor_share(inputs))
        }
        _ => None,
    };
    if serving_kernels {
        // Serving engines' matrix multiplies run at the format's own tensor peak where the
        // GPU runs it natively (FP8 on Ada/Hopper, FP4 on Blackwell), else at 16 bit; their
        // 16-bit GEMMs accumulate in FP32, the rate the catalog records for every card.
        serving_peak(inputs)
    } else {
        tensor_peak.or_else(|| gpu.as_gpu().bf16).map(|peak| {
            if family == speed::Family::Geforce {
                peak * 2.0
            } else {
                peak
            }
        })
    }
    .filter(|_| !inputs.on_cpu())
}

/// Records the speed model's figures: decode, throughput, per-token and first-token
/// latency, their spread, and what bounds them.
fn speed_figures(
    inputs: &Inputs<'_, '_>,
    speed: &speed::Speed,
    serving: bool,
    figures: &mut Figures,
) {
    let on_cpu = inputs.on_cpu();
    figures.decode_tps = Ok(speed.decode_tps);
    figures.decode_tps_low = Ok(speed.decode_tps_low);
    figures.decode_tps_high = Ok(speed.decode_tps_high);
    figures.throughput = Ok(speed.throughput_tps);
    figures.throughput_low = Ok(speed.throughput_tps_low);
    figures.throughput_high = Ok(speed.throughput_tps_high);
    figures.tpot = Ok(speed.tpot_s);
    figures.tpot_low = Ok(speed.tpot_s_low);
    figures.tpot_high = Ok(speed.tpot_s_high);
    let single_stream = || {
        missing(
            "the spread over a wave of requests is modelled for serving engines (`kernels = serving`) only"
                .to_string(),
        )
    };
    figures.tpot_p99 = speed.tpot_p99_s.ok_or_else(single_stream);
    let unsimulated = || {
        missing(
            "medians and queueing come from the serving simulator: a serving engine (`kernels = serving`) with a `workload { output = ... }`"
                .to_string(),
        )
    };
    figures.ttft_p50 = speed.ttft_p50_s.ok_or_else(unsimulated);
    figures.tpot_p50 = speed.tpot_p50_s.ok_or_else(unsimulated);
    figures.queue = speed.queue_s.ok_or_else(unsimulated);
    figures.running = speed.running_peak.ok_or_else(unsimulated);
    figures.kv_bound = speed
        .running_peak
        .map(|_| speed.kv_bound)
        .ok_or_else(unsimulated);
    figures.preempted = speed.preemptions.ok_or_else(unsimulated);
    figures.bound = Ok(speed.bound.describe().to_string());
    let no_peak = || {
        if on_cpu {
            missing("the CPU's prompt speed is not modelled (`gpu = cpu`)".to_string())
        } else {
            gpu_lacks(inputs, "bf16")
        }
    };
    figures.prefill_tps = speed.prefill_tps.ok_or_else(no_peak);
    figures.prefill_tps_low = speed.prefill_tps_low.ok_or_else(no_peak);
    figures.prefill_tps_high = speed.prefill_tps_high.ok_or_else(no_peak);
    figures.ttft = speed.ttft_s.ok_or_else(no_peak);
    figures.ttft_low = speed.ttft_s_low.ok_or_else(no_peak);
    figures.ttft_high = speed.ttft_s_high.ok_or_else(no_peak);
    figures.ttft_p99 = match speed.ttft_p99_s {
        Some(p99) => Ok(p99),
        None if serving => Err(no_peak()),
        None => Err(single_stream()),
    };
}

/// Records the workload's figures and returns the tokens produced per second, or `None`
/// without a workload.
fn workload_figures(
    inputs: &Inputs<'_, '_>,
    speed: &speed::Speed,
    figures: &mut Figures,
) -> Option<f64> {
    let seqs = inputs.seqs as f64;
    // A workload: requests in flight follow Little's law (rate × time per request); each
    // replica serves `seqs` of them at once.
    match (inputs.rate, inputs.output) {
        (Some(rate_rps), Some(output)) => {
            // A request holds a running slot from its first prompt chunk to its last token:
            // the wait before it (the simulated `queue`) holds none.
            let latency = (speed.ttft_s.unwrap_or(0.0) - speed.queue_s.unwrap_or(0.0)).max(0.0)
                + output / speed.decode_tps;
            let in_flight = rate_rps * latency;
            figures.required_throughput = Ok(rate_rps * output);
            figures.replicas_needed = Ok((in_flight / seqs).ceil().max(1.0));
            figures.load = Ok(in_flight / (seqs * inputs.replicas as f64));
            // Tokens actually produced per second: the demand, up to the capacity.
            Some((rate_rps * output).min(speed.throughput_tps * inputs.replicas as f64))
        }
        _ => {
            let none =
                missing("the deployment has no `workload { rate ... output ... }`".to_string());
            figures.required_throughput = Err(none.clone());
            figures.replicas_needed = Err(none.clone());
            figures.load = Err(none);
            None
        }
    }
}

/// `cost_per_hour`, and `cost_per_mtok` over the tokens produced per second, with how
/// the price was found (`pricing`, `provider`, `offer`, `instances`).
fn insert_cost(inputs: &Inputs<'_, '_>, figures: &mut Figures, produced: Option<f64>) {
    let count = inputs.gpus_per_replica() as f64;
    let hourly = match inputs.pricing {
        None => hourly_price(inputs.gpu)
            .map(|price| price * count * inputs.replicas as f64)
            .ok_or_else(|| missing(format!("`{}` has no `price` or `msrp`", inputs.gpu_name))),
        Some(pricing) => {
            figures.pricing = Ok(pricing.mode.keyword().to_string());
            match pricing.mode {
                PricingMode::Owned => {
                    let no_offer = || missing("`pricing = owned` rents no cloud offer".to_string());
                    figures.provider = Err(no_offer());
                    figures.offer = Err(no_offer());
                    figures.instances = Err(no_offer());
                    owned_gpu_price(inputs.gpu, inputs.gpu_name, &pricing.owned)
                        .map(|price| price * count * inputs.replicas as f64)
                }
                PricingMode::Cloud => match rent(inputs, &pricing) {
                    Ok(rental) => {
                        figures.provider = Ok(rental.provider.clone());
                        figures.offer = Ok(rental.offer.clone());
                        figures.instances = Ok(rental.instances as f64);
                        Ok(rental.instances as f64 * rental.instance_price)
                    }
                    Err(why) => {
                        figures.provider = Err(why.clone());
                        figures.offer = Err(why.clone());
                        figures.instances = Err(why.clone());
                        Err(why)
                    }
                },
            }
        }
    };
    figures.cost_per_mtok = match (&hourly, produced) {
        (Ok(h), Some(tokens)) if tokens > 0.0 => Ok(h / tokens),
        (Err(e), _) => Err(e.clone()),
        _ => Err(missing(format!("`{}` has no `bandwidth`", inputs.gpu_name))),
    };
    figures.cost_per_hour = hourly;
}

/// A tensor type's dense peak of one GPU from its architecture: `{type}_rate` FLOP per clock
/// per SM/CU × `sms` × `boost_clock_mhz` (halved on GeForce cards, whose catalog figures
/// are FP32-accumulate rates).
fn arch_peak(gpu: &Entry<'_>, arch: Option<&Entry<'_>>, ty: TensorType) -> Option<f64> {
    let rate = arch_rate(arch, ty)?;
    let units = gpu.as_gpu().sms?;
    let clock = gpu.as_gpu().boost_clock_mhz?;
    let half = if gpu.as_gpu().family == Some(GpuFamily::Geforce) {
        2.0
    } else {
        1.0
    };
    Some(rate * units * clock * 1e6 / half)
}

/// An architecture's dense `{type}_rate`: tensor FLOP per clock per SM/CU/Xe-core.
fn arch_rate(arch: Option<&Entry<'_>>, ty: TensorType) -> Option<f64> {
    arch?.as_arch().rate(ty)
}

/// The GPU's dense 16-bit peak: its `bf16` figure, else its architecture's.
fn sixteen_bit_peak(gpu: &Entry<'_>, arch: Option<&Entry<'_>>) -> Option<f64> {
    gpu.as_gpu()
        .bf16
        .or_else(|| arch_peak(gpu, arch, TensorType::Bf16))
}

/// A tensor type's dense datasheet peak of one GPU: the GPU's own figure for it, else its
/// 16-bit figure scaled by the architecture's rate ratio (FP4 on Blackwell is 4× BF16), else
/// the architecture's rate × SMs × clock.
fn type_peak(gpu: &Entry<'_>, arch: Option<&Entry<'_>>, ty: TensorType) -> Option<f64> {
    if ty == TensorType::Bf16 {
        return sixteen_bit_peak(gpu, arch);
    }
    gpu.as_gpu()
        .peak(ty)
        .or_else(|| {
            Some(
                sixteen_bit_peak(gpu, arch)? * arch_rate(arch, ty)?
                    / arch_rate(arch, TensorType::Bf16)?,
            )
        })
        .or_else(|| arch_peak(gpu, arch, ty))
}

/// The tensor type a serving engine's matrix multiplies run on: the format's own where the
/// GPU runs it natively and the architecture has a rate for it, else 16 bit.
fn serving_tensor(inputs: &Inputs<'_, '_>) -> TensorType {
    match (inputs.support(), inputs.quant.as_quant().tensor) {
        (Support::Native, Some(ty))
            if !matches!(ty, TensorType::Bf16 | TensorType::Fp16)
                && arch_rate(inputs.arch, ty).is_some() =>
        {
            ty
        }
        _ => TensorType::Bf16,
    }
}

/// The peak a serving engine's matrix multiplies run at: the datasheet peak of
/// [`serving_tensor`]'s type, × the format's `tensor_efficiency` for a non-16-bit type (its
/// [`weight_only_share`] when weight-only kernels run a packed format at 16 bit), × the
/// share of that peak the GPU's best matrix multiplies reach ([`matmul_share`]).
fn serving_peak(inputs: &Inputs<'_, '_>) -> Option<f64> {
    let ty = serving_tensor(inputs);
    let format = if ty == TensorType::Bf16 {
        weight_only_share(inputs.quant, inputs.arch, inputs.engine)
    } else {
        tensor_share(inputs)
    };
    let (share, _) = matmul_share(inputs.gpu, inputs.arch, ty);
    type_peak(inputs.gpu, inputs.arch, ty).map(|peak| peak * format * share)
}

/// Where [`matmul_share`] found a GPU's achievable share of its tensor peak.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShareSource {
    /// The GPU's measured `{type}_mamf` for this tensor type.
    Measured,
    /// The GPU's measured `bf16_mamf`, for a type it has no measurement of.
    MeasuredBf16,
    /// Its architecture's `matmul_share`.
    Arch,
    /// [`speed::MATMUL_SHARE`].
    Default,
}

/// The share of a tensor type's datasheet peak that the best matrix multiplies reach on a
/// GPU: its Maximum Achievable Matmul FLOPS (`{type}_mamf`, measured) over the peak, else
/// its measured BF16 share, else its architecture's `matmul_share`, else
/// [`speed::MATMUL_SHARE`] (docs/calibration-serving.md, "Achievable matmul rate"). A
/// measurement above the peak counts as the peak.
pub fn matmul_share(
    gpu: &Entry<'_>,
    arch: Option<&Entry<'_>>,
    ty: TensorType,
) -> (f64, ShareSource) {
    let measured = |ty: TensorType| {
        let mamf = gpu.as_gpu().mamf(ty)?;
        let peak = type_peak(gpu, arch, ty)?;
        (peak > 0.0).then(|| (mamf / peak).min(1.0))
    };
    if let Some(share) = measured(ty) {
        return (share, ShareSource::Measured);
    }
    if let Some(share) = measured(TensorType::Bf16) {
        return (share, ShareSource::MeasuredBf16);
    }
    match arch
        .and_then(|arch| arch.as_arch().matmul_share)
        .filter(|share| *share > 0.0 && *share <= 1.0)
    {
        Some(share) => (share, ShareSource::Arch),
        None => (speed::MATMUL_SHARE, ShareSource::Default),
    }
}

/// The share of the serving engines' fitted bandwidth efficiency the GPU architecture's
/// kernels reach (the arch's `serving_efficiency`; 1 where it says nothing).
fn serving_share(inputs: &Inputs<'_, '_>) -> f64 {
    inputs
        .arch
        .and_then(|arch| arch.as_arch().serving_efficiency)
        .filter(|share| *share > 0.0 && *share <= 1.0)
        .unwrap_or(1.0)
}

/// The share of its tensor type's peak a format's matrix multiplies reach (the quant's
/// `tensor_efficiency`; 1 for a per-tensor-scaled format).
fn tensor_share(inputs: &Inputs<'_, '_>) -> f64 {
    inputs
        .quant
        .as_quant()
        .tensor_efficiency
        .filter(|share| *share > 0.0 && *share <= 1.0)
        .unwrap_or(1.0)
}

/// The share of the 16-bit rate a format's matrix multiplies reach when weight-only kernels
/// run them, widening the packed weights to 16 bit inside the multiply (the quant's
/// `weight_only_efficiency`): a packed format without a tensor type of its own (AWQ, GPTQ),
/// or one whose type the GPU lacks where the engine falls back to such kernels (FP8 on an
/// A100). 1 for 16-bit weights, where the GPU runs the format's type natively, where the
/// engine converts the weights to 16 bit when it loads them, or where the quant says nothing.
pub fn weight_only_share(quant: &Entry<'_>, arch: Option<&Entry<'_>>, engine: &Entry<'_>) -> f64 {
    let weight_only = match support::support(quant, arch, engine) {
        Support::WeightOnly => true,
        // Packed weights with no tensor type of their own; 16-bit weights run natively.
        Support::Native => {
            quant.as_quant().tensor.is_none() && quant.as_quant().bits.is_some_and(|b| b < 16.0)
        }
        Support::Upcast | Support::Unsupported => false,
    };
    quant
        .as_quant()
        .weight_only_efficiency
        .filter(|share| weight_only && *share > 0.0 && *share <= 1.0)
        .unwrap_or(1.0)
}

/// What the serving model reads beyond the single-stream inputs: the engine's fields, the
/// model's experts and attention shape, the KV one GPU reads per context token.
fn serving_inputs(
    inputs: &Inputs<'_, '_>,
    mem: &Memory,
    decode_context: f64,
    peak16: Option<f64>,
    kv_budget: Option<f64>,
) -> speed::Serving {
    let engine = inputs.engine.as_engine();
    let pooled = speed::Engine::POOLED;
    let arch_share = serving_share(inputs);
    // The engine's field, else the pooled fit's value.
    let engine_speed = speed::Engine {
        bandwidth_efficiency: arch_share
            * engine
                .bandwidth_efficiency
                .unwrap_or(pooled.bandwidth_efficiency),
        // The compute side's architecture share is the GPU's achievable matmul share, already
        // in the peaks ([`matmul_share`]).
        compute_efficiency: engine
            .compute_efficiency
            .unwrap_or(pooled.compute_efficiency),
        step_overhead: engine.step_overhead.unwrap_or(pooled.step_overhead),
        sequence_overhead: engine.sequence_overhead.unwrap_or(pooled.sequence_overhead),
        cuda_graphs: !inputs.enforce_eager
            && engine
                .cuda_graphs
                .map_or(pooled.cuda_graphs, |graphs| graphs == YesNo::Yes),
        moe_efficiency: engine.moe_efficiency.unwrap_or(pooled.moe_efficiency),
        moe_bandwidth_efficiency: engine
            .moe_bandwidth_efficiency
            .unwrap_or(pooled.moe_bandwidth_efficiency),
        output_reserve: engine.output_reserve.unwrap_or(pooled.output_reserve),
        preempt: engine
            .preemption
            .map_or(pooled.preempt, |preempt| preempt == YesNo::Yes),
        request_latency: engine.request_latency.unwrap_or(pooled.request_latency),
    };
    let model = inputs.model;
    let (expert_share, expert_pick) = expert_shares(model);
    let layers = mem.layers.max(1.0);
    let heads = model.as_model().heads.unwrap_or(0.0);
    let hidden = model.as_model().hidden.unwrap_or(0.0);
    let attention = model.as_model().attention.unwrap_or(Attention::Gqa);
    // Attention FLOP per query token per context token and layer: QKᵀ and PV, 2 FLOP per
    // multiply-add. Absorbed MLA scores over the latent and rope dimensions and reads
    // values from the latent.
    let per_pair = if attention == Attention::Mla {
        2.0 * heads
            * (2.0 * model.as_model().kv_lora_rank.unwrap_or(0.0)
                + model.as_model().qk_rope_dim.unwrap_or(0.0))
    } else {
        let head_dim =
            model
                .as_model()
                .head_dim
                .unwrap_or(if heads > 0.0 { hidden / heads } else { 0.0 });
        4.0 * heads * head_dim
    };
    // Sliding-window layers attend to (and read the KV of) at most the window, whatever
    // the engine allocates for them; linear-attention layers read and write their state.
    let (local, window) = if attention == Attention::Hybrid {
        let local = model.as_model().local_layers.unwrap_or(0.0).min(layers);
        let window = if local > 0.0 {
            model.as_model().window.unwrap_or(f64::INFINITY)
        } else {
            f64::INFINITY
        };
        (local, window)
    } else {
        mem.linear.unwrap_or((0.0, f64::INFINITY))
    };
    let kv_per_layer = (mem.kv_global + mem.kv_local) / layers * mem.kv_share;
    // The startup KV budget in tokens of every layer.
    let kv_tokens = kv_budget
        .map(|budget| (budget / (kv_per_layer * layers)).floor())
        .filter(|t| t.is_finite() && *t >= 1.0);
    speed::Serving {
        engine: engine_speed,
        output: inputs.output,
        peak16,
        expert_share,
        expert_pick,
        attention_global: per_pair * (layers - local),
        attention_local: per_pair * local,
        window,
        kv_global: kv_per_layer * (layers - local),
        kv_local: kv_per_layer * local,
        kv_window: window,
        decode_context,
        parallel: parallel_inputs(inputs),
        drafter: drafter_inputs(inputs, mem),
        // MLA's latent cache has no KV heads to spread blocks over; its decode kernels
        // (FlashMLA) split the context themselves.
        attention_units: inputs
            .gpu
            .as_gpu()
            .sms
            .filter(|_| attention != Attention::Mla),
        kv_heads_per_gpu: mem.kv_heads_per_gpu,
        decode_splits: inputs
            .arch
            .and_then(|arch| arch.as_arch().decode_splits)
            .filter(|_| engine.split_kv_decode != Some(YesNo::Yes)),
        batch_tokens: batch_tokens(inputs),
        scheduling: match engine.scheduling {
            Some(schema::Scheduling::PrefillFirst) => speed::Scheduling::PrefillFirst,
            _ => speed::Scheduling::Mixed,
        },
        arrivals: match (inputs.burst, inputs.rate) {
            (Some(requests), _) => Some(speed::Arrivals::Burst {
                requests: requests.clamp(1.0, u64::MAX as f64) as u64,
            }),
            (None, Some(rate)) => Some(speed::Arrivals::Poisson {
                rate: rate / inputs.replicas.max(1) as f64,
            }),
            (None, None) => None,
        },
        varied: inputs.varied,
        kv_tokens,
    }
}

/// Whether the engine's architecture list `field` names the GPU's architecture (or one it
/// extends); `None` when the engine writes no such list or the GPU names no `arch`.
fn arch_listed(
    listed: Option<&[String]>,
    gpu: &Entry<'_>,
    arch: Option<&Entry<'_>>,
) -> Option<bool> {
    let arch_name = gpu.as_gpu().arch.as_ref()?;
    Some(listed?.iter().any(|name| {
        name == arch_name || arch.is_some_and(|arch| arch.ancestor_names.iter().any(|n| n == name))
    }))
}

/// Whether a deployment runs on the serving engines' kernels (continuous batching, a
/// roofline per engine step): an engine with `kernels = serving`, or one with
/// `kernels = auto` (the generic engine, which names no engine) on a data-centre GPU
/// (`family = datacenter`, or HBM without a `family`) with CUDA or ROCm, running a format
/// the serving engines load (a quant whose `kind` is not `gguf` or `mlx`: single-stream
/// runtimes' formats). There, an unnamed engine is the serving stack such a deployment
/// runs on; elsewhere it is llama.cpp's single-stream fit
/// (docs/engines.md, "The generic engine").
pub fn serving_kernels(
    engine: &Entry<'_>,
    quant: Option<&Entry<'_>>,
    gpu: Option<&Entry<'_>>,
) -> bool {
    match engine.as_engine().kernels {
        Some(Kernels::Serving) => true,
        Some(Kernels::Auto) => {
            let (Some(quant), Some(gpu)) = (quant, gpu) else {
                return false;
            };
            let (family, backend) = speed::Family::classify(
                gpu.as_gpu().vendor,
                gpu.unified_memory(),
                gpu.as_gpu().memory_kind == Some(MemoryKind::Hbm),
                gpu.as_gpu().family,
            );
            !matches!(
                quant.as_quant().kind,
                Some(QuantKind::Gguf | QuantKind::Mlx)
            ) && family == speed::Family::Hbm
                && matches!(backend, speed::Backend::Cuda | speed::Backend::Rocm)
        }
        _ => false,
    }
}

/// Whether the engine is documented to run on the GPU: its `archs` list the GPU's
/// architecture (or one it extends). An engine without `archs` (llama.cpp, the generic
/// engine) and a GPU without `arch` pass.
pub fn engine_runs_on_gpu(engine: &Entry<'_>, gpu: &Entry<'_>, arch: Option<&Entry<'_>>) -> bool {
    arch_listed(engine.as_engine().archs.as_deref(), gpu, arch).unwrap_or(true)
}

/// Whether the engine takes its large-GPU defaults (vLLM's `max_num_batched_tokens` 8192
/// and `max_num_seqs` 1024) on this GPU: its memory is at least `batched_tokens_memory` and
/// its architecture is not in `batched_tokens_except` (vLLM keeps the small defaults on the
/// A100, sm_80). A GPU without a memory figure (the matrix's GPU-less totals) takes the
/// large defaults: the larger sampler pass, the conservative side.
fn large_gpu_defaults(inputs: &Inputs<'_, '_>) -> bool {
    let engine = inputs.engine;
    let excepted = arch_listed(
        engine.as_engine().batched_tokens_except.as_deref(),
        inputs.gpu,
        inputs.arch,
    )
    .unwrap_or(false);
    match (
        inputs.gpu.as_gpu().memory,
        engine.as_engine().batched_tokens_memory,
    ) {
        (Some(memory), Some(threshold)) => memory >= threshold && !excepted,
        _ => !excepted,
    }
}

/// The engine's token budget per step (`max_num_batched_tokens`): the deployment's
/// `batched_tokens`, else the engine's `batched_tokens`, or `batched_tokens_small` where the
/// engine keeps its small-GPU defaults ([`large_gpu_defaults`]); 8192 when the engine says
/// neither.
fn batch_tokens(inputs: &Inputs<'_, '_>) -> f64 {
    if let Some(tokens) = inputs.batched_tokens {
        return tokens;
    }
    let engine = inputs.engine;
    let large = engine.as_engine().batched_tokens;
    let small = engine.as_engine().batched_tokens_small.or(large);
    let tokens = if large_gpu_defaults(inputs) {
        large
    } else {
        small
    }
    .unwrap_or(speed::DEFAULT_BATCH_TOKENS);
    // Without chunked prefill a prompt is never split: the engine's default budget is at
    // least the context (vLLM V0: max_num_batched_tokens = max(max_model_len, 2048)).
    if engine.as_engine().chunked_prefill == Some(YesNo::No) {
        tokens.max(inputs.context as f64)
    } else {
        tokens
    }
}

/// The layout of a replica beyond its tensor-parallel group: pipeline stages, the GPU's
/// node size and network (`gpus_per_node`, `node_link`), expert parallelism.
fn parallel_inputs(inputs: &Inputs<'_, '_>) -> speed::Parallel {
    let plan = inputs.plan;
    // A group rented across instances all-reduces over the offer's network.
    let (gpus_per_node, node_link) = match group_rental(inputs) {
        Some((gpus, network)) => (Some(gpus as f64), network),
        None => (
            inputs.gpu.as_gpu().gpus_per_node,
            inputs
                .gpu
                .as_gpu()
                .node_link
                .unwrap_or(speed::DEFAULT_NODE_LINK),
        ),
    };
    speed::Parallel {
        stages: plan.pipeline.max(1) as f64,
        gpus_per_node,
        node_link,
        expert_parallel: plan.expert_parallel,
        experts_active: inputs.model.as_model().experts_active.unwrap_or(1.0),
        prompt: inputs
            .prompt
            .unwrap_or_else(|| DEFAULT_PROMPT.min(inputs.context as f64)),
    }
}

/// When the deployment's cloud rental spans instances (`pricing = cloud` over an offer
/// that states its `network`): the GPUs per instance and that network, which the
/// tensor-parallel group's all-reduces cross. The rental is the one `cost_per_hour`
/// prices, so a plan is timed as it is priced.
fn group_rental(inputs: &Inputs<'_, '_>) -> Option<(u64, f64)> {
    let pricing = inputs.pricing.as_ref()?;
    // One GPU is never a group that spans instances: no rental to look up.
    if pricing.mode != PricingMode::Cloud || inputs.count <= 1 {
        return None;
    }
    let rental = rent(inputs, pricing).ok()?;
    Some((rental.gpus_per_instance, rental.network?))
}

/// The drafter of `speculative { }` as the speed model reads it: per drafted token, the
/// weights one GPU reads, the parameters multiplied and the KV read per context token
/// ([`plan_memory`] sizes them).
fn drafter_inputs(inputs: &Inputs<'_, '_>, mem: &Memory) -> Option<speed::Drafter> {
    let spec = inputs.plan.speculative?;
    let count = inputs.count.max(1) as f64;
    let plan = &mem.plan;
    Some(speed::Drafter {
        tokens: spec.tokens as f64,
        expected: spec.expected_tokens(),
        weights_bytes: plan.drafter_read / count,
        params: plan.drafter_params,
        kv_per_token: plan.drafter_kv_per_token * mem.kv_share,
    })
}

/// Bytes per parameter of drafter heads and draft models: 16 bit (EAGLE heads and draft
/// checkpoints ship in BF16).
const DRAFTER_BYTES_PER_PARAM: f64 = 2.0;
/// The vocabulary of an EAGLE-3 head's own output layer (its `draft_vocab_size`: 32,000
/// in the published heads for Llama 3.1 and Qwen3).
const EAGLE3_DRAFT_VOCAB: f64 = 32_000.0;

/// What pipeline stages, expert parallelism and a drafter change in memory
/// (docs/calibration-serving.md): each GPU holds `1 / stages` of the layers, and of
/// their KV; with experts spread whole, the busiest GPU holds `ceil(experts / count)` of
/// them; a drafter adds its weights (split over the tensor-parallel GPUs of the last
/// stage) and its KV per token.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PlanMemory {
    pub stages: f64,
    /// Bytes the busiest GPU holds beyond an even split of the experts.
    pub expert_extra: f64,
    /// Drafter weights, bytes (all GPUs of a stage together).
    pub drafter_weights: f64,
    /// Drafter weights one drafted token reads, bytes, and the parameters it multiplies.
    pub drafter_read: f64,
    pub drafter_params: f64,
    /// Drafter KV bytes per context token of one sequence, before the tensor-parallel split.
    pub drafter_kv_per_token: f64,
}

/// Routed experts' share of a model's parameters and the share of them one token picks
/// (`experts_active / experts`): (0, 1) for a dense model.
fn expert_shares(model: &Entry<'_>) -> (f64, f64) {
    let params = model.as_model().params.unwrap_or(0.0);
    let active = model.as_model().active_params.unwrap_or(params);
    match (model.as_model().experts, model.as_model().experts_active) {
        // (params − active) = (experts − k) × one expert's parameters.
        (Some(experts), Some(k)) if experts > k && active < params && params > 0.0 => {
            let per_expert = (params - active) / (experts - k);
            ((experts * per_expert / params).min(1.0), k / experts)
        }
        // Experts not given: the touched share of the active fraction.
        _ if active < params && params > 0.0 => (1.0, active / params),
        _ => (0.0, 1.0),
    }
}

/// [`PlanMemory`] of a deployment, from its plan and the target's memory terms.
fn plan_memory(
    inputs: &Inputs<'_, '_>,
    weights: f64,
    kv_per_token: f64,
    layers: f64,
) -> PlanMemory {
    let plan = inputs.plan;
    let model = inputs.model;
    let count = inputs.count.max(1) as f64;
    let stages = plan.pipeline.max(1) as f64;
    let expert_extra = match model.as_model().experts {
        Some(experts) if plan.expert_parallel && experts > 0.0 => {
            let (share, _) = expert_shares(model);
            let busiest = (experts / count).ceil() / experts;
            weights * share * (busiest - 1.0 / count).max(0.0) / stages
        }
        _ => 0.0,
    };
    let layers = layers.max(1.0);
    let params = model.as_model().params.unwrap_or(0.0);
    let active = model.as_model().active_params.unwrap_or(params);
    let hidden = model.as_model().hidden.unwrap_or(0.0);
    let (drafter_weights, drafter_read, drafter_params, drafter_kv_per_token) =
        match plan.speculative {
            None => (0.0, 0.0, 0.0, 0.0),
            Some(spec) => match spec.method {
                super::parallel::Method::Ngram => (0.0, 0.0, 0.0, 0.0),
                // One decoder layer of the target's width (an active layer's parameters)
                // and its own output layer over the draft vocabulary, in 16 bit; the KV of
                // one layer.
                super::parallel::Method::Eagle3 => {
                    let head = active / layers + EAGLE3_DRAFT_VOCAB * hidden;
                    let bytes = head * DRAFTER_BYTES_PER_PARAM;
                    (bytes, bytes, head, kv_per_token / layers)
                }
                // One more layer of the model itself, at the weights' format: it holds a
                // layer's parameters and reads an active layer's; the KV of one layer.
                super::parallel::Method::Mtp => {
                    let per_param = if params > 0.0 { weights / params } else { 0.0 };
                    (
                        weights / layers,
                        active / layers * per_param,
                        active / layers,
                        kv_per_token / layers,
                    )
                }
                // The draft model in 16 bit, and its own KV at the deployment's KV dtype.
                super::parallel::Method::Draft => match spec.draft {
                    Some((draft, _)) => {
                        let draft_params = draft.as_model().params.unwrap_or(0.0);
                        let draft_active = draft.as_model().active_params.unwrap_or(draft_params);
                        let heads = draft.as_model().heads.unwrap_or(0.0);
                        let kv_heads = draft.as_model().kv_heads.unwrap_or(heads);
                        let head_dim = draft.as_model().head_dim.unwrap_or_else(|| {
                            match (draft.as_model().hidden, heads) {
                                (Some(h), n) if n > 0.0 => h / n,
                                _ => 0.0,
                            }
                        });
                        let kv_bytes = inputs.kv.as_kv().bytes.unwrap_or(2.0);
                        let draft_layers = draft.as_model().layers.unwrap_or(0.0);
                        let bytes = draft_params * DRAFTER_BYTES_PER_PARAM;
                        (
                            bytes,
                            draft_active * DRAFTER_BYTES_PER_PARAM,
                            draft_active,
                            2.0 * draft_layers * kv_heads * head_dim * kv_bytes,
                        )
                    }
                    None => (0.0, 0.0, 0.0, 0.0),
                },
            },
        };
    PlanMemory {
        stages,
        expert_extra,
        drafter_weights,
        drafter_read,
        drafter_params,
        drafter_kv_per_token,
    }
}

/// Whether an offer carries this GPU: its `gpu` is the entry or one of the entry's
/// `extends` ancestors (by name, never by display name).
pub fn offer_gpu_matches(offer: &Entry<'_>, gpu: &Entry<'_>, gpu_name: &str) -> bool {
    offer.as_offer().gpu.as_ref().is_some_and(|carried| {
        carried == gpu_name || gpu.ancestor_names.iter().any(|a| a == carried)
    })
}

/// The hourly price of one instance of an offer: its `spot` price with `spot = true`
/// (none when it has none), else its on-demand `price`.
pub fn offer_rate(offer: &Entry<'_>, spot: bool) -> Option<f64> {
    if spot {
        offer.as_offer().spot
    } else {
        offer.as_offer().price
    }
    .filter(|rate| *rate > 0.0 && rate.is_finite())
}

/// Whole instances of an offer with `gpus` GPUs each for `replicas` replicas of `pipeline`
/// stages of `count` tensor-parallel GPUs (docs/cost.md): `floor(gpus / (count × pipeline))`
/// replicas share an instance when a replica fits one; else each instance holds
/// `floor(gpus / count)` whole stages, the stages crossing instances; else (a stage larger
/// than an instance) each replica takes `ceil(count × pipeline / gpus)` instances.
pub fn instances_needed(count: u64, pipeline: u64, replicas: u64, gpus: u64) -> u64 {
    let (count, pipeline, gpus) = (count.max(1), pipeline.max(1), gpus.max(1));
    let replica = count.saturating_mul(pipeline);
    if replica <= gpus {
        replicas.div_ceil(gpus / replica)
    } else if count <= gpus {
        replicas.saturating_mul(pipeline.div_ceil(gpus / count))
    } else {
        replicas.saturating_mul(replica.div_ceil(gpus))
    }
}

/// Whether an instance of `gpus` GPUs holds a tensor-parallel group of `count`: its
/// all-reduces then run over the instance's own GPU links, as the speed model assumes
/// (NVLink on an HGX board). Separate instances of fewer GPUs would put them on the
/// network between instances.
pub fn holds_tensor_group(gpus: u64, count: u64) -> bool {
    gpus >= count.max(1)
}

/// Whether a tensor-parallel group of `count` may span whole instances of `gpus` GPUs over
/// an offer's stated `network`: the group fills each instance it uses.
pub fn spans_instances(gpus: u64, count: u64, network: Option<f64>) -> bool {
    network.is_some() && gpus >= 1 && count > gpus && count.is_multiple_of(gpus)
}

/// An offer a configuration can rent: its name, entry, price per instance per second (on
/// demand or spot) and GPUs per instance.
pub type RentableOffer<'a, 'db> = (&'a str, &'a Entry<'db>, f64, u64);

/// The offers among `offers` (already those that carry the GPU) that have a price and hold
/// a tensor-parallel group of `count` in one instance, and the most GPUs per instance of
/// the priced ones (0 when none has a price). A group is rented across instances only
/// with `span` and over an offer that states its `network`, whose instances it fills; one
/// deployment's rental then times its all-reduces over that network ([`group_rental`]).
/// The fleet solver, whose units are timed per GPU and count before an offer is chosen,
/// passes `span = false` (docs/cost.md).
pub fn rentable_offers<'a, 'db>(
    offers: impl IntoIterator<Item = (&'a str, &'a Entry<'db>)>,
    spot: bool,
    count: u64,
    span: bool,
) -> (Vec<RentableOffer<'a, 'db>>, u64) {
    let priced: Vec<RentableOffer<'a, 'db>> = offers
        .into_iter()
        .filter_map(|(name, offer)| {
            let rate = offer_rate(offer, spot)?;
            let gpus = offer.as_offer().gpus.filter(|g| *g >= 1.0)?;
            Some((name, offer, rate, gpus as u64))
        })
        .collect();
    let largest = priced.iter().map(|&(.., gpus)| gpus).max().unwrap_or(0);
    let held = priced
        .into_iter()
        .filter(|&(_, offer, _, gpus)| {
            holds_tensor_group(gpus, count)
                || (span && spans_instances(gpus, count, offer.as_offer().network))
        })
        .collect();
    (held, largest)
}

/// How the reason for a missing cloud cost starts, which `deploy::cost::no_offer` is
/// reported for.
pub const NO_OFFER: &str = "no cloud offer";

/// The cheapest rental of the configuration among the deployment's offers that carry its
/// GPU (ties: the first by name), or why there is none.
pub fn rent(inputs: &Inputs<'_, '_>, pricing: &Pricing<'_, '_>) -> Result<Rental, EvalError> {
    let (candidates, largest) = rentable_offers(
        pricing
            .offers
            .iter()
            .copied()
            .filter(|(_, offer)| offer_gpu_matches(offer, inputs.gpu, inputs.gpu_name)),
        pricing.spot,
        inputs.count,
        true,
    );
    // One instance that holds the group is preferred to a cheaper span over the network.
    let whole = candidates
        .iter()
        .any(|&(.., gpus)| holds_tensor_group(gpus, inputs.count));
    let candidates = candidates
        .into_iter()
        .filter(|&(.., gpus)| !whole || holds_tensor_group(gpus, inputs.count));
    let mut best: Option<(f64, Rental)> = None;
    for (name, offer, rate, gpus) in candidates {
        let instances = instances_needed(inputs.count, inputs.plan.pipeline, inputs.replicas, gpus);
        let cost = instances as f64 * rate;
        let better = match &best {
            None => true,
            Some((old, rental)) => cost < *old || (cost == *old && name < rental.offer.as_str()),
        };
        if better {
            best = Some((
                cost,
                Rental {
                    offer: name.to_string(),
                    provider: offer
                        .as_offer()
                        .provider
                        .map(|s| s.name())
                        .unwrap_or_default()
                        .to_string(),
                    instance: offer
                        .as_offer()
                        .instance
                        .as_deref()
                        .unwrap_or(name)
                        .to_string(),
                    region: offer.as_offer().region.as_deref().map(str::to_string),
                    instances,
                    gpus_per_instance: gpus,
                    instance_price: rate,
                    instance_price_per_hour: crate::units::per_hour(rate),
                    spot: pricing.spot,
                    network: offer
                        .as_offer()
                        .network
                        .filter(|_| !holds_tensor_group(gpus, inputs.count)),
                },
            ));
        }
    }
    best.map(|(_, rental)| rental).ok_or_else(|| {
        let filters = if pricing.filters.is_empty() {
            String::new()
        } else {
            format!(" with {}", pricing.filters)
        };
        let spot = if pricing.spot { " at a spot price" } else { "" };
        if largest > 0 {
            return missing(format!(
                "{NO_OFFER}{filters} holds a tensor-parallel group of {} × `{}` in one instance{spot} (the largest rents {largest} per instance), and a group spans instances only over a `network` its offer states, filling each instance: its all-reduces cross that network (docs/cost.md); use `count = {largest}`{} with more `replicas` or `pipeline` stages, or a GPU an offer rents {} at a time",
                inputs.count,
                inputs.gpu_name,
                if largest > 1 { " or fewer" } else { "" },
                inputs.count
            ));
        }
        missing(format!(
            "{NO_OFFER}{filters} rents `{}`{spot}; write `pricing = owned` to price owned GPUs",
            inputs.gpu_name
        ))
    })
}

/// The hourly cost of one owned GPU: its `msrp` over `amortize`, plus its `tdp` × `pue`
/// at the `power` price, plus `host` (docs/cost.md).
pub fn owned_gpu_price(gpu: &Entry<'_>, gpu_name: &str, owned: &Owned) -> Result<f64, EvalError> {
    let msrp = gpu.as_gpu().msrp.ok_or_else(|| {
        missing(format!(
            "`{gpu_name}` has no `msrp` (purchase price), which `pricing = owned` amortises"
        ))
    })?;
    let tdp = gpu.as_gpu().tdp.ok_or_else(|| {
        missing(format!(
            "`{gpu_name}` has no `tdp`, which `pricing = owned` pays power for"
        ))
    })?;
    Ok(msrp / owned.amortize.max(1.0) + tdp * owned.pue * owned.power + owned.host)
}

/// The lowest cost per GPU per second a configuration on this GPU can have under a
/// pricing: the exact owned rate, or the cheapest per-GPU rate among the offers that carry
/// it (a whole instance never costs less per GPU than its rate / gpus). The solver ranks
/// by it; `None` when nothing prices the GPU.
pub fn gpu_price_floor(gpu: &Entry<'_>, gpu_name: &str, pricing: &Pricing<'_, '_>) -> Option<f64> {
    match pricing.mode {
        PricingMode::Owned => owned_gpu_price(gpu, gpu_name, &pricing.owned).ok(),
        PricingMode::Cloud => pricing
            .offers
            .iter()
            .filter(|(_, offer)| offer_gpu_matches(offer, gpu, gpu_name))
            .filter_map(|(_, offer)| {
                let rate = offer_rate(offer, pricing.spot)?;
                let gpus = offer.as_offer().gpus.filter(|g| *g >= 1.0)?;
                Some(rate / gpus.floor())
            })
            .min_by(f64::total_cmp),
    }
}
