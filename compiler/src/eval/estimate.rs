//! Estimates a deployment configuration's figures ([`Figures`]): memory, fit, speed and
//! cost.
//!
//! The memory terms follow docs/estimation.md (weights from the model's files table or
//! params × bpw, KV per attention kind, tensor-parallel head split with replication,
//! engine overhead and utilization); speed comes from the fitted roofline in
//! [`super::speed`]; cost from the GPU's price and the workload.

use super::entry::Entry;
use super::figures::Figures;
use super::speed;
use super::support::{self, Support};
use super::value::{EvalError, Value};
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
    /// Weights from `params × bpw` even when the model lists artifact sizes (the seed
    /// pages' matrices compute them this way).
    pub theoretical_weights: bool,
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
            theoretical_weights: false,
        }
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
    DoesNotFit,
}

impl Verdict {
    pub fn describe(self) -> &'static str {
        match self {
            Verdict::Comfortable => "fits comfortably",
            Verdict::Tight => "tight fit",
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
    pub max_context: Option<u64>,
    /// The largest context the memory holds, not capped at the model's window: past the
    /// window it is physical room only (seed pages 000/001 print it as "max context
    /// before OOM").
    pub physical_max_context: Option<u64>,
    pub model_max_context: Option<u64>,
    /// The KV cache the same model would need with plain multi-head attention at the
    /// same dtype, context and sequences: what GQA/MLA saves.
    pub mha_kv_bytes: Option<i128>,
    /// KV heads each GPU holds, and whether heads are replicated across GPUs.
    pub kv_heads_per_gpu: Option<u64>,
    pub kv_heads_replicated: bool,
}

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
    from_files: bool,
    /// Bytes of KV per token of context for one sequence, over all layers, split as
    /// (layers that hold every token, layers that hold at most `window` tokens).
    kv_global: f64,
    kv_local: f64,
    window: f64,
    /// Share of the KV cache one GPU holds under tensor parallelism.
    kv_share: f64,
    /// KV bytes per token per sequence with every query head keeping its own K and V.
    mha_per_token: Option<f64>,
    kv_heads_per_gpu: Option<f64>,
    replicated: bool,
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
            let params = need(model, inputs.model_name, "params")?;
            // An engine that upcasts a format it cannot run stores 16-bit weights.
            let bpw = if upcast {
                16.0
            } else {
                need(inputs.quant, inputs.quant_name, "bpw")?
            };
            ((params * bpw / 8.0).round(), false)
        }
    })
}

fn memory(inputs: &Inputs<'_, '_>) -> Result<Memory, EvalError> {
    let model = inputs.model;
    let name = inputs.model_name;
    let (weights, from_files) = weights(inputs)?;
    let layers = need(model, name, "layers")?;
    let heads = model.number("heads");
    let kv_bytes = need(inputs.kv, "kv_cache", "bytes")?;
    let attention = match model.fields.get("attention") {
        Some(Value::Symbol(kind)) => kind.as_str(),
        _ => "gqa",
    };
    let count = inputs.count as f64;
    let head_dim = match model.number("head_dim") {
        Some(dim) => Some(dim),
        None => match (model.number("hidden"), heads) {
            (Some(hidden), Some(heads)) => Some(hidden / heads),
            _ => None,
        },
    };
    // MLA heads have their own K and V widths, which the catalog does not record, so
    // the MHA comparison needs an explicit `head_dim` there.
    let mha_head_dim = if attention == "mla" {
        model.number("head_dim")
    } else {
        head_dim
    };
    let mha_per_token = match (heads, mha_head_dim) {
        (Some(heads), Some(head_dim)) => Some(2.0 * layers * heads * head_dim * kv_bytes),
        _ => None,
    };
    let mut kv_heads_per_gpu = None;
    let replicated;
    let (per_layer, kv_share) = if attention == "mla" {
        let rank = need(model, name, "kv_lora_rank")?;
        let rope = need(model, name, "qk_rope_dim")?;
        // MLA's latent cache has no heads to split: every GPU holds all of it.
        replicated = count > 1.0;
        ((rank + rope) * kv_bytes, 1.0)
    } else {
        let kv_heads = model
            .number("kv_heads")
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
    let windowed = !matches!(
        inputs.engine.fields.get("window_kv"),
        Some(Value::Symbol(kind)) if kind == "full"
    );
    let (local_layers, window) = if attention == "hybrid" && windowed {
        (
            model.number("local_layers").unwrap_or(0.0).min(layers),
            model.number("window").unwrap_or(f64::INFINITY),
        )
    } else {
        (0.0, f64::INFINITY)
    };
    let engine = inputs.engine;
    let vocab = model.number("vocab").unwrap_or(0.0);
    let tensor_parallel = if count > 1.0 {
        engine.number("overhead_tensor_parallel").unwrap_or(0.0)
    } else {
        0.0
    };
    let overhead = need(engine, inputs.engine_name, "overhead")?
        + engine.number("overhead_ratio").unwrap_or(0.0) * weights / count
        + engine.number("overhead_per_vocab").unwrap_or(0.0) * vocab
        + tensor_parallel;
    // `kv_free_share` (LMDeploy's --cache-max-entry-count): the KV cache may take that share
    // of what is left after the weights and the overhead; the deployment's
    // `memory_utilization` then overrides this share rather than `utilization`.
    let free_share = engine.number("kv_free_share");
    let utilization = match free_share {
        Some(_) => engine.number("utilization"),
        None => inputs
            .memory_utilization
            .or_else(|| engine.number("utilization")),
    }
    .unwrap_or(1.0);
    let free_share = free_share.map(|share| inputs.memory_utilization.unwrap_or(share));
    let unified = inputs.gpu.unified_memory();
    let usable = inputs.gpu.number("memory").map(|memory| {
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
    });
    Ok(Memory {
        weights,
        from_files,
        kv_global: per_layer * (layers - local_layers),
        kv_local: per_layer * local_layers,
        window,
        kv_share,
        mha_per_token,
        kv_heads_per_gpu,
        replicated,
        overhead: overhead.round(),
        usable,
    })
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
    Some(
        mem.per_gpu(
            inputs.context as f64,
            inputs.seqs as f64,
            inputs.count as f64,
        ) <= usable,
    )
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
    figures.quant_runs_on_gpu = Ok(mode != Support::Unsupported);
    figures.quant_emulated = Ok(matches!(mode, Support::WeightOnly | Support::Upcast));
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
    let context = inputs.context as f64;
    let seqs = inputs.seqs as f64;
    let count = inputs.count as f64;
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
    let per_gpu = mem.per_gpu(context, seqs, count);
    let kv = mem.kv_total(context, seqs);
    let total = mem.weights + kv + mem.overhead * count;
    let window = inputs.model.number("max_context");
    let no_memory = missing(format!("`{}` has no `memory`", inputs.gpu_name));
    let mut figures = Figures {
        weights_memory: Ok(mem.weights),
        kv_memory: Ok(kv),
        overhead_memory: Ok(mem.overhead),
        total_memory: Ok(total),
        memory_per_gpu: Ok(per_gpu),
        kv_heads_replicated: Ok(mem.replicated),
        quant_runs_on_engine: Ok(engines_ok),
        usable_memory: Err(no_memory.clone()),
        utilization: Err(no_memory.clone()),
        headroom: Err(no_memory.clone()),
        fits: Err(no_memory.clone()),
        max_context: Err(no_memory.clone()),
        fit_advice: Err(no_memory.clone()),
        comfortable_context: Err(no_memory.clone()),
        ..Figures::unavailable(&EvalError::Invalid)
    };
    support_figures(inputs, &mut figures);
    let mut breakdown = Breakdown {
        weights_bytes: mem.weights.round() as i128,
        weights_source: if mem.from_files {
            "files"
        } else if inputs.support() == Support::Upcast {
            "params × 16 bits (upcast)"
        } else {
            "params × bpw"
        },
        kv_bytes: kv.round() as i128,
        overhead_bytes: mem.overhead.round() as i128,
        total_bytes: total.round() as i128,
        per_gpu_bytes: per_gpu.round() as i128,
        usable_bytes: None,
        utilization: None,
        verdict: None,
        max_context: None,
        physical_max_context: None,
        model_max_context: window.map(|w| w as u64),
        mha_kv_bytes: mem
            .mha_per_token
            .map(|m| (m * context * seqs).round() as i128),
        kv_heads_per_gpu: mem.kv_heads_per_gpu.map(|h| h as u64),
        kv_heads_replicated: mem.replicated,
    };
    if let Some(usable) = mem.usable {
        let utilization = per_gpu / usable;
        let physical = largest_context(|c| mem.per_gpu(c, seqs, count) <= usable);
        let largest = physical.min(window.unwrap_or(f64::INFINITY));
        let comfortable = largest_context(|c| mem.per_gpu(c, seqs, count) <= usable * TIGHT_ABOVE)
            .min(window.unwrap_or(f64::INFINITY));
        // Rounded down to whole kibi-tokens, so that the help reads as a field value.
        let comfortable = if comfortable >= 1024.0 {
            (comfortable / 1024.0).floor() * 1024.0
        } else {
            comfortable
        };
        figures.usable_memory = Ok(usable);
        figures.utilization = Ok(utilization);
        figures.headroom = Ok(1.0 - utilization);
        figures.fits = Ok(per_gpu <= usable);
        figures.max_context = Ok(largest);
        figures.fit_advice = Ok(fit_advice(inputs, &mem, usable, largest));
        figures.comfortable_context = Ok(comfortable);
        breakdown.usable_bytes = Some(usable as i128);
        breakdown.utilization = Some(utilization);
        breakdown.verdict = Some(if per_gpu > usable {
            Verdict::DoesNotFit
        } else if utilization > TIGHT_ABOVE {
            Verdict::Tight
        } else {
            Verdict::Comfortable
        });
        breakdown.max_context = Some(largest as u64);
        breakdown.physical_max_context = Some(physical as u64);
    }
    speed_and_cost(inputs, &mem, &mut figures);
    figures.reject_non_finite();
    Estimate {
        figures,
        breakdown: Some(breakdown),
    }
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

/// Hours over which a card's launch price is amortised when it has no hourly price:
/// three years of continuous use.
pub const AMORTISATION_HOURS: f64 = 3.0 * 8760.0;
/// NVLink bandwidth assumed per direction when an NVLink GPU lists none: NVLink 3 on the
/// A100, 600 GB/s bidirectional.
pub const DEFAULT_NVLINK_BANDWIDTH: f64 = 300e9;

/// The hourly price of one GPU: its cloud price, else its launch price amortised.
pub fn hourly_price(gpu: &Entry<'_>) -> Option<f64> {
    gpu.number("price").or_else(|| {
        gpu.number("msrp")
            .map(|msrp| msrp / (AMORTISATION_HOURS * crate::units::SECONDS_PER_HOUR))
    })
}

/// Speed, throughput, workload and cost.
fn speed_and_cost(inputs: &Inputs<'_, '_>, mem: &Memory, figures: &mut Figures) {
    let seqs = inputs.seqs as f64;
    let count = inputs.count as f64;
    let model = inputs.model;
    let gpu = inputs.gpu;
    let no = |field: &str| missing(format!("`{}` has no `{field}`", inputs.gpu_name));
    let symbol = |field: &str| match gpu.fields.get(field) {
        Some(Value::Symbol(s)) => Some(s.as_str()),
        _ => None,
    };
    let Some(bandwidth) = gpu.number("bandwidth") else {
        let why = no("bandwidth");
        for figure in [
            &mut figures.decode_tps,
            &mut figures.decode_tps_low,
            &mut figures.decode_tps_high,
            &mut figures.throughput,
            &mut figures.prefill_tps,
            &mut figures.prefill_tps_low,
            &mut figures.prefill_tps_high,
            &mut figures.ttft,
            &mut figures.cost_per_mtok,
            &mut figures.replicas_needed,
            &mut figures.load,
            &mut figures.required_throughput,
        ] {
            *figure = Err(why.clone());
        }
        figures.bound = Err(why);
        insert_cost(inputs, figures, None);
        return;
    };
    let unified = gpu.unified_memory();
    let link =
        gpu.number("link_bandwidth")
            .unwrap_or(if symbol("interconnect") == Some("nvlink") {
                DEFAULT_NVLINK_BANDWIDTH
            } else {
                speed::DEFAULT_LINK_BANDWIDTH
            });
    let params = model.number("params").unwrap_or(mem.weights * 2.0);
    let context = inputs.context as f64;
    let prompt = inputs.prompt.unwrap_or_else(|| DEFAULT_PROMPT.min(context));
    // Decode reads, on average, the KV of half the generation beyond the prompt; without a
    // workload, of half the context.
    let decode_context = match (inputs.prompt, inputs.output) {
        (Some(prompt), Some(output)) => (prompt + output / 2.0).min(context),
        _ => context / 2.0,
    };
    let (family, backend) = speed::Family::classify(
        symbol("vendor"),
        unified,
        symbol("memory_kind") == Some("hbm"),
        symbol("family"),
    );
    // The catalog records GeForce tensor figures with FP32 accumulate; half-precision
    // inference kernels accumulate in FP16 at twice that rate.
    // A format that runs natively on lower-precision tensor cores (FP8 on Ada/Hopper)
    // multiplies at that type's peak; weight-only kernels and upcast weights at 16 bit.
    let tensor_peak = match (inputs.support(), inputs.quant.symbol("tensor")) {
        (Support::Native, Some("fp8")) => gpu.number("fp8"),
        _ => None,
    };
    let peak = tensor_peak.or_else(|| gpu.number("bf16")).map(|peak| {
        if family == speed::Family::Geforce {
            peak * 2.0
        } else {
            peak
        }
    });
    let speed_inputs = speed::SpeedInputs {
        family,
        backend,
        serving_engine: inputs.engine.symbol("kernels") == Some("serving"),
        layer_split: inputs.engine.symbol("split") == Some("layers"),
        bandwidth,
        peak,
        link_bandwidth: link,
        count,
        weights_bytes: mem.weights,
        params,
        active_params: model.number("active_params").unwrap_or(params),
        layers: model.number("layers").unwrap_or(0.0),
        hidden: model.number("hidden").unwrap_or(0.0),
        seqs,
        kv_read_bytes: mem.kv_total(decode_context, seqs) * mem.kv_share,
        prompt,
    };
    let speed = speed::estimate(&speed_inputs);
    figures.decode_tps = Ok(speed.decode_tps);
    figures.decode_tps_low = Ok(speed.decode_tps_low);
    figures.decode_tps_high = Ok(speed.decode_tps_high);
    figures.throughput = Ok(speed.throughput_tps);
    figures.bound = Ok(speed.bound.describe().to_string());
    figures.prefill_tps = speed.prefill_tps.ok_or_else(|| no("bf16"));
    figures.prefill_tps_low = speed.prefill_tps_low.ok_or_else(|| no("bf16"));
    figures.prefill_tps_high = speed.prefill_tps_high.ok_or_else(|| no("bf16"));
    figures.ttft = speed.ttft_s.ok_or_else(|| no("bf16"));
    // A workload: requests in flight follow Little's law (rate × time per request); each
    // replica serves `seqs` of them at once.
    let served = match (inputs.rate, inputs.output) {
        (Some(rate_rps), Some(output)) => {
            let latency = speed.ttft_s.unwrap_or(0.0) + output / speed.decode_tps;
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
    };
    let produced = served.unwrap_or(speed.throughput_tps * inputs.replicas as f64);
    insert_cost(inputs, figures, Some(produced));
}

/// `cost_per_hour`, and `cost_per_mtok` over the tokens produced per second.
fn insert_cost(inputs: &Inputs<'_, '_>, figures: &mut Figures, produced: Option<f64>) {
    let count = inputs.count as f64;
    let hourly = hourly_price(inputs.gpu)
        .map(|price| price * count * inputs.replicas as f64)
        .ok_or_else(|| missing(format!("`{}` has no `price` or `msrp`", inputs.gpu_name)));
    figures.cost_per_mtok = match (&hourly, produced) {
        (Ok(h), Some(tokens)) if tokens > 0.0 => Ok(h / tokens),
        (Err(e), _) => Err(e.clone()),
        _ => Err(missing(format!("`{}` has no `bandwidth`", inputs.gpu_name))),
    };
    figures.cost_per_hour = hourly;
}
