//! Model artifacts: config.json, safetensors and GGUF headers.
//!
//! [`read`] turns a path (a `config.json`, a `.safetensors` file, a
//! `model.safetensors.index.json`, a `.gguf` file or a model folder) into an [`Architecture`]:
//! only what the file determines, every figure an exact integer. Nothing here reads tensor
//! data; every size, count and length taken from a file is bounded before it is used.
//! Formulas, bounds and sources: `docs/artifacts.md`.

mod config;
mod error;
pub mod file;
mod gguf;
mod safetensors;

use std::fs::File;
use std::io::BufReader;
use std::path::Path;

pub use config::{MAX_CONFIG_BYTES, MAX_DIM, MAX_LAYERS, from_config_json};
pub use error::ArtifactError;
pub use gguf::{
    GGML_TYPES, GgmlType, LLAMA_FTYPES, MAX_GGUF_ARRAY, MAX_GGUF_STRING, MAX_GGUF_TENSORS,
    from_gguf, ggml_type, llama_ftype,
};
pub use safetensors::{
    MAX_INDEX_BYTES, MAX_SAFETENSORS_HEADER, from_safetensors_header, from_safetensors_index,
    read_safetensors,
};

/// Attention kind, spelled as the stdlib symbols (`model/src/schema.rs` `ATTENTION`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attention {
    /// Multi-head attention: as many key/value heads as query heads.
    Mha,
    /// Grouped-query attention: fewer key/value heads than query heads (MQA included).
    Gqa,
    /// Multi-head latent attention (DeepSeek-V2/V3): a compressed latent KV.
    Mla,
    /// Some layers use a sliding window, the others full attention.
    Hybrid,
}

impl Attention {
    /// The stdlib symbol: `mha`, `gqa`, `mla`, `hybrid`.
    pub fn symbol(self) -> &'static str {
        match self {
            Attention::Mha => "mha",
            Attention::Gqa => "gqa",
            Attention::Mla => "mla",
            Attention::Hybrid => "hybrid",
        }
    }
}

/// Bytes and elements of one stored dtype (`"BF16"`, `"Q4_K"`, ...).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DtypeBytes {
    pub dtype: String,
    pub bytes: u64,
    pub elements: u64,
}

/// The weight format a file declares: a GGUF file's type, or a config.json's
/// `quantization_config` (MLX: `quantization`). What it means for a catalog quant is the
/// reader's business (`deployfit-host`); this says only what the file says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Quantization {
    Gguf(GgufFileType),
    Config(QuantConfig),
}

/// A GGUF file's type: `general.file_type` (llama.cpp `enum llama_ftype`), or, when the file
/// has none, the guess llama.cpp's loader makes from the type most tensors have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GgufFileType {
    /// The `llama_ftype` id (for a guess, the id the guess gives).
    pub id: u64,
    /// Its name without `LLAMA_FTYPE_` / `MOSTLY_` (`Q4_K_M`, `F16`, `MXFP4_MOE`); `None`
    /// for an id this crate does not know.
    pub name: Option<&'static str>,
    /// True when the file has no `general.file_type` and the type is guessed from the
    /// tensors (`LLAMA_FTYPE_GUESSED`).
    pub guessed: bool,
}

/// A config.json's `quantization_config` (or MLX's `quantization` block), as far as the
/// format of the weights goes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct QuantConfig {
    /// `quant_method` lowercased (`awq`, `gptq`, `fp8`, `mxfp4`, `compressed-tensors`,
    /// `bitsandbytes`, `modelopt`, …); `mlx` for MLX's `quantization` block.
    pub method: String,
    /// Weight bits: `bits` (`w_bit` in AutoAWQ's older files), compressed-tensors'
    /// `weights.num_bits`, bitsandbytes' `load_in_4bit`/`load_in_8bit`.
    pub bits: Option<u64>,
    /// Floating-point weights (compressed-tensors `weights.type = "float"`).
    pub float: bool,
    /// Scales per 2-D block (`weight_block_size`, compressed-tensors `strategy = "block"`).
    pub block: bool,
    /// Activations quantized as well (compressed-tensors `input_activations` set).
    pub activations: bool,
    /// The scheme named inside the method: compressed-tensors `format`, ModelOpt
    /// `quant_algo`, MLX `mode` (lowercased).
    pub scheme: Option<String>,
}

impl std::fmt::Display for Quantization {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Quantization::Gguf(t) => {
                let name = t.name.unwrap_or("unknown");
                if t.guessed {
                    write!(
                        f,
                        "GGUF type {name} (no general.file_type: guessed from the type most tensors have, as llama.cpp does)"
                    )
                } else {
                    write!(f, "GGUF general.file_type {} ({name})", t.id)
                }
            }
            Quantization::Config(c) => {
                if c.method == "mlx" {
                    write!(f, "config.json quantization (MLX")?;
                } else {
                    write!(
                        f,
                        "config.json quantization_config (quant_method {}",
                        c.method
                    )?;
                }
                if let Some(bits) = c.bits {
                    write!(f, ", {bits} bits")?;
                }
                if let Some(scheme) = &c.scheme {
                    write!(f, ", {scheme}")?;
                }
                if c.block {
                    write!(f, ", block scales")?;
                }
                write!(f, ")")
            }
        }
    }
}

/// Exact weight bytes as stored in safetensors / GGUF files (tensor data only, no header).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Weights {
    pub total_bytes: u64,
    /// Sum of the tensors' element counts (for packed dtypes this is stored elements, not
    /// parameters); `None` when only an index `total_size` was known.
    pub elements: Option<u64>,
    /// Per dtype, sorted by dtype name. Empty when only an index `total_size` was known.
    pub by_dtype: Vec<DtypeBytes>,
}

/// What a model artifact determines. Everything is optional except `source`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Architecture {
    /// What was read, e.g. `config.json (Qwen3ForCausalLM, model_type qwen3)`.
    pub source: String,
    /// config `model_type` / GGUF `general.architecture`.
    pub model_type: Option<String>,
    /// GGUF `general.name` / config `_name_or_path`.
    pub name: Option<String>,
    pub params: Option<u64>,
    pub active_params: Option<u64>,
    pub layers: Option<u64>,
    pub hidden: Option<u64>,
    /// Dense MLP intermediate size; for MoE models without dense layers the per-expert size.
    pub intermediate: Option<u64>,
    pub heads: Option<u64>,
    pub kv_heads: Option<u64>,
    pub head_dim: Option<u64>,
    pub vocab: Option<u64>,
    pub max_context: Option<u64>,
    pub attention: Option<Attention>,
    /// Sliding window in tokens, and how many layers use it.
    pub window: Option<u64>,
    pub local_layers: Option<u64>,
    /// Linear-attention (Gated DeltaNet) layers and the bytes of one layer's state per
    /// sequence: the recurrent state in `mamba_ssm_dtype` (16 bit unless float32) and the
    /// convolution state in 16 bit.
    pub linear_layers: Option<u64>,
    pub linear_state: Option<u64>,
    /// MLA latent rank and decoupled RoPE dimension.
    pub kv_lora_rank: Option<u64>,
    pub qk_rope_dim: Option<u64>,
    pub experts: Option<u64>,
    pub experts_active: Option<u64>,
    pub tie_embeddings: Option<bool>,
    pub weights: Option<Weights>,
    /// The weight format the file declares (GGUF file type, `quantization_config`).
    pub quantization: Option<Quantization>,
    /// What could not be determined and how to supply it, and any disagreement.
    pub notes: Vec<String>,
}

/// The kinds of artifact [`read`] accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Artifact {
    ConfigJson,
    Safetensors,
    SafetensorsIndex,
    Gguf,
    Folder,
}

/// Most files a folder may hold for [`read`] to look through.
pub const MAX_FOLDER_ENTRIES: usize = 100_000;

/// Most `.safetensors` files of a folder whose headers [`read`] reads (each up to
/// [`MAX_SAFETENSORS_HEADER`] bytes): the largest published checkpoints have a few
/// hundred shards (DeepSeek-V3: 163); the bound keeps one folder's read short.
pub const MAX_FOLDER_SHARDS: usize = 4096;

/// Which kind of artifact `path` is, by file name (or folder).
pub fn detect(path: &Path) -> Result<Artifact, ArtifactError> {
    let shown = path.display().to_string();
    let meta = std::fs::metadata(path)
        .map_err(|e| file_error(&shown, file::FileError::Io(file::io_words(&e))))?;
    if meta.is_dir() {
        if file::leads_into_system(path) {
            return Err(file_error(&shown, file::FileError::System));
        }
        return Ok(Artifact::Folder);
    }
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_ascii_lowercase();
    if name.ends_with(".safetensors.index.json") {
        Ok(Artifact::SafetensorsIndex)
    } else if name.ends_with(".safetensors") {
        Ok(Artifact::Safetensors)
    } else if name.ends_with(".gguf") {
        Ok(Artifact::Gguf)
    } else if name.ends_with(".json") {
        Ok(Artifact::ConfigJson)
    } else {
        Err(ArtifactError::Unsupported(format!(
            "{shown}: not a model artifact; give a config.json, a .safetensors file, a \
             model.safetensors.index.json, a .gguf file or a model folder"
        )))
    }
}

/// Stored dtypes that pack several weights into one element (AWQ and GPTQ `I32`,
/// bitsandbytes `U8`), so that their element count is not a parameter count.
const PACKED_DTYPES: [&str; 3] = ["I32", "U32", "U8"];

/// The invariants every architecture read from a file keeps; the first that fails, named.
/// A file that breaks one is not a model deployfit can size (a truncated or hand-edited
/// config, weights from another model).
fn check_invariants(shown: &str, arch: &Architecture) -> Result<(), ArtifactError> {
    let broken = |invariant: &str| {
        Err(ArtifactError::Malformed(format!(
            "{shown}: the file breaks the invariant {invariant}; fix the file or declare the \
             model's fields by hand"
        )))
    };
    let over = |a: Option<u64>, b: Option<u64>| matches!((a, b), (Some(a), Some(b)) if a > b);
    if over(arch.active_params, arch.params) {
        return broken("active parameters <= total parameters");
    }
    if over(arch.kv_heads, arch.heads) {
        return broken("num_key_value_heads <= num_attention_heads");
    }
    if let (Some(heads), Some(kv)) = (arch.heads, arch.kv_heads)
        && kv > 0
        && heads % kv != 0
    {
        return broken("num_attention_heads is a multiple of num_key_value_heads");
    }
    if over(arch.experts_active, arch.experts) {
        return broken("experts per token <= experts");
    }
    if over(arch.local_layers, arch.layers) {
        return broken("sliding-window layers <= layers");
    }
    if over(arch.linear_layers, arch.layers) {
        return broken("linear-attention layers <= layers");
    }
    if arch.params == Some(0) {
        return broken("parameters > 0");
    }
    Ok(())
}

/// Read an artifact: dispatch by file name, or by folder contents. What is read keeps the
/// invariants of [`check_invariants`] (active <= total parameters, key/value heads <= query
/// heads, ...), or is refused with the one it breaks.
pub fn read(path: &Path) -> Result<Architecture, ArtifactError> {
    let shown = path.display().to_string();
    let arch = read_unchecked(path)?;
    check_invariants(&shown, &arch)?;
    Ok(arch)
}

fn read_unchecked(path: &Path) -> Result<Architecture, ArtifactError> {
    let shown = path.display().to_string();
    match detect(path)? {
        Artifact::ConfigJson => {
            let text = read_text(path, MAX_CONFIG_BYTES)?;
            from_config_json(&text).map_err(|e| e.in_file(&shown))
        }
        Artifact::Safetensors => read_safetensors_file(path),
        Artifact::SafetensorsIndex => {
            let text = read_text(path, MAX_INDEX_BYTES)?;
            from_safetensors_index(&text, path.parent()).map_err(|e| e.in_file(&shown))
        }
        Artifact::Gguf => read_gguf_file(path),
        Artifact::Folder => read_folder(path),
    }
}

fn file_error(shown: &str, error: file::FileError) -> ArtifactError {
    match error {
        file::FileError::TooLarge { size, limit } => ArtifactError::TooLarge(format!(
            "{shown}: {size} bytes, over the {limit}-byte bound for this kind of file; \
             is it the right file?"
        )),
        other => ArtifactError::Io(format!("{shown}: cannot read: {other}; check the path")),
    }
}

/// Opens a model file through [`file::open_regular`]: regular files only, never a FIFO,
/// device or a link into /proc.
fn open(path: &Path) -> Result<(File, u64), ArtifactError> {
    let shown = path.display().to_string();
    file::open_regular(path).map_err(|e| file_error(&shown, e))
}

/// Read a whole text file of at most `limit` bytes.
pub(crate) fn read_text(path: &Path, limit: u64) -> Result<String, ArtifactError> {
    let shown = path.display().to_string();
    let bytes = file::read_bytes(path, limit).map_err(|e| file_error(&shown, e))?;
    String::from_utf8(bytes).map_err(|_| {
        ArtifactError::Malformed(format!("{shown}: not UTF-8 text; is it the right file?"))
    })
}

pub(crate) fn read_safetensors_file(path: &Path) -> Result<Architecture, ArtifactError> {
    let shown = path.display().to_string();
    let (file, len) = open(path)?;
    read_safetensors(BufReader::new(file), Some(len)).map_err(|e| e.in_file(&shown))
}

fn read_gguf_file(path: &Path) -> Result<Architecture, ArtifactError> {
    let shown = path.display().to_string();
    let (file, len) = open(path)?;
    gguf::read_gguf(BufReader::new(file), Some(len)).map_err(|e| e.in_file(&shown))
}

/// A folder: `config.json` gives the architecture; `model.safetensors.index.json` or the
/// `*.safetensors` files give the weights (and the parameter count); a lone `*.gguf` is read
/// when there is no config.json.
fn read_folder(dir: &Path) -> Result<Architecture, ArtifactError> {
    let shown = dir.display().to_string();
    let entries = std::fs::read_dir(dir).map_err(|e| {
        ArtifactError::Io(format!(
            "{shown}: cannot list the folder ({})",
            file::io_words(&e)
        ))
    })?;
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| {
            ArtifactError::Io(format!(
                "{shown}: cannot list the folder ({})",
                file::io_words(&e)
            ))
        })?;
        if names.len() >= MAX_FOLDER_ENTRIES {
            return Err(ArtifactError::TooLarge(format!(
                "{shown}: more than {MAX_FOLDER_ENTRIES} entries; point at the config.json instead"
            )));
        }
        if let Some(n) = entry.file_name().to_str() {
            names.push(n.to_string());
        }
    }
    names.sort();
    let has = |n: &str| names.iter().any(|x| x == n);
    let shards: Vec<&String> = names
        .iter()
        .filter(|n| n.ends_with(".safetensors"))
        .collect();
    let ggufs: Vec<&String> = names.iter().filter(|n| n.ends_with(".gguf")).collect();

    let weights_arch = if has("model.safetensors.index.json") {
        Some(read(&dir.join("model.safetensors.index.json"))?)
    } else if !shards.is_empty() {
        if shards.len() > MAX_FOLDER_SHARDS {
            return Err(ArtifactError::TooLarge(format!(
                "{shown}: more than {MAX_FOLDER_SHARDS} .safetensors files; point at the \
                 config.json or the model.safetensors.index.json instead"
            )));
        }
        let mut acc = Weights {
            elements: Some(0),
            ..Weights::default()
        };
        for s in &shards {
            let a = read_safetensors_file(&dir.join(s))?;
            if let Some(w) = a.weights {
                merge_weights(&mut acc, &w)?;
            }
        }
        Some(Architecture {
            source: format!("{} safetensors file(s)", shards.len()),
            params: acc.elements,
            weights: Some(acc),
            ..Architecture::default()
        })
    } else {
        None
    };

    if has("config.json") {
        let mut arch = read(&dir.join("config.json"))?;
        if let Some(w) = weights_arch {
            arch.source = format!("{} + {}", arch.source, w.source);
            // Packed integer dtypes hold several weights per element (AWQ/GPTQ in I32,
            // bitsandbytes in U8): their element count is not a parameter count.
            let packed = w.weights.as_ref().is_some_and(|w| {
                w.by_dtype
                    .iter()
                    .any(|d| PACKED_DTYPES.contains(&d.dtype.as_str()))
            });
            match (arch.params, w.params) {
                (Some(from_config), Some(from_files)) if from_config != from_files => {
                    let active = arch.active_params.unwrap_or(from_config);
                    if from_files >= active {
                        arch.notes.push(format!(
                            "config.json counts {from_config} parameters, the safetensors files \
                             hold {from_files} elements; the files' figure is kept (extra \
                             modules such as MTP or a vision tower, or a config that does not \
                             match the weights)"
                        ));
                        arch.params = Some(from_files);
                    } else if packed {
                        arch.notes.push(format!(
                            "the safetensors files store packed tensors ({from_files} \
                             elements) for config.json's {from_config} parameters; the \
                             config's count is kept"
                        ));
                    } else {
                        return Err(ArtifactError::Malformed(format!(
                            "{shown}: the safetensors files hold fewer weights than config.json \
                             uses for each token (invariant: active parameters <= total \
                             parameters): the weights and the config do not belong together; \
                             point `model` at a folder whose config.json matches its weights"
                        )));
                    }
                }
                (None, Some(from_files)) => arch.params = Some(from_files),
                _ => {}
            }
            arch.weights = w.weights;
            arch.notes.extend(w.notes);
        }
        return Ok(arch);
    }
    if let Some(w) = weights_arch {
        let mut w = w;
        w.notes.push(
            "no config.json beside the weights: the architecture (heads, kv_heads, context, \
             experts) is not known; add config.json or declare those fields"
                .to_string(),
        );
        return Ok(w);
    }
    match ggufs.as_slice() {
        [one] => read(&dir.join(one)),
        [] => Err(ArtifactError::Missing(format!(
            "{shown}: no config.json, *.safetensors or *.gguf in the folder; point at the model file"
        ))),
        many => Err(ArtifactError::Unsupported(format!(
            "{shown}: {} .gguf files and no config.json; point at one of them",
            many.len()
        ))),
    }
}

/// Add `w`'s per-dtype figures into `acc`, keeping `by_dtype` sorted by name.
pub(crate) fn merge_weights(acc: &mut Weights, w: &Weights) -> Result<(), ArtifactError> {
    acc.total_bytes = error::add(acc.total_bytes, w.total_bytes)?;
    acc.elements = match (acc.elements, w.elements) {
        (Some(a), Some(b)) => Some(error::add(a, b)?),
        _ => None,
    };
    for d in &w.by_dtype {
        add_dtype(&mut acc.by_dtype, &d.dtype, d.bytes, d.elements)?;
    }
    Ok(())
}

pub(crate) fn add_dtype(
    list: &mut Vec<DtypeBytes>,
    dtype: &str,
    bytes: u64,
    elements: u64,
) -> Result<(), ArtifactError> {
    match list.binary_search_by(|d| d.dtype.as_str().cmp(dtype)) {
        Ok(i) => {
            list[i].bytes = error::add(list[i].bytes, bytes)?;
            list[i].elements = error::add(list[i].elements, elements)?;
        }
        Err(i) => list.insert(
            i,
            DtypeBytes {
                dtype: dtype.to_string(),
                bytes,
                elements,
            },
        ),
    }
    Ok(())
}
