//! GGUF v2/v3 headers: metadata and tensor infos, never the tensor data.
//!
//! Layout: ggml-org/llama.cpp `ggml/docs/gguf.md` ("File Structure"): magic `GGUF`, u32 version,
//! u64 tensor_count, u64 metadata_kv_count, the key/value pairs (string = u64 length + UTF-8
//! bytes; arrays = u32 element type + u64 count + elements, nestable), then per tensor: name,
//! u32 n_dimensions, u64 dims, u32 ggml type, u64 offset (relative to the aligned data start,
//! `general.alignment`, default 32). Version 1 used 32-bit counts and is refused. Value type ids:
//! `enum gguf_type` in `ggml/include/gguf.h`.

use std::collections::HashMap;
use std::io::{self, Read};

use crate::config::MAX_DIM;
use crate::error::{ArtifactError, add, mul};
use crate::{Architecture, Attention, GgufFileType, Quantization, Weights, add_dtype};

/// Most tensors accepted in one GGUF file.
pub const MAX_GGUF_TENSORS: u64 = 1_000_000;
/// Most metadata key/value pairs accepted.
const MAX_GGUF_KVS: u64 = 1_000_000;
/// Longest string accepted (keys, values, tensor names): 1 MiB.
pub const MAX_GGUF_STRING: u64 = 1 << 20;
/// Most elements in one metadata array (skipped without allocating).
pub const MAX_GGUF_ARRAY: u64 = 10_000_000;
/// Deepest nesting of metadata arrays.
const MAX_ARRAY_DEPTH: u32 = 4;
/// Most dimensions of a tensor (`GGML_MAX_DIMS`, ggml/include/ggml.h).
const GGML_MAX_DIMS: u32 = 4;
/// Strings longer than this are skipped, not kept.
const KEEP_STRING: u64 = 4096;

/// One ggml tensor type: its block of `block` elements takes `type_size` bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GgmlType {
    pub id: u32,
    pub name: &'static str,
    pub block: u64,
    pub type_size: u64,
}

const fn t(id: u32, name: &'static str, block: u64, type_size: u64) -> GgmlType {
    GgmlType {
        id,
        name,
        block,
        type_size,
    }
}

/// ggml types: ids from `enum ggml_type` (ggml/include/ggml.h), block sizes and block byte
/// sizes from `type_traits` in ggml/src/ggml.c (`.blck_size`, `.type_size = sizeof(block_*)`)
/// with the `block_*` structs of ggml/src/ggml-common.h (QK4_0 = QK8_0 = QK4_NL = QK_MXFP4 = 32,
/// QK_K = 256; ggml_half = 2 bytes). Sizes: q4_0 = 2+16, q4_1 = 2*2+16, q5_0 = 2+4+16,
/// q5_1 = 2*2+4+16, q8_0 = 2+32, q8_1 = 2*2+32, q2_K = 16+64+2*2, q3_K = 32+64+12+2,
/// q4_K = 2*2+12+128, q5_K = 2*2+12+32+128, q6_K = 128+64+16+2, q8_K = 4+256+2*16,
/// iq2_xxs = 2+2*32, iq2_xs = 2+2*32+8, iq3_xxs = 2+96, iq1_s = 2+32+2*8, iq4_nl = 2+16,
/// iq3_s = 2+64+8+32+4, iq2_s = 2+64+8+8, iq4_xs = 2+2+4+128, iq1_m = 32+16+8,
/// tq1_0 = 48+4+2, tq2_0 = 64+2, mxfp4 = 1+16.
pub const GGML_TYPES: &[GgmlType] = &[
    t(0, "F32", 1, 4),
    t(1, "F16", 1, 2),
    t(2, "Q4_0", 32, 18),
    t(3, "Q4_1", 32, 20),
    t(6, "Q5_0", 32, 22),
    t(7, "Q5_1", 32, 24),
    t(8, "Q8_0", 32, 34),
    t(9, "Q8_1", 32, 36),
    t(10, "Q2_K", 256, 84),
    t(11, "Q3_K", 256, 110),
    t(12, "Q4_K", 256, 144),
    t(13, "Q5_K", 256, 176),
    t(14, "Q6_K", 256, 210),
    t(15, "Q8_K", 256, 292),
    t(16, "IQ2_XXS", 256, 66),
    t(17, "IQ2_XS", 256, 74),
    t(18, "IQ3_XXS", 256, 98),
    t(19, "IQ1_S", 256, 50),
    t(20, "IQ4_NL", 32, 18),
    t(21, "IQ3_S", 256, 110),
    t(22, "IQ2_S", 256, 82),
    t(23, "IQ4_XS", 256, 136),
    t(24, "I8", 1, 1),
    t(25, "I16", 1, 2),
    t(26, "I32", 1, 4),
    t(27, "I64", 1, 8),
    t(28, "F64", 1, 8),
    t(29, "IQ1_M", 256, 56),
    t(30, "BF16", 1, 2),
    t(34, "TQ1_0", 256, 54),
    t(35, "TQ2_0", 256, 66),
    t(39, "MXFP4", 32, 17),
];

/// The ggml type with this id, or an error naming it.
pub fn ggml_type(id: u32) -> Result<GgmlType, ArtifactError> {
    if let Some(t) = GGML_TYPES.iter().find(|t| t.id == id) {
        return Ok(*t);
    }
    let removed = match id {
        4 => Some("Q4_2"),
        5 => Some("Q4_3"),
        31 => Some("Q4_0_4_4"),
        32 => Some("Q4_0_4_8"),
        33 => Some("Q4_0_8_8"),
        36 => Some("IQ4_NL_4_4"),
        37 => Some("IQ4_NL_4_8"),
        38 => Some("IQ4_NL_8_8"),
        _ => None,
    };
    Err(ArtifactError::Unsupported(match removed {
        Some(n) => format!(
            "ggml type {id} ({n}) was removed from ggml and GGUF files; re-quantize the model"
        ),
        None => format!(
            "unknown ggml type id {id}; the file may be newer than this crate (known ids: 0-3, \
             6-30, 34, 35, 39)"
        ),
    }))
}

/// llama.cpp's file types (`enum llama_ftype`, include/llama.h): the value of
/// `general.file_type`, named without `LLAMA_FTYPE_` and `MOSTLY_`. Ids 4–6 and 33–35 were
/// removed from llama.cpp (their files no longer load) and are not listed.
pub const LLAMA_FTYPES: &[(u64, &str)] = &[
    (0, "F32"),
    (1, "F16"),
    (2, "Q4_0"),
    (3, "Q4_1"),
    (7, "Q8_0"),
    (8, "Q5_0"),
    (9, "Q5_1"),
    (10, "Q2_K"),
    (11, "Q3_K_S"),
    (12, "Q3_K_M"),
    (13, "Q3_K_L"),
    (14, "Q4_K_S"),
    (15, "Q4_K_M"),
    (16, "Q5_K_S"),
    (17, "Q5_K_M"),
    (18, "Q6_K"),
    (19, "IQ2_XXS"),
    (20, "IQ2_XS"),
    (21, "Q2_K_S"),
    (22, "IQ3_XS"),
    (23, "IQ3_XXS"),
    (24, "IQ1_S"),
    (25, "IQ4_NL"),
    (26, "IQ3_S"),
    (27, "IQ3_M"),
    (28, "IQ2_S"),
    (29, "IQ2_M"),
    (30, "IQ4_XS"),
    (31, "IQ1_M"),
    (32, "BF16"),
    (36, "TQ1_0"),
    (37, "TQ2_0"),
    (38, "MXFP4_MOE"),
    (39, "NVFP4"),
    (40, "Q1_0"),
];

/// The name of a `llama_ftype` id ([`LLAMA_FTYPES`]), if known.
pub fn llama_ftype(id: u64) -> Option<&'static str> {
    LLAMA_FTYPES
        .iter()
        .find(|(i, _)| *i == id)
        .map(|(_, name)| *name)
}

/// The file type llama.cpp's loader guesses for a file without `general.file_type` from the
/// ggml type most of its tensors have (`llama_model_loader`: `switch (type_max)`; K-quant
/// types give the `_M` mix). `None` where the loader has no case (it then says F32).
fn guessed_ftype(ggml_type: u32) -> Option<u64> {
    Some(match ggml_type {
        0 => 0,   // F32
        1 => 1,   // F16
        30 => 32, // BF16
        2 => 2,   // Q4_0
        3 => 3,   // Q4_1
        6 => 8,   // Q5_0
        7 => 9,   // Q5_1
        8 => 7,   // Q8_0
        10 => 10, // Q2_K
        11 => 12, // Q3_K -> Q3_K_M
        12 => 15, // Q4_K -> Q4_K_M
        13 => 17, // Q5_K -> Q5_K_M
        14 => 18, // Q6_K
        34 => 36, // TQ1_0
        35 => 37, // TQ2_0
        16 => 19, // IQ2_XXS
        17 => 20, // IQ2_XS
        22 => 28, // IQ2_S
        18 => 23, // IQ3_XXS
        19 => 24, // IQ1_S
        29 => 31, // IQ1_M
        20 => 25, // IQ4_NL
        23 => 30, // IQ4_XS
        21 => 26, // IQ3_S
        _ => return None,
    })
}

/// A metadata value, as far as it is kept.
#[derive(Debug, Clone)]
enum Meta {
    Int(i128),
    Str(String),
    Array(u64),
    Other,
}

/// Counting reader: every byte read moves `pos`.
struct Src<R> {
    inner: R,
    pos: u64,
}

fn truncated() -> ArtifactError {
    ArtifactError::Malformed("GGUF header is truncated (unexpected end of file)".to_string())
}

impl<R: Read> Src<R> {
    fn bytes<const N: usize>(&mut self) -> Result<[u8; N], ArtifactError> {
        let mut b = [0u8; N];
        self.inner.read_exact(&mut b).map_err(|e| match e.kind() {
            io::ErrorKind::UnexpectedEof => truncated(),
            _ => ArtifactError::Io(format!("cannot read the GGUF header ({e})")),
        })?;
        self.pos += N as u64;
        Ok(b)
    }
    fn u32(&mut self) -> Result<u32, ArtifactError> {
        Ok(u32::from_le_bytes(self.bytes()?))
    }
    fn u64(&mut self) -> Result<u64, ArtifactError> {
        Ok(u64::from_le_bytes(self.bytes()?))
    }
    fn skip(&mut self, n: u64) -> Result<(), ArtifactError> {
        let got = io::copy(&mut (&mut self.inner).take(n), &mut io::sink())
            .map_err(|e| ArtifactError::Io(format!("cannot read the GGUF header ({e})")))?;
        self.pos += got;
        if got != n { Err(truncated()) } else { Ok(()) }
    }
    /// A GGUF string; kept when at most `keep` bytes, else skipped (`None`).
    fn string(&mut self, what: &str, keep: u64) -> Result<Option<String>, ArtifactError> {
        let len = self.u64()?;
        if len > MAX_GGUF_STRING {
            return Err(ArtifactError::TooLarge(format!(
                "GGUF {what} of {len} bytes is over the {MAX_GGUF_STRING}-byte bound"
            )));
        }
        if len > keep {
            self.skip(len)?;
            return Ok(None);
        }
        let mut buf = Vec::with_capacity(len as usize);
        let got = (&mut self.inner)
            .take(len)
            .read_to_end(&mut buf)
            .map_err(|e| ArtifactError::Io(format!("cannot read the GGUF header ({e})")))?;
        self.pos += got as u64;
        if got as u64 != len {
            return Err(truncated());
        }
        String::from_utf8(buf)
            .map(Some)
            .map_err(|_| ArtifactError::Malformed(format!("GGUF {what} is not UTF-8")))
    }

    fn value(&mut self, ty: u32, depth: u32) -> Result<Meta, ArtifactError> {
        // gguf_type: 0 u8, 1 i8, 2 u16, 3 i16, 4 u32, 5 i32, 6 f32, 7 bool, 8 string,
        // 9 array, 10 u64, 11 i64, 12 f64
        Ok(match ty {
            0 => Meta::Int(i128::from(self.bytes::<1>()?[0])),
            1 => Meta::Int(i128::from(i8::from_le_bytes(self.bytes()?))),
            2 => Meta::Int(i128::from(u16::from_le_bytes(self.bytes()?))),
            3 => Meta::Int(i128::from(i16::from_le_bytes(self.bytes()?))),
            4 => Meta::Int(i128::from(self.u32()?)),
            5 => Meta::Int(i128::from(i32::from_le_bytes(self.bytes()?))),
            6 => {
                self.skip(4)?;
                Meta::Other
            }
            7 => {
                self.skip(1)?;
                Meta::Other
            }
            8 => match self.string("string value", KEEP_STRING)? {
                Some(s) => Meta::Str(s),
                None => Meta::Other,
            },
            9 => {
                if depth >= MAX_ARRAY_DEPTH {
                    return Err(ArtifactError::TooLarge(format!(
                        "GGUF arrays nested deeper than {MAX_ARRAY_DEPTH}"
                    )));
                }
                let elem = self.u32()?;
                let count = self.u64()?;
                if count > MAX_GGUF_ARRAY {
                    return Err(ArtifactError::TooLarge(format!(
                        "GGUF array of {count} elements is over the bound {MAX_GGUF_ARRAY}"
                    )));
                }
                match fixed_size(elem) {
                    Some(size) => self.skip(mul(&[count, size])?)?,
                    None => {
                        for _ in 0..count {
                            match elem {
                                8 => {
                                    self.string("array string", 0)?;
                                }
                                9 => {
                                    self.value(9, depth + 1)?;
                                }
                                other => return Err(bad_value_type(other)),
                            }
                        }
                    }
                }
                Meta::Array(count)
            }
            10 => Meta::Int(i128::from(self.u64()?)),
            11 => Meta::Int(i128::from(i64::from_le_bytes(self.bytes()?))),
            12 => {
                self.skip(8)?;
                Meta::Other
            }
            other => return Err(bad_value_type(other)),
        })
    }
}

fn fixed_size(ty: u32) -> Option<u64> {
    match ty {
        0 | 1 | 7 => Some(1),
        2 | 3 => Some(2),
        4..=6 => Some(4),
        10..=12 => Some(8),
        _ => None,
    }
}

fn bad_value_type(ty: u32) -> ArtifactError {
    ArtifactError::Malformed(format!(
        "GGUF metadata value type {ty} is not one of 0-12; the file is corrupt"
    ))
}

/// Read a GGUF header through `reader` (wrap files in a `BufReader`). Reads the metadata and
/// the tensor infos only.
pub fn from_gguf<R: Read>(reader: R) -> Result<Architecture, ArtifactError> {
    read_gguf(reader, None)
}

/// As [`from_gguf`]; with the file length, the tensors' offsets are checked against it.
pub(crate) fn read_gguf<R: Read>(
    reader: R,
    file_len: Option<u64>,
) -> Result<Architecture, ArtifactError> {
    let mut src = Src {
        inner: reader,
        pos: 0,
    };
    let header = read_header(&mut src)?;
    let meta = Metadata(read_metadata(&mut src, header.kv_count)?);
    let tensors = read_tensor_infos(&mut src, header.tensor_count)?;
    check_offsets(src.pos, &meta, &tensors.infos, file_len)?;
    architecture(header.version, &meta, tensors)
}

/// The fixed part of a GGUF header: version and the two counts.
struct Header {
    version: u32,
    tensor_count: u64,
    kv_count: u64,
}

/// Read and check the magic, the version and the tensor and key/value counts.
fn read_header<R: Read>(src: &mut Src<R>) -> Result<Header, ArtifactError> {
    let magic: [u8; 4] = src.bytes().map_err(|_| {
        ArtifactError::Malformed("shorter than a GGUF magic; not a GGUF file".to_string())
    })?;
    if &magic != b"GGUF" {
        return Err(ArtifactError::Malformed(format!(
            "magic {magic:02x?} is not \"GGUF\"; not a GGUF file (old GGML/GGJT files must be \
             converted)"
        )));
    }
    let version = src.u32()?;
    match version {
        2 | 3 => {}
        1 => {
            return Err(ArtifactError::Unsupported(
                "GGUF v1 (32-bit counts) is not supported; re-convert the model with a current \
                 llama.cpp"
                    .to_string(),
            ));
        }
        v => {
            return Err(ArtifactError::Unsupported(format!(
                "GGUF version {v} is not 2 or 3{}",
                if v.swap_bytes() <= 3 {
                    " (a big-endian file?); use a little-endian file"
                } else {
                    ""
                }
            )));
        }
    }
    let tensor_count = src.u64()?;
    let kv_count = src.u64()?;
    if tensor_count > MAX_GGUF_TENSORS {
        return Err(ArtifactError::TooLarge(format!(
            "GGUF tensor_count {tensor_count} is over the bound {MAX_GGUF_TENSORS}"
        )));
    }
    if kv_count > MAX_GGUF_KVS {
        return Err(ArtifactError::TooLarge(format!(
            "GGUF metadata_kv_count {kv_count} is over the bound {MAX_GGUF_KVS}"
        )));
    }
    Ok(Header {
        version,
        tensor_count,
        kv_count,
    })
}

/// Read the `kv_count` metadata pairs, keeping the integer, string and array-length values.
fn read_metadata<R: Read>(
    src: &mut Src<R>,
    kv_count: u64,
) -> Result<HashMap<String, Meta>, ArtifactError> {
    let mut meta: HashMap<String, Meta> = HashMap::new();
    for _ in 0..kv_count {
        let key = src.string("key", MAX_GGUF_STRING)?.unwrap_or_default();
        let ty = src.u32()?;
        let v = src.value(ty, 0)?;
        if !matches!(v, Meta::Other) {
            meta.insert(key, v);
        }
    }
    Ok(meta)
}

/// The kept metadata, read by key.
struct Metadata(HashMap<String, Meta>);

impl Metadata {
    /// The non-negative integer at `k`, if any.
    fn int(&self, k: &str) -> Option<u64> {
        match self.0.get(k) {
            Some(Meta::Int(i)) => u64::try_from(*i).ok(),
            _ => None,
        }
    }

    /// The string at `k`, if any.
    fn text(&self, k: &str) -> Option<String> {
        match self.0.get(k) {
            Some(Meta::Str(s)) => Some(s.clone()),
            _ => None,
        }
    }
}

/// What the tensor infos tell: the weight totals and each tensor's placement.
struct Tensors {
    weights: Weights,
    /// (offset, bytes) of each tensor.
    infos: Vec<(u64, u64)>,
    /// element counts of the stacked expert tensors
    exps: Vec<u64>,
    has_output: bool,
    /// The ggml type most tensors have (the first to reach the largest count).
    most_common: Option<u32>,
}

/// Read the `tensor_count` tensor infos, summing the weights by dtype.
fn read_tensor_infos<R: Read>(
    src: &mut Src<R>,
    tensor_count: u64,
) -> Result<Tensors, ArtifactError> {
    let mut weights = Weights {
        elements: Some(0),
        ..Weights::default()
    };
    let mut infos: Vec<(u64, u64)> = Vec::new();
    let mut exps: Vec<u64> = Vec::new(); // element counts of the stacked expert tensors
    let mut has_output = false;
    // Tensors per ggml type id (ids are below 64: `GGML_TYPES`).
    let mut per_type = [0u64; 64];
    let mut most_common: Option<u32> = None;
    for _ in 0..tensor_count {
        let name = src
            .string("tensor name", MAX_GGUF_STRING)?
            .unwrap_or_default();
        let n_dims = src.u32()?;
        if n_dims > GGML_MAX_DIMS {
            return Err(ArtifactError::Malformed(format!(
                "GGUF tensor `{name}` has {n_dims} dimensions (at most {GGML_MAX_DIMS})"
            )));
        }
        let mut dims = [1u64; GGML_MAX_DIMS as usize];
        for d in dims.iter_mut().take(n_dims as usize) {
            *d = src.u64()?;
            if *d > MAX_DIM {
                return Err(ArtifactError::TooLarge(format!(
                    "GGUF tensor `{name}` has a dimension {d} over 2^40"
                )));
            }
        }
        let ty = ggml_type(src.u32()?).map_err(|e| match e {
            ArtifactError::Unsupported(m) => {
                ArtifactError::Unsupported(format!("tensor `{name}`: {m}"))
            }
            e => e,
        })?;
        let offset = src.u64()?;
        if dims[0] % ty.block != 0 {
            return Err(ArtifactError::Malformed(format!(
                "GGUF tensor `{name}`: first dimension {} is not a multiple of the {} block \
                 size {}",
                dims[0], ty.name, ty.block
            )));
        }
        let elements = mul(&dims)?;
        let bytes = mul(&[elements / ty.block, ty.type_size])?;
        weights.total_bytes = add(weights.total_bytes, bytes)?;
        weights.elements = Some(add(weights.elements.unwrap_or(0), elements)?);
        add_dtype(&mut weights.by_dtype, ty.name, bytes, elements)?;
        infos.push((offset, bytes));
        if let Some(slot) = per_type.get_mut(ty.id as usize) {
            *slot += 1;
            let count = *slot;
            if most_common.is_none_or(|m| per_type[m as usize] < count) {
                most_common = Some(ty.id);
            }
        }
        if name.contains("_exps.") {
            exps.push(elements);
        }
        if name == "output.weight" {
            has_output = true;
        }
    }
    Ok(Tensors {
        weights,
        infos,
        exps,
        has_output,
        most_common,
    })
}

/// Check the tensor offsets: aligned, and inside the file when its length is known. `header_end`
/// is the position just past the tensor infos.
fn check_offsets(
    header_end: u64,
    meta: &Metadata,
    infos: &[(u64, u64)],
    file_len: Option<u64>,
) -> Result<(), ArtifactError> {
    // offsets: aligned, and inside the file when its length is known
    let alignment = match meta.int("general.alignment") {
        None => 32,
        Some(a) if a > 0 && a.is_power_of_two() && a <= 1 << 20 => a,
        Some(a) => {
            return Err(ArtifactError::Malformed(format!(
                "GGUF general.alignment {a} is not a power of two up to 1 MiB"
            )));
        }
    };
    let data_start = header_end.div_ceil(alignment) * alignment;
    for &(offset, bytes) in infos {
        if offset % alignment != 0 {
            return Err(ArtifactError::Malformed(format!(
                "GGUF tensor offset {offset} is not a multiple of the alignment {alignment}"
            )));
        }
        if let Some(len) = file_len {
            let end = add(add(data_start, offset)?, bytes)?;
            if end > len {
                return Err(ArtifactError::Malformed(format!(
                    "GGUF tensor data would end at byte {end}, past the {len}-byte file; the \
                     file is truncated"
                )));
            }
        }
    }
    Ok(())
}

/// Build the architecture from the metadata (dimensions under `general.architecture`'s prefix)
/// and the tensor totals, with notes on what is missing.
fn architecture(
    version: u32,
    meta: &Metadata,
    tensors: Tensors,
) -> Result<Architecture, ArtifactError> {
    let Tensors {
        weights,
        exps,
        has_output,
        most_common,
        ..
    } = tensors;
    let quantization = file_type(meta, most_common);
    let arch = meta.text("general.architecture");
    let mut notes = Vec::new();
    let k = |suffix: &str| {
        arch.as_ref()
            .and_then(|a| meta.int(&format!("{a}.{suffix}")))
    };
    let layers = k("block_count");
    let hidden = k("embedding_length");
    let heads = k("attention.head_count");
    let kv_heads = k("attention.head_count_kv").or(heads);
    let kv_lora_rank = k("attention.kv_lora_rank");
    let head_dim = match (k("attention.key_length"), hidden, heads) {
        (Some(d), ..) => Some(d),
        (None, Some(h), Some(n)) if n > 0 && h % n == 0 => Some(h / n),
        _ => None,
    };
    let vocab = match meta.0.get("tokenizer.ggml.tokens") {
        Some(Meta::Array(n)) => Some(*n),
        _ => k("vocab_size"),
    };
    let experts = k("expert_count").filter(|&e| e > 0);
    let experts_active = k("expert_used_count").filter(|_| experts.is_some());
    let window = k("attention.sliding_window").filter(|&w| w > 0);
    let local_layers = match (window, layers, arch.as_deref()) {
        (Some(_), Some(l), Some("gemma2" | "gpt-oss")) => Some(l.div_ceil(2)),
        (Some(_), Some(l), Some("gemma3")) => Some(l - l / 6),
        (Some(_), ..) => {
            notes.push(
                "sliding window present but which layers use it is not in the GGUF metadata; \
                 declare local_layers"
                    .to_string(),
            );
            None
        }
        _ => None,
    };
    let attention = if kv_lora_rank.is_some() {
        Some(Attention::Mla)
    } else if matches!((local_layers, layers), (Some(l), Some(n)) if l > 0 && l < n) {
        Some(Attention::Hybrid)
    } else {
        match (heads, kv_heads) {
            (Some(h), Some(kv)) if kv < h => Some(Attention::Gqa),
            (Some(_), Some(_)) => Some(Attention::Mha),
            _ => None,
        }
    };
    let params = weights.elements;
    let active_params = match (params, experts, experts_active) {
        (Some(p), Some(e), Some(a)) if a <= e => {
            let mut idle = 0u64;
            for &n in &exps {
                if n % e == 0 {
                    idle = add(idle, mul(&[n / e, e - a])?)?;
                }
            }
            Some(p - idle.min(p))
        }
        (p, None, _) => p,
        _ => None,
    };
    if arch.is_none() {
        notes.push(
            "no general.architecture in the GGUF metadata: dimensions unknown; declare them"
                .to_string(),
        );
    }
    for (field, v) in [
        ("layers", layers),
        ("hidden", hidden),
        ("heads", heads),
        ("max_context", k("context_length")),
    ] {
        if v.is_none() && arch.is_some() {
            notes.push(format!(
                "{field} not found in the GGUF metadata; declare it"
            ));
        }
    }
    Ok(Architecture {
        source: format!(
            "GGUF v{version} header (general.architecture = {})",
            arch.as_deref().unwrap_or("absent")
        ),
        model_type: arch.clone(),
        name: meta.text("general.name"),
        params,
        active_params,
        layers,
        hidden,
        intermediate: k("feed_forward_length"),
        heads,
        kv_heads,
        head_dim: if kv_lora_rank.is_some() {
            None
        } else {
            head_dim
        },
        vocab,
        max_context: k("context_length"),
        attention,
        window,
        local_layers,
        linear_layers: None,
        linear_state: None,
        kv_lora_rank,
        qk_rope_dim: kv_lora_rank.and_then(|_| k("rope.dimension_count")),
        experts,
        experts_active,
        tie_embeddings: Some(!has_output),
        weights: Some(weights),
        quantization,
        notes,
    })
}

/// The file's type: `general.file_type`, else llama.cpp's guess from the tensors.
fn file_type(meta: &Metadata, most_common: Option<u32>) -> Option<Quantization> {
    let declared = meta.int("general.file_type");
    let (id, guessed) = match declared {
        Some(id) => (id, false),
        None => (guessed_ftype(most_common?)?, true),
    };
    Some(Quantization::Gguf(GgufFileType {
        id,
        name: llama_ftype(id),
        guessed,
    }))
}
