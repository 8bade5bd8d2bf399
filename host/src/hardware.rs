//! `deployfit hardware`: which GPUs this machine has, and which catalog entry each one is.
//!
//! Detection reads the output of the vendors' tools (`nvidia-smi`, `rocm-smi`, macOS's
//! `system_profiler` and `sysctl`) and Linux's `/proc/meminfo`. The parsers are pure
//! functions of the tools' text, so that tests feed them recorded outputs; the real
//! [`SystemProbe`] runs each tool with a fixed argv (no shell), a timeout and a bound on
//! its output. A tool that is not installed means no GPU of that kind, never an error.

use std::collections::BTreeSet;
use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde::Serialize;

/// How long one tool may run before it is killed.
pub const TOOL_TIMEOUT: Duration = Duration::from_secs(5);
/// The most bytes of a tool's output (or of `/proc/meminfo`) that are read; more is an
/// error. A 1 MiB CSV holds thousands of GPUs.
pub const MAX_TOOL_OUTPUT: usize = 1 << 20;
/// The most GPUs one tool may report; more is an error (the largest single hosts hold
/// 8 to 16 GPUs, so 256 is generous).
pub const MAX_GPUS: usize = 256;
/// The most characters of a GPU name that are kept.
pub const MAX_NAME_CHARS: usize = 200;
/// The largest GPU core count taken from a tool (the largest Apple GPU has 80).
pub const MAX_GPU_CORES: u64 = 4096;

/// The tools a probe runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Tool {
    NvidiaSmi,
    RocmSmi,
    SystemProfiler,
    SysctlMemsize,
}

impl Tool {
    /// The fixed command line of each tool.
    pub fn argv(self) -> &'static [&'static str] {
        match self {
            // Fields and flags: `nvidia-smi --help-query-gpu`; `nounits` prints
            // memory.total in MiB.
            Tool::NvidiaSmi => &[
                "nvidia-smi",
                "--query-gpu=name,memory.total,pci.bus_id,driver_version",
                "--format=csv,noheader,nounits",
            ],
            Tool::RocmSmi => &[
                "rocm-smi",
                "--showproductname",
                "--showmeminfo",
                "vram",
                "--json",
            ],
            Tool::SystemProfiler => &["system_profiler", "SPDisplaysDataType", "-json"],
            Tool::SysctlMemsize => &["sysctl", "-n", "hw.memsize"],
        }
    }

    /// The tool's program name, as reports name it.
    pub fn name(self) -> &'static str {
        self.argv()[0]
    }
}

/// What running a tool gave.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToolRun {
    /// The tool is not installed (or not for this system).
    NotFound,
    /// It ran but failed: a non-zero exit, a timeout, too much output.
    Failed(String),
    /// Its standard output.
    Output(String),
}

/// Where detection gets its facts: the real machine ([`SystemProbe`]) or recorded
/// outputs (tests).
pub trait Probe {
    /// Runs a tool.
    fn run(&self, tool: Tool) -> ToolRun;
    /// The text of `/proc/meminfo`, when there is one.
    fn meminfo(&self) -> Option<String>;
    /// The PCI vendor ids of the display devices Linux lists in `/sys/class/drm/card*`
    /// (`0x10de`), to say when a GPU is there but its tool is not.
    fn pci_display_vendors(&self) -> Vec<String> {
        Vec::new()
    }
}

/// The most `/sys/class/drm` entries looked at.
const MAX_DRM_ENTRIES: usize = 256;

/// PCI vendor ids (the PCI-SIG registry, as listed in pci.ids: 10de NVIDIA Corporation,
/// 1002 Advanced Micro Devices, Inc. [AMD/ATI]) and the tool that reports their GPUs.
const PCI_VENDORS: &[(&str, &str, Tool)] = &[
    ("0x10de", "an NVIDIA", Tool::NvidiaSmi),
    ("0x1002", "an AMD", Tool::RocmSmi),
];

/// The probe of the machine this runs on.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemProbe;

impl Probe for SystemProbe {
    fn run(&self, tool: Tool) -> ToolRun {
        let macos_only = matches!(tool, Tool::SystemProfiler | Tool::SysctlMemsize);
        if macos_only && !cfg!(target_os = "macos") {
            return ToolRun::NotFound;
        }
        run_tool(tool.argv(), TOOL_TIMEOUT)
    }

    fn meminfo(&self) -> Option<String> {
        if !cfg!(target_os = "linux") {
            return None;
        }
        let file = std::fs::File::open("/proc/meminfo").ok()?;
        let mut bytes = Vec::new();
        file.take(MAX_TOOL_OUTPUT as u64 + 1)
            .read_to_end(&mut bytes)
            .ok()?;
        if bytes.len() > MAX_TOOL_OUTPUT {
            return None;
        }
        String::from_utf8(bytes).ok()
    }

    fn pci_display_vendors(&self) -> Vec<String> {
        if !cfg!(target_os = "linux") {
            return Vec::new();
        }
        let Ok(entries) = std::fs::read_dir("/sys/class/drm") else {
            return Vec::new();
        };
        let mut vendors = Vec::new();
        for entry in entries.take(MAX_DRM_ENTRIES).flatten() {
            let name = entry.file_name();
            let Some(name) = name.to_str() else {
                continue;
            };
            // `card0` is a device; `card0-HDMI-A-1` one of its connectors.
            let is_card = name
                .strip_prefix("card")
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
            if !is_card {
                continue;
            }
            let Ok(file) = std::fs::File::open(entry.path().join("device/vendor")) else {
                continue;
            };
            let mut bytes = Vec::new();
            if file.take(64).read_to_end(&mut bytes).is_ok()
                && let Ok(text) = String::from_utf8(bytes)
            {
                vendors.push(text.trim().to_ascii_lowercase());
            }
        }
        vendors
    }
}

/// Runs `argv` (no shell) with standard input closed and standard error discarded; kills
/// it after `timeout`; reads at most [`MAX_TOOL_OUTPUT`] bytes of its output.
pub fn run_tool(argv: &[&str], timeout: Duration) -> ToolRun {
    let Some((program, args)) = argv.split_first() else {
        return ToolRun::NotFound;
    };
    let mut child = match Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
    {
        Ok(child) => child,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return ToolRun::NotFound,
        Err(error) => return ToolRun::Failed(format!("could not start `{program}`: {error}")),
    };
    let Some(stdout) = child.stdout.take() else {
        let _ = child.kill();
        let _ = child.wait();
        return ToolRun::Failed(format!("`{program}`: no output pipe"));
    };
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let result = stdout
            .take(MAX_TOOL_OUTPUT as u64 + 1)
            .read_to_end(&mut bytes)
            .map(|_| bytes);
        let _ = sender.send(result);
    });
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() >= timeout => {
                let _ = child.kill();
                let _ = child.wait();
                return ToolRun::Failed(format!(
                    "`{program}` did not finish in {} s",
                    timeout.as_secs()
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(error) => {
                let _ = child.kill();
                let _ = child.wait();
                return ToolRun::Failed(format!("`{program}`: {error}"));
            }
        }
    };
    // A child the tool left behind may hold the pipe open: wait what is left of the
    // timeout for the output, no more.
    let left = timeout.saturating_sub(start.elapsed()) + Duration::from_millis(100);
    let bytes = match receiver.recv_timeout(left) {
        Ok(Ok(bytes)) => bytes,
        Ok(Err(error)) => return ToolRun::Failed(format!("`{program}`: {error}")),
        Err(_) => {
            return ToolRun::Failed(format!("`{program}`: its output did not end in time"));
        }
    };
    if bytes.len() > MAX_TOOL_OUTPUT {
        return ToolRun::Failed(format!(
            "`{program}` printed more than {MAX_TOOL_OUTPUT} bytes"
        ));
    }
    if !status.success() {
        return ToolRun::Failed(format!("`{program}` exited with {status}"));
    }
    match String::from_utf8(bytes) {
        Ok(text) => ToolRun::Output(text),
        Err(_) => ToolRun::Failed(format!("`{program}` printed text that is not UTF-8")),
    }
}

/// A GPU's maker.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Vendor {
    Nvidia,
    Amd,
    Apple,
    Intel,
    Unknown,
}

impl Vendor {
    pub fn as_str(self) -> &'static str {
        match self {
            Vendor::Nvidia => "nvidia",
            Vendor::Amd => "amd",
            Vendor::Apple => "apple",
            Vendor::Intel => "intel",
            Vendor::Unknown => "unknown",
        }
    }
}

/// One GPU a tool reported.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DetectedGpu {
    /// The name as the tool prints it (at most [`MAX_NAME_CHARS`] characters).
    pub name: String,
    /// Its memory in bytes; for unified memory (Apple), the machine's.
    pub memory_bytes: Option<u64>,
    pub vendor: Vendor,
    /// The tool that reported it.
    pub source: &'static str,
    pub pci_bus_id: Option<String>,
    pub driver_version: Option<String>,
    /// Whether its memory is the host's (Apple silicon).
    pub unified_memory: bool,
    /// Its GPU core count, where the tool reports one: system_profiler's `sppci_cores`
    /// ("Total Number of Cores" in its text output) for an Apple GPU, which tells the
    /// binned chips apart (an M2 Pro has 16 or 19).
    pub gpu_cores: Option<u32>,
}

/// A short printable field: control characters dropped, at most [`MAX_NAME_CHARS`]
/// characters (cut at a character, never inside one).
fn clean(text: &str) -> String {
    text.trim()
        .chars()
        .filter(|c| !c.is_control())
        .take(MAX_NAME_CHARS)
        .collect::<String>()
        .trim()
        .to_string()
}

fn check_size(tool: &str, text: &str) -> Result<(), String> {
    if text.len() > MAX_TOOL_OUTPUT {
        return Err(format!(
            "{tool}: output of {} bytes, more than {MAX_TOOL_OUTPUT}",
            text.len()
        ));
    }
    Ok(())
}

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

/// Parses `nvidia-smi --query-gpu=name,memory.total,pci.bus_id,driver_version
/// --format=csv,noheader,nounits`: one line per GPU, fields separated by `, `,
/// memory.total in MiB (`nvidia-smi --help-query-gpu`), `[N/A]` or `[Not Supported]`
/// where a field is unknown.
pub fn parse_nvidia_smi(text: &str) -> Result<Vec<DetectedGpu>, String> {
    check_size("nvidia-smi", text)?;
    let mut gpus = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if gpus.len() == MAX_GPUS {
            return Err(format!("nvidia-smi: more than {MAX_GPUS} GPUs"));
        }
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        if fields.len() < 4 {
            return Err(format!(
                "nvidia-smi: line {}: expected 4 fields (name, memory, bus id, driver), found {}",
                index + 1,
                fields.len()
            ));
        }
        // A name with a comma (none known) keeps its parts: the last 3 fields are fixed.
        let split = fields.len() - 3;
        let name = clean(&fields[..split].join(","));
        if name.is_empty() {
            return Err(format!("nvidia-smi: line {}: empty name", index + 1));
        }
        let memory = fields[split];
        let memory_bytes = if memory.starts_with('[') || memory.eq_ignore_ascii_case("N/A") {
            None
        } else {
            let mib: u64 = memory.parse().map_err(|_| {
                format!(
                    "nvidia-smi: line {}: memory `{}` is not a number of MiB",
                    index + 1,
                    clean(memory)
                )
            })?;
            Some(mib.checked_mul(MIB).ok_or_else(|| {
                format!("nvidia-smi: line {}: memory {mib} MiB overflows", index + 1)
            })?)
        };
        let optional = |field: &str| {
            let field = clean(field);
            (!field.is_empty() && !field.starts_with('[')).then_some(field)
        };
        gpus.push(DetectedGpu {
            name,
            memory_bytes,
            vendor: Vendor::Nvidia,
            source: Tool::NvidiaSmi.name(),
            pci_bus_id: optional(fields[split + 1]),
            driver_version: optional(fields[split + 2]),
            unified_memory: false,
            gpu_cores: None,
        });
    }
    Ok(gpus)
}

/// A field of a JSON object by any of `keys`, compared without case (rocm-smi writes
/// `Card series` in some versions and `Card Series` in others).
fn field<'a>(
    object: &'a serde_json::Map<String, serde_json::Value>,
    keys: &[&str],
) -> Option<&'a serde_json::Value> {
    keys.iter().find_map(|wanted| {
        object
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(wanted))
            .map(|(_, value)| value)
    })
}

fn as_text(value: &serde_json::Value) -> Option<String> {
    match value {
        serde_json::Value::String(text) => Some(clean(text)).filter(|t| !t.is_empty()),
        _ => None,
    }
}

fn as_u64(value: &serde_json::Value) -> Option<u64> {
    match value {
        serde_json::Value::String(text) => text.trim().parse().ok(),
        serde_json::Value::Number(number) => number.as_u64(),
        _ => None,
    }
}

/// The card's index in a rocm-smi key (`card0` → 0), for ordering.
fn card_index(key: &str) -> Option<u32> {
    key.strip_prefix("card")?.parse().ok()
}

/// Parses `rocm-smi --showproductname --showmeminfo vram --json`: an object with one
/// object per card (`"card0": {"Card Series": "...", "VRAM Total Memory (B)": "..."}`,
/// values as strings; key case differs between ROCm versions), and possibly a `system`
/// object, skipped.
pub fn parse_rocm_smi(text: &str) -> Result<Vec<DetectedGpu>, String> {
    check_size("rocm-smi", text)?;
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("rocm-smi: not JSON: {e}"))?;
    let serde_json::Value::Object(cards) = value else {
        return Err("rocm-smi: expected a JSON object of cards".into());
    };
    let mut keyed: Vec<(u32, &serde_json::Map<String, serde_json::Value>)> = Vec::new();
    for (key, card) in &cards {
        let (Some(index), serde_json::Value::Object(card)) = (card_index(key), card) else {
            continue;
        };
        if keyed.len() == MAX_GPUS {
            return Err(format!("rocm-smi: more than {MAX_GPUS} GPUs"));
        }
        keyed.push((index, card));
    }
    keyed.sort_by_key(|(index, _)| *index);
    let mut gpus = Vec::new();
    for (index, card) in keyed {
        // `Card Series` is the marketing name on current ROCm; older ones print a hex
        // device id there, so a name that is only a hex id gives way to `Card Model`.
        let names = ["Card Series", "Market Name", "Card Model", "Card SKU"];
        let name = names
            .iter()
            .filter_map(|key| field(card, &[key]).and_then(as_text))
            .find(|name| !name.starts_with("0x"))
            .or_else(|| {
                names
                    .iter()
                    .find_map(|key| field(card, &[key]).and_then(as_text))
            })
            .unwrap_or_else(|| format!("AMD GPU card{index}"));
        let memory_bytes = field(card, &["VRAM Total Memory (B)"]).and_then(as_u64);
        gpus.push(DetectedGpu {
            name,
            memory_bytes,
            vendor: Vendor::Amd,
            source: Tool::RocmSmi.name(),
            pci_bus_id: field(card, &["PCI Bus"]).and_then(as_text),
            driver_version: field(card, &["Driver version"]).and_then(as_text),
            unified_memory: false,
            gpu_cores: None,
        });
    }
    Ok(gpus)
}

/// Parses `sysctl -n hw.memsize`: the machine's memory in bytes, one decimal integer.
pub fn parse_sysctl_memsize(text: &str) -> Result<u64, String> {
    check_size("sysctl", text)?;
    text.trim()
        .parse()
        .map_err(|_| "sysctl hw.memsize: not a number of bytes".to_string())
}

/// A size as system_profiler prints a discrete GPU's VRAM: `8 GB`, `1536 MB` (binary
/// units: a Radeon Pro 5500M's 8 GB is 8192 MiB).
fn parse_vram(text: &str) -> Option<u64> {
    let mut parts = text.split_whitespace();
    let number: u64 = parts.next()?.parse().ok()?;
    let unit = match parts.next()?.to_ascii_uppercase().as_str() {
        "GB" => GIB,
        "MB" => MIB,
        _ => return None,
    };
    number.checked_mul(unit)
}

fn vendor_of(text: &str) -> Vendor {
    let lower = text.to_ascii_lowercase();
    if lower.contains("apple") {
        Vendor::Apple
    } else if lower.contains("nvidia") {
        Vendor::Nvidia
    } else if lower.contains("amd") || lower.contains("radeon") {
        Vendor::Amd
    } else if lower.contains("intel") {
        Vendor::Intel
    } else {
        Vendor::Unknown
    }
}

/// Parses `system_profiler SPDisplaysDataType -json`: `{"SPDisplaysDataType": [ ... ]}`,
/// one object per GPU, the name in `sppci_model` (or `_name`), the vendor in
/// `spdisplays_vendor` (`sppci_vendor_Apple`), a discrete GPU's memory in
/// `spdisplays_vram`. An Apple GPU's memory is the machine's (`memsize`, from
/// `sysctl hw.memsize`): unified memory; its core count is `sppci_cores` (`"19"`, the
/// text output's "Total Number of Cores: 19").
pub fn parse_system_profiler(text: &str, memsize: Option<u64>) -> Result<Vec<DetectedGpu>, String> {
    check_size("system_profiler", text)?;
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("system_profiler: not JSON: {e}"))?;
    let Some(items) = value.get("SPDisplaysDataType").and_then(|v| v.as_array()) else {
        return Err("system_profiler: no `SPDisplaysDataType` list".into());
    };
    if items.len() > MAX_GPUS {
        return Err(format!("system_profiler: more than {MAX_GPUS} GPUs"));
    }
    let mut gpus = Vec::new();
    for item in items {
        let Some(item) = item.as_object() else {
            continue;
        };
        let Some(name) = field(item, &["sppci_model", "_name"]).and_then(as_text) else {
            continue;
        };
        let vendor_text = field(item, &["spdisplays_vendor"])
            .and_then(as_text)
            .unwrap_or_default();
        let vendor = match vendor_of(&vendor_text) {
            Vendor::Unknown => vendor_of(&name),
            vendor => vendor,
        };
        let unified = vendor == Vendor::Apple;
        // A core count of 0 or past MAX_GPU_CORES is no count.
        let gpu_cores = if unified {
            field(item, &["sppci_cores"])
                .and_then(as_u64)
                .filter(|cores| (1..=MAX_GPU_CORES).contains(cores))
                .map(|cores| cores as u32)
        } else {
            None
        };
        let memory_bytes = if unified {
            memsize
        } else {
            field(item, &["spdisplays_vram", "_spdisplays_vram"])
                .and_then(as_text)
                .and_then(|t| parse_vram(&t))
        };
        gpus.push(DetectedGpu {
            name,
            memory_bytes,
            vendor,
            source: Tool::SystemProfiler.name(),
            pci_bus_id: None,
            driver_version: None,
            unified_memory: unified,
            gpu_cores,
        });
    }
    Ok(gpus)
}

/// Parses Linux's `/proc/meminfo`: `MemTotal:  131891404 kB`, in KiB (proc(5): the
/// kernel prints these fields shifted by 10, fs/proc/meminfo.c).
pub fn parse_meminfo(text: &str) -> Result<u64, String> {
    check_size("/proc/meminfo", text)?;
    let line = text
        .lines()
        .find_map(|line| line.strip_prefix("MemTotal:"))
        .ok_or("/proc/meminfo: no MemTotal line")?;
    let mut parts = line.split_whitespace();
    let kib: u64 = parts
        .next()
        .and_then(|n| n.parse().ok())
        .ok_or("/proc/meminfo: MemTotal is not a number")?;
    if parts.next() != Some("kB") {
        return Err("/proc/meminfo: MemTotal is not in kB".into());
    }
    kib.checked_mul(1024)
        .ok_or_else(|| "/proc/meminfo: MemTotal overflows".to_string())
}

/// What the tools found, before the catalog.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Detection {
    pub gpus: Vec<DetectedGpu>,
    pub host_memory_bytes: Option<u64>,
    pub notes: Vec<String>,
}

/// Asks every tool; a tool that is missing adds nothing, one that fails or prints what
/// cannot be read adds a note.
pub fn detect(probe: &dyn Probe) -> Detection {
    let mut detection = Detection::default();
    let mut missing = Vec::new();
    let mut run = |tool: Tool, notes: &mut Vec<String>| match probe.run(tool) {
        ToolRun::Output(text) => Some(text),
        ToolRun::NotFound => {
            missing.push(tool.name());
            None
        }
        ToolRun::Failed(why) => {
            notes.push(why);
            None
        }
    };
    let parsed = |result: Result<Vec<DetectedGpu>, String>, detection: &mut Detection| match result
    {
        Ok(gpus) => detection.gpus.extend(gpus),
        Err(why) => detection.notes.push(why),
    };
    if let Some(text) = run(Tool::NvidiaSmi, &mut detection.notes) {
        parsed(parse_nvidia_smi(&text), &mut detection);
    }
    if let Some(text) = run(Tool::RocmSmi, &mut detection.notes) {
        parsed(parse_rocm_smi(&text), &mut detection);
    }
    let profiler = run(Tool::SystemProfiler, &mut detection.notes);
    let meminfo = probe.meminfo();
    // hw.memsize is the host memory on macOS, and an Apple GPU's memory.
    let memsize = if profiler.is_some() || meminfo.is_none() {
        match run(Tool::SysctlMemsize, &mut detection.notes) {
            Some(text) => match parse_sysctl_memsize(&text) {
                Ok(bytes) => Some(bytes),
                Err(why) => {
                    detection.notes.push(why);
                    None
                }
            },
            None => None,
        }
    } else {
        None
    };
    if let Some(text) = profiler {
        parsed(parse_system_profiler(&text, memsize), &mut detection);
    }
    detection.host_memory_bytes = match meminfo {
        Some(text) => match parse_meminfo(&text) {
            Ok(bytes) => Some(bytes),
            Err(why) => {
                detection.notes.push(why);
                memsize
            }
        },
        None => memsize,
    };
    if detection.gpus.is_empty() {
        let vendors = probe.pci_display_vendors();
        for (id, which, tool) in PCI_VENDORS {
            if vendors.iter().any(|v| v == id) && missing.contains(&tool.name()) {
                detection.notes.push(format!(
                    "/sys/class/drm lists {which} GPU (PCI vendor {id}) but `{}` is not \
                     available: install the driver's tools to see it",
                    tool.name()
                ));
            }
        }
        let missing: Vec<&str> = missing
            .into_iter()
            .filter(|tool| *tool != Tool::SysctlMemsize.name())
            .collect();
        let mut note = "no GPU found".to_string();
        if !missing.is_empty() {
            let names: Vec<String> = missing.iter().map(|tool| format!("`{tool}`")).collect();
            let listed = match names.split_last() {
                Some((last, [])) => format!("{last} is"),
                Some((last, rest)) => format!("{} and {last} are", rest.join(", ")),
                None => String::new(),
            };
            note.push_str(&format!(": {listed} not available"));
        }
        detection.notes.push(note);
    }
    detection
}

/// A catalog GPU, as matching needs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CatalogGpu {
    /// The entry's name (`h100_sxm5`).
    pub entry: String,
    /// Its display `name` (`"H100 SXM5"`).
    pub name: Option<String>,
    pub memory_bytes: Option<u64>,
    /// Its `vendor` word (`nvidia`).
    pub vendor: Option<String>,
    /// Its `sms`: SMs, compute units, Xe-cores, or an Apple GPU's cores, which is what a
    /// detected GPU's [`DetectedGpu::gpu_cores`] is compared with.
    pub cores: Option<u32>,
}

/// A name's tokens, split by kind: what names the product (`h100`, `rtx`, `4090`, `ti`),
/// sizes (`80gb`), form factors (`sxm`, `pcie`, `nvl`, `oam`) and memory technologies
/// (`hbm3`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Tokens {
    core: BTreeSet<String>,
    sizes: BTreeSet<String>,
    forms: BTreeSet<String>,
    memory_kinds: BTreeSet<String>,
}

/// Brand words nvidia-smi, rocm-smi and system_profiler put before the product name
/// (`NVIDIA GeForce RTX 4090`, `AMD Instinct MI300X`, `Apple M2 Max`) and that the
/// catalog writes or not (`Tesla T4`, `Radeon Instinct MI300`).
const BRAND_WORDS: &[&str] = &[
    "nvidia", "geforce", "amd", "radeon", "apple", "tesla", "instinct", "ati",
];

fn is_memory_kind(token: &str) -> bool {
    token.starts_with("hbm") || token.starts_with("gddr") || token.starts_with("lpddr")
}

/// Form factors: sxm2/sxm4/sxm5 are one family (`sxm`), as are the others.
fn form_of(token: &str) -> Option<String> {
    if token.starts_with("sxm") && token[3..].chars().all(|c| c.is_ascii_digit()) {
        return Some("sxm".into());
    }
    matches!(token, "pcie" | "nvl" | "oam").then(|| token.to_string())
}

/// Lowercases a name, turns punctuation into spaces, drops brand words and sorts the
/// tokens by kind; `96 GB` becomes the size `96gb`.
fn tokens(name: &str) -> Tokens {
    let lower: String = name
        .chars()
        .take(MAX_NAME_CHARS)
        .map(|c| {
            if c.is_alphanumeric() || c == '.' {
                c.to_ascii_lowercase()
            } else {
                ' '
            }
        })
        .collect();
    let words: Vec<&str> = lower.split_whitespace().collect();
    let mut out = Tokens::default();
    let mut i = 0;
    while i < words.len() {
        let word = words[i].trim_matches('.');
        i += 1;
        if word.is_empty() || BRAND_WORDS.contains(&word) {
            continue;
        }
        let is_number = word.chars().all(|c| c.is_ascii_digit() || c == '.');
        // `19-core GPU` in a display name (`Apple M2 Pro 19-core GPU 16GB`) is the core
        // count, which the entry's `sms` states: not a product word.
        if is_number && words.get(i) == Some(&"core") {
            i += 1;
            // The display name's word, not the `device` symbol.
            if words.get(i) == Some(&"gpu") {
                i += 1;
            }
            continue;
        }
        if is_number && words.get(i).is_some_and(|next| *next == "gb") {
            out.sizes.insert(format!("{word}gb"));
            i += 1;
        } else if let Some(number) = word.strip_suffix("gb")
            && !number.is_empty()
            && number.chars().all(|c| c.is_ascii_digit() || c == '.')
        {
            out.sizes.insert(word.to_string());
        } else if let Some(form) = form_of(word) {
            out.forms.insert(form);
        } else if is_memory_kind(word) {
            out.memory_kinds.insert(word.to_string());
        } else {
            out.core.insert(word.to_string());
        }
    }
    out
}

/// Whether two memory sizes are within 5 % of each other (nvidia-smi's 81559 MiB for an
/// H100 80GB is 79.6 GiB; 143771 MiB for an H200 is 140.4 GiB against 141 GiB).
pub fn same_memory(a: u64, b: u64) -> bool {
    let (a, b) = (a as u128, b as u128);
    a.abs_diff(b) * 20 <= a.max(b)
}

/// Which catalog entry a detected GPU is, and how that was decided.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CatalogMatch {
    pub entry: String,
    /// `name and memory`, `name` (the catalog's memory is not known, or the GPU's),
    /// `name; memory differs`, with `and GPU cores` when the GPU's reported core count is
    /// the entry's (`name, memory and GPU cores`), and `, SXM inferred` when the form
    /// factor was.
    pub matched_by: String,
    /// The other entries that matched as well (before a form factor was inferred).
    pub alternatives: Vec<String>,
}

/// Maps a detected GPU to a catalog entry: the product words of its name must equal
/// those of the entry's display name or entry name (brand words, sizes, core counts, form
/// factors and memory technologies aside); an entry with another form factor, whose name
/// states a size the GPU does not have, or whose `sms` differs from the GPU's reported core
/// count (an Apple GPU's), is out. Among several, equal memory wins, then an equal form
/// factor, then an equal core count; a data-center name with no form factor is the SXM board (nvidia-smi
/// writes `PCIe` and `NVL` in the others' names: `NVIDIA H100 PCIe`, `NVIDIA H100 NVL`,
/// but `NVIDIA H100 80GB HBM3` and `NVIDIA H200` for the SXM ones).
pub fn match_gpu(gpu: &DetectedGpu, catalog: &[CatalogGpu]) -> Option<CatalogMatch> {
    let wanted = tokens(&gpu.name);
    if wanted.core.is_empty() {
        return None;
    }
    // (score, entry, whether the memory agrees when both are known)
    let mut scored: Vec<(u32, &CatalogGpu, Option<bool>)> = Vec::new();
    for entry in catalog {
        if let Some(vendor) = &entry.vendor
            && gpu.vendor != Vendor::Unknown
            && vendor != gpu.vendor.as_str()
        {
            continue;
        }
        let display = entry.name.as_deref().map(tokens).unwrap_or_default();
        let by_entry = tokens(&entry.entry);
        if display.core != wanted.core && by_entry.core != wanted.core {
            continue;
        }
        let forms: BTreeSet<&String> = display.forms.iter().chain(&by_entry.forms).collect();
        if !wanted.forms.is_empty()
            && !forms.is_empty()
            && !wanted.forms.iter().any(|f| forms.contains(f))
        {
            continue;
        }
        let memory = match (gpu.memory_bytes, entry.memory_bytes) {
            (Some(a), Some(b)) => Some(same_memory(a, b)),
            _ => None,
        };
        let names_size = !display.sizes.is_empty() || !by_entry.sizes.is_empty();
        if names_size && memory == Some(false) {
            continue;
        }
        let cores = match (gpu.gpu_cores, entry.cores) {
            (Some(a), Some(b)) => Some(a == b),
            _ => None,
        };
        if cores == Some(false) {
            continue;
        }
        let mut score = 0;
        if memory == Some(true) {
            score += 4;
        }
        if wanted.forms.iter().any(|f| forms.contains(f)) {
            score += 2;
        }
        if cores == Some(true) {
            score += 1;
        }
        scored.push((score, entry, memory));
    }
    let best = scored.iter().map(|(score, ..)| *score).max()?;
    let mut top: Vec<&(u32, &CatalogGpu, Option<bool>)> =
        scored.iter().filter(|(score, ..)| *score == best).collect();
    let mut tied: Vec<String> = top.iter().map(|(_, e, _)| e.entry.clone()).collect();
    let mut inferred = false;
    if top.len() > 1 && wanted.forms.is_empty() {
        let sxm: Vec<_> = top
            .iter()
            .copied()
            .filter(|(_, entry, _)| {
                let display = entry.name.as_deref().map(tokens).unwrap_or_default();
                display.forms.contains("sxm") || tokens(&entry.entry).forms.contains("sxm")
            })
            .collect();
        if !sxm.is_empty() && sxm.len() < top.len() {
            top = sxm;
            inferred = true;
        }
    }
    top.sort_by(|a, b| a.1.entry.cmp(&b.1.entry));
    let (_, chosen, memory) = top[0];
    let cores_agree = gpu.gpu_cores.is_some() && chosen.cores == gpu.gpu_cores;
    let mut matched_by = match (memory, cores_agree) {
        (Some(true), false) => "name and memory".to_string(),
        (Some(true), true) => "name, memory and GPU cores".to_string(),
        (Some(false), false) => "name; memory differs".to_string(),
        (Some(false), true) => "name and GPU cores; memory differs".to_string(),
        (None, false) => "name".to_string(),
        (None, true) => "name and GPU cores".to_string(),
    };
    if inferred {
        matched_by.push_str(", SXM inferred");
    }
    Some(CatalogMatch {
        entry: chosen.entry.clone(),
        matched_by,
        alternatives: {
            tied.retain(|e| *e != chosen.entry);
            tied.sort();
            tied
        },
    })
}

/// One GPU of the report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GpuReport {
    pub name: String,
    pub memory_bytes: Option<u64>,
    pub vendor: Vendor,
    /// The tool that reported it.
    pub source: String,
    pub pci_bus_id: Option<String>,
    pub driver_version: Option<String>,
    pub unified_memory: bool,
    /// The catalog entry it is, if any.
    pub catalog: Option<String>,
    pub matched_by: Option<String>,
    /// Other catalog entries that matched as well as [`GpuReport::catalog`].
    pub alternatives: Vec<String>,
    /// Its GPU core count, where the tool reports one (Apple GPUs).
    pub gpu_cores: Option<u32>,
}

/// What `deployfit hardware` prints.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HardwareReport {
    pub gpus: Vec<GpuReport>,
    pub host_memory_bytes: Option<u64>,
    /// Whether a GPU shares the host's memory (Apple silicon).
    pub unified_memory: bool,
    pub notes: Vec<String>,
}

/// Maps every detected GPU to the catalog.
pub fn report(detection: Detection, catalog: &[CatalogGpu]) -> HardwareReport {
    let gpus: Vec<GpuReport> = detection
        .gpus
        .into_iter()
        .map(|gpu| {
            let found = match_gpu(&gpu, catalog);
            GpuReport {
                catalog: found.as_ref().map(|m| m.entry.clone()),
                matched_by: found.as_ref().map(|m| m.matched_by.clone()),
                alternatives: found.map(|m| m.alternatives).unwrap_or_default(),
                name: gpu.name,
                memory_bytes: gpu.memory_bytes,
                vendor: gpu.vendor,
                source: gpu.source.to_string(),
                pci_bus_id: gpu.pci_bus_id,
                driver_version: gpu.driver_version,
                unified_memory: gpu.unified_memory,
                gpu_cores: gpu.gpu_cores,
            }
        })
        .collect();
    HardwareReport {
        unified_memory: gpus.iter().any(|g| g.unified_memory),
        gpus,
        host_memory_bytes: detection.host_memory_bytes,
        notes: detection.notes,
    }
}

/// A probe of recorded outputs, for tests and for replaying another machine's outputs.
#[derive(Clone, Debug, Default)]
pub struct RecordedProbe {
    pub nvidia_smi: Option<String>,
    pub rocm_smi: Option<String>,
    pub system_profiler: Option<String>,
    pub sysctl_memsize: Option<String>,
    pub meminfo: Option<String>,
    /// What [`Probe::pci_display_vendors`] returns.
    pub pci_vendors: Vec<String>,
}

impl Probe for RecordedProbe {
    fn run(&self, tool: Tool) -> ToolRun {
        let output = match tool {
            Tool::NvidiaSmi => &self.nvidia_smi,
            Tool::RocmSmi => &self.rocm_smi,
            Tool::SystemProfiler => &self.system_profiler,
            Tool::SysctlMemsize => &self.sysctl_memsize,
        };
        match output {
            Some(text) => ToolRun::Output(text.clone()),
            None => ToolRun::NotFound,
        }
    }

    fn meminfo(&self) -> Option<String> {
        self.meminfo.clone()
    }

    fn pci_display_vendors(&self) -> Vec<String> {
        self.pci_vendors.clone()
    }
}
