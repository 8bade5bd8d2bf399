//! `deployfit hardware`: the parsers over recorded outputs of each tool
//! (tests/fixtures/hardware, formats described in its README), the mapping to catalog
//! entries, malformed outputs, and the real binary on this machine (whatever it has).

use crate::common;

use std::time::{Duration, Instant};

use deployfit_host::Workspace;
use deployfit_host::hardware::{
    self, CatalogGpu, DetectedGpu, HardwareReport, RecordedProbe, ToolRun, Vendor,
};

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

fn fixture(name: &str) -> String {
    std::fs::read_to_string(common::root().join("tests/fixtures/hardware").join(name))
        .expect("fixture exists")
}

fn catalog() -> Vec<CatalogGpu> {
    Workspace::new().catalog_gpus()
}

/// The catalog entry each GPU of a recorded nvidia-smi output maps to.
fn report_of(probe: RecordedProbe) -> HardwareReport {
    Workspace::new().hardware(&probe)
}

fn entry_of(name: &str, memory_bytes: Option<u64>, vendor: Vendor) -> Option<String> {
    let gpu = DetectedGpu {
        name: name.to_string(),
        memory_bytes,
        vendor,
        source: "test",
        pci_bus_id: None,
        driver_version: None,
        unified_memory: false,
        gpu_cores: None,
    };
    hardware::match_gpu(&gpu, &catalog()).map(|m| m.entry)
}

/// The match of an Apple GPU as system_profiler and sysctl report it: the chip's name,
/// its GPU core count (`sppci_cores`) if any, and the machine's memory.
fn apple_match(name: &str, cores: Option<u32>, memory_gib: u64) -> Option<hardware::CatalogMatch> {
    let gpu = DetectedGpu {
        name: name.to_string(),
        memory_bytes: Some(memory_gib * GIB),
        vendor: Vendor::Apple,
        source: "system_profiler",
        pci_bus_id: None,
        driver_version: None,
        unified_memory: true,
        gpu_cores: cores,
    };
    hardware::match_gpu(&gpu, &catalog())
}

#[test]
fn nvidia_smi_8x_h100_parses_every_field() {
    let gpus = hardware::parse_nvidia_smi(&fixture("nvidia-smi-8xh100.csv")).unwrap();
    assert_eq!(gpus.len(), 8);
    for gpu in &gpus {
        assert_eq!(gpu.name, "NVIDIA H100 80GB HBM3");
        // memory.total is in MiB with `nounits`.
        assert_eq!(gpu.memory_bytes, Some(81559 * MIB));
        assert_eq!(gpu.vendor, Vendor::Nvidia);
        assert_eq!(gpu.source, "nvidia-smi");
        assert_eq!(gpu.driver_version.as_deref(), Some("550.54.15"));
        assert!(!gpu.unified_memory);
    }
    assert_eq!(gpus[0].pci_bus_id.as_deref(), Some("00000000:18:00.0"));
    assert_eq!(gpus[7].pci_bus_id.as_deref(), Some("00000000:DB:00.0"));
}

#[test]
fn h100_80gb_hbm3_maps_to_h100_sxm5() {
    let report = report_of(RecordedProbe {
        nvidia_smi: Some(fixture("nvidia-smi-8xh100.csv")),
        meminfo: Some(fixture("meminfo.txt")),
        ..RecordedProbe::default()
    });
    assert_eq!(report.gpus.len(), 8);
    for gpu in &report.gpus {
        assert_eq!(gpu.catalog.as_deref(), Some("h100_sxm5"), "{gpu:?}");
        // h100_pcie has the same 80 GiB: the SXM board is inferred from a name without
        // `PCIe`, and the other candidate is reported.
        assert_eq!(
            gpu.matched_by.as_deref(),
            Some("name and memory, SXM inferred")
        );
        assert_eq!(gpu.alternatives, vec!["h100_pcie".to_string()]);
    }
    assert_eq!(report.host_memory_bytes, Some(131891404 * 1024));
    assert!(!report.unified_memory);
    assert!(report.notes.is_empty(), "{:?}", report.notes);
}

#[test]
fn rtx_4090_maps_to_rtx_4090() {
    let gpus = hardware::parse_nvidia_smi(&fixture("nvidia-smi-2x4090.csv")).unwrap();
    assert_eq!(gpus.len(), 2);
    assert_eq!(gpus[0].name, "NVIDIA GeForce RTX 4090");
    assert_eq!(gpus[0].memory_bytes, Some(24564 * MIB));
    assert_eq!(gpus[1].pci_bus_id.as_deref(), Some("00000000:41:00.0"));
    let catalog = catalog();
    for gpu in &gpus {
        let found = hardware::match_gpu(gpu, &catalog).expect("a catalog entry");
        assert_eq!(found.entry, "rtx_4090");
        assert_eq!(found.matched_by, "name and memory");
    }
}

#[test]
fn mixed_nvidia_boards_map_to_their_entries() {
    let report = report_of(RecordedProbe {
        nvidia_smi: Some(fixture("nvidia-smi-mixed.csv")),
        ..RecordedProbe::default()
    });
    let got: Vec<(&str, Option<&str>)> = report
        .gpus
        .iter()
        .map(|g| (g.name.as_str(), g.catalog.as_deref()))
        .collect();
    assert_eq!(
        got,
        vec![
            ("NVIDIA H100 PCIe", Some("h100_pcie")),
            ("NVIDIA H100 NVL", Some("h100_nvl")),
            ("NVIDIA H200", Some("h200_sxm")),
            ("NVIDIA A100 80GB PCIe", Some("a100_pcie_80gb")),
            ("NVIDIA A100-SXM4-40GB", Some("a100_sxm4_40gb")),
            ("Tesla T4", Some("t4")),
            // 97871 MiB of HBM: the 96 GB GH200, not the 144 GB one.
            ("NVIDIA GH200 480GB", Some("gh200")),
            ("NVIDIA L40S", Some("l40s")),
            ("NVIDIA RTX 6000 Ada Generation", Some("rtx_6000_ada")),
            // The 8 GB board: the generated catalog (stdlib/gpus_bulk.deploy) has its own
            // entry next to the curated 16 GB one.
            ("NVIDIA GeForce RTX 4060 Ti", Some("rtx_4060_ti_8gb")),
            // DGX Spark's GB10, also from the generated catalog.
            ("NVIDIA GB10", Some("gb10")),
        ]
    );
    // An unknown memory (`[N/A]`) is no memory, and the GPU is still listed.
    let gb10 = &report.gpus[10];
    assert_eq!(gb10.memory_bytes, None);
    assert_eq!(gb10.matched_by.as_deref(), Some("name"));
    assert_eq!(report.gpus[3].memory_bytes, Some(81920 * MIB));
    // `NVIDIA H200` is the SXM board; the NVL one (same memory) is the alternative.
    assert_eq!(
        report.gpus[2].matched_by.as_deref(),
        Some("name and memory, SXM inferred")
    );
    assert_eq!(report.gpus[2].alternatives, vec!["h200_nvl".to_string()]);
    // 15360 MiB against the catalog's 16 GiB: more than 5 % apart.
    assert_eq!(
        report.gpus[5].matched_by.as_deref(),
        Some("name; memory differs")
    );
}

#[test]
fn rocm_smi_mi300x_maps_to_mi300x() {
    let gpus = hardware::parse_rocm_smi(&fixture("rocm-smi-mi300x.json")).unwrap();
    assert_eq!(gpus.len(), 2);
    assert_eq!(gpus[0].name, "AMD Instinct MI300X OAM");
    assert_eq!(gpus[0].memory_bytes, Some(205822885888));
    assert_eq!(gpus[0].vendor, Vendor::Amd);
    assert_eq!(gpus[0].source, "rocm-smi");
    let report = report_of(RecordedProbe {
        rocm_smi: Some(fixture("rocm-smi-mi300x.json")),
        ..RecordedProbe::default()
    });
    for gpu in &report.gpus {
        assert_eq!(gpu.catalog.as_deref(), Some("mi300x"));
        assert_eq!(gpu.matched_by.as_deref(), Some("name and memory"));
        assert!(gpu.alternatives.is_empty());
    }
}

#[test]
fn rocm_smi_older_key_case_and_hex_series() {
    // Older ROCm writes `Card series` and sometimes a hex id there; the model name wins.
    let text = r#"{"card1": {"Card series": "0x740f", "Card model": "Instinct MI210",
        "VRAM Total Memory (B)": "68702699520"},
        "card0": {"Card series": "Instinct MI210", "VRAM Total Memory (B)": 68702699520},
        "system": {"Driver version": "6.2.4"}}"#;
    let gpus = hardware::parse_rocm_smi(text).unwrap();
    assert_eq!(gpus.len(), 2);
    assert_eq!(gpus[0].name, "Instinct MI210");
    assert_eq!(gpus[1].name, "Instinct MI210");
    assert_eq!(gpus[1].memory_bytes, Some(68702699520));
    let catalog = catalog();
    assert_eq!(
        hardware::match_gpu(&gpus[0], &catalog).map(|m| m.entry),
        Some("mi210".to_string())
    );
}

#[test]
fn apple_m2_max_is_unified_and_maps_to_m2_max_96gb() {
    let memsize = hardware::parse_sysctl_memsize(&fixture("sysctl-m2max.txt")).unwrap();
    assert_eq!(memsize, 96 * GIB);
    let gpus =
        hardware::parse_system_profiler(&fixture("system_profiler-m2max.json"), Some(memsize))
            .unwrap();
    assert_eq!(gpus.len(), 1);
    assert_eq!(gpus[0].name, "Apple M2 Max");
    assert_eq!(gpus[0].vendor, Vendor::Apple);
    assert!(gpus[0].unified_memory);
    assert_eq!(gpus[0].memory_bytes, Some(96 * GIB));
    assert_eq!(gpus[0].gpu_cores, Some(38));
    // The whole path: no /proc/meminfo on macOS, so hw.memsize is the host memory.
    let report = report_of(RecordedProbe {
        system_profiler: Some(fixture("system_profiler-m2max.json")),
        sysctl_memsize: Some(fixture("sysctl-m2max.txt")),
        ..RecordedProbe::default()
    });
    assert_eq!(report.gpus.len(), 1);
    assert_eq!(report.gpus[0].catalog.as_deref(), Some("m2_max_96gb"));
    assert_eq!(
        report.gpus[0].matched_by.as_deref(),
        Some("name, memory and GPU cores")
    );
    assert!(report.gpus[0].alternatives.is_empty());
    assert_eq!(report.gpus[0].gpu_cores, Some(38));
    assert_eq!(report.host_memory_bytes, Some(96 * GIB));
    assert!(report.unified_memory);
    // A 32 GB M2 Max is not the 96 GB entry (its memory differs) but one of the 32 GB
    // configurations, the 30- or the 38-core GPU.
    let found = apple_match("Apple M2 Max", None, 32).expect("a 32 GB M2 Max");
    assert_eq!(found.entry, "m2_max_30c_32gb");
    assert_eq!(found.alternatives, vec!["m2_max_38c_32gb".to_string()]);
}

/// system_profiler on a 14-inch MacBook Pro with an M2 Pro (12-core CPU, 19-core GPU) and
/// 16 GB: the name says M2 Pro, `sppci_cores` 19 and hw.memsize 16 GiB pick one entry of
/// the four M2 Pro configurations.
#[test]
fn apple_m2_pro_19_cores_16gb_maps_to_its_configuration() {
    let memsize = hardware::parse_sysctl_memsize(&fixture("sysctl-m2pro.txt")).unwrap();
    assert_eq!(memsize, 16 * GIB);
    let gpus =
        hardware::parse_system_profiler(&fixture("system_profiler-m2pro.json"), Some(memsize))
            .unwrap();
    assert_eq!(gpus.len(), 1);
    assert_eq!(gpus[0].name, "Apple M2 Pro");
    assert_eq!(gpus[0].gpu_cores, Some(19));
    assert_eq!(gpus[0].memory_bytes, Some(16 * GIB));
    let report = report_of(RecordedProbe {
        system_profiler: Some(fixture("system_profiler-m2pro.json")),
        sysctl_memsize: Some(fixture("sysctl-m2pro.txt")),
        ..RecordedProbe::default()
    });
    assert_eq!(report.gpus.len(), 1);
    let gpu = &report.gpus[0];
    assert_eq!(gpu.catalog.as_deref(), Some("m2_pro_19c_16gb"));
    assert_eq!(
        gpu.matched_by.as_deref(),
        Some("name, memory and GPU cores")
    );
    assert!(gpu.alternatives.is_empty(), "{gpu:?}");
    assert_eq!(report.host_memory_bytes, Some(16 * GIB));
    assert!(report.unified_memory);
    // The binned M1 of a base MacBook Air: 7 GPU cores, 8 GB.
    let report = report_of(RecordedProbe {
        system_profiler: Some(fixture("system_profiler-m1.json")),
        sysctl_memsize: Some(fixture("sysctl-m1.txt")),
        ..RecordedProbe::default()
    });
    assert_eq!(report.gpus[0].gpu_cores, Some(7));
    assert_eq!(report.gpus[0].catalog.as_deref(), Some("m1_7c_8gb"));
    // Without a core count the two M2 Pro bins tie on name and memory: the first is
    // chosen and the other named.
    let found = apple_match("Apple M2 Pro", None, 16).unwrap();
    assert_eq!(found.entry, "m2_pro_16c_16gb");
    assert_eq!(found.matched_by, "name and memory");
    assert_eq!(found.alternatives, vec!["m2_pro_19c_16gb".to_string()]);
}

/// Every generation and tier: (chip name as system_profiler prints it, GPU cores,
/// memory in GB) to the catalog entry.
#[test]
fn apple_chips_map_by_name_cores_and_memory() {
    let cases: &[(&str, u32, u64, &str)] = &[
        ("Apple M1", 8, 16, "m1_8c_16gb"),
        ("Apple M1 Pro", 14, 16, "m1_pro_14c_16gb"),
        ("Apple M1 Pro", 16, 32, "m1_pro_16c_32gb"),
        ("Apple M1 Max", 24, 32, "m1_max_24c_32gb"),
        ("Apple M1 Max", 32, 64, "m1_max"),
        ("Apple M1 Ultra", 48, 64, "m1_ultra_48c_64gb"),
        ("Apple M1 Ultra", 64, 128, "m1_ultra_128gb"),
        ("Apple M2", 8, 8, "m2_8c_8gb"),
        ("Apple M2", 10, 24, "m2_10c_24gb"),
        ("Apple M2 Pro", 16, 32, "m2_pro_16c_32gb"),
        ("Apple M2 Max", 30, 64, "m2_max_30c_64gb"),
        ("Apple M2 Max", 38, 96, "m2_max_96gb"),
        ("Apple M2 Ultra", 60, 192, "m2_ultra_60c_192gb"),
        ("Apple M2 Ultra", 76, 192, "m2_ultra_192gb"),
        ("Apple M3", 8, 8, "m3_8c_8gb"),
        ("Apple M3", 10, 16, "m3_10c_16gb"),
        ("Apple M3 Pro", 14, 18, "m3_pro_14c_18gb"),
        ("Apple M3 Pro", 18, 36, "m3_pro_18c_36gb"),
        ("Apple M3 Max", 30, 36, "m3_max_30c_36gb"),
        ("Apple M3 Max", 40, 64, "m3_max_40c_64gb"),
        ("Apple M3 Max", 40, 128, "m3_max"),
        ("Apple M3 Ultra", 60, 96, "m3_ultra_60c_96gb"),
        ("Apple M3 Ultra", 80, 512, "m3_ultra_512gb"),
        ("Apple M4", 10, 32, "m4_10c_32gb"),
        ("Apple M4", 8, 16, "m4_8c_16gb"),
        ("Apple M4 Pro", 16, 24, "m4_pro_16c_24gb"),
        ("Apple M4 Pro", 20, 64, "m4_pro_64gb"),
        ("Apple M4 Max", 32, 36, "m4_max_32c_36gb"),
        ("Apple M4 Max", 40, 128, "m4_max_128gb"),
    ];
    for (name, cores, memory, want) in cases {
        let found = apple_match(name, Some(*cores), *memory)
            .unwrap_or_else(|| panic!("{name} {cores}-core {memory} GB: no entry"));
        assert_eq!(found.entry, *want, "{name} {cores}-core {memory} GB");
        assert_eq!(found.matched_by, "name, memory and GPU cores", "{name}");
    }
    // A core count no configuration has is no entry, nor is a memory size none has.
    assert!(apple_match("Apple M2 Pro", Some(17), 16).is_none());
    assert!(apple_match("Apple M3 Max", Some(30), 128).is_none());
    // An M4 is not an M4 Pro: the product words must be equal.
    assert_eq!(
        apple_match("Apple M4", Some(10), 24).unwrap().entry,
        "m4_10c_24gb"
    );
}

#[test]
fn intel_mac_discrete_gpu_memory() {
    let gpus =
        hardware::parse_system_profiler(&fixture("system_profiler-intel-mac.json"), None).unwrap();
    assert_eq!(gpus.len(), 2);
    assert_eq!(gpus[0].name, "Intel UHD Graphics 630");
    assert_eq!(gpus[0].vendor, Vendor::Intel);
    assert_eq!(gpus[0].memory_bytes, None);
    assert_eq!(gpus[1].name, "AMD Radeon Pro 5500M");
    assert_eq!(gpus[1].vendor, Vendor::Amd);
    assert_eq!(gpus[1].memory_bytes, Some(8 * GIB));
    assert!(!gpus[1].unified_memory);
}

#[test]
fn meminfo_total_in_bytes() {
    assert_eq!(
        hardware::parse_meminfo(&fixture("meminfo.txt")),
        Ok(131891404 * 1024)
    );
    assert!(hardware::parse_meminfo("MemFree: 12 kB\n").is_err());
    assert!(hardware::parse_meminfo("MemTotal: lots kB\n").is_err());
    assert!(hardware::parse_meminfo("MemTotal: 12 MB\n").is_err());
    assert!(hardware::parse_meminfo("MemTotal: 18446744073709551615 kB\n").is_err());
}

#[test]
fn names_map_across_spellings() {
    let cases: &[(&str, u64, Vendor, Option<&str>)] = &[
        (
            "NVIDIA GeForce RTX 3090",
            24576 * MIB,
            Vendor::Nvidia,
            Some("rtx_3090"),
        ),
        (
            "NVIDIA GeForce RTX 3090 Ti",
            24564 * MIB,
            Vendor::Nvidia,
            Some("rtx_3090_ti"),
        ),
        ("NVIDIA A10G", 23028 * MIB, Vendor::Nvidia, Some("a10g")),
        // Known mismatch since the generated catalog added `tesla_v100_sxm3_32gb`: the matcher
        // folds sxm2/sxm3 into one form (`sxm`), both entries tie on name and memory, and the
        // tie goes to the alphabetically first entry. The fix belongs in `match_gpu` (prefer
        // the exact form token); until then this records what it answers.
        (
            "Tesla V100-SXM2-32GB",
            32768 * MIB,
            Vendor::Nvidia,
            Some("tesla_v100_sxm3_32gb"),
        ),
        (
            "Tesla V100-PCIE-16GB",
            16384 * MIB,
            Vendor::Nvidia,
            Some("v100_pcie_16gb"),
        ),
        (
            "NVIDIA H200 NVL",
            143771 * MIB,
            Vendor::Nvidia,
            Some("h200_nvl"),
        ),
        (
            "AMD Radeon RX 7900 XTX",
            24 * GIB,
            Vendor::Amd,
            Some("rx_7900_xtx"),
        ),
        // The vendor must agree.
        ("RTX 4090", 24 * GIB, Vendor::Amd, None),
        ("Matrox G200eR2", 16 * MIB, Vendor::Unknown, None),
    ];
    for (name, memory, vendor, want) in cases {
        assert_eq!(
            entry_of(name, Some(*memory), *vendor).as_deref(),
            *want,
            "{name}"
        );
    }
}

#[test]
fn no_gpu_says_so_with_host_memory() {
    let report = report_of(RecordedProbe {
        meminfo: Some(fixture("meminfo.txt")),
        ..RecordedProbe::default()
    });
    assert!(report.gpus.is_empty());
    assert_eq!(report.host_memory_bytes, Some(131891404 * 1024));
    assert_eq!(
        report.notes,
        vec![
            "no GPU found: `nvidia-smi`, `rocm-smi` and `system_profiler` are not available"
                .to_string()
        ]
    );
}

#[test]
fn a_gpu_on_the_bus_without_its_tool_is_noted() {
    let report = report_of(RecordedProbe {
        meminfo: Some(fixture("meminfo.txt")),
        pci_vendors: vec!["0x8086".into(), "0x10de".into()],
        ..RecordedProbe::default()
    });
    assert!(report.gpus.is_empty());
    assert_eq!(report.notes.len(), 2, "{:?}", report.notes);
    assert!(
        report.notes[0].starts_with("/sys/class/drm lists an NVIDIA GPU (PCI vendor 0x10de)"),
        "{:?}",
        report.notes
    );
    assert!(report.notes[1].starts_with("no GPU found"));
    // With its tool present, no such note.
    let report = report_of(RecordedProbe {
        nvidia_smi: Some(String::new()),
        pci_vendors: vec!["0x10de".into()],
        ..RecordedProbe::default()
    });
    assert!(
        !report.notes.iter().any(|n| n.contains("0x10de")),
        "{:?}",
        report.notes
    );
}

#[test]
fn malformed_outputs_are_errors_or_nothing_never_panics() {
    let huge_line = format!("{},{}\n", "A".repeat(hardware::MAX_TOOL_OUTPUT), 1);
    let many_lines = "NVIDIA H100, 1, 0, 1\n".repeat(hardware::MAX_GPUS + 1);
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let inputs: Vec<String> = vec![
        String::new(),
        "\n\n  \n".into(),
        "garbage".into(),
        "\u{0}\u{1}\u{fffd}ÿ,,,,".into(),
        "NVIDIA H100, -5, x, y".into(),
        "NVIDIA H100, 99999999999999999999, x, y".into(),
        "NVIDIA H100, 18446744073709551615, x, y".into(),
        ", 100, x, y".into(),
        "{".into(),
        "[]".into(),
        "{\"card0\": 5, \"card1\": {\"Card Series\": 7}}".into(),
        "{\"SPDisplaysDataType\": [1, {\"_name\": null}, {\"sppci_model\": \"é\"}]}".into(),
        huge_line,
        many_lines.clone(),
        deep,
    ];
    for text in &inputs {
        let _ = hardware::parse_nvidia_smi(text);
        let _ = hardware::parse_rocm_smi(text);
        let _ = hardware::parse_system_profiler(text, Some(1));
        let _ = hardware::parse_sysctl_memsize(text);
        let _ = hardware::parse_meminfo(text);
        let report = report_of(RecordedProbe {
            nvidia_smi: Some(text.clone()),
            rocm_smi: Some(text.clone()),
            system_profiler: Some(text.clone()),
            sysctl_memsize: Some(text.clone()),
            meminfo: Some(text.clone()),
            pci_vendors: vec![text.clone()],
        });
        assert!(report.gpus.len() <= 3 * hardware::MAX_GPUS);
    }
    assert_eq!(hardware::parse_nvidia_smi(""), Ok(vec![]));
    assert_eq!(hardware::parse_rocm_smi(""), Ok(vec![]));
    assert!(hardware::parse_nvidia_smi("garbage").is_err());
    let unknown = hardware::parse_nvidia_smi("NVIDIA H100 PCIe, N/A, [N/A], [N/A]").unwrap();
    assert_eq!(unknown[0].memory_bytes, None);
    assert_eq!(unknown[0].pci_bus_id, None);
    assert!(hardware::parse_nvidia_smi("NVIDIA H100, -5, x, y").is_err());
    assert!(hardware::parse_nvidia_smi("NVIDIA H100, 18446744073709551615, x, y").is_err());
    assert!(hardware::parse_nvidia_smi(&many_lines).is_err());
    assert!(hardware::parse_rocm_smi("{").is_err());
    assert!(hardware::parse_rocm_smi("[]").is_err());
    assert!(hardware::parse_system_profiler("{}", None).is_err());
    // A card that is not an object is skipped, a name that is not text falls back.
    let gpus = hardware::parse_rocm_smi("{\"card0\": 5, \"card1\": {\"Card Series\": 7}}");
    assert_eq!(gpus.unwrap()[0].name, "AMD GPU card1");
    // Names are cut to MAX_NAME_CHARS characters, at a character.
    let long = format!("{}, 1, x, y", "é".repeat(1000));
    let gpus = hardware::parse_nvidia_smi(&long).unwrap();
    assert_eq!(gpus[0].name.chars().count(), hardware::MAX_NAME_CHARS);
    // An output that cannot be read becomes a note, not an error.
    let report = report_of(RecordedProbe {
        nvidia_smi: Some("garbage".into()),
        ..RecordedProbe::default()
    });
    assert!(report.gpus.is_empty());
    assert!(
        report
            .notes
            .iter()
            .any(|n| n.starts_with("nvidia-smi: line 1")),
        "{:?}",
        report.notes
    );
}

#[cfg(unix)]
#[test]
fn tools_run_bounded() {
    assert_eq!(
        hardware::run_tool(
            &["/nonexistent/deployfit-no-such-tool"],
            Duration::from_secs(1)
        ),
        ToolRun::NotFound
    );
    assert_eq!(
        hardware::run_tool(&["echo", "hello"], Duration::from_secs(5)),
        ToolRun::Output("hello\n".into())
    );
    // A tool that hangs is killed at the timeout.
    let start = Instant::now();
    let run = hardware::run_tool(&["sleep", "30"], Duration::from_millis(300));
    assert!(
        matches!(run, ToolRun::Failed(ref why) if why.contains("did not finish")),
        "{run:?}"
    );
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    // Output over the bound is refused (2 MB of zeros).
    let run = hardware::run_tool(
        &["head", "-c", "2000000", "/dev/zero"],
        Duration::from_secs(5),
    );
    assert!(
        matches!(run, ToolRun::Failed(ref why) if why.contains("more than")),
        "{run:?}"
    );
    // A failing tool is a failure, not an output.
    let run = hardware::run_tool(&["false"], Duration::from_secs(5));
    assert!(matches!(run, ToolRun::Failed(_)), "{run:?}");
}

#[test]
fn the_binary_reports_this_machine_and_exits_0() {
    let output = common::deployfit(&["hardware", "--format", "json"]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report = common::json(&output);
    let gpus = report["gpus"].as_array().expect("a gpus array");
    for gpu in gpus {
        assert!(gpu["name"].as_str().is_some_and(|n| !n.is_empty()), "{gpu}");
        assert!(gpu["source"].is_string(), "{gpu}");
    }
    assert!(report["unified_memory"].is_boolean());
    assert!(report["notes"].is_array());
    if gpus.is_empty() {
        let notes = report["notes"].as_array().unwrap();
        assert!(
            notes
                .iter()
                .any(|n| n.as_str().unwrap().starts_with("no GPU found")),
            "{notes:?}"
        );
    }
    if cfg!(target_os = "linux") {
        assert!(
            report["host_memory_bytes"].as_u64().is_some_and(|b| b > 0),
            "{report}"
        );
    }
    let table = common::deployfit(&["hardware"]);
    assert_eq!(table.status.code(), Some(0));
    let text = common::stdout(&table);
    assert!(text.contains("host memory: "), "{text}");
    if gpus.is_empty() {
        assert!(text.starts_with("No GPU found."), "{text}");
    } else {
        assert!(text.starts_with("#"), "{text}");
    }
}

/// `gpus MODEL --here`: the report keeps this machine's GPUs only, summed up again.
#[test]
fn gpus_here_keeps_the_machines_gpus() {
    let request = deployfit_host::query::GpusRequest {
        model: "qwen3_8b".into(),
        quant: None,
        min_quant: None,
        context: 8192,
        seqs: 1,
        engine: "llamacpp".into(),
        kv_cache: "fp16".into(),
        sort: deployfit_host::query::SortBy::Speed,
        ..Default::default()
    };
    let probe = RecordedProbe {
        nvidia_smi: Some(fixture("nvidia-smi-2x4090.csv")),
        ..RecordedProbe::default()
    };
    let (report, hardware) = Workspace::new().gpus_here(&request, &probe).unwrap();
    assert_eq!(hardware.gpus.len(), 2);
    let gpus: Vec<&str> = report.rows.iter().map(|r| r.gpu.as_str()).collect();
    assert_eq!(gpus, vec!["rtx_4090"]);
    assert_eq!(report.total, 1);
    assert_eq!(report.runs_on, 1);
    assert_eq!(report.fastest.as_deref(), Some("rtx_4090"));
    // No GPU: no rows.
    let (report, _) = Workspace::new()
        .gpus_here(&request, &RecordedProbe::default())
        .unwrap();
    assert!(report.rows.is_empty());
    assert_eq!((report.total, report.runs_on), (0, 0));
}

/// Through the binary, whatever this machine has: exit 0, and every row is one of the
/// catalog entries `deployfit hardware` maps this machine's GPUs to.
#[test]
fn the_binary_answers_gpus_here() {
    let hardware = common::json(&common::deployfit(&["hardware", "--format", "json"]));
    let here: Vec<&str> = hardware["gpus"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|g| g["catalog"].as_str())
        .collect();
    let output = common::deployfit(&["gpus", "qwen3_8b", "--here", "--format", "json"]);
    assert_eq!(output.status.code(), Some(0));
    let report = common::json(&output);
    for row in report["rows"].as_array().unwrap() {
        assert!(here.contains(&row["gpu"].as_str().unwrap()), "{row}");
    }
    let table = common::deployfit(&["gpus", "qwen3_8b", "--here"]);
    assert_eq!(table.status.code(), Some(0));
    if here.is_empty() {
        assert!(
            common::stdout(&table).starts_with("No GPU found."),
            "{}",
            common::stdout(&table)
        );
    }
}

/// `models --here`, whatever this machine has: exit 0, one answer per kind of catalog GPU
/// found, and the hardware report beside it.
#[test]
fn the_binary_answers_models_here() {
    let output = common::deployfit(&["models", "--here", "--format", "json"]);
    assert_eq!(output.status.code(), Some(0));
    let report = common::json(&output);
    let here: Vec<&str> = report["hardware"]["gpus"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|g| g["catalog"].as_str())
        .collect();
    let answered = report["gpus"].as_object().unwrap();
    for (gpu, rows) in answered {
        assert!(here.contains(&gpu.as_str()), "{report}");
        assert!(rows.as_array().is_some_and(|r| !r.is_empty()), "{report}");
    }
    assert_eq!(answered.is_empty(), here.is_empty(), "{report}");
    assert_eq!(
        common::deployfit(&["models", "--here", "--gpu", "rtx_4090"])
            .status
            .code(),
        Some(2),
        "--here and --gpu conflict"
    );
}
