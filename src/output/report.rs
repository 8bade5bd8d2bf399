//! Rendering of `deployfit report`: one self-contained HTML page (inline CSS, inline SVG,
//! no script, nothing fetched) with, per deployment, the memory bar, speed and cost, the
//! diagnostics and the solver's candidates, and the `matrix` table of every model.
//!
//! Every figure comes from the structs `explain`, `solve`, `matrix` and `check` produce;
//! this module only lays them out. Every string that is not a literal of this file goes
//! through [`esc`].

use std::fmt::Write as _;
use std::path::PathBuf;

use deployfit_host::diagnostics::DeploymentSummary;
use deployfit_host::eval::estimate::Verdict;
use deployfit_host::eval::schema::OffloadMode;
use deployfit_host::explain::Explanation;
use deployfit_host::matrix::Matrix;
use deployfit_host::solve::{Candidate, Solution};
use deployfit_host::units::{Dim, Quantity};
use deployfit_host::{Diagnostic, Severity};

/// What the report shows: the checked files with their deployments, and the matrix of
/// each distinct model.
pub struct Input {
    pub files: Vec<FileReport>,
    pub models: Vec<ModelMatrix>,
    /// The solver's `--top`.
    pub top: usize,
}

pub struct FileReport {
    pub path: PathBuf,
    pub deployments: Vec<DeploymentReport>,
    /// Diagnostics that belong to no deployment (a syntax error, a catalog entry).
    pub other: Vec<Diagnostic>,
}

pub struct DeploymentReport {
    pub summary: DeploymentSummary,
    /// `None` when the deployment could not be evaluated.
    pub explanation: Option<Explanation>,
    /// For a deployment with holes: the solver's answer, or why there is none.
    pub solution: Option<Result<Solution, String>>,
    pub diagnostics: Vec<Diagnostic>,
}

pub struct ModelMatrix {
    pub model: String,
    /// The file whose names the matrix was built against, when a model name means
    /// different things in different files.
    pub file: Option<PathBuf>,
    pub matrix: Result<Matrix, String>,
    /// The weight formats the report's deployments run this model at.
    pub used_quants: Vec<String>,
}

/// Text for HTML (element content and quoted attribute values alike): the five special
/// characters as entities; control and bidirectional formatting characters (other than
/// line breaks and tabs) written as visible escapes, as in the terminal.
pub fn esc(text: &str) -> String {
    let text = deployfit_host::render::terminal_text(text);
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Prose for HTML: [`esc`], then each pair of backticks as `<code>` (messages, helps and
/// reasons quote names and fixes that way); an unpaired backtick stays as it is.
pub fn prose(text: &str) -> String {
    let escaped = esc(text);
    let parts: Vec<&str> = escaped.split('`').collect();
    if parts.len().is_multiple_of(2) {
        return escaped;
    }
    let mut out = String::with_capacity(escaped.len() + 16);
    for (i, part) in parts.iter().enumerate() {
        if i % 2 == 1 {
            out.push_str("<code>");
            out.push_str(part);
            out.push_str("</code>");
        } else {
            out.push_str(part);
        }
    }
    out
}

fn bytes(value: f64) -> String {
    Quantity::bytes(value.round() as i128).display()
}

fn tokens(count: u64) -> String {
    Quantity::real(count as f64, Dim::TOKENS).display()
}

fn percent(ratio: f64) -> String {
    format!("{:.1} %", ratio * 100.0)
}

/// A number for SVG coordinates: finite, two decimals.
fn num(value: f64) -> String {
    let value = if value.is_finite() { value } else { 0.0 };
    format!("{value:.2}")
}

/// The fill of each part of the memory bar (SVG presentation attributes take no CSS
/// variables).
fn part_color(class: &str) -> &'static str {
    match class {
        "weights" => "#3b6fb6",
        "kv" => "#e08a2c",
        "overhead" => "#8e6bbf",
        _ => "#e6ebf0",
    }
}

fn verdict_class(verdict: Option<Verdict>) -> &'static str {
    match verdict {
        Some(Verdict::Comfortable) => "ok",
        Some(Verdict::Tight) => "tight",
        Some(Verdict::FitsWithOffload) => "offload",
        Some(Verdict::DoesNotFit) => "bad",
        None => "unknown",
    }
}

const STYLE: &str = r#"
:root { --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; --soft: #f6f8fa;
  --ok: #1a7f37; --tight: #9a6700; --offload: #0969da; --bad: #cf222e; }
* { box-sizing: border-box; }
body { margin: 0; background: #fff; color: var(--fg);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "DejaVu Sans", sans-serif; }
main, header, footer { max-width: 1100px; margin: 0 auto; padding: 0 24px; }
header { padding-top: 24px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 20px; margin: 0; display: flex; gap: 10px; align-items: baseline; flex-wrap: wrap; }
h3 { font-size: 15px; margin: 18px 0 6px; color: var(--muted); text-transform: uppercase; letter-spacing: .04em; }
h3.model { font-size: 17px; color: var(--fg); text-transform: none; letter-spacing: 0; margin-top: 22px; }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "DejaVu Sans Mono", monospace; font-size: 13px; }
.muted { color: var(--muted); }
.card { border: 1px solid var(--line); border-radius: 8px; padding: 18px 20px; margin: 20px 0; background: #fff; }
.doc { margin: 4px 0 0; font-style: italic; color: var(--muted); }
.setup { margin: 6px 0 0; }
.badge { display: inline-block; border-radius: 999px; padding: 1px 10px; font-size: 12px; font-weight: 600;
  color: #fff; background: var(--muted); white-space: nowrap; }
.badge.ok { background: var(--ok); } .badge.tight { background: var(--tight); }
.badge.offload { background: var(--offload); } .badge.bad { background: var(--bad); }
.badge.error { background: var(--bad); } .badge.warning { background: var(--tight); }
.badge.info { background: var(--offload); }
table { border-collapse: collapse; width: 100%; margin: 6px 0; font-size: 14px; }
th, td { border-bottom: 1px solid var(--line); padding: 5px 8px; text-align: left; vertical-align: top; }
th { background: var(--soft); font-weight: 600; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.used td { background: #fff8c5; }
dl.figures { display: grid; grid-template-columns: max-content 1fr; gap: 2px 18px; margin: 8px 0; }
dl.figures dt { color: var(--muted); }
dl.figures dd { margin: 0; font-variant-numeric: tabular-nums; }
svg { display: block; max-width: 100%; height: auto; }
svg text { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; }
.help { color: var(--muted); }
ul.misses { margin: 4px 0; padding-left: 20px; }
footer { color: var(--muted); font-size: 13px; padding-bottom: 32px; }
nav table td:first-child a { font-weight: 600; }
.scroll { overflow-x: auto; }
td.path, td.mono { white-space: nowrap; }
details > summary { cursor: pointer; font-weight: 600; margin: 6px 0; }
a { color: #0969da; text-decoration: none; } a:hover { text-decoration: underline; }
"#;

/// The whole page.
pub fn html(input: &Input) -> String {
    let deployments: Vec<(&FileReport, &DeploymentReport)> = input
        .files
        .iter()
        .flat_map(|f| f.deployments.iter().map(move |d| (f, d)))
        .collect();
    let all = || {
        input.files.iter().flat_map(|f| {
            f.other
                .iter()
                .chain(f.deployments.iter().flat_map(|d| d.diagnostics.iter()))
        })
    };
    let count = |s: Severity| all().filter(|d| d.severity == s).count();
    let (errors, warnings, infos) = (
        count(Severity::Error),
        count(Severity::Warning),
        count(Severity::Info),
    );
    let mut out = String::new();
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    out.push_str("<title>deployfit report</title>\n<style>");
    out.push_str(STYLE);
    out.push_str("</style>\n</head>\n<body>\n<header>\n<h1>deployfit report</h1>\n");
    let _ = writeln!(
        out,
        "<p class=\"muted\">{} file{}, {} deployment{}: {} error{}, {} warning{}, {} note{} · deployfit {}</p>",
        input.files.len(),
        plural(input.files.len()),
        deployments.len(),
        plural(deployments.len()),
        errors,
        plural(errors),
        warnings,
        plural(warnings),
        infos,
        plural(infos),
        esc(env!("CARGO_PKG_VERSION")),
    );
    out.push_str("</header>\n<main>\n");
    contents(&mut out, &deployments);
    let mut index = 0;
    for file in &input.files {
        if !file.other.is_empty() {
            let _ = writeln!(
                out,
                "<section class=\"card file\">\n<h2>{}</h2>\n<p class=\"muted\">diagnostics outside any deployment</p>",
                esc(&file.path.display().to_string())
            );
            diagnostics(&mut out, &file.other);
            out.push_str("</section>\n");
        }
        for deployment in &file.deployments {
            section(&mut out, index, deployment, input);
            index += 1;
        }
    }
    if !input.models.is_empty() {
        out.push_str(
            "<section class=\"card models\" id=\"models\">\n<details>\n<summary>Models by weight format (the matrix of each model)</summary>\n",
        );
        out.push_str("<p class=\"muted\">As <code>deployfit matrix MODEL --engine E</code> prints it: one GPU, 1 sequence, KV fp16, the formats of the one engine this report's deployments run the model on (over every engine that runs each format when they use several). Rows in yellow are the formats the deployments use.</p>\n");
        for (i, model) in input.models.iter().enumerate() {
            matrix(&mut out, i, model);
        }
        out.push_str("</details>\n</section>\n");
    }
    out.push_str("</main>\n<footer>\n<p>GiB = 2<sup>30</sup> bytes, MiB = 2<sup>20</sup> bytes. Memory is per GPU; speeds are per sequence unless marked otherwise, with the 10th–90th percentile range of the fitted speed model in brackets (docs/calibration-speed.md). Hover over a bar or a point for its figures.</p>\n</footer>\n</body>\n</html>\n");
    out
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// The table of contents: one row per deployment with its verdict and main figures.
fn contents(out: &mut String, deployments: &[(&FileReport, &DeploymentReport)]) {
    if deployments.is_empty() {
        out.push_str("<p>No deployment in these files.</p>\n");
        return;
    }
    out.push_str("<nav class=\"card\">\n<div class=\"scroll\"><table>\n<thead><tr><th>deployment</th><th>model</th><th>GPU</th><th>verdict</th><th class=\"n\">per GPU</th><th class=\"n\">decode</th><th class=\"n\">cost</th><th class=\"n\">problems</th><th>file</th></tr></thead>\n<tbody>\n");
    for (i, (_, d)) in deployments.iter().enumerate() {
        let e = d.explanation.as_ref();
        let fleet = d.summary.figures.get("fleet");
        let (verdict, class) = match (e, fleet) {
            (None, Some(_)) => ("mixed fleet", "ok"),
            _ => verdict_of(e),
        };
        let model = e.map(|e| e.setup.model.clone()).unwrap_or_default();
        let gpu = match (e, fleet) {
            (Some(e), _) if e.setup.count > 1 => format!("{} × {}", e.setup.count, e.setup.gpu),
            (Some(e), _) => e.setup.gpu.clone(),
            (None, Some(fleet)) => fleet.clone(),
            (None, None) => String::new(),
        };
        let per_gpu = e
            .map(|e| bytes(e.breakdown.per_gpu_bytes as f64))
            .unwrap_or_default();
        let decode = e
            .and_then(|e| e.performance.decode_tps)
            .map(|d| format!("{d:.1} tok/s"))
            .unwrap_or_default();
        let cost = e
            .and_then(|e| e.performance.cost_per_hour)
            .map(|c| format!("${c:.2}/h"))
            .or_else(|| d.summary.figures.get("cost_per_hour").cloned())
            .unwrap_or_default();
        let errors = d
            .diagnostics
            .iter()
            .filter(|x| x.severity == Severity::Error)
            .count();
        let warnings = d
            .diagnostics
            .iter()
            .filter(|x| x.severity == Severity::Warning)
            .count();
        let problems = match (errors, warnings) {
            (0, 0) => String::new(),
            (e, 0) => format!("{e} error{}", plural(e)),
            (0, w) => format!("{w} warning{}", plural(w)),
            (e, w) => format!("{e} error{}, {w} warning{}", plural(e), plural(w)),
        };
        let _ = writeln!(
            out,
            "<tr><td><a href=\"#d{i}\">{}</a></td><td class=\"mono\">{}</td><td class=\"gpu\">{}</td><td><span class=\"badge {class}\">{}</span></td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"mono path\">{}:{}</td></tr>",
            esc(&d.summary.name),
            esc(&model),
            esc(&gpu),
            esc(verdict),
            esc(&per_gpu),
            esc(&decode),
            esc(&cost),
            esc(&problems),
            esc(&d.summary.file.display().to_string()),
            d.summary.line,
        );
    }
    out.push_str("</tbody>\n</table></div>\n</nav>\n");
}

/// The verdict's words and CSS class; "not evaluated" without an explanation.
fn verdict_of(e: Option<&Explanation>) -> (&'static str, &'static str) {
    match e {
        Some(e) => (
            e.breakdown
                .verdict
                .map(Verdict::describe)
                .unwrap_or("memory unknown"),
            verdict_class(e.breakdown.verdict),
        ),
        None => ("not evaluated", "bad"),
    }
}

/// One deployment's card.
fn section(out: &mut String, index: usize, d: &DeploymentReport, input: &Input) {
    let e = d.explanation.as_ref();
    let fleet = match &d.solution {
        Some(Ok(solution)) => solution.mixed.as_ref(),
        _ => None,
    };
    let (verdict, class) = match (e, fleet) {
        (None, Some(_)) => ("mixed fleet", "ok"),
        _ => verdict_of(e),
    };
    let _ = writeln!(
        out,
        "<section class=\"card deployment\" id=\"d{index}\">\n<h2>{} <span class=\"badge {class}\">{}</span> <span class=\"muted mono\">{}:{}</span></h2>",
        esc(&d.summary.name),
        esc(verdict),
        esc(&d.summary.file.display().to_string()),
        d.summary.line
    );
    if let Some(doc) = &d.summary.doc {
        let _ = writeln!(out, "<p class=\"doc\">{}</p>", esc(doc));
    }
    match e {
        Some(e) => {
            let s = &e.setup;
            let model = match input.models.iter().position(|m| m.model == s.model) {
                Some(i) => format!("<a href=\"#m{i}\">{}</a>", esc(&s.model)),
                None => esc(&s.model),
            };
            let _ = writeln!(
                out,
                "<p class=\"setup\">{model} · {} · {} · {} × {} · context {} × {} sequence{} · KV {}{}</p>",
                esc(&s.quant),
                esc(&s.engine),
                s.count,
                esc(&s.gpu),
                esc(&tokens(s.context)),
                s.seqs,
                plural(s.seqs as usize),
                esc(&s.kv_cache),
                if s.replicas > 1 {
                    format!(" · {} replicas", s.replicas)
                } else {
                    String::new()
                }
            );
            out.push_str("<h3>Memory per GPU</h3>\n");
            out.push_str(&memory_bar(e));
            figures(out, e);
        }
        None if fleet.is_some() => {
            out.push_str("<p>A mixed fleet (<code>fleet = mixed</code>): one replica of each GPU type is evaluated per request class; the fleet is below.</p>\n");
        }
        None => {
            let _ = writeln!(
                out,
                "<p>Not evaluated: the diagnostics below say why (<code>deployfit check {}</code>).</p>",
                esc(&d.summary.file.display().to_string())
            );
        }
    }
    if let Some(solution) = &d.solution {
        if matches!(solution, Ok(s) if s.mixed.is_some()) {
            out.push_str("<h3>Solver: the cheapest fleet</h3>\n");
        } else {
            let _ = writeln!(out, "<h3>Solver: the best {} candidates</h3>", input.top);
        }
        match solution {
            Ok(solution) => solver(out, solution),
            Err(message) => {
                let _ = writeln!(
                    out,
                    "<p>The solver found no candidate: {}</p>",
                    prose(message)
                );
            }
        }
    }
    out.push_str("<h3>Rules and requires</h3>\n");
    if d.diagnostics.is_empty() {
        out.push_str("<p class=\"muted\">Every require and rule holds; no diagnostic.</p>\n");
    } else {
        diagnostics(out, &d.diagnostics);
    }
    out.push_str("</section>\n");
}

/// The stacked bar of one GPU: weights, KV cache, overhead and free memory, to scale, with
/// the figures under it and a tooltip on each part.
fn memory_bar(e: &Explanation) -> String {
    const WIDTH: f64 = 1000.0;
    const LEFT: f64 = 10.0;
    const BAR: f64 = WIDTH - 2.0 * LEFT;
    let parts = crate::output::explain::bar_parts(e);
    let b = &e.breakdown;
    let scale = if parts.scale > 0.0 { parts.scale } else { 1.0 };
    let x = |value: f64| LEFT + (value / scale).clamp(0.0, 1.0) * BAR;
    let usable = b.usable_bytes.map(|u| u as f64);
    let free = usable.map(|u| (u - parts.need).max(0.0)).unwrap_or(0.0);
    let weights_label = match (b.gpu_layers, b.layers, b.offload) {
        (Some(gpu), Some(all), Some(OffloadMode::Auto)) if gpu < all => {
            format!("weights ({gpu} of {all} layers on the GPU)")
        }
        _ if e.setup.count > 1 => format!(
            "weights (1/{} of {})",
            e.setup.count,
            bytes(b.weights_bytes as f64)
        ),
        _ => "weights".to_string(),
    };
    let segments = [
        ("weights", weights_label.as_str(), parts.weights),
        ("kv", "KV cache", parts.kv),
        ("overhead", "overhead", parts.overhead),
        ("free", "free", free),
    ];
    let title = match (usable, b.utilization) {
        (Some(usable), Some(utilization)) => format!(
            "{} of {} usable per GPU ({}): {}",
            bytes(parts.need),
            bytes(usable),
            percent(utilization),
            b.verdict.map(Verdict::describe).unwrap_or("")
        ),
        _ => format!("{} per GPU; the GPU's memory is unknown", bytes(parts.need)),
    };
    let mut svg = format!(
        "<svg class=\"memory-bar\" role=\"img\" viewBox=\"0 0 {WIDTH} 96\" width=\"{WIDTH}\" height=\"96\">\n<title>{}</title>\n",
        esc(&title)
    );
    let _ = writeln!(
        svg,
        "<text x=\"{LEFT}\" y=\"14\" font-size=\"13\" fill=\"#59636e\">{}</text>",
        esc(&title)
    );
    let _ = writeln!(
        svg,
        "<rect x=\"{LEFT}\" y=\"22\" width=\"{BAR}\" height=\"34\" rx=\"4\" fill=\"#e6ebf0\" stroke=\"#d1d9e0\"/>"
    );
    let mut at = 0.0;
    for (class, label, value) in segments {
        if value <= 0.0 {
            continue;
        }
        let (x0, x1) = (x(at), x(at + value));
        at += value;
        let width = x1 - x0;
        if width <= 0.0 {
            continue;
        }
        let fill = part_color(class);
        let tooltip = format!("{label}: {}", bytes(value));
        let _ = writeln!(
            svg,
            "<rect class=\"segment {class}\" x=\"{}\" y=\"22\" width=\"{}\" height=\"34\" fill=\"{fill}\"><title>{}</title></rect>",
            num(x0),
            num(width),
            esc(&tooltip)
        );
        let text = format!(
            "{} {}",
            label.split(' ').next().unwrap_or(label),
            bytes(value)
        );
        // A label inside the part only where it fits (about 7 px per character).
        if width > text.chars().count() as f64 * 7.0 + 8.0 {
            let color = if class == "free" {
                "#1f2328"
            } else {
                "#ffffff"
            };
            let _ = writeln!(
                svg,
                "<text x=\"{}\" y=\"44\" font-size=\"13\" fill=\"{color}\" text-anchor=\"middle\">{}</text>",
                num(x0 + width / 2.0),
                esc(&text)
            );
        }
    }
    if let Some(usable) = usable
        && parts.need > usable
    {
        let ux = x(usable);
        let _ = writeln!(
            svg,
            "<rect class=\"over\" x=\"{}\" y=\"18\" width=\"{}\" height=\"42\" fill=\"#cf222e\" fill-opacity=\"0.18\"><title>{}</title></rect>",
            num(ux),
            num(LEFT + BAR - ux),
            esc(&format!("over by {}", bytes(parts.need - usable)))
        );
        let _ = writeln!(
            svg,
            "<line x1=\"{0}\" x2=\"{0}\" y1=\"16\" y2=\"62\" stroke=\"#cf222e\" stroke-width=\"2\" stroke-dasharray=\"4 3\"/>",
            num(ux)
        );
    }
    // The legend: every part with its figure, small ones included.
    let mut lx = LEFT;
    for (class, label, value) in segments {
        if class == "free" && usable.is_none() {
            continue;
        }
        let text = format!("{label} {}", bytes(value));
        let _ = writeln!(
            svg,
            "<rect x=\"{}\" y=\"72\" width=\"12\" height=\"12\" rx=\"2\" fill=\"{}\" stroke=\"#d1d9e0\"/><text x=\"{}\" y=\"83\" font-size=\"13\" fill=\"#1f2328\">{}</text>",
            num(lx),
            part_color(class),
            num(lx + 17.0),
            esc(&text)
        );
        lx += 17.0 + text.chars().count() as f64 * 7.2 + 22.0;
    }
    svg.push_str("</svg>\n");
    svg
}

/// Max context, speed with its range, prefill and time to first token, cost.
fn figures(out: &mut String, e: &Explanation) {
    let b = &e.breakdown;
    let p = &e.performance;
    let mut rows: Vec<(&str, String)> = Vec::new();
    let gpus = if e.setup.count > 1 {
        format!(" on {} GPUs", e.setup.count)
    } else {
        String::new()
    };
    rows.push((
        "memory",
        format!(
            "{}{gpus}: weights {}, KV cache {}, overhead {} per GPU",
            bytes(b.total_bytes as f64),
            bytes(b.weights_bytes as f64),
            bytes(b.kv_bytes as f64),
            bytes(b.overhead_bytes as f64),
        ),
    ));
    if let Some(max) = b.max_context {
        let window = b
            .model_max_context
            .map(|w| format!(" (model window {})", tokens(w)))
            .unwrap_or_default();
        rows.push((
            "max context",
            format!("{} per sequence{window}", tokens(max)),
        ));
    }
    if let Some(decode) = p.decode_tps {
        let range = match (p.decode_tps_low, p.decode_tps_high) {
            (Some(low), Some(high)) => format!(" [{low:.1}, {high:.1}]"),
            _ => String::new(),
        };
        let bound = p
            .bound
            .as_deref()
            .map(|b| format!(", {b}"))
            .unwrap_or_default();
        rows.push((
            "decode",
            format!("{decode:.1} tok/s per sequence{range}{bound}"),
        ));
        if let Some(throughput) = p.throughput_tps {
            // Throughput is decode × sequences: the decode range carries over.
            let range = match (p.decode_tps_low, p.decode_tps_high) {
                (Some(low), Some(high)) if decode > 0.0 => format!(
                    " [{:.1}, {:.1}]",
                    throughput * low / decode,
                    throughput * high / decode
                ),
                _ => String::new(),
            };
            rows.push((
                "throughput",
                format!("{throughput:.1} tok/s all sequences{range}"),
            ));
        }
    }
    if let Some(prefill) = p.prefill_tps {
        let range = match (p.prefill_tps_low, p.prefill_tps_high) {
            (Some(low), Some(high)) => format!(" [{low:.0}, {high:.0}]"),
            _ => String::new(),
        };
        rows.push(("prefill", format!("{prefill:.0} tok/s{range}")));
    }
    if let Some(ttft) = p.ttft_s {
        rows.push((
            "time to first token",
            Quantity::real(ttft, Dim::SECONDS).display(),
        ));
    }
    if let Some(hourly) = p.cost_per_hour {
        let per_mtok = p
            .cost_per_mtok
            .map(|c| format!(", ${c:.2}/Mtok (per million output tokens)"))
            .unwrap_or_default();
        rows.push(("cost", format!("${hourly:.2}/h{per_mtok}")));
    }
    out.push_str("<dl class=\"figures\">\n");
    for (name, value) in rows {
        let _ = writeln!(out, "<dt>{}</dt><dd>{}</dd>", esc(name), prose(&value));
    }
    out.push_str("</dl>\n");
}

fn diagnostics(out: &mut String, list: &[Diagnostic]) {
    out.push_str("<div class=\"scroll\"><table class=\"diagnostics\">\n<thead><tr><th>severity</th><th>code</th><th>message</th><th>where</th></tr></thead>\n<tbody>\n");
    for d in list {
        let help = d
            .help
            .as_deref()
            .map(|h| format!("<br><span class=\"help\">help: {}</span>", prose(h)))
            .unwrap_or_default();
        let severity = d.severity.as_str();
        let _ = writeln!(
            out,
            "<tr><td><span class=\"badge {severity}\">{severity}</span></td><td class=\"mono\">{}</td><td>{}{help}</td><td class=\"mono path\">{}:{}:{}</td></tr>",
            esc(&d.code),
            prose(&d.message),
            esc(&d.location.file.display().to_string()),
            d.location.line,
            d.location.column
        );
    }
    out.push_str("</tbody>\n</table></div>\n");
}

fn assignment(c: &Candidate) -> String {
    c.assignment
        .iter()
        .map(|(k, v)| format!("{k} = {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The indices of the candidates on the Pareto front of cost (lower is better) and
/// decode speed (higher is better), cheapest first.
fn pareto(points: &[(usize, f64, f64)]) -> Vec<usize> {
    let mut sorted: Vec<&(usize, f64, f64)> = points.iter().collect();
    sorted.sort_by(|a, b| a.1.total_cmp(&b.1).then(b.2.total_cmp(&a.2)));
    let mut best = f64::NEG_INFINITY;
    let mut front = Vec::new();
    for (index, _, speed) in sorted {
        if *speed > best {
            best = *speed;
            front.push(*index);
        }
    }
    front
}

/// A scatter axis: linear from 0, or logarithmic (decades) when the values span more
/// than a factor of 20 and are all positive.
struct Axis {
    lo: f64,
    hi: f64,
    log: bool,
    ticks: Vec<f64>,
}

impl Axis {
    fn new(values: &[f64], allow_log: bool) -> Axis {
        let finite = values.iter().copied().filter(|v| v.is_finite());
        let max = finite.clone().fold(0.0, f64::max);
        let min = finite.fold(f64::INFINITY, f64::min);
        if allow_log && min > 0.0 && max / min >= 20.0 {
            // The 1-2-5 marks around the values.
            let decade = |v: f64| 10f64.powf(v.log10().floor());
            let lo = [5.0, 2.0, 1.0]
                .iter()
                .map(|m| m * decade(min))
                .find(|t| *t <= min * 1.0001)
                .unwrap_or(decade(min));
            let hi = [1.0, 2.0, 5.0, 10.0]
                .iter()
                .map(|m| m * decade(max))
                .find(|t| *t >= max * 0.9999)
                .unwrap_or(10.0 * decade(max));
            let mut ticks = Vec::new();
            let mut power = decade(lo);
            while power <= hi * 1.0001 {
                for m in [1.0, 2.0, 5.0] {
                    let t = power * m;
                    if t >= lo * 0.9999 && t <= hi * 1.0001 {
                        ticks.push(t);
                    }
                }
                power *= 10.0;
            }
            return Axis {
                lo,
                hi,
                log: true,
                ticks,
            };
        }
        let max = if max > 0.0 { max * 1.05 } else { 1.0 };
        let raw = max / 5.0;
        let magnitude = 10f64.powf(raw.log10().floor());
        let step = [1.0, 2.0, 2.5, 5.0, 10.0]
            .iter()
            .map(|m| m * magnitude)
            .find(|s| *s >= raw)
            .unwrap_or(10.0 * magnitude);
        let top = (max / step).ceil() * step;
        let count = (top / step).round() as usize;
        Axis {
            lo: 0.0,
            hi: top,
            log: false,
            ticks: (0..=count).map(|i| i as f64 * step).collect(),
        }
    }

    /// Where a value lies, 0–1.
    fn at(&self, value: f64) -> f64 {
        let share = if self.log {
            (value.max(self.lo).log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10())
        } else {
            (value - self.lo) / (self.hi - self.lo)
        };
        if share.is_finite() {
            share.clamp(0.0, 1.0)
        } else {
            0.0
        }
    }
}

/// A tick's label with as few decimals as it needs (0.25, 0.1, 5).
fn tick_label(value: f64) -> String {
    (0..=3)
        .map(|decimals| format!("{value:.decimals$}"))
        .find(|text| text.parse::<f64>().is_ok_and(|v| (v - value).abs() < 1e-9))
        .unwrap_or_else(|| format!("{value:.3}"))
}

/// The ranked candidates as a cost-vs-speed scatter with the Pareto front, the table of
/// them, and the better-ranked candidates that failed.
/// `fleet = mixed`: the fleet per GPU type, and the best single type beside it.
fn mixed_fleet(out: &mut String, f: &deployfit_host::solve::fleet::Fleet) {
    out.push_str("<div class=\"scroll\"><table class=\"candidates\">\n<thead><tr><th>gpu</th><th class=\"n\">count</th><th class=\"n\">replicas</th><th>rents</th><th class=\"n\">cost</th><th>serves</th></tr></thead>\n<tbody>\n");
    for m in &f.fleet {
        let serves: Vec<String> = m
            .classes
            .iter()
            .map(|c| format!("{} {:.2} req/s ({:.0}%)", c.class, c.rate, c.share * 100.0))
            .collect();
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td><td class=\"n\">${:.2}/h</td><td>{}</td></tr>",
            esc(&m.gpu),
            m.count,
            m.replicas,
            esc(&match (&m.offer, m.instances) {
                (Some(offer), Some(n)) => format!("{n} × {offer}"),
                _ => "owned".to_string(),
            }),
            m.cost_per_hour,
            esc(&serves.join("; "))
        );
    }
    out.push_str("</tbody>\n</table></div>\n");
    let single = match (&f.single_type, f.savings_percent) {
        (Some(s), Some(savings)) => format!(
            "; the best single type, {} × {} × {}, costs ${:.2}/h: the mix saves {savings:.1}%",
            s.replicas,
            s.count,
            esc(&s.gpu),
            s.cost_per_hour
        ),
        _ => String::new(),
    };
    let _ = writeln!(
        out,
        "<p>Fleet: ${:.2}/h, ${:.3}/Mtok{single}.</p>",
        f.cost_per_hour, f.cost_per_mtok
    );
}

fn solver(out: &mut String, s: &Solution) {
    if let Some(fleet) = &s.mixed {
        mixed_fleet(out, fleet);
        return;
    }
    let direction = if s.maximize { "maximize" } else { "minimize" };
    let _ = writeln!(
        out,
        "<p>{direction} <code>{}</code>: {} candidates, {} evaluated, {} feasible shown.</p>",
        esc(&s.objective),
        s.candidates,
        s.evaluated,
        s.ranked.len()
    );
    let points: Vec<(usize, f64, f64)> = s
        .ranked
        .iter()
        .enumerate()
        .filter_map(|(i, c)| match (c.cost_per_hour, c.decode_tps) {
            (Some(cost), Some(speed)) if cost.is_finite() && speed.is_finite() => {
                Some((i, cost, speed))
            }
            _ => None,
        })
        .collect();
    let failed: Vec<(&Candidate, f64, f64)> = s
        .misses
        .iter()
        .filter_map(|c| match (c.cost_per_hour, c.decode_tps) {
            (Some(cost), Some(speed)) if cost.is_finite() && speed.is_finite() => {
                Some((c, cost, speed))
            }
            _ => None,
        })
        .collect();
    if !points.is_empty() {
        out.push_str(&scatter(s, &points, &failed));
    }
    if s.ranked.is_empty() {
        out.push_str("<p>No candidate satisfies every require and error-level rule.</p>\n");
    } else {
        let front = pareto(&points);
        out.push_str("<div class=\"scroll\"><table class=\"candidates\">\n<thead><tr><th class=\"n\">#</th><th>assignment</th><th class=\"n\">objective</th><th class=\"n\">cost</th><th class=\"n\">decode</th><th class=\"n\">memory per GPU</th><th>Pareto</th></tr></thead>\n<tbody>\n");
        for (i, c) in s.ranked.iter().enumerate() {
            let _ = writeln!(
                out,
                "<tr><td class=\"n\">{}</td><td class=\"mono\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td></tr>",
                i + 1,
                esc(&assignment(c)),
                esc(c.objective_display.as_deref().unwrap_or("")),
                esc(&c
                    .cost_per_hour
                    .map(|h| format!("${h:.2}/h"))
                    .unwrap_or_default()),
                esc(&c
                    .decode_tps
                    .map(|d| format!("{d:.1} tok/s"))
                    .unwrap_or_default()),
                esc(c.memory_per_gpu_display.as_deref().unwrap_or("")),
                if front.contains(&i) {
                    "on the front"
                } else {
                    ""
                }
            );
        }
        out.push_str("</tbody>\n</table></div>\n");
    }
    if !s.misses.is_empty() {
        out.push_str("<p>Better-ranked candidates that failed:</p>\n<ul class=\"misses\">\n");
        for miss in &s.misses {
            let _ = writeln!(
                out,
                "<li><code>{}</code>: {}</li>",
                esc(&assignment(miss)),
                prose(miss.failure.as_deref().unwrap_or("fails"))
            );
        }
        out.push_str("</ul>\n");
    }
}

/// The scatter chart's geometry: the SVG's size and the margins around the plot, in px.
mod scatter_size {
    pub const WIDTH: f64 = 720.0;
    pub const HEIGHT: f64 = 340.0;
    pub const LEFT: f64 = 64.0;
    pub const RIGHT: f64 = 20.0;
    pub const TOP: f64 = 16.0;
    pub const BOTTOM: f64 = 48.0;
}

/// The SVG scatter chart of the solver's candidates: cost against decode speed, the
/// failed ones crossed out, the feasible ones as points with the Pareto front as a line.
fn scatter(
    s: &Solution,
    points: &[(usize, f64, f64)],
    failed: &[(&Candidate, f64, f64)],
) -> String {
    use scatter_size::{HEIGHT, WIDTH};
    let plot = Plot::new(points, failed);
    let mut svg = format!(
        "<svg class=\"scatter\" role=\"img\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" width=\"{WIDTH}\" height=\"{HEIGHT}\">\n<title>{}</title>\n",
        esc(&format!(
            "{}: the solver's candidates, cost against decode speed; the line is the Pareto front",
            s.deployment
        ))
    );
    plot.axes(&mut svg);
    plot.failed(&mut svg, failed);
    let front = pareto(points);
    plot.front_line(&mut svg, points, &front);
    plot.points(&mut svg, s, points, &front);
    plot.legend(&mut svg);
    svg.push_str("</svg>\n");
    svg
}

/// The scatter's plot area and its two axes, which place a candidate's cost and speed.
struct Plot {
    plot_w: f64,
    plot_h: f64,
    xaxis: Axis,
    yaxis: Axis,
}

impl Plot {
    /// The axes over every point, feasible and failed.
    fn new(points: &[(usize, f64, f64)], failed: &[(&Candidate, f64, f64)]) -> Plot {
        use scatter_size::{BOTTOM, HEIGHT, LEFT, RIGHT, TOP, WIDTH};
        let plot_w = WIDTH - LEFT - RIGHT;
        let plot_h = HEIGHT - TOP - BOTTOM;
        let costs: Vec<f64> = points
            .iter()
            .map(|p| p.1)
            .chain(failed.iter().map(|f| f.1))
            .collect();
        let speeds: Vec<f64> = points
            .iter()
            .map(|p| p.2)
            .chain(failed.iter().map(|f| f.2))
            .collect();
        let xaxis = Axis::new(&costs, true);
        let yaxis = Axis::new(&speeds, false);
        Plot {
            plot_w,
            plot_h,
            xaxis,
            yaxis,
        }
    }

    /// The x coordinate of a cost.
    fn x(&self, cost: f64) -> f64 {
        scatter_size::LEFT + self.xaxis.at(cost) * self.plot_w
    }

    /// The y coordinate of a speed.
    fn y(&self, speed: f64) -> f64 {
        scatter_size::TOP + self.plot_h - self.yaxis.at(speed) * self.plot_h
    }

    /// The grid lines with their tick labels, the frame and the two axis titles.
    fn axes(&self, svg: &mut String) {
        use scatter_size::{HEIGHT, LEFT, TOP};
        let (plot_w, plot_h) = (self.plot_w, self.plot_h);
        for t in &self.xaxis.ticks {
            let _ = writeln!(
                svg,
                "<line x1=\"{0}\" x2=\"{0}\" y1=\"{TOP}\" y2=\"{1}\" stroke=\"#eaeef2\"/><text x=\"{0}\" y=\"{2}\" font-size=\"12\" fill=\"#59636e\" text-anchor=\"middle\">{3}</text>",
                num(self.x(*t)),
                num(TOP + plot_h),
                num(TOP + plot_h + 16.0),
                esc(&format!("${}", tick_label(*t)))
            );
        }
        for t in &self.yaxis.ticks {
            let _ = writeln!(
                svg,
                "<line x1=\"{LEFT}\" x2=\"{0}\" y1=\"{1}\" y2=\"{1}\" stroke=\"#eaeef2\"/><text x=\"{2}\" y=\"{3}\" font-size=\"12\" fill=\"#59636e\" text-anchor=\"end\">{4}</text>",
                num(LEFT + plot_w),
                num(self.y(*t)),
                num(LEFT - 6.0),
                num(self.y(*t) + 4.0),
                esc(&tick_label(*t))
            );
        }
        let _ = writeln!(
            svg,
            "<rect x=\"{LEFT}\" y=\"{TOP}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#d1d9e0\"/>",
            num(plot_w),
            num(plot_h)
        );
        let _ = writeln!(
            svg,
            "<text x=\"{}\" y=\"{}\" font-size=\"13\" fill=\"#1f2328\" text-anchor=\"middle\">{}</text>",
            num(LEFT + plot_w / 2.0),
            num(HEIGHT - 8.0),
            if self.xaxis.log {
                "cost ($/h, logarithmic)"
            } else {
                "cost ($/h)"
            }
        );
        let _ = writeln!(
            svg,
            "<text x=\"16\" y=\"{0}\" font-size=\"13\" fill=\"#1f2328\" text-anchor=\"middle\" transform=\"rotate(-90 16 {0})\">decode (tok/s per sequence)</text>",
            num(TOP + plot_h / 2.0)
        );
    }

    /// A grey cross per failed candidate, with why it fails as its tooltip.
    fn failed(&self, svg: &mut String, failed: &[(&Candidate, f64, f64)]) {
        for (c, cost, speed) in failed {
            let (cx, cy) = (self.x(*cost), self.y(*speed));
            let _ = writeln!(
                svg,
                "<g class=\"failed\"><title>{}</title><path d=\"M{} {} l8 8 M{} {} l-8 8\" stroke=\"#8c959f\" stroke-width=\"2\"/></g>",
                esc(&format!(
                    "{}: fails: {} (${cost:.2}/h, {speed:.1} tok/s)",
                    assignment(c),
                    c.failure.as_deref().unwrap_or("fails")
                )),
                num(cx - 4.0),
                num(cy - 4.0),
                num(cx + 4.0),
                num(cy - 4.0)
            );
        }
    }

    /// The Pareto front as a line through its points, when it has more than one.
    fn front_line(&self, svg: &mut String, points: &[(usize, f64, f64)], front: &[usize]) {
        let by_index = |i: usize| points.iter().find(|p| p.0 == i);
        let line: Vec<String> = front
            .iter()
            .filter_map(|i| by_index(*i))
            .map(|p| format!("{},{}", num(self.x(p.1)), num(self.y(p.2))))
            .collect();
        if line.len() > 1 {
            let _ = writeln!(
                svg,
                "<polyline class=\"pareto\" points=\"{}\" fill=\"none\" stroke=\"#cf222e\" stroke-width=\"2\"><title>Pareto front: no candidate is both cheaper and faster</title></polyline>",
                line.join(" ")
            );
        }
    }

    /// A point per feasible candidate (red on the front) with its tooltip, and a ring with
    /// a label around the solver's choice.
    fn points(
        &self,
        svg: &mut String,
        s: &Solution,
        points: &[(usize, f64, f64)],
        front: &[usize],
    ) {
        for (i, cost, speed) in points {
            let c = &s.ranked[*i];
            let on_front = front.contains(i);
            let (fill, radius) = if on_front {
                ("#cf222e", 6.0)
            } else {
                ("#3b6fb6", 4.5)
            };
            let tooltip = format!(
                "#{} {}: ${cost:.2}/h, {speed:.1} tok/s{}{}",
                i + 1,
                assignment(c),
                c.memory_per_gpu_display
                    .as_deref()
                    .map(|m| format!(", {m} per GPU"))
                    .unwrap_or_default(),
                if on_front { " (Pareto front)" } else { "" }
            );
            let _ = writeln!(
                svg,
                "<circle class=\"point{}\" cx=\"{}\" cy=\"{}\" r=\"{radius}\" fill=\"{fill}\" fill-opacity=\"0.85\" stroke=\"#fff\"><title>{}</title></circle>",
                if on_front { " front" } else { "" },
                num(self.x(*cost)),
                num(self.y(*speed)),
                esc(&tooltip)
            );
            if *i == 0 {
                let _ = writeln!(
                    svg,
                    "<circle cx=\"{}\" cy=\"{}\" r=\"10\" fill=\"none\" stroke=\"#1f2328\" stroke-width=\"1.5\"><title>the solver's choice</title></circle><text x=\"{}\" y=\"{}\" font-size=\"12\" fill=\"#1f2328\">{}</text>",
                    num(self.x(*cost)),
                    num(self.y(*speed)),
                    num(self.x(*cost) + 12.0),
                    num(self.y(*speed) + 22.0),
                    esc(&format!("#1 {}", assignment(c)))
                );
            }
        }
    }

    /// The legend: the Pareto front's colour and the other feasible points'.
    fn legend(&self, svg: &mut String) {
        use scatter_size::{LEFT, TOP};
        let plot_w = self.plot_w;
        // Legend.
        let _ = writeln!(
            svg,
            "<circle cx=\"{0}\" cy=\"{1}\" r=\"5\" fill=\"#cf222e\"/><text x=\"{2}\" y=\"{3}\" font-size=\"12\" fill=\"#1f2328\">Pareto front</text><circle cx=\"{4}\" cy=\"{1}\" r=\"4.5\" fill=\"#3b6fb6\"/><text x=\"{5}\" y=\"{3}\" font-size=\"12\" fill=\"#1f2328\">other feasible</text>",
            num(LEFT + plot_w - 200.0),
            num(TOP + 12.0),
            num(LEFT + plot_w - 190.0),
            num(TOP + 16.0),
            num(LEFT + plot_w - 100.0),
            num(LEFT + plot_w - 90.0),
        );
    }
}

fn matrix(out: &mut String, index: usize, m: &ModelMatrix) {
    let heading = match &m.file {
        Some(file) => format!("{} (as declared in {})", m.model, file.display()),
        None => m.model.clone(),
    };
    let _ = writeln!(
        out,
        "<h3 class=\"model\" id=\"m{index}\">{}</h3>",
        esc(&heading)
    );
    let matrix = match &m.matrix {
        Ok(matrix) => matrix,
        Err(message) => {
            let _ = writeln!(out, "<p>No matrix: {}</p>", prose(message));
            return;
        }
    };
    out.push_str("<div class=\"scroll\"><table class=\"matrix\">\n<thead><tr><th>format</th><th class=\"n\">bpw</th><th class=\"n\">weights</th>");
    for context in &matrix.contexts {
        let _ = write!(
            out,
            "<th class=\"n\">total @ {}</th>",
            esc(&tokens(*context))
        );
    }
    let _ = writeln!(
        out,
        "<th>smallest GPU @ {}</th></tr></thead>\n<tbody>",
        esc(&tokens(matrix.gpu_context))
    );
    for row in &matrix.rows {
        let used = m.used_quants.contains(&row.quant);
        let _ = write!(
            out,
            "<tr{}><td class=\"mono\">{}</td><td class=\"n\">{:.2}</td><td class=\"n\">{}{}</td>",
            if used { " class=\"used\"" } else { "" },
            esc(&row.quant),
            row.bpw,
            esc(&crate::output::matrix::gib_text(row.weights_bytes)),
            if row.weights_source == "files" {
                " (file)"
            } else {
                ""
            }
        );
        for total in &row.totals {
            let _ = write!(
                out,
                "<td class=\"n\">{}</td>",
                esc(&crate::output::matrix::total(total))
            );
        }
        let _ = writeln!(
            out,
            "<td class=\"mono\">{}</td></tr>",
            esc(row.smallest_gpu.as_deref().unwrap_or("none in the catalog"))
        );
    }
    out.push_str("</tbody>\n</table></div>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backticks_become_code_and_stay_escaped() {
        assert_eq!(
            prose("use `count = 8` or `<b>` — ü"),
            "use <code>count = 8</code> or <code>&lt;b&gt;</code> — ü"
        );
        // An unpaired backtick is left as written.
        assert_eq!(prose("a ` b `c` d"), "a ` b `c` d");
        assert_eq!(prose("no code"), "no code");
    }

    #[test]
    fn escapes_markup_and_keeps_unicode() {
        assert_eq!(
            esc("<script>alert(\"x\" & 'y')</script> ünïcödé — 日本"),
            "&lt;script&gt;alert(&quot;x&quot; &amp; &#39;y&#39;)&lt;/script&gt; ünïcödé — 日本"
        );
        assert_eq!(esc("a\u{1b}[31m\u{202e}b"), "a\\u{1b}[31m\\u{202e}b");
    }

    #[test]
    fn pareto_keeps_the_cheapest_for_each_speed() {
        let points = [
            (0, 1.0, 10.0),
            (1, 2.0, 8.0),
            (2, 2.0, 20.0),
            (3, 3.0, 15.0),
            (4, 4.0, 30.0),
        ];
        assert_eq!(pareto(&points), vec![0, 2, 4]);
    }

    #[test]
    fn axes_cover_the_values() {
        let linear = Axis::new(&[0.1, 0.43], true);
        assert!(!linear.log && linear.hi >= 0.43 && linear.ticks.len() <= 7);
        assert_eq!(Axis::new(&[f64::NAN], true).hi, 1.0);
        assert_eq!(Axis::new(&[], false).hi, 1.0);
        let log = Axis::new(&[0.01, 1.01], true);
        assert!(
            log.log && log.lo == 0.01 && log.hi == 2.0,
            "{}–{}",
            log.lo,
            log.hi
        );
        assert_eq!(log.at(0.01), 0.0);
        assert_eq!(log.at(2.0), 1.0);
        assert_eq!(log.ticks.len(), 8);
        assert_eq!(tick_label(0.25), "0.25");
        assert_eq!(tick_label(5.0), "5");
        assert_eq!(tick_label(0.1), "0.1");
    }
}
