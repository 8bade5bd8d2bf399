//! Plain text tables for `solve`, `gpus` and `models`.

use deployfit_host::cards::{ModelCard, ModelRow};
use deployfit_host::query::{Fit, GpusReport};
use deployfit_host::solve::Solution;
use deployfit_host::units::Quantity;

/// Aligns a table: the columns in `left` to the left, the others (numbers) to the right.
pub fn grid(header: &[&str], rows: &[Vec<String>], left: &[usize]) -> String {
    let widths: Vec<usize> = (0..header.len())
        .map(|i| {
            rows.iter()
                .map(|r| r[i].chars().count())
                .chain(std::iter::once(header[i].chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: &[String]| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (cell, width))| {
                let pad = " ".repeat(width - cell.chars().count());
                if left.contains(&i) {
                    format!("{cell}{pad}")
                } else {
                    format!("{pad}{cell}")
                }
            })
            .collect();
        format!("{}\n", padded.join("  ").trim_end())
    };
    let mut out = line(&header.iter().map(|h| h.to_string()).collect::<Vec<_>>());
    for row in rows {
        out.push_str(&line(row));
    }
    out
}

fn gib(bytes: Option<i128>) -> String {
    bytes
        .map(|b| Quantity::bytes(b).display())
        .unwrap_or_else(|| "—".into())
}

fn money(hourly: Option<f64>) -> String {
    hourly
        .map(|h| format!("${h:.2}/h"))
        .unwrap_or_else(|| "—".into())
}

fn speed(fit: &Fit) -> String {
    match (fit.decode_tps, fit.decode_tps_low, fit.decode_tps_high) {
        (Some(d), Some(l), Some(h)) => format!("{d:.1} ({l:.0}–{h:.0})"),
        _ => "—".into(),
    }
}

pub fn solution(s: &Solution) -> String {
    if let Some(fleet) = &s.mixed {
        return mixed_fleet(&s.deployment, fleet);
    }
    let direction = if s.maximize { "maximize" } else { "minimize" };
    let mut out = format!(
        "{}: {direction} {} — {} candidates, {} evaluated\n\n",
        s.deployment, s.objective, s.candidates, s.evaluated
    );
    if s.ranked.is_empty() {
        out.push_str("no candidate satisfies every require and error-level rule\n");
    } else {
        let rows: Vec<Vec<String>> = s
            .ranked
            .iter()
            .enumerate()
            .map(|(i, c)| {
                vec![
                    format!("{}", i + 1),
                    c.assignment
                        .iter()
                        .map(|(k, v)| format!("{k} = {v}"))
                        .collect::<Vec<_>>()
                        .join(", "),
                    c.objective_display.clone().unwrap_or_default(),
                    money(c.cost_per_hour),
                    c.decode_tps
                        .map(|d| format!("{d:.1} tok/s"))
                        .unwrap_or_default(),
                    c.memory_per_gpu_display.clone().unwrap_or_default(),
                    c.rental.clone().unwrap_or_else(|| "—".into()),
                ]
            })
            .collect();
        out.push_str(&grid(
            &[
                "#",
                "assignment",
                "objective",
                "cost",
                "decode",
                "memory/GPU",
                "rents",
            ],
            &rows,
            &[0, 1, 6],
        ));
    }
    if !s.misses.is_empty() {
        out.push_str("\nbetter-ranked candidates that failed:\n");
        for miss in &s.misses {
            out.push_str(&format!(
                "- {}: {}\n",
                miss.assignment
                    .iter()
                    .map(|(k, v)| format!("{k} = {v}"))
                    .collect::<Vec<_>>()
                    .join(", "),
                miss.failure.as_deref().unwrap_or("fails")
            ));
        }
    }
    out
}

/// `fleet = mixed`: the fleet per GPU type, its cost beside the best single type, and
/// every option's capacity per class.
pub fn mixed_fleet(deployment: &str, f: &deployfit_host::solve::fleet::Fleet) -> String {
    let proof = if f.optimal {
        "optimal"
    } else {
        "best found, not proven optimal"
    };
    let mut out = format!(
        "{deployment}: mixed fleet, minimize cost_per_hour (pricing = {}) — {} options, {} branch-and-bound nodes, {proof}\n\n",
        f.pricing,
        f.options.len(),
        f.nodes
    );
    let rows: Vec<Vec<String>> = f
        .fleet
        .iter()
        .map(|m| {
            vec![
                m.gpu.clone(),
                m.count.to_string(),
                m.replicas.to_string(),
                match (&m.offer, m.instances) {
                    (Some(offer), Some(n)) => format!("{n} × {offer}"),
                    _ => "owned".into(),
                },
                format!("${:.2}/h", m.cost_per_hour),
                m.classes
                    .iter()
                    .map(|c| {
                        format!(
                            "{} {:.2} req/s ({:.0}%, seqs {})",
                            c.class,
                            c.rate,
                            c.share * 100.0,
                            c.seqs
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("; "),
            ]
        })
        .collect();
    out.push_str(&grid(
        &["gpu", "count", "replicas", "rents", "cost", "serves"],
        &rows,
        &[0, 3, 5],
    ));
    out.push_str(&format!(
        "\nfleet: ${:.2}/h, ${:.3}/Mtok\n",
        f.cost_per_hour, f.cost_per_mtok
    ));
    match (&f.single_type, f.savings_percent) {
        (Some(single), Some(savings)) => out.push_str(&format!(
            "best single type: {} replica{} of {} × {}{} ${:.2}/h — the fleet saves {savings:.1}%\n",
            single.replicas,
            if single.replicas == 1 { "" } else { "s" },
            single.count,
            single.gpu,
            match (&single.offer, single.instances) {
                (Some(offer), Some(n)) => format!(" on {n} × {offer},"),
                _ => ",".into(),
            },
            single.cost_per_hour
        )),
        _ => out.push_str("best single type: none serves every class\n"),
    }
    let classes: Vec<String> = f
        .classes
        .iter()
        .map(|c| {
            format!(
                "{} {:.2} req/s, {:.0} + {:.0} tokens",
                c.name, c.rate, c.prompt, c.output
            )
        })
        .collect();
    out.push_str(&format!("classes: {}\n", classes.join("; ")));
    out
}

fn bandwidth(gbs: Option<f64>) -> String {
    gbs.map(|b| format!("{b:.0} GB/s"))
        .unwrap_or_else(|| "—".into())
}

fn share(percent: Option<f64>) -> String {
    percent
        .map(|p| format!("{p:.0}%"))
        .unwrap_or_else(|| "—".into())
}

fn tps(value: Option<f64>) -> String {
    value
        .map(|v| format!("{v:.1}"))
        .unwrap_or_else(|| "—".into())
}

/// The `gpus` table: the first `limit` rows (all with `None`), the rest counted.
pub fn gpus(r: &GpusReport, limit: Option<usize>) -> String {
    let mut out = format!(
        "{}: which GPUs run it at {} × {} sequence{} ({} engine)\n\n",
        r.model,
        Quantity::real(r.context as f64, deployfit_host::units::Dim::TOKENS).display(),
        r.seqs,
        if r.seqs == 1 { "" } else { "s" },
        r.engine
    );
    let shown = limit.unwrap_or(usize::MAX).min(r.rows.len());
    let rows: Vec<Vec<String>> = r.rows[..shown]
        .iter()
        .map(|f| {
            vec![
                f.gpu.clone(),
                gib(f.memory_bytes),
                bandwidth(f.bandwidth_gbs),
                f.quant.clone().unwrap_or_else(|| "—".into()),
                gib(f.needed_bytes),
                share(f.memory_share),
                f.verdict
                    .map(|v| v.describe().to_string())
                    .unwrap_or_else(|| "unknown".into()),
                speed(f),
                money(f.cost_per_hour),
            ]
        })
        .collect();
    out.push_str(&grid(
        &[
            "gpu",
            "memory",
            "bandwidth",
            "best quant",
            "needs",
            "% mem",
            "fit",
            "decode tok/s",
            "price",
        ],
        &rows,
        &[0, 3, 6],
    ));
    if shown < r.rows.len() {
        out.push_str(&format!(
            "… and {} more; `--all` lists every one\n",
            r.rows.len() - shown
        ));
    }
    let listed = if r.total == r.catalog {
        format!("{} catalog GPUs", r.total)
    } else {
        format!("{} GPUs listed ({} in the catalog)", r.total, r.catalog)
    };
    out.push_str(&format!(
        "\n{} of {listed} run it. Smallest that fits: {}. Fastest: {}. Median decode: {}.\n",
        r.runs_on,
        r.smallest.as_deref().unwrap_or("none"),
        r.fastest.as_deref().unwrap_or("none"),
        r.median_decode_tps
            .map(|m| format!("{m:.1} tok/s"))
            .unwrap_or_else(|| "—".into())
    ));
    let classes: Vec<Vec<String>> = r
        .memory_classes
        .iter()
        .map(|c| {
            let range = match c.below_bytes {
                Some(below) => format!("{}–{} GiB", c.class_gib, below >> 30),
                None => format!("{}+ GiB", c.class_gib),
            };
            vec![
                range,
                format!("{}", c.gpus),
                format!("{}", c.fitting),
                c.best_quant.clone().unwrap_or_else(|| "—".into()),
                gib(c.needed_bytes),
                tps(c.median_decode_tps),
                tps(c.best_decode_tps),
                c.fastest.clone().unwrap_or_else(|| "—".into()),
            ]
        })
        .collect();
    out.push_str("\nBy memory (GPUs listed with at least the class's memory, below the next):\n");
    out.push_str(&grid(
        &[
            "memory",
            "gpus",
            "fit",
            "best quant",
            "needs",
            "median tok/s",
            "best tok/s",
            "fastest",
        ],
        &classes,
        &[0, 3, 7],
    ));
    out
}

/// `models --gpu`: the first `limit` rows (0: all), then how many more there are.
pub fn models(gpu: &str, fits: &[Fit], limit: usize) -> String {
    let mut out = format!("{gpu}: which catalog and registry models run on it\n\n");
    let shown = if limit == 0 {
        fits.len()
    } else {
        limit.min(fits.len())
    };
    let rows: Vec<Vec<String>> = fits[..shown]
        .iter()
        .map(|f| {
            vec![
                f.model.clone(),
                f.quant.clone().unwrap_or_else(|| "—".into()),
                gib(f.needed_bytes),
                f.verdict
                    .map(|v| v.describe().to_string())
                    .unwrap_or_else(|| "unknown".into()),
                speed(f),
            ]
        })
        .collect();
    out.push_str(&grid(
        &["model", "best quant", "needs", "fit", "decode tok/s"],
        &rows,
        &[0, 1, 3],
    ));
    if shown < fits.len() {
        out.push_str(&format!(
            "\n{} more (`--limit 0` lists all, `--format json` gives every row)\n",
            fits.len() - shown
        ));
    }
    out
}

/// A parameter count as people write it: `8.03B`, `494M`.
fn params(count: Option<u64>) -> String {
    match count {
        Some(n) if n >= 1_000_000_000 => format!("{:.2}B", n as f64 / 1e9),
        Some(n) if n >= 1_000_000 => format!("{:.0}M", n as f64 / 1e6),
        Some(n) => n.to_string(),
        None => "—".into(),
    }
}

fn count(value: Option<u64>) -> String {
    value.map(group).unwrap_or_else(|| "—".into())
}

/// Digits grouped by thousands: `131,072`.
fn group(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `deployfit models --search`: catalog models first, then registry models by downloads.
pub fn model_list(rows: &[ModelRow]) -> String {
    if rows.is_empty() {
        return "no model matches\n".into();
    }
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.id.clone(),
                r.catalog.clone().unwrap_or_default(),
                r.family.clone().unwrap_or_default(),
                params(r.params),
                count(r.layers),
                count(r.max_context),
                r.source.to_string(),
            ]
        })
        .collect();
    grid(
        &[
            "id",
            "catalog name",
            "family",
            "params",
            "layers",
            "context",
            "source",
        ],
        &cells,
        &[0, 1, 2, 6],
    )
}

/// `deployfit model ID`: the architecture card.
pub fn model_card(card: &ModelCard) -> String {
    let mut out = format!("{}\n", card.id.as_deref().unwrap_or(&card.name));
    let mut line = |label: &str, value: String| {
        out.push_str(&format!("  {label:<22} {value}\n"));
    };
    line("declaration", card.name.clone());
    if !card.aliases.is_empty() {
        line("Ollama tag", card.aliases.join(", "));
    }
    line(
        "parameters",
        format!(
            "{} total, {} active per token",
            params(card.params),
            params(card.active_params)
        ),
    );
    line("layers", count(card.layers));
    line("hidden size", count(card.hidden));
    if card.intermediate.is_some() {
        line("MLP intermediate", count(card.intermediate));
    }
    line(
        "attention",
        format!(
            "{}: {} heads, {} KV heads × {} head dim",
            card.attention.as_deref().unwrap_or("unknown"),
            count(card.heads),
            count(card.kv_heads),
            count(card.head_dim)
        ),
    );
    if card.kv_lora_rank.is_some() {
        line(
            "MLA latent",
            format!(
                "rank {} + RoPE {}",
                count(card.kv_lora_rank),
                count(card.qk_rope_dim)
            ),
        );
    }
    if card.window.is_some() {
        line(
            "sliding window",
            format!(
                "{} tokens on {} layers",
                count(card.window),
                count(card.local_layers)
            ),
        );
    }
    if card.experts.is_some() {
        line(
            "experts",
            format!(
                "{} ({} active per token)",
                count(card.experts),
                count(card.experts_active)
            ),
        );
    }
    line("vocabulary", count(card.vocab));
    line(
        "trained context",
        format!("{} tokens", count(card.max_context)),
    );
    for kv in &card.kv_bytes_per_token {
        line(
            &format!("KV per token ({})", kv.kv_cache),
            Quantity::bytes(kv.bytes as i128).display(),
        );
    }
    if let Some(license) = &card.license {
        line("licence", license.clone());
    }
    if let Some(released) = &card.released {
        line("released", released.clone());
    }
    line("source", card.source.clone());
    line(
        "completeness",
        card.incomplete
            .clone()
            .map(|i| format!("incomplete: {i}"))
            .unwrap_or_else(|| "complete".into()),
    );
    out
}

/// `deployfit hardware`: one line per GPU, then the host memory and the notes.
pub fn hardware(report: &deployfit_host::hardware::HardwareReport) -> String {
    let bytes = |b: Option<u64>| gib(b.map(i128::from));
    let mut out = String::new();
    if report.gpus.is_empty() {
        out.push_str("No GPU found.\n");
    } else {
        let rows: Vec<Vec<String>> = report
            .gpus
            .iter()
            .enumerate()
            .map(|(i, g)| {
                let name = match g.gpu_cores {
                    Some(cores) => format!("{} ({cores}-core GPU)", g.name),
                    None => g.name.clone(),
                };
                vec![
                    i.to_string(),
                    name,
                    bytes(g.memory_bytes),
                    g.source.clone(),
                    g.catalog.clone().unwrap_or_else(|| "—".into()),
                    g.matched_by
                        .clone()
                        .unwrap_or_else(|| "not in the catalog".into()),
                ]
            })
            .collect();
        out.push_str(&grid(
            &["#", "gpu", "memory", "source", "catalog", "matched by"],
            &rows,
            &[1, 3, 4, 5],
        ));
    }
    out.push('\n');
    let unified = if report.unified_memory {
        " (unified with the GPU)"
    } else {
        ""
    };
    out.push_str(&format!(
        "host memory: {}{unified}\n",
        bytes(report.host_memory_bytes)
    ));
    for note in &report.notes {
        out.push_str(&format!("note: {note}\n"));
    }
    out
}
