//! Rendering of `deployfit matrix`: the VRAM table of one model.

use deployfit_host::matrix::{Matrix, Total};
use deployfit_host::units::{Dim, Quantity};

fn gib(bytes: i128) -> String {
    format!("{:.2}", bytes as f64 / (1u64 << 30) as f64)
}

/// Bytes in GiB with the unit: `5.74 GiB`.
pub fn gib_text(bytes: i128) -> String {
    format!("{} GiB", gib(bytes))
}

pub fn total(t: &Total) -> String {
    if t.low_bytes == t.high_bytes {
        format!("{} GiB", gib(t.low_bytes))
    } else {
        format!("{}–{} GiB", gib(t.low_bytes), gib(t.high_bytes))
    }
}

fn tokens(count: u64) -> String {
    Quantity::real(count as f64, Dim::TOKENS).display()
}

pub fn table(m: &Matrix) -> String {
    let engines = match &m.engine {
        Some(engine) => format!("engine {engine}"),
        None => "range over the engines that run each format".to_string(),
    };
    let mut out = format!(
        "{}: GPU memory by weight format ({} sequence{}, KV {}, {engines})\n\n",
        m.model,
        m.seqs,
        if m.seqs == 1 { "" } else { "s" },
        m.kv_cache
    );
    let mut header = vec![
        "format".to_string(),
        "bpw".to_string(),
        "weights".to_string(),
    ];
    header.extend(m.contexts.iter().map(|c| format!("total @ {}", tokens(*c))));
    header.push(format!("smallest GPU @ {}", tokens(m.gpu_context)));
    let rows: Vec<Vec<String>> = m
        .rows
        .iter()
        .map(|row| {
            let mut cells = vec![
                row.quant.clone(),
                format!("{:.2}", row.bpw),
                format!(
                    "{} GiB{}",
                    gib(row.weights_bytes),
                    if row.weights_source == "files" {
                        " (file)"
                    } else {
                        ""
                    }
                ),
            ];
            cells.extend(row.totals.iter().map(total));
            cells.push(
                row.smallest_gpu
                    .clone()
                    .unwrap_or_else(|| "none in the catalog".into()),
            );
            cells
        })
        .collect();
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    let last = header.len() - 1;
    out.push_str(&crate::output::tables::grid(&header, &rows, &[0, last]));
    out.push_str("\nGiB = 2^30 bytes. Totals: weights + KV cache + the engine's runtime overhead, one GPU.\n");
    out
}
