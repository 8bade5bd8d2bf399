//! `deployfit gpus` as a finder (issue #13 part 6), through the real binary: each filter
//! keeps only rows that satisfy it and removes something when it should, filters compose,
//! `--gpu` keeps its order, bad values exit 2 with a suggestion, the memory classes and
//! the new JSON fields are there, and mining cards are named only when asked for.
//!
//! The assertions are relations that hold for any catalog (the curated 77 GPUs or the
//! bulk one); the segment cases declare their own GPUs in a scratch `.deploy` file.

use crate::common;

use common::{deployfit, json, scratch, stdout};
use serde_json::Value;

const GIB: f64 = (1u64 << 30) as f64;

/// `deployfit gpus glm4_9b ARGS --format json`, which must succeed.
fn gpus(args: &[&str]) -> Value {
    let mut all = vec!["gpus", "glm4_9b"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--format", "json"]);
    let output = deployfit(&all);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{all:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    json(&output)
}

fn rows(report: &Value) -> &Vec<Value> {
    report["rows"].as_array().expect("a rows array")
}

fn names(report: &Value) -> Vec<String> {
    rows(report)
        .iter()
        .map(|r| r["gpu"].as_str().unwrap().to_string())
        .collect()
}

/// A usage error: exit 2, and stderr with each of `wanted`.
fn fails_with(args: &[&str], wanted: &[&str]) {
    let output = deployfit(args);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(output.stdout.is_empty(), "{args:?} printed a report");
    for text in wanted {
        assert!(stderr.contains(text), "{args:?}: `{text}` not in {stderr}");
    }
}

#[test]
fn vendor_keeps_only_that_vendor() {
    let all = gpus(&[]);
    let amd = gpus(&["--vendor", "amd"]);
    assert!(!rows(&amd).is_empty());
    assert!(rows(&amd).len() < rows(&all).len());
    for row in rows(&amd) {
        assert_eq!(row["vendor"], "amd", "{row}");
    }
    // Every AMD GPU of the unfiltered list is there.
    let wanted = rows(&all).iter().filter(|r| r["vendor"] == "amd").count();
    assert_eq!(rows(&amd).len(), wanted);
    // A list: the union.
    let two = gpus(&["--vendor", "amd,apple"]);
    let wanted = rows(&all)
        .iter()
        .filter(|r| r["vendor"] == "amd" || r["vendor"] == "apple")
        .count();
    assert_eq!(rows(&two).len(), wanted);
    assert!(rows(&two).iter().any(|r| r["vendor"] == "apple"));
    assert_eq!(amd["catalog"], all["catalog"]);
    assert_eq!(amd["total"].as_u64().unwrap() as usize, rows(&amd).len());
}

#[test]
fn memory_bounds_name_gb_and_gib_exactly() {
    let all = gpus(&[]);
    let memory = |r: &Value| r["memory_bytes"].as_f64().unwrap();
    let big = gpus(&["--min-memory", "24GiB"]);
    assert!(!rows(&big).is_empty() && rows(&big).len() < rows(&all).len());
    for row in rows(&big) {
        assert!(memory(row) >= 24.0 * GIB, "{row}");
    }
    // 24 GiB cards are in with 24GiB and out with `24 GB` (24 × 10⁹ bytes < 24 GiB).
    let small_gib = names(&gpus(&["--max-memory", "24GiB"]));
    let small_gb = gpus(&["--max-memory", "24 GB"]);
    for row in rows(&small_gb) {
        assert!(memory(row) <= 24e9, "{row}");
    }
    assert!(small_gib.contains(&"rtx_4090".to_string()));
    assert!(!names(&small_gb).contains(&"rtx_4090".to_string()));
    // A window.
    let window = gpus(&["--min-memory", "40 GiB", "--max-memory", "80GiB"]);
    assert!(!rows(&window).is_empty());
    for row in rows(&window) {
        assert!((40.0 * GIB..=80.0 * GIB).contains(&memory(row)), "{row}");
    }
}

#[test]
fn fits_only_drops_what_does_not_fit() {
    // At 128k one sequence of GLM-4-32B does not fit every card.
    let args = ["gpus", "glm4_32b", "--context", "128k", "--format", "json"];
    let all = json(&deployfit(&args));
    let fitting = json(&deployfit(&[&args[..], &["--fits-only"]].concat()));
    assert!(rows(&all).iter().any(|r| r["fits"] == false));
    assert!(!rows(&fitting).is_empty());
    for row in rows(&fitting) {
        assert_eq!(row["fits"], true, "{row}");
    }
    let wanted = rows(&all).iter().filter(|r| r["fits"] == true).count();
    assert_eq!(rows(&fitting).len(), wanted);
    assert_eq!(fitting["runs_on"], all["runs_on"]);
}

#[test]
fn max_quant_caps_bits_per_weight() {
    let q8 = rows(&gpus(&["--quant", "Q8_0"]))[0]["bpw"]
        .as_f64()
        .expect("Q8_0 has bits per weight");
    let all = gpus(&[]);
    // Without a cap, 16-bit formats win where they fit, the fastest card included.
    assert!(rows(&all).iter().any(|r| r["bpw"].as_f64() > Some(q8)));
    let capped = gpus(&["--max-quant", "Q8_0"]);
    assert_eq!(rows(&capped).len(), rows(&all).len());
    for row in rows(&capped) {
        assert!(row["bpw"].as_f64().unwrap() <= q8, "{row}");
    }
    let fastest = capped["fastest"].as_str().unwrap();
    let row = rows(&capped).iter().find(|r| r["gpu"] == fastest).unwrap();
    assert!(row["bpw"].as_f64().unwrap() <= q8, "{row}");
    // With a floor above the cap nothing is left: an error, not an empty list.
    fails_with(
        &[
            "gpus",
            "glm4_9b",
            "--min-quant",
            "bf16",
            "--max-quant",
            "Q4_K_M",
        ],
        &["--max-quant"],
    );
}

#[test]
fn gpu_lists_exactly_those_cards_in_order() {
    let order = ["rtx_3060_12gb", "h100_sxm5", "rtx_4090", "m4_max_128gb"];
    let report = gpus(&["--gpu", &order.join(",")]);
    assert_eq!(names(&report), order);
    // Another order, another list; a repeated name once.
    let report = gpus(&["--gpu", "rtx_4090,rtx_3060_12gb,rtx_4090"]);
    assert_eq!(names(&report), ["rtx_4090", "rtx_3060_12gb"]);
    // `--gpu` and the sort: the order given wins.
    let report = gpus(&["--gpu", "rtx_3060_12gb,h100_sxm5", "--sort", "memory"]);
    assert_eq!(names(&report), ["rtx_3060_12gb", "h100_sxm5"]);
}

#[test]
fn filters_compose() {
    let q8 = rows(&gpus(&["--quant", "Q8_0"]))[0]["bpw"]
        .as_f64()
        .unwrap();
    let report = gpus(&[
        "--vendor",
        "nvidia",
        "--min-memory",
        "24GiB",
        "--max-quant",
        "Q8_0",
        "--fits-only",
    ]);
    assert!(!rows(&report).is_empty());
    for row in rows(&report) {
        assert_eq!(row["vendor"], "nvidia", "{row}");
        assert!(row["memory_bytes"].as_f64().unwrap() >= 24.0 * GIB, "{row}");
        assert!(row["bpw"].as_f64().unwrap() <= q8, "{row}");
        assert_eq!(row["fits"], true, "{row}");
    }
    let each = [
        gpus(&["--vendor", "nvidia"]),
        gpus(&["--min-memory", "24GiB"]),
    ];
    for one in &each {
        assert!(rows(&report).len() < rows(one).len());
    }
    // `--gpu` with filters: the named cards that pass them, still in the order given.
    let report = gpus(&[
        "--gpu",
        "rtx_4090,mi300x,rtx_3060_12gb,h100_sxm5",
        "--vendor",
        "nvidia",
        "--min-memory",
        "20GiB",
    ]);
    assert_eq!(names(&report), ["rtx_4090", "h100_sxm5"]);
}

#[test]
fn bad_values_exit_2_with_a_suggestion() {
    let base = ["gpus", "glm4_9b"];
    let cases: &[(&[&str], &[&str])] = &[
        (&["--vendor", "nvidai"], &["nvidai", "`nvidia`"]),
        (&["--vendor", "amd,intle"], &["`intel`"]),
        (&["--segment", "minig"], &["`mining`"]),
        (&["--segment", "datacentre"], &["`datacenter`"]),
        (&["--gpu", "rtx_4909"], &["`rtx_4090`"]),
        (
            &["--gpu", "rtx_4090,h100_sxn"],
            &["h100_sxn", "did you mean"],
        ),
        (&["--min-memory", "24"], &["24 GB or 24 GiB"]),
        (&["--min-memory", "24gib"], &["24 GiB"]),
        (&["--max-memory", "lots"], &["GB or", "GiB"]),
        (&["--max-memory", "24 GB/s"], &["GiB"]),
        (
            &["--min-memory", "80GiB", "--max-memory", "24GiB"],
            &["--min-memory"],
        ),
        (&["--max-quant", "Q8_1"], &["Q8_0"]),
        (&["--vendor", "nv\u{1b}[31mdia"], &["\\u{1b}"]),
        (&["--gpu", "rtx\u{202e}4090"], &["rtx\\u{202e}4090"]),
        (&["--min-memory", "1.5.2 GB"], &["write 24 GB or 24 GiB"]),
        (&["--max-memory", "24 ГБ"], &["`ГБ` is not a memory unit"]),
    ];
    for (args, wanted) in cases {
        fails_with(&[&base[..], *args].concat(), wanted);
    }
    // Control characters never reach the terminal raw.
    let output = deployfit(&["gpus", "glm4_9b", "--gpu", "x\u{1b}[2J"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(!output.stderr.contains(&0x1b), "{:?}", output.stderr);
}

#[test]
fn memory_classes_are_ordered_and_count_the_rows() {
    let report = gpus(&[]);
    let classes = report["memory_classes"].as_array().expect("memory_classes");
    let gib: Vec<u64> = classes
        .iter()
        .map(|c| c["class_gib"].as_u64().unwrap())
        .collect();
    assert_eq!(gib, [8, 12, 16, 24, 32, 48, 80]);
    let memory = |r: &Value| r["memory_bytes"].as_f64().unwrap_or(-1.0);
    for class in classes {
        let low = class["min_bytes"].as_f64().unwrap();
        let high = class["below_bytes"].as_f64().unwrap_or(f64::INFINITY);
        let members: Vec<&Value> = rows(&report)
            .iter()
            .filter(|r| memory(r) >= low && memory(r) < high)
            .collect();
        assert_eq!(class["gpus"].as_u64().unwrap() as usize, members.len());
        let fitting = members.iter().filter(|r| r["fits"] == true).count();
        assert_eq!(class["fitting"].as_u64().unwrap() as usize, fitting);
        if fitting > 0 {
            // The best format is the most bits per weight any fitting member runs.
            let best = members
                .iter()
                .filter(|r| r["fits"] == true)
                .filter_map(|r| r["bpw"].as_f64())
                .fold(0.0, f64::max);
            assert_eq!(class["best_bpw"].as_f64(), Some(best), "{class}");
            let fastest = class["fastest"].as_str().unwrap();
            assert!(members.iter().any(|r| r["gpu"] == fastest), "{class}");
            let median = class["median_decode_tps"].as_f64().unwrap();
            assert!(median <= class["best_decode_tps"].as_f64().unwrap() + 1e-9);
        } else {
            assert!(class["best_quant"].is_null() && class["fastest"].is_null());
        }
    }
    // A bigger class never holds a worse best format for the same model.
    let bpws: Vec<f64> = classes
        .iter()
        .filter_map(|c| c["best_bpw"].as_f64())
        .collect();
    assert!(bpws.len() >= 4, "{bpws:?}");
    assert!(bpws.windows(2).all(|w| w[0] <= w[1]), "{bpws:?}");
    // The classes follow the filters.
    let amd = gpus(&["--vendor", "amd"]);
    let amd_total: u64 = amd["memory_classes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["gpus"].as_u64().unwrap())
        .sum();
    let all_total: u64 = classes.iter().map(|c| c["gpus"].as_u64().unwrap()).sum();
    assert!(amd_total < all_total);
    // The table has the section, smallest class first.
    let table = stdout(&deployfit(&["gpus", "glm4_9b"]));
    let section = table.split("By memory").nth(1).expect("a memory section");
    let eight = section.find("\n8–12 GiB").expect("8 GiB class");
    let eighty = section.find("\n80+ GiB").expect("80 GiB class");
    assert!(eight < eighty, "{section}");
}

#[test]
fn rows_carry_bandwidth_share_vendor_segment_arch() {
    let report = gpus(&[]);
    for row in rows(&report) {
        for key in [
            "bandwidth_gbs",
            "memory_percent",
            "vendor",
            "segment",
            "arch",
            // The fields that were there before stay.
            "gpu",
            "memory_bytes",
            "quant",
            "needed_bytes",
            "fits",
            "decode_tps",
            // `cost_per_hour` until issue 33 put the unit in every JSON key.
            "cost_per_hour_usd",
        ] {
            assert!(row.get(key).is_some(), "{key} missing in {row}");
        }
        // A GPU without `memory` in the catalog has no share.
        let Some(memory) = row["memory_bytes"].as_f64() else {
            assert!(row["memory_percent"].is_null(), "{row}");
            continue;
        };
        let share = row["memory_percent"].as_f64().unwrap();
        let expected = row["needed_bytes"].as_f64().unwrap() / memory * 100.0;
        assert!((share - expected).abs() < 1e-6, "{row}");
        if row["fits"] == true {
            assert!(share <= 100.0, "{row}");
        }
    }
    assert!(rows(&report).iter().any(|r| r["memory_percent"].is_f64()));
    let rtx = rows(&report)
        .iter()
        .find(|r| r["gpu"] == "rtx_4090")
        .unwrap();
    assert_eq!(rtx["vendor"], "nvidia");
    assert!(rtx["bandwidth_gbs"].as_f64().unwrap() > 900.0);
    // The table: bandwidth and % of memory columns, the row's share as a percentage.
    let table = stdout(&deployfit(&["gpus", "glm4_9b", "--gpu", "rtx_4090"]));
    let header = table.lines().nth(2).unwrap();
    assert!(
        header.contains("bandwidth") && header.contains("% mem"),
        "{table}"
    );
    let line = table.lines().nth(3).unwrap();
    let percent = format!("{:.0}%", rtx["memory_percent"].as_f64().unwrap());
    assert!(line.contains(&percent) && line.contains("GB/s"), "{line}");
    assert!(table.contains("1 of 1 GPUs listed ("), "{table}");
}

/// Two identical cards but for the segment: `a_miner` (mining, named first by name and
/// faster) and `b_shop` (consumer).
const CARDS: &str = "gpu a_miner extends h100_sxm5 {\n    segment = mining\n    bandwidth = 9 TB/s\n    price = $0.001/h\n}\n\ngpu b_shop extends h100_sxm5 {\n    segment = consumer\n    price = $0.002/h\n}\n\ngpu c_small_miner extends rtx_3090 {\n    segment = mining\n}\n";

#[test]
fn segment_filters_and_mining_only_when_asked() {
    let dir = scratch("finder-segments");
    let file = dir.join("cards.deploy");
    std::fs::write(&file, CARDS).unwrap();
    let file = file.to_str().unwrap();
    let run = |extra: &[&str]| gpus(&[&["--file", file][..], extra].concat());
    let mining = run(&["--segment", "mining"]);
    let mined = names(&mining);
    assert!(mined.contains(&"a_miner".into()) && mined.contains(&"c_small_miner".into()));
    for row in rows(&mining) {
        assert_eq!(row["segment"], "mining", "{row}");
    }
    let all = run(&[]);
    assert!(rows(&mining).len() < rows(&all).len());
    // A GPU without a segment is listed by default and dropped by any --segment.
    let consumer = run(&["--segment", "consumer"]);
    assert!(names(&consumer).contains(&"b_shop".into()));
    for row in rows(&consumer) {
        assert_eq!(row["segment"], "consumer", "{row}");
    }

    // The miner is faster, but the summaries name the shop card…
    let pair = run(&["--gpu", "a_miner,b_shop"]);
    let speed = |name: &str| {
        rows(&pair).iter().find(|r| r["gpu"] == name).unwrap()["decode_tps"]
            .as_f64()
            .unwrap()
    };
    assert!(speed("a_miner") > speed("b_shop"));
    assert_eq!(pair["fastest"], "b_shop");
    assert_eq!(pair["smallest"], "b_shop");
    let class = pair["memory_classes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["gpus"] == 2)
        .expect("both in one class");
    assert_eq!(class["fastest"], "b_shop");
    // …unless mining cards are asked for.
    let asked = run(&["--gpu", "a_miner,b_shop", "--segment", "mining,consumer"]);
    assert_eq!(asked["fastest"], "a_miner");
    // With nothing buyable listed, the miner is named rather than nothing.
    let only = run(&["--gpu", "a_miner"]);
    assert_eq!(only["fastest"], "a_miner");
}

#[test]
fn matrix_smallest_gpu_skips_mining_cards() {
    let dir = scratch("finder-matrix");
    let file = dir.join("small.deploy");
    // Two 3 GiB cards, smaller than any catalog card, alike but for the segment; the
    // miner sorts first by name.
    std::fs::write(
        &file,
        "gpu a_tiny_miner extends rtx_3060_12gb {\n    segment = mining\n    memory = 3 GiB\n}\n\ngpu b_tiny_shop extends rtx_3060_12gb {\n    segment = consumer\n    memory = 3 GiB\n}\n",
    )
    .unwrap();
    let output = deployfit(&[
        "matrix",
        "qwen3_0_6b",
        "--contexts",
        "2k",
        "--engine",
        "llamacpp",
        "--file",
        file.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(output.status.code(), Some(0));
    let matrix = json(&output);
    let smallest: Vec<&str> = matrix["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["smallest_gpu"].as_str())
        .collect();
    assert!(!smallest.contains(&"a_tiny_miner"), "{smallest:?}");
    assert!(smallest.contains(&"b_tiny_shop"), "{smallest:?}");
}

#[test]
fn does_not_fit_alternatives_skip_mining_cards() {
    let dir = scratch("finder-alternatives");
    let deployment = |gpu: &str| {
        format!(
            "{CARDS}\ndeployment too_big {{\n    model    = glm4_32b\n    quant    = bf16\n    context  = 32k\n    kv_cache = fp16\n    engine   = vllm\n    gpu      = {gpu}\n}}\n"
        )
    };
    let help = |gpu: &str| {
        let file = dir.join(format!("{gpu}.deploy"));
        std::fs::write(&file, deployment(gpu)).unwrap();
        let output = deployfit(&["check", file.to_str().unwrap(), "--format", "json"]);
        assert_eq!(output.status.code(), Some(1));
        let report = json(&output);
        report["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["code"] == "deploy::fit::does_not_fit")
            .map(|d| d.to_string())
            .expect("a does_not_fit diagnostic")
    };
    // On a consumer card: the cheapest buyable card that fits, not the cheaper miner.
    let text = help("rtx_3090");
    assert!(text.contains("gpu = b_shop"), "{text}");
    assert!(!text.contains("a_miner"), "{text}");
    // On a mining card the user asked for mining cards: the cheaper miner is named.
    let text = help("c_small_miner");
    assert!(text.contains("gpu = a_miner"), "{text}");
}
