//! safetensors headers and `model.safetensors.index.json`.
//!
//! Format (huggingface/safetensors README, "Format"): 8 bytes little-endian u64 `N`, then `N`
//! bytes of UTF-8 JSON `{name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__":
//! {str: str}}`, then the data buffer; offsets are relative to the start of the buffer. Dtype
//! widths: huggingface/safetensors `safetensors/src/tensor.rs` `Dtype::bitsize`.

use std::collections::BTreeSet;
use std::io::Read;
use std::path::Path;

use serde_json::Value;

use crate::config::MAX_DIM;
use crate::error::{ArtifactError, add, mul};
use crate::{Architecture, Weights, add_dtype, merge_weights};

/// Largest safetensors JSON header accepted: 100 MiB (the safetensors crate's own bound,
/// `MAX_HEADER_SIZE`).
pub const MAX_SAFETENSORS_HEADER: u64 = 100 << 20;
/// Largest `model.safetensors.index.json` accepted.
pub const MAX_INDEX_BYTES: u64 = 64 << 20;
/// Most tensors in one header, and most shards named by an index.
const MAX_TENSORS: usize = 1_000_000;
const MAX_SHARDS: usize = 100_000;
/// Most dimensions of one tensor.
const MAX_RANK: usize = 16;

/// Bits per element of a safetensors dtype (`Dtype::bitsize`).
fn dtype_bits(dtype: &str) -> Option<u64> {
    Some(match dtype {
        "BOOL" | "U8" | "I8" | "F8_E5M2" | "F8_E4M3" | "F8_E8M0" => 8,
        "I16" | "U16" | "F16" | "BF16" => 16,
        "I32" | "U32" | "F32" => 32,
        "I64" | "U64" | "F64" | "C64" => 64,
        "F4" => 4,
        "F6_E2M3" | "F6_E3M2" => 6,
        _ => return None,
    })
}

/// Read a safetensors header from the first bytes of a file (the 8-byte length and the JSON;
/// the data may be absent). Offsets are not checked against a file length.
pub fn from_safetensors_header(bytes_prefix: &[u8]) -> Result<Architecture, ArtifactError> {
    read_safetensors(bytes_prefix, None)
}

/// Read a safetensors header through `reader`; `file_len`, when known, lets the tensors'
/// offsets be checked against the data actually present. Reads `8 + N` bytes, never the data.
pub fn read_safetensors<R: Read>(
    mut reader: R,
    file_len: Option<u64>,
) -> Result<Architecture, ArtifactError> {
    let mut len_bytes = [0u8; 8];
    reader.read_exact(&mut len_bytes).map_err(|_| {
        ArtifactError::Malformed(
            "shorter than the 8-byte safetensors header length; not a safetensors file".into(),
        )
    })?;
    let n = u64::from_le_bytes(len_bytes);
    if n > MAX_SAFETENSORS_HEADER {
        return Err(ArtifactError::TooLarge(format!(
            "safetensors header length {n} is over the {MAX_SAFETENSORS_HEADER}-byte bound; \
             not a safetensors file?"
        )));
    }
    if let Some(len) = file_len
        && n > len.saturating_sub(8)
    {
        return Err(ArtifactError::Malformed(format!(
            "safetensors header length {n} runs past the end of the {len}-byte file; the \
                 file is truncated"
        )));
    }
    let mut json = Vec::new();
    reader
        .take(n)
        .read_to_end(&mut json)
        .map_err(|e| ArtifactError::Io(format!("cannot read the safetensors header ({e})")))?;
    if json.len() as u64 != n {
        return Err(ArtifactError::Malformed(format!(
            "safetensors header announces {n} bytes but only {} follow; the file is truncated",
            json.len()
        )));
    }
    let data_len = file_len.map(|len| len - 8 - n);
    let parsed = parse_header(&json, data_len)?;
    let mut notes = Vec::new();
    if parsed.packed {
        notes.push(
            "some tensors are stored as integer/packed dtypes (U8/I8/F4 blocks, scales): params \
             counts stored elements, which differs from the model's parameter count"
                .to_string(),
        );
    }
    Ok(Architecture {
        source: format!("safetensors header ({} tensors)", parsed.tensors),
        params: parsed.weights.elements,
        layers: parsed.layers,
        hidden: parsed.hidden,
        vocab: parsed.vocab,
        weights: Some(parsed.weights),
        notes,
        ..Architecture::default()
    })
}

struct Parsed {
    weights: Weights,
    tensors: usize,
    layers: Option<u64>,
    hidden: Option<u64>,
    vocab: Option<u64>,
    packed: bool,
}

fn parse_header(json: &[u8], data_len: Option<u64>) -> Result<Parsed, ArtifactError> {
    let value: Value = serde_json::from_slice(json).map_err(|e| {
        ArtifactError::Malformed(format!("safetensors header is not valid JSON ({e})"))
    })?;
    let map = value.as_object().ok_or_else(|| {
        ArtifactError::Malformed("safetensors header is not a JSON object".to_string())
    })?;
    if map.len() > MAX_TENSORS {
        return Err(ArtifactError::TooLarge(format!(
            "safetensors header lists {} entries, over the bound {MAX_TENSORS}",
            map.len()
        )));
    }
    let mut weights = Weights {
        elements: Some(0),
        ..Weights::default()
    };
    let mut spans: Vec<(u64, u64)> = Vec::with_capacity(map.len());
    let mut layers: Option<u64> = None;
    let (mut hidden, mut vocab) = (None, None);
    let mut packed = false;
    for (name, info) in map {
        if name == "__metadata__" {
            continue;
        }
        let bad =
            |what: &str| ArtifactError::Malformed(format!("safetensors tensor `{name}`: {what}"));
        let dtype = info
            .get("dtype")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("no dtype"))?;
        let bits = dtype_bits(dtype).ok_or_else(|| {
            ArtifactError::Unsupported(format!(
                "safetensors tensor `{name}` has dtype `{dtype}`, which this crate does not know"
            ))
        })?;
        let shape = info
            .get("shape")
            .and_then(Value::as_array)
            .ok_or_else(|| bad("no shape"))?;
        if shape.len() > MAX_RANK {
            return Err(bad("more than 16 dimensions"));
        }
        let mut dims = Vec::with_capacity(shape.len());
        for d in shape {
            let d = d
                .as_u64()
                .filter(|&d| d <= MAX_DIM)
                .ok_or_else(|| bad("a dimension is not a whole number up to 2^40"))?;
            dims.push(d);
        }
        let elements = mul(&dims)?;
        let bits_total = mul(&[elements, bits])?;
        if bits_total % 8 != 0 {
            return Err(bad("its elements do not fill whole bytes"));
        }
        let bytes = bits_total / 8;
        let offsets = info
            .get("data_offsets")
            .and_then(Value::as_array)
            .filter(|a| a.len() == 2)
            .ok_or_else(|| bad("data_offsets is not [begin, end]"))?;
        let (Some(begin), Some(end)) = (offsets[0].as_u64(), offsets[1].as_u64()) else {
            return Err(bad("data_offsets are not whole numbers"));
        };
        if end < begin || end - begin != bytes {
            return Err(bad(&format!(
                "data_offsets [{begin}, {end}] span {} bytes but shape {dims:?} of {dtype} needs \
                 {bytes}",
                end.wrapping_sub(begin)
            )));
        }
        if let Some(len) = data_len
            && end > len
        {
            return Err(bad(&format!(
                "data ends at {end}, past the {len} data bytes in the file; truncated file"
            )));
        }
        spans.push((begin, end));
        weights.total_bytes = add(weights.total_bytes, bytes)?;
        weights.elements = Some(add(weights.elements.unwrap_or(0), elements)?);
        add_dtype(&mut weights.by_dtype, dtype, bytes, elements)?;
        if matches!(dtype, "U8" | "I8" | "F4" | "U32" | "I32") {
            packed = true;
        }
        if let Some(i) = layer_index(name) {
            layers = Some(layers.map_or(i + 1, |l: u64| l.max(i + 1)));
        }
        if name == "model.embed_tokens.weight" && dims.len() == 2 {
            vocab = Some(dims[0]);
            hidden = Some(dims[1]);
        }
    }
    spans.sort_unstable();
    if let Some(w) = spans.windows(2).find(|w| w[1].0 < w[0].1) {
        return Err(ArtifactError::Malformed(format!(
            "safetensors tensors overlap: [{}, {}] and [{}, {}]",
            w[0].0, w[0].1, w[1].0, w[1].1
        )));
    }
    Ok(Parsed {
        weights,
        tensors: spans.len(),
        layers,
        hidden,
        vocab,
        packed,
    })
}

/// `model.layers.<i>.` → `i` (bounded to 6 digits).
fn layer_index(name: &str) -> Option<u64> {
    let rest = name
        .strip_prefix("model.layers.")
        .or_else(|| name.strip_prefix("model.language_model.layers."))?;
    let digits = rest.split('.').next()?;
    if digits.is_empty() || digits.len() > 6 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// Read `model.safetensors.index.json`. When `dir` is given and every shard it names is there,
/// the shards' headers give exact per-dtype figures; otherwise `metadata.total_size` is used.
pub fn from_safetensors_index(
    text: &str,
    dir: Option<&Path>,
) -> Result<Architecture, ArtifactError> {
    if text.len() as u64 > MAX_INDEX_BYTES {
        return Err(ArtifactError::TooLarge(format!(
            "safetensors index is {} bytes, over the {MAX_INDEX_BYTES}-byte bound",
            text.len()
        )));
    }
    let value: Value = serde_json::from_str(text).map_err(|e| {
        ArtifactError::Malformed(format!("safetensors index is not valid JSON ({e})"))
    })?;
    let total_size = value
        .get("metadata")
        .and_then(|m| m.get("total_size"))
        .and_then(|t| {
            t.as_u64()
                .or_else(|| t.as_str().and_then(|s| s.parse().ok()))
        });
    let map = value
        .get("weight_map")
        .and_then(Value::as_object)
        .ok_or_else(|| {
            ArtifactError::Malformed(
                "safetensors index has no `weight_map` object; is it a \
                 model.safetensors.index.json?"
                    .to_string(),
            )
        })?;
    if map.len() > MAX_TENSORS {
        return Err(ArtifactError::TooLarge(format!(
            "safetensors index maps {} tensors, over the bound {MAX_TENSORS}",
            map.len()
        )));
    }
    let mut shards = BTreeSet::new();
    for (tensor, file) in map {
        let file = file.as_str().ok_or_else(|| {
            ArtifactError::Malformed(format!(
                "safetensors index: `{tensor}` maps to a non-string"
            ))
        })?;
        let plain = !file.is_empty()
            && !file.contains(['/', '\\'])
            && file != ".."
            && file.ends_with(".safetensors");
        if !plain {
            return Err(ArtifactError::Malformed(format!(
                "safetensors index: shard `{file}` is not a plain .safetensors file name"
            )));
        }
        shards.insert(file);
        if shards.len() > MAX_SHARDS {
            return Err(ArtifactError::TooLarge(format!(
                "safetensors index names more than {MAX_SHARDS} shards"
            )));
        }
    }
    let mut notes = Vec::new();
    let present = dir.filter(|d| shards.iter().all(|s| d.join(s).is_file()));
    let weights = match present {
        Some(d) => {
            let mut acc = Weights {
                elements: Some(0),
                ..Weights::default()
            };
            for s in &shards {
                let a = crate::read_safetensors_file(&d.join(s))?;
                if let Some(w) = &a.weights {
                    merge_weights(&mut acc, w)?;
                }
                notes.extend(a.notes);
            }
            notes.dedup();
            if let Some(t) = total_size.filter(|&t| t != acc.total_bytes) {
                notes.push(format!(
                    "index metadata.total_size {t} differs from the shards' tensor bytes {}; \
                     the shards' figure is kept",
                    acc.total_bytes
                ));
            }
            acc
        }
        None => {
            let t = total_size.ok_or_else(|| {
                ArtifactError::Missing(
                    "safetensors index has no metadata.total_size and its shards are not beside \
                     it; put the shards next to the index or point at the shards"
                        .to_string(),
                )
            })?;
            notes.push(format!(
                "shards not beside the index: weights = metadata.total_size ({t} bytes), no \
                 per-dtype figures and no parameter count (for an all-BF16 checkpoint it is \
                 total_size / 2); put the shards beside the index for exact figures"
            ));
            Weights {
                total_bytes: t,
                elements: None,
                by_dtype: Vec::new(),
            }
        }
    };
    Ok(Architecture {
        source: format!(
            "model.safetensors.index.json ({} tensors in {} shards{})",
            map.len(),
            shards.len(),
            if present.is_some() {
                ", headers read"
            } else {
                ""
            }
        ),
        params: weights.elements,
        weights: Some(weights),
        notes,
        ..Architecture::default()
    })
}
