//! Models that are not catalog declarations: a Hugging Face id or Ollama tag found in the
//! embedded registry (`deployfit-registry`), or a file — config.json, safetensors, GGUF —
//! read with `deployfit-artifacts`. Each is materialized into a `model` declaration only
//! when a deployment (or a command) names it; [`crate::Workspace`] keeps the generated
//! declarations in one stdlib-like file, [`RESOLVED_MODELS_PATH`], so that everything
//! downstream (names, `extends`, estimates, explain, the IDE) treats them as catalog
//! entries. The names come from the compiler (`deployfit_compiler::external`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use deployfit_artifacts::{self as artifacts, Architecture};
use deployfit_registry::{self as registry, Record, Resolved};

pub use deployfit_compiler::external::{RESOLVED_MODELS_PATH, artifact_path, decl_name, is_path};

/// Where the registry's rows come from, for `source` and the docs.
pub const REGISTRY_SOURCE: &str = "the model registry (hf_models.csv: the llmfit-core 1.1.17 crate's data, from Hugging Face config.json and API metadata)";

/// A model materialized from outside the catalog.
#[derive(Clone, Debug, PartialEq)]
pub struct ExternalModel {
    /// The declaration's name ([`decl_name`]).
    pub name: String,
    /// The declaration, as `.deploy` text.
    pub text: String,
}

/// A registry model for a Hugging Face id or Ollama tag, when the registry knows it.
pub fn from_registry(text: &str, importer: &Path) -> Option<ExternalModel> {
    let resolved = registry::resolve(text)?;
    let name = decl_name(text, importer);
    Some(ExternalModel {
        text: registry_declaration(&name, text, &resolved),
        name,
    })
}

/// The longest wait for one model path's read (a folder's config and every shard's
/// header). Reads are bounded in size and never block on a FIFO or a device, but a file
/// system can still stall (a network mount): past this the model is reported unreadable
/// and the command or the language server goes on; the read finishes, or not, on a thread
/// of its own.
pub const ARTIFACT_READ_LIMIT: Duration = Duration::from_secs(2);

/// [`artifacts::read`] on a thread of its own, waited for at most [`ARTIFACT_READ_LIMIT`].
fn read_bounded(path: &Path) -> Result<Architecture, String> {
    let (sender, receiver) = std::sync::mpsc::channel();
    let owned = path.to_path_buf();
    std::thread::Builder::new()
        .name("deployfit-model-read".into())
        .spawn(move || {
            let _ = sender.send(artifacts::read(&owned));
        })
        .map_err(|e| format!("{}: cannot start a reader ({e})", path.display()))?;
    match receiver.recv_timeout(ARTIFACT_READ_LIMIT) {
        Ok(result) => result.map_err(|e| e.to_string()),
        Err(_) => Err(format!(
            "{}: reading took longer than {} s (a stalled file system?); copy the model's \
             config.json somewhere local and point at it",
            path.display(),
            ARTIFACT_READ_LIMIT.as_secs()
        )),
    }
}

/// A model read from a file, or why it cannot be.
pub fn from_artifact(text: &str, importer: &Path) -> Result<ExternalModel, String> {
    let path = artifact_path(importer, text);
    let arch = read_bounded(&path)?;
    let name = decl_name(text, importer);
    Ok(ExternalModel {
        text: artifact_declaration(&name, text, &path, &arch, None),
        name,
    })
}

/// A model from the local Hugging Face cache (`$HF_HUB_CACHE`, else `$HF_HOME/hub`,
/// else `~/.cache/huggingface/hub`): the newest snapshot's config.json (and weights
/// headers) of `org/name`.
pub fn from_hub_cache(text: &str, importer: &Path) -> Option<ExternalModel> {
    let (org, model) = text.split_once('/')?;
    let ok = |s: &str| {
        !s.is_empty()
            && s.len() <= 96
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
            && s != "."
            && s != ".."
    };
    if !ok(org) || !ok(model) {
        return None;
    }
    let cache = hub_cache()?;
    let snapshots = cache
        .join(format!("models--{org}--{model}"))
        .join("snapshots");
    let newest = std::fs::read_dir(&snapshots)
        .ok()?
        .take(1000)
        .filter_map(Result::ok)
        .filter(|e| e.path().join("config.json").is_file())
        .max_by_key(|e| e.metadata().and_then(|m| m.modified()).ok())?
        .path();
    from_snapshot(
        text,
        importer,
        &newest,
        format!("read from the Hugging Face cache ({})", newest.display()),
    )
    .ok()
}

/// A model from a snapshot folder of the Hugging Face cache (its config.json, and the
/// safetensors index or files beside it), with where the folder came from (`origin`, a
/// note of its `source`).
pub fn from_snapshot(
    text: &str,
    importer: &Path,
    snapshot: &Path,
    origin: String,
) -> Result<ExternalModel, String> {
    let mut arch = read_bounded(snapshot)?;
    arch.notes.insert(0, origin);
    let name = decl_name(text, importer);
    let text = artifact_declaration(&name, text, snapshot, &arch, Some(text));
    Ok(ExternalModel { name, text })
}

fn hub_cache() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("HF_HUB_CACHE") {
        return Some(PathBuf::from(dir));
    }
    if let Some(home) = std::env::var_os("HF_HOME") {
        return Some(PathBuf::from(home).join("hub"));
    }
    std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache/huggingface/hub"))
}

/// Whether a character is one the language refuses in source text (and a terminal would
/// hide or reorder): controls other than newline, zero-width and bidirectional formatting.
fn hidden(c: char) -> bool {
    (c.is_control() && c != '\n')
        || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{feff}')
}

/// Text from a file made safe to write into generated source: each hidden character as
/// `<U+202E>` (the language has no escape for it, and refuses it raw).
fn visible(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if hidden(c) {
            let _ = write!(out, "<U+{:04X}>", u32::from(c));
        } else {
            out.push(c);
        }
    }
    out
}

/// A string literal in `.deploy` syntax: quotes, backslashes, braces and newlines escaped,
/// hidden characters spelled out ([`visible`]).
fn quoted(text: &str) -> String {
    let mut out = String::from("\"");
    for c in visible(text).chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '{' => out.push_str("\\{"),
            '}' => out.push_str("\\}"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Whether an id passes the `hf` field's validation (`org/name`, ASCII letters, digits,
/// `-`, `_`, `.`).
fn valid_hf(id: &str) -> bool {
    id.split_once('/').is_some_and(|(org, name)| {
        [org, name].iter().all(|s| {
            !s.is_empty()
                && s.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        })
    })
}

struct Fields(String);

impl Fields {
    fn number(&mut self, name: &str, value: Option<u64>) {
        if let Some(v) = value.filter(|v| *v > 0) {
            let _ = writeln!(self.0, "    {name} = {v}");
        }
    }
    fn raw(&mut self, name: &str, value: &str) {
        let _ = writeln!(self.0, "    {name} = {value}");
    }
    fn strings(&mut self, name: &str, values: &[String]) {
        if values.is_empty() {
            return;
        }
        let items: Vec<String> = values.iter().map(|v| quoted(v)).collect();
        let _ = writeln!(self.0, "    {name} = [{}]", items.join(", "));
    }
    fn text(&mut self, name: &str, value: &str) {
        self.raw(name, &quoted(value));
    }
}

/// The ids a registry resolution passed through (the id written, the original of a
/// re-upload, the base of a quantized re-upload, an Ollama tag's id, the row), each also
/// without a quantization suffix: the compiler matches them against the catalog's
/// models, so that a curated entry owns every id of its weights.
fn registry_aliases(written: &str, resolved: &Resolved) -> Vec<String> {
    use registry::Step;
    let mut ids: Vec<String> = vec![written.to_string(), resolved.record.id.to_string()];
    for step in &resolved.steps {
        match step {
            Step::Exact | Step::OrgRenamed { .. } => {}
            Step::CaseInsensitive { id, .. } => ids.push(id.to_string()),
            Step::OriginalFromReupload { original, reupload } => {
                ids.push(original.clone());
                ids.push(reupload.to_string());
            }
            Step::QuantizedReupload { base, .. } => ids.push(base.to_string()),
            Step::OllamaTag { id, .. } => ids.push(id.to_string()),
        }
    }
    let bases: Vec<String> = ids
        .iter()
        .filter_map(|id| registry::unquantized_id(id))
        .collect();
    ids.extend(bases);
    let mut seen = std::collections::BTreeSet::new();
    ids.retain(|id| valid_alias(id) && seen.insert(id.to_ascii_lowercase()));
    ids
}

/// Whether an architecture name (config.json `model_type`, GGUF `general.architecture`)
/// may be written into a generated declaration: 1 to 64 ASCII letters, digits, `_`, `-`
/// or `.` (the file is the user's: nothing else reaches the generated text).
fn valid_architecture(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 64
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

/// Whether a string may be written into a generated `aliases` list: printable ASCII
/// without quotes or braces (ids and tags are), at most 256 bytes.
fn valid_alias(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 256
        && text
            .bytes()
            .all(|b| b.is_ascii_graphic() && !matches!(b, b'"' | b'{' | b'}' | b'\\'))
}

fn registry_declaration(name: &str, written: &str, resolved: &Resolved) -> String {
    let r: &Record = resolved.record;
    let mut f = Fields(String::new());
    if valid_hf(r.id) {
        f.text("hf", r.id);
    }
    if !written.contains('/') {
        f.text("ollama", written);
    }
    f.strings("aliases", &registry_aliases(written, resolved));
    if valid_architecture(r.architecture) {
        f.text("architecture", r.architecture);
    }
    let shape = r.layout();
    let moe = r.moe_params();
    match moe {
        Some(p) => {
            f.number("params", Some(p.total));
            f.number("active_params", Some(p.active));
        }
        None => {
            f.number("params", r.params);
            if !r.is_moe() {
                f.number("active_params", r.params);
            }
        }
    }
    f.number("layers", r.layers.map(u64::from));
    f.number("hidden", r.hidden.map(u64::from));
    f.number("intermediate", r.intermediate.map(u64::from));
    f.number("heads", r.heads.map(u64::from));
    f.number("kv_heads", r.key_value_heads().map(u64::from));
    let attention = r.attention();
    if attention != registry::Attention::Mla {
        f.number("head_dim", r.head_dim.map(u64::from));
    }
    f.number("vocab", r.vocab.map(u64::from));
    f.number("max_context", r.context_length);
    let window = shape.and_then(|s| s.window.zip(s.local_layers));
    match attention {
        _ if window.is_some() => f.raw("attention", "hybrid"),
        registry::Attention::Gqa => f.raw("attention", "gqa"),
        registry::Attention::Mha => f.raw("attention", "mha"),
        registry::Attention::Mla => f.raw("attention", "mla"),
        registry::Attention::Unknown => {}
    }
    if let Some((window, local)) = window {
        f.number("window", Some(u64::from(window)));
        f.number("local_layers", Some(u64::from(local)));
    }
    if let Some(s) = shape {
        f.number("kv_lora_rank", s.kv_lora_rank.map(u64::from));
        if let Some(rope) = s.qk_rope_dim {
            f.raw("qk_rope_dim", &rope.to_string());
        }
        f.number("linear_layers", s.linear_layers.map(u64::from));
        if let Some(state) = s.linear_state {
            f.raw("linear_state", &format!("{state} B"));
        }
        if moe.is_some() {
            f.number("experts", s.experts.map(u64::from));
            f.number("experts_active", s.experts_active.map(u64::from));
        }
    }
    if let Some(quant) = resolved.format.as_ref().and_then(|q| q.stdlib_quant()) {
        f.raw("default_quant", quant);
    }
    let mut source = String::new();
    for step in &resolved.steps {
        let _ = write!(source, "{step}; ");
    }
    let _ = write!(source, "architecture from {REGISTRY_SOURCE}, row {}", r.id);
    match (shape, moe) {
        (Some(s), Some(p)) => {
            let _ = write!(
                source,
                "; expert layout ({} of {} experts per token in {} of {} layers) that of {}, read from {}{}",
                s.experts_active.unwrap_or(0),
                s.experts.unwrap_or(0),
                s.moe_layers.unwrap_or(0),
                s.layers,
                s.reference,
                s.source,
                if p.total_from_reference {
                    format!(
                        ", total parameters {}'s (the row's own count is not the model's)",
                        s.reference
                    )
                } else {
                    String::new()
                }
            );
        }
        (Some(s), None) => {
            let _ = write!(
                source,
                "; attention layout that of {}, read from {}",
                s.reference, s.source
            );
        }
        _ => {}
    }
    // Where the layout's config.json corrects the bulk row's key/value heads, say so.
    if let Some(s) = shape
        && let Some(kv) = s.kv_heads
        && r.kv_heads != Some(kv)
    {
        let _ = write!(
            source,
            "; {kv} key/value heads, from that config.json (the bulk row has {})",
            r.kv_heads
                .map_or_else(|| "none".to_string(), |n| n.to_string())
        );
    }
    if let Some(format) = &resolved.format {
        let _ = write!(source, "; weights in {format}");
    }
    f.text("name", written);
    f.text("source", &source);
    let missing = r.missing();
    if !missing.is_empty() {
        let text: Vec<String> = missing
            .iter()
            .map(|m| {
                // A row read as a mixture of experts by its size alone says so.
                let why = match (m, r.moe_size_ratio()) {
                    (deployfit_registry::Missing::MoeExpertCounts, Some(ratio)) => format!(
                        "it is a mixture of experts by its size ({:.1} B parameters, {ratio:.1} × what its dense shape of {} layers holds), and the row lacks ",
                        r.params.unwrap_or(0) as f64 / 1e9,
                        r.layers.unwrap_or(0)
                    ),
                    _ => String::new(),
                };
                format!("{why}{}: {}", m.what(), m.how_to_supply())
            })
            .collect();
        f.text("incomplete", &text.join("; "));
    }
    if let Some(license) = r.license {
        f.text("license", license);
    }
    if let Some(date) = r.release_date {
        f.text("released", date);
    }
    format!(
        "/// {} (resolved by deployfit from its model registry)\n// source: {REGISTRY_SOURCE}, row {}\nmodel {name} {{\n{}}}\n",
        visible(written).replace('\n', " "),
        visible(r.id).replace('\n', " "),
        f.0
    )
}

fn artifact_declaration(
    name: &str,
    written: &str,
    path: &Path,
    arch: &Architecture,
    hf: Option<&str>,
) -> String {
    let mut f = Fields(String::new());
    if let Some(id) = hf.filter(|id| valid_hf(id)) {
        f.text("hf", id);
    }
    if let Some(kind) = arch.model_type.as_deref().filter(|k| valid_architecture(k)) {
        f.text("architecture", kind);
    }
    f.number("params", arch.params);
    f.number(
        "active_params",
        arch.active_params
            .or(arch.params.filter(|_| arch.experts.is_none())),
    );
    f.number("layers", arch.layers);
    f.number("hidden", arch.hidden);
    f.number("intermediate", arch.intermediate);
    f.number("heads", arch.heads);
    f.number("kv_heads", arch.kv_heads);
    f.number("head_dim", arch.head_dim);
    f.number("vocab", arch.vocab);
    f.number("max_context", arch.max_context);
    if let Some(attention) = arch.attention {
        f.raw("attention", attention.symbol());
    }
    f.number("window", arch.window);
    if arch.local_layers.is_some() {
        let _ = writeln!(f.0, "    local_layers = {}", arch.local_layers.unwrap_or(0));
    }
    f.number("linear_layers", arch.linear_layers);
    if let Some(state) = arch.linear_state {
        f.raw("linear_state", &format!("{state} B"));
    }
    f.number("kv_lora_rank", arch.kv_lora_rank);
    if let Some(rope) = arch.qk_rope_dim {
        let _ = writeln!(f.0, "    qk_rope_dim = {rope}");
    }
    f.number("experts", arch.experts);
    f.number("experts_active", arch.experts_active);
    let format = crate::formats::file_format(path, arch);
    let quant = format.as_ref().and_then(|f| f.quant);
    if let Some(quant) = quant {
        f.raw("default_quant", quant);
    }
    let mut source = format!("{} of {written}", arch.source);
    if let Some(format) = &format {
        let _ = write!(source, "; {}", format.said);
    }
    for note in &arch.notes {
        let _ = write!(source, "; {note}");
    }
    if let Some(weights) = &arch.weights {
        let parts: Vec<String> = weights
            .by_dtype
            .iter()
            .map(|d| format!("{} {} B", d.dtype, d.bytes))
            .collect();
        if !parts.is_empty() {
            let _ = write!(source, "; weights by type: {}", parts.join(", "));
        }
    }
    f.text("name", written);
    f.text("source", &source);
    let missing = artifact_gaps(arch);
    if !missing.is_empty() {
        f.text("incomplete", &missing.join("; "));
    }
    if let (Some(weights), Some(quant)) = (&arch.weights, quant) {
        let _ = writeln!(
            f.0,
            "    files {{\n        {quant} = {} B\n    }}",
            weights.total_bytes
        );
    }
    format!(
        "/// {} (read by deployfit from the file)\n// source: {}\nmodel {name} {{\n{}}}\n",
        visible(written).replace('\n', " "),
        visible(&path.display().to_string()).replace('\n', " "),
        f.0
    )
}

/// A declaration name for `deployfit import PATH`: the folder's name for a config.json
/// or an index file, else the file's stem, as a valid name (`qwen3_14b`).
pub fn import_name(path: &Path) -> String {
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let base = if file_name == "config.json" || file_name.ends_with(".index.json") {
        path.parent()
            .and_then(Path::file_name)
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default()
    } else {
        path.file_stem()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default()
    };
    let mut name = String::new();
    for c in base.chars().take(64) {
        if c.is_ascii_alphanumeric() {
            name.push(c.to_ascii_lowercase());
        } else if !name.ends_with('_') {
            name.push('_');
        }
    }
    let name = name.trim_matches('_').to_string();
    match name.chars().next() {
        Some(c) if c.is_ascii_alphabetic() => name,
        Some(_) => format!("model_{name}"),
        None => "imported_model".to_string(),
    }
}

/// What a file leaves undetermined that the estimate needs, with how to supply it.
fn artifact_gaps(arch: &Architecture) -> Vec<&'static str> {
    let mut gaps = Vec::new();
    if arch.params.is_none() {
        gaps.push("the parameter count: give the weights (safetensors, GGUF) or set `params`");
    }
    if arch.layers.is_none() {
        gaps.push("the number of layers: set `layers`");
    }
    if arch.experts.is_some() && arch.active_params.is_none() {
        gaps.push("the active parameters of the MoE: set `experts_active` and `active_params`");
    }
    match arch.attention {
        Some(artifacts::Attention::Mla) if arch.kv_lora_rank.is_none() => {
            gaps.push("the MLA latent sizes: set `kv_lora_rank` and `qk_rope_dim`")
        }
        None => {
            gaps.push("the attention layout: set `attention`, `heads`, `kv_heads` and `head_dim`")
        }
        _ => {}
    }
    gaps
}

/// The declaration `deployfit import PATH` prints: the model a file describes, named
/// `name`, with its source.
pub fn import_declaration(path: &Path, name: &str) -> Result<String, String> {
    let arch = read_bounded(path)?;
    let written = path.display().to_string();
    Ok(artifact_declaration(name, &written, path, &arch, None))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_stable_distinct_and_valid() {
        let here = Path::new("/p/a.deploy");
        let a = decl_name("meta-llama/Llama-3.1-8B-Instruct", here);
        assert_eq!(a, decl_name("META-LLAMA/llama-3.1-8b-instruct", here));
        assert!(
            a.starts_with("hub_meta_llama_llama_3_1_8b_instruct_"),
            "{a}"
        );
        assert_ne!(a, decl_name("meta-llama/Llama-3.1-8B", here));
        let p = decl_name("./m/config.json", here);
        assert_ne!(p, decl_name("./m/config.json", Path::new("/q/b.deploy")));
        for name in [a, p, decl_name("ñ/é", here), decl_name("", here)] {
            assert!(
                name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
                "{name}"
            );
            assert!(name.len() < 80);
        }
    }

    #[test]
    fn registry_declarations_parse() {
        let here = Path::new("/p/a.deploy");
        for text in [
            "meta-llama/Llama-3.1-8B-Instruct",
            "llama3.1:8b",
            "deepseek-ai/DeepSeek-V3",
            "Qwen/Qwen2.5-7B-Instruct-AWQ",
        ] {
            let model = from_registry(text, here).expect(text);
            let parsed = crate::syntax::parse(&model.text);
            assert!(
                parsed.errors.is_empty(),
                "{text}: {:?}\n{}",
                parsed.errors,
                model.text
            );
            assert_eq!(parsed.decls.len(), 1);
        }
    }
}
