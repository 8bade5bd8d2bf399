//! Weight formats as written in repository names (`-AWQ`, `-GPTQ-Int4`, `-FP8-Dynamic`,
//! `mlx-community/…-4bit`, `-GGUF`, …), and the suffix stripping used to find the base model.
//!
//! Suffix spellings are taken from the ids in data/hf_models.csv (e.g.
//! hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4, Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4,
//! RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8-dynamic, RedHatAI/…-quantized.w4a16,
//! unsloth/…-unsloth-bnb-4bit, mlx-community/…-4bit, lmstudio-community/…-MLX-8bit,
//! unsloth/…-GGUF, RedHatAI/…-NVFP4, mlx-community/gpt-oss-20b-MXFP4-Q8).

use std::fmt;

use crate::Record;

/// A weight format named by a repository name or an Ollama tag.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum WeightFormat {
    Bf16,
    Fp16,
    /// FP8 (E4M3) weights with per-tensor or per-channel scales: `-FP8`, `-FP8-Dynamic`,
    /// `-FP8-KV`.
    Fp8,
    /// FP8 with a scale per 128 × 128 block: `-FP8-Block`, and Qwen's own `-FP8`
    /// checkpoints (their model cards: "fine-grained fp8 quantization with block size of
    /// 128").
    Fp8Block,
    /// AWQ with the given weight bits (4 unless the name says 8).
    Awq {
        bits: u8,
    },
    /// GPTQ with the given weight bits (4 unless the name says otherwise).
    Gptq {
        bits: u8,
    },
    /// GGUF; the llama.cpp quantization type when the name or tag says it (e.g. `Q4_K_M`).
    Gguf(Option<String>),
    /// MLX 4-bit affine quantization (mlx-community / `-MLX-4bit`).
    Mlx4bit,
    /// MLX 8-bit.
    Mlx8bit,
    /// MLX with other or unstated bits (`-MLX-6bit`, `-3bit`, `-mlx`).
    Mlx(Option<u8>),
    /// OCP microscaling FP4 (gpt-oss's native MoE weights; Ollama's gpt-oss tags).
    Mxfp4,
    /// NVIDIA FP4.
    Nvfp4,
    /// bitsandbytes 4-bit (`-bnb-4bit`).
    Bnb4bit,
    /// compressed-tensors int4 weights, 16-bit activations (`-w4a16`, `quantized.w4a16`).
    W4a16,
    /// compressed-tensors int8 weights and activations (`-w8a8`, `quantized.w8a8`).
    W8a8,
    /// Integer weights of the given bits with no named scheme (`-int4`, `-int8`, `-4bit`).
    Int(u8),
}

impl WeightFormat {
    /// The stdlib quant name (fp16 bf16 fp8 fp8_block mxfp4 nvfp4 Q8_0 Q6_K Q5_K_M Q5_K_S Q4_K_M
    /// Q4_0 Q3_K_M Q2_K IQ4_XS awq_int4 gptq_int4), when this format is one of them. None for
    /// formats the stdlib does not model (MLX, bitsandbytes, compressed-tensors, GGUF of unknown
    /// type).
    pub fn stdlib_quant(&self) -> Option<&'static str> {
        Some(match self {
            WeightFormat::Bf16 => "bf16",
            WeightFormat::Fp16 => "fp16",
            WeightFormat::Fp8 => "fp8",
            WeightFormat::Fp8Block => "fp8_block",
            WeightFormat::Mxfp4 => "mxfp4",
            WeightFormat::Nvfp4 => "nvfp4",
            WeightFormat::Awq { bits: 4 } => "awq_int4",
            WeightFormat::Gptq { bits: 4 } => "gptq_int4",
            WeightFormat::Gguf(Some(q)) => match q.to_ascii_uppercase().as_str() {
                "Q8_0" => "Q8_0",
                "Q6_K" => "Q6_K",
                "Q5_K_M" => "Q5_K_M",
                "Q5_K_S" => "Q5_K_S",
                "Q4_K_M" => "Q4_K_M",
                "Q4_0" => "Q4_0",
                "Q3_K_M" => "Q3_K_M",
                "Q2_K" => "Q2_K",
                "IQ4_XS" => "IQ4_XS",
                // llama.cpp's file type for gpt-oss: experts in MXFP4 (LLAMA_FTYPE_MOSTLY_MXFP4_MOE).
                "MXFP4" | "MXFP4_MOE" => "mxfp4",
                "F16" => "fp16",
                "BF16" => "bf16",
                _ => return None,
            },
            _ => return None,
        })
    }

    /// True for formats that store weights in fewer than 16 bits.
    pub fn is_quantized(&self) -> bool {
        !matches!(self, WeightFormat::Bf16 | WeightFormat::Fp16)
    }
}

impl fmt::Display for WeightFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WeightFormat::Bf16 => write!(f, "BF16"),
            WeightFormat::Fp16 => write!(f, "FP16"),
            WeightFormat::Fp8 => write!(f, "FP8"),
            WeightFormat::Fp8Block => write!(f, "FP8 (128 × 128 blocks)"),
            WeightFormat::Awq { bits } => write!(f, "AWQ int{bits}"),
            WeightFormat::Gptq { bits } => write!(f, "GPTQ int{bits}"),
            WeightFormat::Gguf(Some(q)) => write!(f, "GGUF {q}"),
            WeightFormat::Gguf(None) => write!(f, "GGUF (quantization type not named)"),
            WeightFormat::Mlx4bit => write!(f, "MLX 4-bit"),
            WeightFormat::Mlx8bit => write!(f, "MLX 8-bit"),
            WeightFormat::Mlx(Some(b)) => write!(f, "MLX {b}-bit"),
            WeightFormat::Mlx(None) => write!(f, "MLX"),
            WeightFormat::Mxfp4 => write!(f, "MXFP4"),
            WeightFormat::Nvfp4 => write!(f, "NVFP4"),
            WeightFormat::Bnb4bit => write!(f, "bitsandbytes 4-bit"),
            WeightFormat::W4a16 => write!(f, "int4 weight-only (W4A16)"),
            WeightFormat::W8a8 => write!(f, "int8 W8A8"),
            WeightFormat::Int(b) => write!(f, "int{b}"),
        }
    }
}

/// One recognised name token (lowercase) and what it says.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Tok {
    Gguf,
    GgufType(&'static str),
    Awq,
    Gptq,
    Fp8,
    /// `dynamic`, `kv`: only after fp8 (`-FP8-Dynamic`).
    Fp8Qualifier,
    /// `block`: only after fp8 (`-FP8-Block`).
    Fp8Block,
    Bits(u8),
    IntBits(u8),
    Mlx,
    Bnb,
    /// `unsloth` right before `bnb` (`-unsloth-bnb-4bit`).
    UnslothBnb,
    W4a16,
    W8a8,
    Mxfp4,
    Nvfp4,
    Bf16,
    Fp16,
}

/// GGUF quantization type names as they appear in repository names (llama.cpp
/// `ggml/include/ggml.h` `ggml_type` / `llama_ftype` names).
const GGUF_TYPES: &[&str] = &[
    "Q2_K", "Q3_K_S", "Q3_K_M", "Q3_K_L", "Q4_0", "Q4_1", "Q4_K_S", "Q4_K_M", "Q5_0", "Q5_1",
    "Q5_K_S", "Q5_K_M", "Q6_K", "Q8_0", "IQ2_XXS", "IQ2_XS", "IQ3_XXS", "IQ3_M", "IQ4_XS",
    "IQ4_NL",
];

fn token(t: &str) -> Option<Tok> {
    let lower = t.to_ascii_lowercase();
    Some(match lower.as_str() {
        "gguf" => Tok::Gguf,
        "awq" => Tok::Awq,
        "gptq" => Tok::Gptq,
        "fp8" => Tok::Fp8,
        "dynamic" | "kv" => Tok::Fp8Qualifier,
        "block" => Tok::Fp8Block,
        "2bit" => Tok::Bits(2),
        "3bit" => Tok::Bits(3),
        "4bit" => Tok::Bits(4),
        "6bit" => Tok::Bits(6),
        "8bit" => Tok::Bits(8),
        "int4" => Tok::IntBits(4),
        "int8" => Tok::IntBits(8),
        "mlx" => Tok::Mlx,
        "bnb" => Tok::Bnb,
        "unsloth" => Tok::UnslothBnb,
        "w4a16" | "quantized.w4a16" => Tok::W4a16,
        "w8a8" | "quantized.w8a8" => Tok::W8a8,
        "mxfp4" => Tok::Mxfp4,
        "nvfp4" => Tok::Nvfp4,
        "bf16" => Tok::Bf16,
        "fp16" | "f16" => Tok::Fp16,
        _ => {
            let upper = t.to_ascii_uppercase();
            let g = GGUF_TYPES.iter().find(|g| **g == upper)?;
            Tok::GgufType(g)
        }
    })
}

/// Splits `name` into (base, format) by removing trailing quantization tokens separated by `-`
/// or `.` (`quantized.w4a16`, `.w8a8`); `_` stays inside GGUF type names (`Q4_K_M`). None when the name has no quantization suffix, or when removing
/// it would leave nothing.
pub(crate) fn strip_suffix<'a>(org: &str, name: &'a str) -> Option<(&'a str, WeightFormat)> {
    let mut end = name.len();
    let mut toks: Vec<Tok> = Vec::new();
    // At most 8 tokens: every real suffix has 1–4 (e.g. -unsloth-bnb-4bit, -MLX-4bit).
    while toks.len() < 8 {
        let head = name.get(..end)?;
        let cut = head.rfind(['-', '.'])?;
        let tail = head.get(cut + 1..)?;
        // "quantized.w4a16" spans a dot: try the longer token first.
        let (tok, new_end) = match head.get(..cut).and_then(|h| h.rfind('-')).and_then(|c2| {
            let long = head.get(c2 + 1..)?;
            let t = token(long).filter(|t| matches!(t, Tok::W4a16 | Tok::W8a8))?;
            Some((t, c2))
        }) {
            Some(x) => x,
            None => match token(tail) {
                Some(t) => (t, cut),
                None => break,
            },
        };
        // Qualifiers only count right after fp8 (i.e. when fp8 is the next token leftwards);
        // "unsloth" only right before bnb.
        if matches!(tok, Tok::Fp8Qualifier | Tok::Fp8Block) {
            let left = head.get(..new_end)?;
            let c = left.rfind(['-', '.'])?;
            if token(left.get(c + 1..)?) != Some(Tok::Fp8) {
                break;
            }
        }
        if tok == Tok::UnslothBnb && toks.last() != Some(&Tok::Bnb) {
            break;
        }
        toks.push(tok);
        end = new_end;
    }
    if toks.is_empty() || end == 0 {
        return None;
    }
    let base = name.get(..end)?;
    Some((base, format_from_tokens(org, &toks)))
}

/// The format a list of stripped tokens (outermost first) names.
fn format_from_tokens(org: &str, toks: &[Tok]) -> WeightFormat {
    let has = |t: Tok| toks.contains(&t);
    let bits = toks.iter().find_map(|t| match t {
        Tok::Bits(b) | Tok::IntBits(b) => Some(*b),
        _ => None,
    });
    let gguf_type = toks.iter().find_map(|t| match t {
        Tok::GgufType(g) => Some(*g),
        _ => None,
    });
    let mlx_org = org.eq_ignore_ascii_case("mlx-community");
    if has(Tok::Gguf) {
        return WeightFormat::Gguf(gguf_type.map(str::to_string));
    }
    if has(Tok::Awq) {
        return WeightFormat::Awq {
            bits: bits.unwrap_or(4),
        };
    }
    if has(Tok::Gptq) {
        return WeightFormat::Gptq {
            bits: bits.unwrap_or(4),
        };
    }
    if has(Tok::Mxfp4) {
        return WeightFormat::Mxfp4;
    }
    if has(Tok::Nvfp4) {
        return WeightFormat::Nvfp4;
    }
    if has(Tok::Fp8) {
        return if has(Tok::Fp8Block) || org.eq_ignore_ascii_case("Qwen") {
            WeightFormat::Fp8Block
        } else {
            WeightFormat::Fp8
        };
    }
    if has(Tok::Bnb) {
        return WeightFormat::Bnb4bit;
    }
    if has(Tok::W4a16) {
        return WeightFormat::W4a16;
    }
    if has(Tok::W8a8) {
        return WeightFormat::W8a8;
    }
    if has(Tok::Mlx) || (mlx_org && toks.iter().any(|t| matches!(t, Tok::Bits(_)))) {
        return match bits {
            Some(4) => WeightFormat::Mlx4bit,
            Some(8) => WeightFormat::Mlx8bit,
            b => WeightFormat::Mlx(b),
        };
    }
    if mlx_org && has(Tok::Bf16) {
        return WeightFormat::Bf16;
    }
    if let Some(g) = gguf_type {
        return WeightFormat::Gguf(Some(g.to_string()));
    }
    if let Some(b) = bits {
        return WeightFormat::Int(b);
    }
    if has(Tok::Bf16) {
        return WeightFormat::Bf16;
    }
    WeightFormat::Fp16
}

/// The format the name `org/name` says, if any.
pub(crate) fn format_of(org: &str, name: &str) -> Option<WeightFormat> {
    strip_suffix(org, name).map(|(_, f)| f)
}

/// Re-upload organisations known to publish the original weights unchanged (used first when
/// several unquantized re-uploads of one name exist). Sources: their Hugging Face org pages
/// (unsloth: "unsloth/… original weights" collections; NousResearch: ungated Llama mirrors;
/// RedHatAI, formerly neuralmagic: https://huggingface.co/RedHatAI).
pub(crate) const TRUSTED_REUPLOADERS: &[&str] =
    &["unsloth", "NousResearch", "RedHatAI", "neuralmagic"];

/// An unquantized re-upload candidate: the name carries no quantization suffix and the
/// organisation is not mlx-community (whose repositories are MLX conversions, quantized unless
/// named `-bf16`).
pub(crate) fn is_unquantized_reupload(r: &Record) -> bool {
    !r.org().eq_ignore_ascii_case("mlx-community") && strip_suffix(r.org(), r.name()).is_none()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(org: &str, name: &str) -> Option<(String, WeightFormat)> {
        strip_suffix(org, name).map(|(b, f)| (b.to_string(), f))
    }

    /// (org, name, expected (base, format)).
    type Case = (
        &'static str,
        &'static str,
        Option<(&'static str, WeightFormat)>,
    );

    #[test]
    fn suffixes() {
        let cases: &[Case] = &[
            (
                "h",
                "Meta-Llama-3.1-70B-Instruct-AWQ-INT4",
                Some(("Meta-Llama-3.1-70B-Instruct", WeightFormat::Awq { bits: 4 })),
            ),
            (
                "Qwen",
                "Qwen2.5-7B-Instruct-GPTQ-Int8",
                Some(("Qwen2.5-7B-Instruct", WeightFormat::Gptq { bits: 8 })),
            ),
            (
                "Qwen",
                "Qwen2.5-7B-Instruct-AWQ",
                Some(("Qwen2.5-7B-Instruct", WeightFormat::Awq { bits: 4 })),
            ),
            (
                "c",
                "Qwen3-30B-A3B-Instruct-2507-AWQ-4bit",
                Some(("Qwen3-30B-A3B-Instruct-2507", WeightFormat::Awq { bits: 4 })),
            ),
            (
                "R",
                "Meta-Llama-3.1-8B-Instruct-FP8-dynamic",
                Some(("Meta-Llama-3.1-8B-Instruct", WeightFormat::Fp8)),
            ),
            (
                "R",
                "Llama-3.3-70B-Instruct-FP8-Block",
                Some(("Llama-3.3-70B-Instruct", WeightFormat::Fp8Block)),
            ),
            (
                "Qwen",
                "Qwen3-32B-FP8",
                Some(("Qwen3-32B", WeightFormat::Fp8Block)),
            ),
            (
                "R",
                "Meta-Llama-3.1-8B-Instruct-quantized.w4a16",
                Some(("Meta-Llama-3.1-8B-Instruct", WeightFormat::W4a16)),
            ),
            (
                "n",
                "Qwen3-30B-A3B.w8a8",
                Some(("Qwen3-30B-A3B", WeightFormat::W8a8)),
            ),
            (
                "unsloth",
                "Llama-3.2-1B-Instruct-unsloth-bnb-4bit",
                Some(("Llama-3.2-1B-Instruct", WeightFormat::Bnb4bit)),
            ),
            (
                "unsloth",
                "Llama-3.2-1B-Instruct-bnb-4bit",
                Some(("Llama-3.2-1B-Instruct", WeightFormat::Bnb4bit)),
            ),
            (
                "mlx-community",
                "Qwen2.5-7B-Instruct-4bit",
                Some(("Qwen2.5-7B-Instruct", WeightFormat::Mlx4bit)),
            ),
            (
                "mlx-community",
                "Llama-3.2-3B-Instruct-bf16",
                Some(("Llama-3.2-3B-Instruct", WeightFormat::Bf16)),
            ),
            (
                "lmstudio-community",
                "Qwen2.5-7B-Instruct-MLX-8bit",
                Some(("Qwen2.5-7B-Instruct", WeightFormat::Mlx8bit)),
            ),
            (
                "l",
                "Qwen3-30B-A3B-Instruct-2507-MLX-6bit",
                Some(("Qwen3-30B-A3B-Instruct-2507", WeightFormat::Mlx(Some(6)))),
            ),
            (
                "unsloth",
                "Llama-3.1-8B-Instruct-GGUF",
                Some(("Llama-3.1-8B-Instruct", WeightFormat::Gguf(None))),
            ),
            (
                "x",
                "Llama-3.1-8B-Instruct-Q4_K_M-GGUF",
                Some((
                    "Llama-3.1-8B-Instruct",
                    WeightFormat::Gguf(Some("Q4_K_M".into())),
                )),
            ),
            (
                "x",
                "Llama-3.1-8B-Instruct-q8_0-gguf",
                Some((
                    "Llama-3.1-8B-Instruct",
                    WeightFormat::Gguf(Some("Q8_0".into())),
                )),
            ),
            (
                "R",
                "Llama-3.1-8B-Instruct-NVFP4",
                Some(("Llama-3.1-8B-Instruct", WeightFormat::Nvfp4)),
            ),
            (
                "p",
                "gemma-3-12b-it-INT4",
                Some(("gemma-3-12b-it", WeightFormat::Int(4))),
            ),
            (
                "unsloth",
                "gpt-oss-20b-BF16",
                Some(("gpt-oss-20b", WeightFormat::Bf16)),
            ),
            // Not quantization suffixes.
            ("Qwen", "Qwen2.5-7B-Instruct", None),
            ("Qwen", "Qwen2.5-7B-Instruct-1M", None),
            ("google", "gemma-4-31B-it-qat-q4_0-unquantized", None),
            ("x", "Dynamic", None),
            ("x", "model-dynamic", None),
            ("x", "model-kv", None),
            ("x", "GGUF", None),
            ("x", "unsloth-model", None),
            ("Qwen", "Qwen3-8B", None),
        ];
        for (org, name, want) in cases {
            let want = want.clone().map(|(b, f)| (b.to_string(), f));
            assert_eq!(s(org, name), want, "{org}/{name}");
        }
    }

    #[test]
    fn stdlib_names() {
        assert_eq!(
            WeightFormat::Gguf(Some("q4_k_m".into())).stdlib_quant(),
            Some("Q4_K_M")
        );
        assert_eq!(
            WeightFormat::Gguf(Some("IQ4_XS".into())).stdlib_quant(),
            Some("IQ4_XS")
        );
        assert_eq!(WeightFormat::Gguf(Some("Q4_1".into())).stdlib_quant(), None);
        assert_eq!(WeightFormat::Gguf(None).stdlib_quant(), None);
        assert_eq!(WeightFormat::Gptq { bits: 8 }.stdlib_quant(), None);
        assert_eq!(WeightFormat::Bf16.stdlib_quant(), Some("bf16"));
        assert_eq!(WeightFormat::Mxfp4.stdlib_quant(), Some("mxfp4"));
        // llama.cpp's gpt-oss file type (general.file_type 38).
        assert_eq!(
            WeightFormat::Gguf(Some("MXFP4_MOE".into())).stdlib_quant(),
            Some("mxfp4")
        );
        assert_eq!(WeightFormat::Nvfp4.stdlib_quant(), Some("nvfp4"));
        assert_eq!(WeightFormat::Mlx4bit.stdlib_quant(), None);
        assert!(!WeightFormat::Fp16.is_quantized() && WeightFormat::Fp8.is_quantized());
    }
}
