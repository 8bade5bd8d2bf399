//! Rendering of `deployfit explain`: a table with a memory bar per deployment, or JSON.

use deployfit_host::eval::schema::OffloadMode;
use deployfit_host::explain::Explanation;
use deployfit_host::units::Quantity;

const BAR_WIDTH: usize = 40;

fn gib(bytes: i128) -> String {
    Quantity::bytes(bytes).display()
}

fn percent(ratio: f64) -> String {
    format!("{:.1} %", ratio * 100.0)
}

/// One GPU's memory as the bar draws it, in bytes: the weights' share on this GPU, the KV
/// cache, the runtime overhead, the whole need, and the scale (the usable memory, or the
/// need when it does not fit). Shared by the terminal bar and the HTML report.
pub struct BarParts {
    pub weights: f64,
    pub kv: f64,
    pub overhead: f64,
    pub need: f64,
    pub scale: f64,
}

pub fn bar_parts(e: &Explanation) -> BarParts {
    // Each GPU holds its stage's share of the layers.
    let count = (e.setup.count.max(1) * e.setup.pipeline.max(1)) as f64;
    // With offload only the GPU layers' share of the weights is on the GPUs.
    let on_gpu = match (e.breakdown.gpu_layers, e.breakdown.layers) {
        (Some(gpu), Some(all)) if all > 0 && e.breakdown.offload == Some(OffloadMode::Auto) => {
            gpu as f64 / all as f64
        }
        _ => 1.0,
    };
    let weights = e.breakdown.weights_bytes as f64 * on_gpu / count;
    let kv = (e.breakdown.per_gpu_bytes - e.breakdown.overhead_bytes) as f64 - weights;
    let overhead = e.breakdown.overhead_bytes as f64;
    let need = e.breakdown.per_gpu_bytes as f64;
    let scale = e
        .breakdown
        .usable_bytes
        .map(|u| u as f64)
        .unwrap_or(need)
        .max(need);
    BarParts {
        weights,
        kv: kv.max(0.0),
        overhead,
        need,
        scale,
    }
}

/// The memory bar of one GPU: weights █, KV ▓, overhead ▒, free ░, scaled to the usable
/// memory (or to the need, when it does not fit).
fn bar(e: &Explanation) -> String {
    let parts = bar_parts(e);
    let scale = parts.scale;
    let cells = |bytes: f64| ((bytes / scale) * BAR_WIDTH as f64).round().max(0.0) as usize;
    let (w, k, o) = (cells(parts.weights), cells(parts.kv), cells(parts.overhead));
    let used = (w + k + o).min(BAR_WIDTH);
    let mut text = String::new();
    text.push_str(&"█".repeat(w));
    text.push_str(&"▓".repeat(k));
    text.push_str(&"▒".repeat(o));
    text.push_str(&"░".repeat(BAR_WIDTH - used));
    text.chars().take(BAR_WIDTH).collect()
}

/// The engine's memory per GPU: the overhead inside the usable share with its named
/// components, CUDA graphs (and whether they come on top of the share), and the KV budget
/// and capacity the startup leaves.
fn engine_lines(b: &deployfit_host::eval::estimate::Breakdown) -> String {
    let m = &b.engine_memory;
    let mut parts = Vec::new();
    if m.cuda_context_bytes > 0 {
        parts.push(format!("CUDA context {}", gib(m.cuda_context_bytes)));
    }
    if m.activation_bytes > 0 || m.sampler_bytes > 0 {
        let (peak, what) = if m.sampler_bytes > m.activation_bytes {
            (
                m.sampler_bytes,
                format!("sampler over {} sequences", m.sampler_rows),
            )
        } else {
            (
                m.activation_bytes,
                format!("forward pass of {} tokens", m.profile_tokens),
            )
        };
        parts.push(format!("activation peak {} ({what})", gib(peak)));
    }
    if m.communication_bytes > 0 {
        parts.push(format!("communication {}", gib(m.communication_bytes)));
    }
    if m.cuda_graph_bytes > 0 && m.cuda_graphs_in_budget {
        parts.push(format!("CUDA graphs {}", gib(m.cuda_graph_bytes)));
    }
    if m.weight_padding_bytes > 0 {
        parts.push(format!(
            "expert padding {} (the MoE kernel's layout)",
            gib(m.weight_padding_bytes)
        ));
    }
    let detail = if parts.is_empty() {
        "per GPU".to_string()
    } else {
        parts.push(format!("other {}", gib(m.base_bytes)));
        format!("per GPU: {}", parts.join(", "))
    };
    let mut out = format!("  overhead     {:>12}   {detail}\n", gib(b.overhead_bytes));
    if m.cuda_graph_bytes > 0 && !m.cuda_graphs_in_budget {
        out.push_str(&format!(
            "  CUDA graphs  {:>12}   per GPU, on top of the usable share\n",
            gib(m.cuda_graph_bytes)
        ));
    }
    // Offloaded and CPU deployments have no startup KV budget to speak of.
    if let (Some(budget), Some(capacity), None) =
        (b.kv_budget_bytes, b.kv_capacity_tokens, b.offload)
    {
        let failure = match b.startup_failure {
            Some(deployfit_host::eval::estimate::StartupFailure::WeightsExceedUsable) => {
                ": the engine would not start (the weights exceed the usable share)".to_string()
            }
            Some(deployfit_host::eval::estimate::StartupFailure::NoKvBudget) => {
                ": the engine would not start (no KV budget)".to_string()
            }
            Some(deployfit_host::eval::estimate::StartupFailure::ContextExceedsKvCapacity) => {
                ": the engine would not start (context above it)".to_string()
            }
            Some(deployfit_host::eval::estimate::StartupFailure::CudaGraphsOom) => {
                ": out of memory capturing CUDA graphs".to_string()
            }
            None => String::new(),
        };
        out.push_str(&format!(
            "  KV budget    {:>12}   per GPU, holds {} tokens{failure}\n",
            gib(budget),
            tokens(capacity)
        ));
    }
    out
}

/// The human `explain` table: the header, the memory lines with the bar, offload, context,
/// performance, cost and the assumptions, each section in turn.
pub fn table(e: &Explanation) -> String {
    let mut out = header(e);
    memory_lines(e, &mut out);
    offload_lines(&e.breakdown, &mut out);
    context_lines(&e.breakdown, &mut out);
    speed_lines(e, &mut out);
    latency_lines(e, &mut out);
    cost_lines(e, &mut out);
    out.push_str("  assumptions:\n");
    for assumption in &e.assumptions {
        out.push_str(&format!("  - {assumption}\n"));
    }
    out
}

/// The first two lines: the deployment and where it is declared, then its setup (model,
/// quantization, engine, GPUs, stages, context, sequences and KV cache type).
fn header(e: &Explanation) -> String {
    let s = &e.setup;
    format!(
        "{} ({}:{})\n  {} · {} · {} · {} × {}{} · context {} × {} seq{} · KV {}\n",
        e.deployment,
        e.file.display(),
        e.line,
        s.model,
        s.quant,
        s.engine,
        s.count,
        s.gpu,
        if s.pipeline > 1 {
            format!(" × {} stages", s.pipeline)
        } else {
            String::new()
        },
        Quantity::real(s.context as f64, deployfit_host::units::Dim::TOKENS).display(),
        s.seqs,
        if s.seqs == 1 { "" } else { "s" },
        s.kv_cache
    )
}

/// The memory lines: weights, KV cache, the engine's overhead, the total, and the per-GPU
/// need against the usable memory with its bar and verdict.
fn memory_lines(e: &Explanation, out: &mut String) {
    let b = &e.breakdown;
    let weights_note = if b.weights_source == "files" {
        format!("exact artifact, {} B", group(b.weights_bytes))
    } else {
        "params × bits per weight".to_string()
    };
    out.push_str(&format!(
        "  weights      {:>12}   {weights_note}\n",
        gib(b.weights_bytes)
    ));
    let saving = match (e.kv_saving, b.mha_kv_bytes) {
        (Some(saving), Some(mha)) if saving > 0.0005 => format!(
            "{} saves {} against MHA ({})",
            e.attention.to_uppercase(),
            percent(saving),
            gib(mha)
        ),
        _ => format!("{} attention", e.attention.to_uppercase()),
    };
    out.push_str(&format!(
        "  KV cache     {:>12}   {saving}\n",
        gib(b.kv_bytes)
    ));
    out.push_str(&engine_lines(b));
    out.push_str(&format!("  total        {:>12}\n", gib(b.total_bytes)));
    match (b.usable_bytes, b.utilization, b.verdict) {
        (Some(usable), Some(utilization), Some(verdict)) => {
            out.push_str(&format!(
                "  per GPU      {:>12}   of {} usable ({})\n",
                gib(b.per_gpu_bytes),
                gib(usable),
                percent(utilization)
            ));
            out.push_str(&format!("  [{}]  {}\n", bar(e), verdict.describe()));
        }
        _ => out.push_str(&format!(
            "  per GPU      {:>12}   (the GPU's memory is unknown)\n",
            gib(b.per_gpu_bytes)
        )),
    }
}

/// The offload lines, when layers are split between GPU and CPU: how many layers sit on
/// the GPUs and why, and the host RAM the rest takes.
fn offload_lines(b: &deployfit_host::eval::estimate::Breakdown, out: &mut String) {
    if let (Some(gpu_layers), Some(layers)) = (b.gpu_layers, b.layers) {
        let how = match b.offload {
            Some(OffloadMode::Auto) if gpu_layers < layers => {
                format!("offload = auto (llama.cpp -ngl {gpu_layers})")
            }
            Some(OffloadMode::Auto) => "offload = auto: every layer fits".to_string(),
            _ => "gpu = cpu: every layer on the CPU".to_string(),
        };
        out.push_str(&format!(
            "  gpu_layers   {:>12}   {how}\n",
            format!("{gpu_layers} of {layers}")
        ));
        if let Some(host_bytes) = b.host_bytes {
            let of = match b.host_memory_bytes {
                Some(memory) => format!(
                    "of {} on {}",
                    gib(memory),
                    b.host.as_deref().unwrap_or("the host")
                ),
                None => "(the host's memory is unknown)".to_string(),
            };
            out.push_str(&format!("  host RAM     {:>12}   {of}\n", gib(host_bytes)));
        }
    }
}

/// The context lines: the longest context per sequence the memory allows (with the model's
/// window), and what the memory would hold beyond that window.
fn context_lines(b: &deployfit_host::eval::estimate::Breakdown, out: &mut String) {
    if let Some(max) = b.max_context {
        let window = b
            .model_max_context
            .map(|w| format!(" (model window {})", tokens(w)))
            .unwrap_or_default();
        out.push_str(&format!(
            "  max context  {:>12}   per sequence{window}\n",
            tokens(max)
        ));
        if let Some(physical) = b.physical_max_context.filter(|p| *p > max) {
            out.push_str(&format!(
                "  memory holds {:>12}   per sequence, beyond the model's trained window\n",
                tokens(physical)
            ));
        }
    }
}

/// The speed lines: decode per sequence with its bound, speculative decoding, and the
/// throughput of all sequences.
fn speed_lines(e: &Explanation, out: &mut String) {
    let s = &e.setup;
    let p = &e.performance;
    if let (Some(decode), Some(low), Some(high)) =
        (p.decode_tps, p.decode_tps_low, p.decode_tps_high)
    {
        let bound = p.bound.as_deref().unwrap_or("");
        out.push_str(&format!(
            "  decode       {:>8.1} tok/s  per sequence ({low:.1}–{high:.1}), {bound}\n",
            decode
        ));
    }
    if let Some(spec) = &s.speculative {
        out.push_str(&format!(
            "  speculative  {:>8.2} tokens per step  {}, {} drafted, acceptance {:.2}{}\n",
            spec.expected_tokens_per_step,
            spec.method,
            spec.tokens,
            spec.acceptance,
            if spec.acceptance_default {
                " (default)"
            } else {
                ""
            }
        ));
    }
    if let (Some(throughput), Some(low), Some(high)) = (
        p.throughput_tps,
        p.throughput_tps_low,
        p.throughput_tps_high,
    ) {
        out.push_str(&format!(
            "  throughput   {throughput:>8.1} tok/s  all sequences ({low:.1}–{high:.1})\n"
        ));
    }
}

/// A duration for the table, in the units' own display.
fn seconds(s: f64) -> String {
    Quantity::real(s, deployfit_host::units::Dim::SECONDS).display()
}

/// The latency lines: time per output token, prefill with the time to first token, and
/// under load the queue wait and the running requests the KV cache caps.
fn latency_lines(e: &Explanation, out: &mut String) {
    let s = &e.setup;
    let p = &e.performance;
    if let (Some(tpot), Some(low), Some(high)) = (p.tpot_s, p.tpot_s_low, p.tpot_s_high) {
        let p50 = p
            .tpot_p50_s
            .map(|p50| format!(", median {}", seconds(p50)))
            .unwrap_or_default();
        let p99 = p
            .tpot_p99_s
            .map(|p99| format!(", p99 {}", seconds(p99)))
            .unwrap_or_default();
        out.push_str(&format!(
            "  per token    {:>12}   after the first ({}–{}){p50}{p99}\n",
            seconds(tpot),
            seconds(low),
            seconds(high)
        ));
    }
    if let (Some(prefill), Some(low), Some(high), Some(ttft)) = (
        p.prefill_tps,
        p.prefill_tps_low,
        p.prefill_tps_high,
        p.ttft_s,
    ) {
        let range = match (p.ttft_s_low, p.ttft_s_high) {
            (Some(lo), Some(hi)) => format!(" ({}–{})", seconds(lo), seconds(hi)),
            _ => String::new(),
        };
        let p50 = p
            .ttft_p50_s
            .map(|p50| format!(", median {}", seconds(p50)))
            .unwrap_or_default();
        let p99 = p
            .ttft_p99_s
            .map(|p99| format!(", p99 {}", seconds(p99)))
            .unwrap_or_default();
        let p99 = format!("{p50}{p99}");
        out.push_str(&format!(
            "  prefill      {prefill:>8.0} tok/s  ({low:.0}–{high:.0}), time to first token {}{range}{p99}\n",
            seconds(ttft)
        ));
        if let Some(queue) = p.queue_s.filter(|q| *q > 0.0) {
            out.push_str(&format!(
                "  queue        {:>12}   mean wait before a prompt starts (simulated)\n",
                seconds(queue)
            ));
        }
        if let (Some(running), Some(true)) = (p.running_peak, p.kv_bound) {
            let preempted = match p.preemptions.filter(|n| *n >= 1.0) {
                Some(n) => format!(
                    "; {n:.0} preempted when their new tokens found no free cache (resumed from the prefix cache)"
                ),
                None => String::new(),
            };
            out.push_str(&format!(
                "  running      {:>12}   requests at once at most: the KV cache holds no more (seqs = {}){preempted}\n",
                format!("{running:.0}"),
                s.seqs
            ));
        }
    }
}

/// The cost lines: the hourly cost and per million output tokens (or why there is none),
/// and the pricing with the rental offer or the owned GPU's hourly parts.
fn cost_lines(e: &Explanation, out: &mut String) {
    let p = &e.performance;
    if let Some(hourly) = p.cost_per_hour {
        let per_mtok = p
            .cost_per_mtok
            .map(|c| format!(", ${c:.2} per million output tokens"))
            .unwrap_or_default();
        out.push_str(&format!("  cost         ${hourly:.2}/h{per_mtok}\n"));
    } else if let Some(why) = &p.cost_missing {
        out.push_str(&format!("  cost         none: {why}\n"));
    }
    out.push_str(&format!("  pricing      {}", e.setup.pricing));
    if let Some(rental) = &e.setup.rental {
        out.push_str(&format!(
            ": provider {}, offer {}, {} × {} ({} GPU{} each) at ${:.2}/h{}",
            rental.provider,
            rental.offer,
            rental.instances,
            rental.instance,
            rental.gpus_per_instance,
            if rental.gpus_per_instance == 1 {
                ""
            } else {
                "s"
            },
            rental.instance_price_per_hour,
            if rental.spot { " spot" } else { "" },
        ));
    }
    if let Some(owned) = &e.setup.owned {
        out.push_str(&format!(
            ": ${:.4}/h per GPU = ${:.4} amortised + ${:.4} power + ${:.4} host",
            owned.gpu_per_hour, owned.amortized_per_hour, owned.power_per_hour, owned.host_per_hour
        ));
    }
    out.push('\n');
}

fn tokens(count: u64) -> String {
    Quantity::real(count as f64, deployfit_host::units::Dim::TOKENS).display()
}

fn group(value: i128) -> String {
    Quantity::number(deployfit_host::units::Num::Int(value)).display()
}
