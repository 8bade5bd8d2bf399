//! `explain`: the memory breakdown of each deployment, as plain data.

use serde::Serialize;

use crate::db::{self, Db, SourceFile};
use crate::eval::EvalError;
use crate::eval::deployment::Setup;
use crate::eval::estimate::{Breakdown, unified_memory_share};
use crate::eval::figures::{Figure, Figures};
use crate::syntax::ast::DeclKind;
use crate::units::{per_hour, per_mtok};

/// One deployment explained: what it resolved to, its memory in exact bytes, and the
/// assumptions behind the figures.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Explanation {
    pub deployment: String,
    pub file: std::path::PathBuf,
    pub line: usize,
    #[serde(flatten)]
    pub setup: Setup,
    #[serde(flatten)]
    pub breakdown: Breakdown,
    #[serde(flatten)]
    pub performance: Performance,
    /// The model's attention kind (`mha`, `gqa`, `mla`, `hybrid`).
    pub attention: String,
    /// What GQA/MLA saves against plain multi-head attention, 0–1.
    pub kv_saving: Option<f64>,
    pub assumptions: Vec<String>,
}

/// Speed and cost, in plain units: tokens/s, seconds, dollars per hour and per million
/// tokens. `None` where a catalog figure is missing.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Performance {
    pub decode_tps: Option<f64>,
    pub decode_tps_low: Option<f64>,
    pub decode_tps_high: Option<f64>,
    /// Output tokens/s of all sequences: with a serving engine and a workload's `output`,
    /// prefill included (continuous batching); with its range.
    pub throughput_tps: Option<f64>,
    pub throughput_tps_low: Option<f64>,
    pub throughput_tps_high: Option<f64>,
    pub prefill_tps: Option<f64>,
    pub prefill_tps_low: Option<f64>,
    pub prefill_tps_high: Option<f64>,
    pub ttft_s: Option<f64>,
    pub ttft_s_low: Option<f64>,
    pub ttft_s_high: Option<f64>,
    /// Time per output token after the first (inter-token latency), with its range.
    pub tpot_s: Option<f64>,
    pub tpot_s_low: Option<f64>,
    pub tpot_s_high: Option<f64>,
    /// 99th percentiles over a wave of `seqs` requests (serving engines; else null).
    pub ttft_p99_s: Option<f64>,
    pub tpot_p99_s: Option<f64>,
    /// Medians over the simulated requests, and the mean wait before a request's prompt
    /// starts (serving engines with a workload; else null).
    pub ttft_p50_s: Option<f64>,
    pub tpot_p50_s: Option<f64>,
    pub queue_s: Option<f64>,
    /// The most requests the simulated server ran at once (`seqs`, or fewer when the KV
    /// cache holds fewer).
    pub running_peak: Option<f64>,
    /// Whether the KV cache, not `seqs`, kept requests waiting (simulated).
    pub kv_bound: Option<bool>,
    /// Requests the simulated server preempted (their KV cache freed; an engine with
    /// `preemption`); 0 without it, null without a simulation.
    pub preemptions: Option<f64>,
    #[serde(rename = "cost_per_hour_usd")]
    pub cost_per_hour: Option<f64>,
    #[serde(rename = "cost_per_mtok_usd")]
    pub cost_per_mtok: Option<f64>,
    /// Why there is no `cost_per_hour` (no offer rents the GPU, no `msrp` to amortise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_missing: Option<String>,
    /// `bandwidth-bound` or `compute-bound`.
    pub bound: Option<String>,
}

fn performance(figures: &Figures) -> Performance {
    let number = |figure: &Figure<f64>| figure.clone().ok().filter(|v| v.is_finite());
    Performance {
        decode_tps: number(&figures.decode_tps),
        decode_tps_low: number(&figures.decode_tps_low),
        decode_tps_high: number(&figures.decode_tps_high),
        throughput_tps: number(&figures.throughput),
        throughput_tps_low: number(&figures.throughput_low),
        throughput_tps_high: number(&figures.throughput_high),
        prefill_tps: number(&figures.prefill_tps),
        prefill_tps_low: number(&figures.prefill_tps_low),
        prefill_tps_high: number(&figures.prefill_tps_high),
        ttft_s: number(&figures.ttft),
        ttft_s_low: number(&figures.ttft_low),
        ttft_s_high: number(&figures.ttft_high),
        tpot_s: number(&figures.tpot),
        tpot_s_low: number(&figures.tpot_low),
        tpot_s_high: number(&figures.tpot_high),
        ttft_p99_s: number(&figures.ttft_p99),
        tpot_p99_s: number(&figures.tpot_p99),
        ttft_p50_s: number(&figures.ttft_p50),
        tpot_p50_s: number(&figures.tpot_p50),
        queue_s: number(&figures.queue),
        running_peak: number(&figures.running),
        kv_bound: figures.kv_bound.clone().ok(),
        preemptions: number(&figures.preempted),
        cost_per_hour: number(&figures.cost_per_hour).map(per_hour),
        cost_per_mtok: number(&figures.cost_per_mtok).map(per_mtok),
        cost_missing: match &figures.cost_per_hour {
            Err(EvalError::Missing(why)) => Some(why.clone()),
            _ => None,
        },
        bound: figures.bound.clone().ok(),
    }
}

/// Why a deployment has no explanation: the diagnostics say more. A mixed fleet
/// (`fleet = mixed`) has no figures of its own: its answer is the fleet.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NotEvaluated {
    pub deployment: String,
    pub line: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fleet: Option<Box<crate::solve::fleet::Fleet>>,
}

/// Every deployment of a file, explained or not.
pub fn explain(db: &dyn Db, file: SourceFile) -> Vec<Result<Explanation, NotEvaluated>> {
    let summaries = crate::check::deployment_summaries(db, file);
    db::decl_keys(db, file)
        .iter()
        .filter(|key| key.kind(db) == DeclKind::Deployment)
        .zip(summaries)
        .map(|(key, summary)| explain_deployment(db, file, *key, summary))
        .collect()
}

/// One deployment explained: its setup and breakdown, the model's attention and what it
/// saves, the assumptions and the performance; or why it was not evaluated.
fn explain_deployment<'db>(
    db: &'db dyn Db,
    file: SourceFile,
    key: db::DeclKey<'db>,
    summary: crate::diagnostics::DeploymentSummary,
) -> Result<Explanation, NotEvaluated> {
    let result = crate::check::deployment(db, key);
    let (Some(setup), Some(breakdown)) = (&result.setup, &result.breakdown) else {
        return Err(NotEvaluated {
            deployment: summary.name,
            line: summary.line,
            fleet: result.fleet.clone().map(Box::new),
        });
    };
    let scope = crate::names::scope(db, file);
    let entry = |kind: DeclKind, name: &str| {
        scope
            .lookup(kind, name)
            .map(|k| crate::eval::entry_of(db, k))
    };
    let model = entry(DeclKind::Model, &setup.model);
    let attention = model
        .and_then(|m| m.as_model().attention)
        .map_or_else(|| "gqa".to_string(), |kind| kind.name().to_string());
    let kv_saving = breakdown
        .mha_kv_bytes
        .filter(|mha| *mha > 0)
        .map(|mha| 1.0 - breakdown.kv_bytes as f64 / mha as f64);
    let gpu = entry(DeclKind::Gpu, &setup.gpu);
    let mut assumptions = assumptions(setup, breakdown, model, gpu);
    // Where a model outside the catalog came from, and what its source lacks.
    if let Some(model) = model {
        // A string the catalog owns (`"llama3.1:8b"`, a re-upload's id) whose own format
        // became the deployment's quant: say where that format came from.
        let decl = db::decl(db, key);
        let written = decl
            .as_ref()
            .filter(|decl| decl.field("quant").is_none())
            .and_then(|decl| decl.field("model").map(|f| f.value.kind.clone()))
            .and_then(|kind| match kind {
                crate::syntax::ast::ExprKind::Str(lit) => lit.plain(),
                _ => None,
            });
        if let Some(written) = written {
            let generated = crate::external::decl_name(&written, file.path(db));
            let own = entry(DeclKind::Model, &generated).map(|m| m.as_model());
            if generated != setup.model
                && let Some(own) = own
                && own.default_quant.as_deref() == Some(setup.quant.as_str())
                && let Some(source) = own.source.as_deref()
            {
                assumptions.insert(
                    0,
                    format!(
                        "quant {} is the format \"{}\" names (the model is the catalog's {}): {source}",
                        setup.quant,
                        crate::names::resolve::shown(&written),
                        setup.model
                    ),
                );
            }
        }
        if let Some(source) = model.as_model().source.as_deref() {
            assumptions.insert(0, format!("model {}: {source}", setup.model));
        }
        if let Some(incomplete) = model.as_model().incomplete.as_deref() {
            assumptions.insert(
                1.min(assumptions.len()),
                format!("not determined by the model's source: {incomplete}"),
            );
        }
    }
    assumptions.extend(pricing_assumptions(setup));
    let engine_entry = entry(DeclKind::Engine, &setup.engine);
    let quant = entry(DeclKind::Quant, &setup.quant);
    let serving = engine_entry
        .is_some_and(|engine| crate::eval::estimate::serving_kernels(engine, quant, gpu))
        && breakdown.offload.is_none();
    let arch = gpu
        .and_then(|g| g.as_gpu().arch.as_ref())
        .and_then(|arch_name| entry(DeclKind::Arch, arch_name));
    let speed = SpeedFacts {
        setup,
        model,
        gpu,
        quant,
        engine: engine_entry,
        arch,
        serving,
    };
    speed.engine_assumptions(&mut assumptions);
    speed.kernel_assumptions(&mut assumptions);
    speed.matmul_assumption(&mut assumptions);
    assumptions.extend(host_assumptions(setup, breakdown));
    let performance = performance(
        result
            .figures
            .as_ref()
            .unwrap_or(&Figures::unavailable(&EvalError::Invalid)),
    );
    Ok(Explanation {
        deployment: summary.name,
        file: summary.file,
        line: summary.line,
        setup: setup.clone(),
        breakdown: breakdown.clone(),
        performance,
        attention,
        kv_saving,
        assumptions,
    })
}

/// The catalog entries behind a deployment's speed assumptions (its model, GPU, quant,
/// engine and the GPU's architecture), and whether a serving engine's kernels run it.
struct SpeedFacts<'a, 'db> {
    setup: &'a Setup,
    model: Option<&'db crate::eval::Entry<'db>>,
    gpu: Option<&'db crate::eval::Entry<'db>>,
    quant: Option<&'db crate::eval::Entry<'db>>,
    engine: Option<&'db crate::eval::Entry<'db>>,
    arch: Option<&'db crate::eval::Entry<'db>>,
    serving: bool,
}

impl SpeedFacts<'_, '_> {
    /// Which engine's speeds these are: the kernels an engine that picks its own chose,
    /// and where the speed model and its ranges come from.
    fn engine_assumptions(&self, assumptions: &mut Vec<String>) {
        let (setup, serving) = (self.setup, self.serving);
        // An engine that picks its kernels (`kernels = auto`, the generic engine) says
        // which it picked and why.
        if self.engine.is_some_and(|engine| {
            engine.as_engine().kernels == Some(crate::eval::schema::Kernels::Auto)
        }) {
            assumptions.push(if serving {
                format!("engine {}: no serving engine named, so speeds are a serving engine's at the pooled fit (a data-centre GPU and a format the serving engines load); name one (`engine = vllm`, `sglang`, ...) for its own", setup.engine)
            } else {
                format!("engine {}: no engine named, so speeds are llama.cpp's (a GGUF or MLX format, or a GPU outside the data centre); name one for its own", setup.engine)
            });
        }
        assumptions.push(if serving {
            "speeds come from a simulation of the engine's continuous batching (at most `seqs` requests running; prompts chunked to the engine's token budget, mixed with decodes or prefilled first as the engine schedules; the workload's Poisson `rate` or `burst`, else `seqs` clients each keeping one request open) with a roofline per engine step; efficiencies and overheads fitted to published vLLM, SGLang, TensorRT-LLM and LMDeploy measurements; each range is the 10th–90th percentile of measured / predicted on held-out GPU families (docs/calibration-serving.md)"
                .into()
        } else {
            "speeds come from a roofline with efficiencies fitted to published llama.cpp measurements; the range is the 10th–90th percentile of measured / predicted on held-out data (docs/calibration-speed.md)"
                .into()
        });
    }

    /// On a serving engine, the kernels that reach less than the fitted efficiencies: the
    /// format's tensor efficiency, mixture-of-experts kernels, the architecture's kernels
    /// and weight-only kernels.
    fn kernel_assumptions(&self, assumptions: &mut Vec<String>) {
        let (setup, serving, model, arch) = (self.setup, self.serving, self.model, self.arch);
        // A format whose matrix multiplies reach only part of its tensor type's peak.
        if serving
            && let Some(quant) = self.quant
            && let (Some(share), Some(tensor)) = (
                quant.as_quant().tensor_efficiency,
                quant.as_quant().tensor.map(|s| s.name()),
            )
            && share < 1.0
        {
            assumptions.push(format!(
                "{}'s matrix multiplies reach {:.0} % of the GPU's {tensor} peak where it runs {tensor} natively (the quant's `tensor_efficiency`; docs/calibration-serving.md)",
                setup.quant,
                share * 100.0
            ));
        }
        // A mixture-of-experts model: its expert kernels' shares of the engine's efficiencies.
        if serving
            && model
                .as_ref()
                .is_some_and(|m| m.as_model().experts.is_some())
            && let Some(engine) = self.engine
        {
            use crate::eval::speed::{MOE_BANDWIDTH_EFFICIENCY, MOE_EFFICIENCY};
            let stream = engine
                .as_engine()
                .moe_bandwidth_efficiency
                .unwrap_or(MOE_BANDWIDTH_EFFICIENCY);
            let matmul = engine.as_engine().moe_efficiency.unwrap_or(MOE_EFFICIENCY);
            assumptions.push(format!(
                "mixture of experts: expert weights stream at {:.0} % of the engine's bandwidth efficiency and expert matmuls reach {:.0} % of its compute efficiency (the engine's `moe_bandwidth_efficiency`, `moe_efficiency`; docs/calibration-serving.md)",
                stream * 100.0,
                matmul * 100.0
            ));
        }
        // An architecture whose kernels reach less than the engines' fitted efficiencies.
        if serving
            && let Some(arch) = arch
            && let Some(share) = arch.as_arch().serving_efficiency
            && share < 1.0
        {
            assumptions.push(format!(
                "{}'s kernels reach {:.0} % of the serving engines' fitted bandwidth efficiency (the arch's `serving_efficiency`; docs/calibration-serving.md)",
                arch.as_arch().name.as_deref().unwrap_or("its architecture"),
                share * 100.0
            ));
        }
        // Weight-only kernels: packed weights widened to 16 bit inside the multiply.
        if serving && let (Some(quant), Some(engine)) = (self.quant, self.engine) {
            let share = crate::eval::estimate::weight_only_share(quant, arch, engine);
            if share < 1.0 {
                assumptions.push(format!(
                    "{}'s matrix multiplies run through weight-only kernels at {:.0} % of the 16-bit rate (the weights widened to 16 bit inside each multiply; the quant's `weight_only_efficiency`; docs/calibration-serving.md)",
                    setup.quant,
                    share * 100.0
                ));
            }
        }
    }

    /// On a serving engine, the share of its tensor peaks the GPU's best matrix
    /// multiplies reach, and where that share comes from.
    fn matmul_assumption(&self, assumptions: &mut Vec<String>) {
        let (setup, serving, arch) = (self.setup, self.serving, self.arch);
        // The share of its tensor peaks the GPU's best matrix multiplies reach, which the
        // engines' compute efficiencies scale.
        if serving && let Some(gpu) = self.gpu {
            use crate::eval::estimate::{ShareSource, matmul_share};
            use crate::eval::schema::TensorType;
            let (share, source) = matmul_share(gpu, arch, TensorType::Bf16);
            let whence = match source {
                ShareSource::Measured | ShareSource::MeasuredBf16 => {
                    "its measured `bf16_mamf`, Maximum Achievable Matmul FLOPS".to_string()
                }
                ShareSource::Arch => format!(
                    "no measurement of its own: its architecture's `matmul_share`, from {}'s measured GPUs",
                    arch.and_then(|a| a.as_arch().name.as_deref()).unwrap_or("the architecture")
                ),
                ShareSource::Default => {
                    "no measurement of it or its architecture: the measured NVIDIA data-centre GPUs' median".to_string()
                }
            };
            let fp8 = match matmul_share(gpu, arch, TensorType::Fp8) {
                (fp8, ShareSource::Measured) => format!(", {:.1} % in FP8", fp8 * 100.0),
                _ => String::new(),
            };
            // The format's own tensor type, where the architecture runs it and the GPU
            // has no measurement of it: it is taken at the BF16 share.
            let own = self
                .quant
                .and_then(|quant| quant.as_quant().tensor)
                .filter(|ty| !matches!(ty, TensorType::Bf16 | TensorType::Fp16 | TensorType::Fp8))
                .filter(|ty| arch.is_some_and(|a| a.as_arch().rate(*ty).is_some()))
                .filter(|ty| matmul_share(gpu, arch, *ty).1 == ShareSource::MeasuredBf16)
                .map(|ty| {
                    format!(
                        "; {} is taken at the BF16 share (no `{}_mamf` measured)",
                        ty.name().to_uppercase(),
                        ty.name()
                    )
                })
                .unwrap_or_default();
            assumptions.push(format!(
                "{}'s best matrix multiplies reach {:.1} % of its BF16 peak{fp8} ({whence}{own}); the engine's compute efficiency is a share of that rate (docs/calibration-serving.md)",
                setup.gpu,
                share * 100.0
            ));
        }
    }
}

/// What the cost assumes: the offer rented and how many instances, or the owned GPU's
/// parts (docs/cost.md).
fn pricing_assumptions(setup: &Setup) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(rental) = &setup.rental {
        out.push(format!(
            "pricing = cloud: {} whole instance{} of {} {} ({} × {} each, {} at ${:.2}/h{}, offer `{}` in stdlib/offers.deploy); the cheapest offer that carries {} and passes the deployment's provider, region and offer",
            rental.instances,
            if rental.instances == 1 { "" } else { "s" },
            rental.provider,
            rental.instance,
            rental.gpus_per_instance,
            setup.gpu,
            if rental.spot { "spot" } else { "on demand" },
            rental.instance_price_per_hour,
            rental
                .region
                .as_deref()
                .map(|r| format!(" in {r}"))
                .unwrap_or_default(),
            rental.offer,
            setup.gpu,
        ));
        out.push(match rental.network {
            Some(network) if setup.count > 1 => format!(
                "each tensor-parallel group of {} × {} spans {} instances of {} over the offer's stated network, {:.2} GB/s per GPU each way, which its all-reduces cross in the speeds; an offer whose instance holds the whole group would be preferred (docs/cost.md)",
                setup.count,
                setup.gpu,
                setup.count.div_ceil(rental.gpus_per_instance.max(1)),
                rental.gpus_per_instance,
                network / 1e9
            ),
            _ if setup.count > 1 => format!(
                "each tensor-parallel group of {} × {} is rented in one instance, whose GPU links its all-reduces use as the speeds assume; offers of fewer GPUs per instance, unless they state a `network`, are not candidates (docs/cost.md)",
                setup.count, setup.gpu
            ),
            _ => return out,
        });
    }
    if let Some(owned) = &setup.owned {
        out.push(format!(
            "pricing = owned: per GPU ${:.2} over {} years = ${:.4}/h, plus {:.0} W × PUE {} at ${:.2}/kWh = ${:.4}/h, plus host ${:.2}/h: ${:.4}/h (docs/cost.md)",
            owned.msrp,
            owned.amortize_years,
            owned.amortized_per_hour,
            owned.tdp_watts,
            owned.pue,
            owned.power_per_kwh,
            owned.power_per_hour,
            owned.host_per_hour,
            owned.gpu_per_hour,
        ));
    }
    out
}

/// What `offload = auto` and `gpu = cpu` assume.
fn host_assumptions(setup: &Setup, breakdown: &Breakdown) -> Vec<String> {
    use crate::eval::schema::OffloadMode;
    use crate::eval::speed::{HOST_EFFICIENCY_CPU, HOST_EFFICIENCY_OFFLOAD};
    let mut out = Vec::new();
    let host = breakdown.host.as_deref().unwrap_or("the host");
    let (Some(gpu_layers), Some(layers)) = (breakdown.gpu_layers, breakdown.layers) else {
        return out;
    };
    if gpu_layers == 0 && breakdown.offload == Some(OffloadMode::None) {
        out.push(format!(
            "gpu = cpu: the whole model is in {host}'s memory and decodes on the CPU at {:.0} % of its theoretical bandwidth, fitted to published CPU-only llama.cpp runs (docs/calibration-offload.md)",
            HOST_EFFICIENCY_CPU * 100.0
        ));
    } else if gpu_layers < layers {
        out.push(format!(
            "offload = auto: {gpu_layers} of {layers} layers on {} (llama.cpp -ngl {gpu_layers}), the other {} with their KV cache, the output layer and the input embeddings in {host}'s memory",
            setup.gpu,
            layers - gpu_layers
        ));
        out.push(format!(
            "each token streams the offloaded layers' weights from system RAM on the CPU at {:.1} % of {host}'s theoretical bandwidth, after the GPU's layers: the two times add (fitted to published partial-offload llama.cpp runs, docs/calibration-offload.md)",
            HOST_EFFICIENCY_OFFLOAD * 100.0
        ));
    } else if breakdown.offload == Some(OffloadMode::Auto) {
        out.push(format!(
            "offload = auto: every layer fits on {}, nothing runs from host memory",
            setup.gpu
        ));
    }
    out
}

/// What pipeline stages, expert parallelism and speculative decoding assume.
fn plan_assumptions(setup: &Setup) -> Vec<String> {
    let mut out = Vec::new();
    if setup.pipeline > 1 {
        out.push(format!(
            "{} pipeline stages of {} GPU{} each ({} GPUs per replica): each GPU holds 1/{} of the layers and of their KV cache; a token passes every stage in turn, so decode is no faster than one stage group, and the stages send activations to each other every step",
            setup.pipeline,
            setup.count,
            if setup.count == 1 { "" } else { "s" },
            setup.count * setup.pipeline,
            setup.pipeline
        ));
    }
    if setup.expert_parallel {
        out.push(format!(
            "expert parallelism: the experts are spread whole over the {} GPUs (the busiest holds ceil(experts / {})); each MoE layer sends every token to its experts and back (two all-to-alls) instead of an all-reduce",
            setup.count, setup.count
        ));
    }
    if let Some(spec) = &setup.speculative {
        out.push(format!(
            "speculative decoding ({}): {} drafted token{} per step accepted with probability {:.2}{} each: {:.2} expected tokens per target step, which verifies {} tokens per sequence; the gain shrinks as the batch grows compute-bound",
            spec.method,
            spec.tokens,
            if spec.tokens == 1 { "" } else { "s" },
            spec.acceptance,
            if spec.acceptance_default { " (the method's default)" } else { "" },
            spec.expected_tokens_per_step,
            spec.tokens + 1
        ));
    }
    out
}

fn assumptions(
    setup: &Setup,
    breakdown: &Breakdown,
    model: Option<&crate::eval::Entry<'_>>,
    gpu: Option<&crate::eval::Entry<'_>>,
) -> Vec<String> {
    let mut out = vec![format!(
        "context is the token budget of each sequence (prompt plus reserved output): {} tokens × {} sequence{}",
        setup.context,
        setup.seqs,
        if setup.seqs == 1 { "" } else { "s" }
    )];
    if breakdown.weights_source == "files" {
        out.push(format!(
            "weights are the exact size of the {} artifact listed in the model's files table; the download size is not peak memory: runtime buffers and the KV cache come on top",
            setup.quant
        ));
    } else {
        out.push(format!(
            "weights are params × bits per weight of {} (no artifact size is listed for it); real files keep embeddings at higher precision and are somewhat larger",
            setup.quant
        ));
    }
    if let Some(model) = model
        && model.as_model().experts.is_some()
    {
        out.push(
            "all MoE experts stay resident: weights count every parameter, not only the active ones"
                .into(),
        );
    }
    let padding = breakdown.engine_memory.weight_padding_bytes;
    if padding > 0 {
        out.push(format!(
            "{} stores the {} experts in its MoE kernel's padded layout (hidden size and each GPU's share of an expert's width rounded up to the format's `vllm_expert_align_hidden` and `vllm_expert_align_width`): {} more per GPU, loaded and streamed like the weights",
            setup.engine,
            setup.quant,
            crate::units::Quantity::bytes(padding).display()
        ));
    }
    out.push(format!(
        "the KV cache is stored as {} whatever the weight format; sequences share one copy of the weights",
        setup.kv_cache
    ));
    if let Some((linear, state)) = model.and_then(crate::eval::estimate::linear_attention) {
        out.push(format!(
            "{linear:.0} of the model's layers use linear attention: each keeps a fixed state of {:.2} MiB per sequence instead of a KV cache, counted as a layer whose KV stops growing at as many tokens as that state's bytes",
            state / (1u64 << 20) as f64
        ));
    }
    if breakdown.kv_heads_replicated {
        out.push(if breakdown.kv_heads_per_gpu.is_some() {
            format!(
                "a KV head is never split: over {} GPUs each holds whole heads, so part of the KV cache is replicated",
                setup.count
            )
        } else {
            format!(
                "MLA's compressed KV cache is held whole by each of the {} GPUs",
                setup.count
            )
        });
    }
    out.extend(plan_assumptions(setup));
    if let Some(window) = breakdown.model_max_context {
        if setup.context > window {
            out.push(format!(
                "the requested context exceeds the model's documented window of {window} tokens"
            ));
        } else {
            out.push(format!(
                "the requested context is within the model's documented window of {window} tokens"
            ));
        }
    }
    if let Some(gpu) = gpu
        && gpu.unified_memory()
        && let Some(memory) = gpu.as_gpu().memory
    {
        match gpu.as_gpu().system_reserved {
            Some(reserved) => out.push(format!(
                "unified memory: the system keeps {} of the {} the driver reports (stdlib `system_reserved`); an engine that allocates its share at startup holds all of it",
                crate::units::Quantity::bytes(reserved as i128).display(),
                crate::units::Quantity::bytes(gpu.as_gpu().visible_memory.unwrap_or(memory) as i128).display()
            )),
            None => out.push(format!(
                "unified memory: macOS lets the GPU wire about {:.0} % of it by default (recommendedMaxWorkingSetSize)",
                unified_memory_share(memory) * 100.0
            )),
        }
    }
    out.push(format!(
        "runtime overhead is the {} engine's model (docs/estimation.md), paid on every GPU",
        setup.engine
    ));
    if let Some(release) = &setup.engine_release {
        out.push(format!(
            "the engine's figures are `{release}`'s, the catalog's entry for the {} release the deployment's `version` names (stdlib/engines.deploy)",
            setup.engine
        ));
    }
    if let Some(flash) = setup.flash_attention {
        out.push(format!(
            "Ollama places the layers by its own memory estimate (v0.12.10 llm/memory.go; docs/engines.md), flash attention {}",
            if flash { "on" } else { "off (a quantized kv_cache is then stored as f16)" }
        ));
    }
    out
}
