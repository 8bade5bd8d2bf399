//! The speed model's accuracy report: predictions against the published llama.cpp
//! measurements of ../shared/calibration/llamacpp_bench.csv, as mapped to hardware and
//! model figures by `scripts/fit_speed.py --export` (tests/fixtures/calibration/
//! llamacpp_rows.csv). Prints the median and 90th-percentile absolute percentage errors
//! and fails when a median gets worse than the figure docs/estimation.md states.
//!
//! The constants were fitted on these rows, so these are in-sample figures; the
//! held-out (leave-one-device-out) figures are the script's, in docs/calibration-speed.md.

use crate::common;

use deployfit_host::eval::speed::{self, Backend, Family, SpeedInputs};

struct Row {
    row: usize,
    device: String,
    kind: String,
    tokens: f64,
    family: Family,
    backend: Backend,
    devices: f64,
    bandwidth: f64,
    peak: Option<f64>,
    params: f64,
    layers: f64,
    hidden: f64,
    size: f64,
    kv_per_token: f64,
    tps: f64,
}

/// Splits one CSV line, honouring double-quoted cells.
fn cells(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                chars.next();
                out.last_mut().unwrap().push('"');
            }
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(String::new()),
            other => out.last_mut().unwrap().push(other),
        }
    }
    out
}

fn rows() -> Vec<Row> {
    rows_from("tests/fixtures/calibration/llamacpp_rows.csv")
}

/// Reads an exported rows file (llamacpp_rows.csv, or the HBM supplement
/// llamacpp_hbm_rows.csv, which adds a `source` column).
fn rows_from(path: &str) -> Vec<Row> {
    let text = std::fs::read_to_string(common::root().join(path))
        .unwrap_or_else(|e| panic!("the exported calibration rows {path}: {e}"));
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let column = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .unwrap_or_else(|| panic!("column {name}"))
    };
    let number = |cells: &[&str], name: &str| {
        cells[column(name)]
            .parse::<f64>()
            .unwrap_or_else(|_| panic!("{name}: {cells:?}"))
    };
    lines
        .map(|line| {
            let owned = cells(line);
            let cells: Vec<&str> = owned.iter().map(String::as_str).collect();
            assert_eq!(cells.len(), header.len(), "{line}");
            Row {
                row: number(&cells, "row") as usize,
                device: cells[column("source_device")].to_string(),
                kind: cells[column("kind")].to_string(),
                tokens: number(&cells, "tokens"),
                family: match cells[column("family")] {
                    "geforce" => Family::Geforce,
                    "workstation" => Family::Workstation,
                    "hbm" => Family::Hbm,
                    "apple" => Family::Apple,
                    _ => Family::Other,
                },
                backend: match cells[column("backend")] {
                    "cuda" => Backend::Cuda,
                    "metal" => Backend::Metal,
                    "vulkan" => Backend::Vulkan,
                    "rocm" => Backend::Rocm,
                    _ => Backend::Other,
                },
                devices: number(&cells, "devices"),
                bandwidth: number(&cells, "bandwidth_gbs") * 1e9,
                peak: cells[column("peak_tflops")]
                    .parse::<f64>()
                    .ok()
                    .map(|t| t * 1e12),
                params: number(&cells, "params"),
                layers: number(&cells, "layers"),
                hidden: number(&cells, "hidden"),
                size: number(&cells, "size_bytes"),
                kv_per_token: number(&cells, "kv_bytes_per_token"),
                tps: number(&cells, "tps"),
            }
        })
        .collect()
}

fn predict(row: &Row) -> Option<f64> {
    // llama-bench's tgN generates N tokens from an empty context: on average it reads the
    // KV of N/2 tokens; ppN processes an N-token prompt.
    let inputs = SpeedInputs {
        family: row.family,
        backend: row.backend,
        serving_engine: false,
        layer_split: row.devices > 1.0,
        bandwidth: row.bandwidth,
        peak: row.peak,
        link_bandwidth: speed::DEFAULT_LINK_BANDWIDTH,
        count: row.devices,
        weights_bytes: row.size,
        params: row.params,
        active_params: row.params,
        layers: row.layers,
        hidden: row.hidden,
        seqs: 1.0,
        kv_read_bytes: row.kv_per_token * row.tokens / 2.0 / row.devices,
        prompt: row.tokens,
        host_weights_bytes: 0.0,
        host_kv_read_bytes: 0.0,
        host_bandwidth: 0.0,
        pcie_bandwidth: speed::DEFAULT_LINK_BANDWIDTH,
        decode_efficiency: None,
        token_overhead: None,
    };
    let speed = speed::estimate(&inputs);
    if row.kind == "decode" {
        Some(speed.decode_tps)
    } else {
        speed.prefill_tps
    }
}

/// (median, 90th percentile) of absolute percentage errors.
fn summary(mut errors: Vec<f64>) -> (f64, f64) {
    errors.sort_by(f64::total_cmp);
    let at = |q: f64| errors[((errors.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.9))
}

fn report(name: &str, rows: &[&Row]) -> (f64, f64, usize) {
    let mut errors = Vec::new();
    for row in rows {
        if let Some(predicted) = predict(row) {
            let error = (predicted - row.tps).abs() / row.tps * 100.0;
            errors.push(error);
            if error > 30.0 {
                println!(
                    "  {name} row {}: {} measured {:.1}, predicted {predicted:.1} ({error:.0} %)",
                    row.row, row.device, row.tps
                );
            }
        }
    }
    let n = errors.len();
    let (median, p90) = summary(errors);
    println!("{name}: {n} rows, median |error| {median:.1} %, 90th percentile {p90:.1} %");
    (median, p90, n)
}

/// A plain bandwidth formula, tps = 0.7 × bandwidth / size, as calculators compute it.
fn baseline(rows: &[&Row]) -> (f64, f64) {
    summary(
        rows.iter()
            .map(|r| ((0.7 * r.bandwidth / r.size) - r.tps).abs() / r.tps * 100.0)
            .collect(),
    )
}

#[test]
fn accuracy_report() {
    let all = rows();
    assert_eq!(all.len(), 276);
    let decode: Vec<&Row> = all
        .iter()
        .filter(|r| r.kind == "decode" && r.devices == 1.0)
        .collect();
    let split: Vec<&Row> = all
        .iter()
        .filter(|r| r.kind == "decode" && r.devices > 1.0)
        .collect();
    let prefill: Vec<&Row> = all
        .iter()
        .filter(|r| r.kind == "prefill" && r.devices == 1.0 && r.peak.is_some())
        .collect();

    let (base_median, base_p90) = baseline(&decode);
    println!(
        "decode, plain bandwidth formula (η 0.7): median {base_median:.1} %, 90th percentile {base_p90:.1} %"
    );
    let (decode_median, decode_p90, decode_n) = report("decode, one GPU", &decode);
    let (split_median, _, split_n) = report("decode, llama.cpp layer split over 2–8 GPUs", &split);
    let (prefill_median, prefill_p90, prefill_n) = report("prefill, one GPU", &prefill);

    // The figures docs/estimation.md states (in-sample, set 2026-12-01): decode 4.6 % /
    // 15.8 %, layer split 4.6 %, prefill 14.1 % / 41.0 %. A change that makes a median
    // worse fails here; improve the model, then update the figures and the docs. (Decode was
    // 4.4 % while the HBM eta fitted the A100 PCIe alone; fitted on three HBM cards it
    // overpredicts these A100 rows by about 5 %, see hbm_supplement_accuracy.)
    assert_eq!((decode_n, split_n, prefill_n), (86, 50, 78));
    assert!(decode_median <= 4.8, "decode median {decode_median:.1} %");
    assert!(decode_p90 <= 16.5, "decode p90 {decode_p90:.1} %");
    assert!(
        split_median <= 5.2,
        "layer-split median {split_median:.1} %"
    );
    assert!(
        prefill_median <= 14.5,
        "prefill median {prefill_median:.1} %"
    );
    assert!(prefill_p90 <= 43.0, "prefill p90 {prefill_p90:.1} %");
    assert!(
        decode_median < base_median / 2.0,
        "the fitted model beats the plain formula"
    );
}

/// The HBM data-centre supplement (tests/fixtures/calibration/llamacpp_hbm_rows.csv, exported
/// by `scripts/fit_speed.py --export-hbm` from llamacpp_hbm_bench.csv): llama-bench runs on an
/// A100 SXM4 80GB and an H100 PCIe, one and four cards, each row citing its source notebook.
/// Their decode rows fit the HBM efficiency together with the A100 PCIe rows above, so these
/// are in-sample figures; the held-out (leave-one-device-out) ones are in
/// docs/calibration-speed.md.
#[test]
fn hbm_supplement_accuracy() {
    let text = std::fs::read_to_string(
        common::root().join("tests/fixtures/calibration/llamacpp_hbm_rows.csv"),
    )
    .unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let source = header
        .iter()
        .position(|h| *h == "source")
        .expect("a source column");
    for line in lines {
        let url = &cells(line)[source];
        assert!(
            url.starts_with("https://github.com/XiongjieDai/GPU-Benchmarks-on-LLM-Inference/blob/"),
            "every supplement row cites its source: {line}"
        );
    }

    let supplement = rows_from("tests/fixtures/calibration/llamacpp_hbm_rows.csv");
    assert_eq!(supplement.len(), 56);
    assert!(supplement.iter().all(|r| r.family == Family::Hbm));
    let shared = rows();
    let decode: Vec<&Row> = supplement
        .iter()
        .filter(|r| r.kind == "decode" && r.devices == 1.0)
        .collect();
    let split: Vec<&Row> = supplement
        .iter()
        .filter(|r| r.kind == "decode" && r.devices > 1.0)
        .collect();
    // Every HBM card with one GPU: the A100 PCIe rows of the shared data and the supplement's.
    let hbm: Vec<&Row> = shared
        .iter()
        .chain(supplement.iter())
        .filter(|r| r.kind == "decode" && r.devices == 1.0 && r.family == Family::Hbm)
        .collect();
    // Every single-GPU decode row, shared and supplement together.
    let all: Vec<&Row> = shared
        .iter()
        .chain(supplement.iter())
        .filter(|r| r.kind == "decode" && r.devices == 1.0)
        .collect();

    let (decode_median, decode_p90, decode_n) = report("HBM supplement decode, one GPU", &decode);
    let (split_median, split_p90, split_n) =
        report("HBM supplement decode, layer split over 4 GPUs", &split);
    let (hbm_median, hbm_p90, hbm_n) = report(
        "HBM decode, one GPU (A100 PCIe, A100 SXM4, H100 PCIe)",
        &hbm,
    );
    let (all_median, all_p90, all_n) = report("decode, one GPU, shared and supplement rows", &all);
    let (base_median, base_p90) = baseline(&hbm);
    println!(
        "HBM decode, plain bandwidth formula (η 0.7): median {base_median:.1} %, 90th percentile {base_p90:.1} %"
    );

    // In-sample figures (set 2026-12-01, HBM eta 0.584): supplement decode 8.6 % / 13.9 %,
    // its 4-GPU layer split 17.8 % / 42.3 % (never fitted; the 4x A100 SXM4 box runs at 0.67–0.87
    // of prediction), all HBM single-GPU rows 5.5 % / 11.8 %, all 98 single-GPU rows 5.1 % / 15.3 %.
    // A change that makes one worse fails here; improve the model, then update these and the docs.
    const DECODE_MEDIAN: f64 = 9.0;
    const DECODE_P90: f64 = 14.5;
    const SPLIT_MEDIAN: f64 = 18.5;
    const SPLIT_P90: f64 = 43.0;
    const HBM_MEDIAN: f64 = 5.8;
    const HBM_P90: f64 = 12.5;
    const ALL_MEDIAN: f64 = 5.3;
    const ALL_P90: f64 = 16.0;
    assert_eq!((decode_n, split_n, hbm_n, all_n), (12, 16, 18, 98));
    assert!(
        decode_median <= DECODE_MEDIAN,
        "HBM supplement decode median {decode_median:.1} %"
    );
    assert!(
        decode_p90 <= DECODE_P90,
        "HBM supplement decode p90 {decode_p90:.1} %"
    );
    assert!(
        split_median <= SPLIT_MEDIAN,
        "HBM layer-split median {split_median:.1} %"
    );
    assert!(
        split_p90 <= SPLIT_P90,
        "HBM layer-split p90 {split_p90:.1} %"
    );
    assert!(
        hbm_median <= HBM_MEDIAN,
        "HBM decode median {hbm_median:.1} %"
    );
    assert!(hbm_p90 <= HBM_P90, "HBM decode p90 {hbm_p90:.1} %");
    assert!(all_median <= ALL_MEDIAN, "decode median {all_median:.1} %");
    assert!(all_p90 <= ALL_P90, "decode p90 {all_p90:.1} %");
    assert!(
        hbm_median < base_median / 2.0,
        "the fitted model beats the plain formula on HBM cards"
    );
}
