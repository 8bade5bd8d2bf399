//! The weight format a model file declares, as a catalog quant: a GGUF file's type
//! (`general.file_type`, or llama.cpp's guess from its tensors) and a config.json's
//! `quantization_config` become the registry's [`WeightFormat`], whose
//! [`WeightFormat::stdlib_quant`] is the one table from format names to stdlib quants
//! (repository names and Ollama tags use it too). `docs/artifacts.md` ("Formats").

use std::path::Path;

use deployfit_artifacts::{Architecture, QuantConfig, Quantization};
use deployfit_registry::WeightFormat;

/// The format a `quantization_config` declares, when it is one the registry names.
fn config_format(c: &QuantConfig) -> Option<WeightFormat> {
    let bits = |default: u64| u8::try_from(c.bits.unwrap_or(default)).ok();
    Some(match c.method.as_str() {
        "awq" => WeightFormat::Awq { bits: bits(4)? },
        "gptq" => WeightFormat::Gptq { bits: bits(4)? },
        "fp8" | "fbgemm_fp8" if c.block => WeightFormat::Fp8Block,
        "fp8" | "fbgemm_fp8" => WeightFormat::Fp8,
        "mxfp4" => WeightFormat::Mxfp4,
        "modelopt" => match c.scheme.as_deref()? {
            "fp8" => WeightFormat::Fp8,
            "nvfp4" => WeightFormat::Nvfp4,
            _ => return None,
        },
        "compressed-tensors" => match (c.float, c.bits?, c.activations) {
            (true, 8, _) if c.block => WeightFormat::Fp8Block,
            (true, 8, _) => WeightFormat::Fp8,
            (true, 4, _) if c.scheme.as_deref() == Some("nvfp4-pack-quantized") => {
                WeightFormat::Nvfp4
            }
            (false, 4, false) => WeightFormat::W4a16,
            (false, 8, true) => WeightFormat::W8a8,
            _ => return None,
        },
        "bitsandbytes" if c.bits == Some(4) => WeightFormat::Bnb4bit,
        "mlx" => match (c.scheme.as_deref(), c.bits?) {
            (Some("mxfp4"), _) => WeightFormat::Mxfp4,
            (Some("nvfp4"), _) => WeightFormat::Nvfp4,
            (_, 4) => WeightFormat::Mlx4bit,
            (_, 8) => WeightFormat::Mlx8bit,
            (_, b) => WeightFormat::Mlx(u8::try_from(b).ok()),
        },
        _ => return None,
    })
}

/// What a file says of its weight format, and the catalog quant it gives.
#[derive(Debug, Clone, PartialEq)]
pub struct FileFormat {
    /// The stdlib quant, when the catalog has the format.
    pub quant: Option<&'static str>,
    /// What the file says and how it was read, for the model's `source`.
    pub said: String,
}

/// The quant a GGUF file name says (`…-Q4_K_M.gguf`): the longest llama.cpp type name in
/// it that the catalog has.
fn gguf_name_quant(file_name: &str) -> Option<&'static str> {
    // Longest names first, so that Q4_K_M is not read as Q4_K.
    const GGUF: &[&str] = &[
        "Q4_K_M", "Q5_K_M", "Q5_K_S", "Q3_K_M", "IQ4_XS", "Q8_0", "Q6_K", "Q4_0", "Q2_K", "BF16",
        "F16",
    ];
    GGUF.iter()
        .find(|tag| file_name.contains(*tag))
        .and_then(|tag| WeightFormat::Gguf(Some((*tag).to_string())).stdlib_quant())
}

/// The stdlib weight format of a model file, in this order: the format the file declares
/// (a GGUF `general.file_type`, a config.json `quantization_config`), which no name
/// overrides; the GGUF file name (`…-Q4_K_M.gguf`); llama.cpp's guess from the GGUF's
/// tensor types; the safetensors dtype most bytes have (`BF16`, `F16`, `F8_E4M3`). A
/// declared format the catalog lacks gives no quant (the deployment must write one), and
/// says so.
pub fn file_format(path: &Path, arch: &Architecture) -> Option<FileFormat> {
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_uppercase())
        .unwrap_or_default();
    let is_gguf = file_name.ends_with(".GGUF");
    let named = if is_gguf {
        gguf_name_quant(&file_name)
    } else {
        None
    };
    let declared = arch.quantization.as_ref();
    let format = declared.and_then(|q| match q {
        Quantization::Gguf(t) => t
            .name
            .map(|name| WeightFormat::Gguf(Some(name.to_string()))),
        Quantization::Config(c) => config_format(c),
    });
    let from_file = format.as_ref().and_then(WeightFormat::stdlib_quant);
    match declared {
        Some(q @ Quantization::Gguf(t)) if t.guessed => {
            // A name the publisher gave says more than the guess (Q4_K_S, not the `_M`
            // mix llama.cpp assumes).
            if let Some(quant) = named {
                return Some(FileFormat {
                    quant: Some(quant),
                    said: format!(
                        "weights in {quant}, from the file name ({q} gives {})",
                        from_file.unwrap_or("no catalog quant")
                    ),
                });
            }
            return Some(FileFormat {
                quant: from_file,
                said: described(q, format.as_ref(), from_file),
            });
        }
        Some(q) => {
            let mut said = described(q, format.as_ref(), from_file);
            if let (Some(name), Some(file)) = (named, from_file)
                && name != file
            {
                said.push_str(&format!(
                    "; the file name says {name}, the file's own type ({file}) is used"
                ));
            }
            return Some(FileFormat {
                quant: from_file,
                said,
            });
        }
        None => {}
    }
    if let Some(quant) = named {
        return Some(FileFormat {
            quant: Some(quant),
            said: format!("weights in {quant}, from the file name"),
        });
    }
    let weights = arch.weights.as_ref()?;
    let dominant = weights.by_dtype.iter().max_by_key(|d| d.bytes)?;
    // A safetensors dtype → the stdlib quant of those weights.
    const SAFETENSORS: &[(&str, &str)] = &[("BF16", "bf16"), ("F16", "fp16"), ("F8_E4M3", "fp8")];
    SAFETENSORS
        .iter()
        .find(|(dtype, _)| *dtype == dominant.dtype)
        .map(|(dtype, quant)| FileFormat {
            quant: Some(*quant),
            said: format!("weights in {quant}, the dtype most bytes have ({dtype})"),
        })
}

/// `weights in Q4_K_M (GGUF general.file_type 15 (Q4_K_M))`, or what the catalog lacks.
fn described(q: &Quantization, format: Option<&WeightFormat>, quant: Option<&str>) -> String {
    match (quant, format) {
        (Some(quant), _) => format!("weights in {quant} ({q})"),
        (None, Some(format)) => format!(
            "weights in {format} ({q}), a format the catalog has no quant for: write `quant` in the deployment"
        ),
        (None, None) => format!(
            "weights in a format the catalog does not know ({q}): write `quant` in the deployment"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use deployfit_artifacts::GgufFileType;

    fn config(method: &str, bits: Option<u64>) -> QuantConfig {
        QuantConfig {
            method: method.to_string(),
            bits,
            ..QuantConfig::default()
        }
    }

    #[test]
    fn configs_give_the_registry_formats() {
        let q = |c: QuantConfig| config_format(&c).and_then(|f| f.stdlib_quant());
        assert_eq!(q(config("awq", Some(4))), Some("awq_int4"));
        assert_eq!(q(config("awq", None)), Some("awq_int4"));
        assert_eq!(q(config("gptq", Some(4))), Some("gptq_int4"));
        // GPTQ 8-bit is a format, but not one the catalog has.
        assert_eq!(
            config_format(&config("gptq", Some(8))),
            Some(WeightFormat::Gptq { bits: 8 })
        );
        assert_eq!(q(config("gptq", Some(8))), None);
        assert_eq!(q(config("fp8", None)), Some("fp8"));
        let block = QuantConfig {
            block: true,
            ..config("fp8", None)
        };
        assert_eq!(q(block), Some("fp8_block"));
        assert_eq!(q(config("mxfp4", None)), Some("mxfp4"));
        let ct = QuantConfig {
            float: true,
            ..config("compressed-tensors", Some(8))
        };
        assert_eq!(q(ct), Some("fp8"));
        let w4a16 = config("compressed-tensors", Some(4));
        assert_eq!(config_format(&w4a16), Some(WeightFormat::W4a16));
        let nvfp4 = QuantConfig {
            scheme: Some("nvfp4".into()),
            ..config("modelopt", None)
        };
        assert_eq!(q(nvfp4), Some("nvfp4"));
        assert_eq!(config_format(&config("hqq", Some(4))), None);
        assert_eq!(config_format(&config("awq", Some(300))), None);
    }

    #[test]
    fn a_declared_gguf_type_wins_over_the_name() {
        let arch = Architecture {
            quantization: Some(Quantization::Gguf(GgufFileType {
                id: 15,
                name: Some("Q4_K_M"),
                guessed: false,
            })),
            ..Architecture::default()
        };
        let f = file_format(Path::new("/m/x-Q8_0.gguf"), &arch).unwrap();
        assert_eq!(f.quant, Some("Q4_K_M"));
        assert!(f.said.contains("the file name says Q8_0"), "{}", f.said);
        // A guess gives way to the name.
        let guessed = Architecture {
            quantization: Some(Quantization::Gguf(GgufFileType {
                id: 15,
                name: Some("Q4_K_M"),
                guessed: true,
            })),
            ..Architecture::default()
        };
        let f = file_format(Path::new("/m/x-Q5_K_S.gguf"), &guessed).unwrap();
        assert_eq!(f.quant, Some("Q5_K_S"));
        let f = file_format(Path::new("/m/x.gguf"), &guessed).unwrap();
        assert_eq!(f.quant, Some("Q4_K_M"));
        // A declared type the catalog lacks gives no quant, and says so.
        let s = Architecture {
            quantization: Some(Quantization::Gguf(GgufFileType {
                id: 14,
                name: Some("Q4_K_S"),
                guessed: false,
            })),
            ..Architecture::default()
        };
        let f = file_format(Path::new("/m/x-Q4_K_M.gguf"), &s).unwrap();
        assert_eq!(f.quant, None);
        assert!(f.said.contains("GGUF Q4_K_S"), "{}", f.said);
    }
}
