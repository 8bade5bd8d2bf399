//! Whether a GPU runs a weight format natively, through weight-only kernels, upcast to
//! 16 bit, or not at all: the quant's `tensor` type against the GPU architecture's tensor
//! rates (stdlib/archs.deploy) and the engine's `fallback` (`weight_only`: mixed-precision
//! kernels where the architecture has them; `dequantize`: the engine's own kernels, on any
//! GPU). All of it is catalog data.

use super::Entry;
use super::schema::{Fallback, TensorType, YesNo};

/// How an engine runs a weight format on a GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Support {
    /// The architecture has tensor cores for the format's type (or the format needs none).
    Native,
    /// Mixed-precision kernels dequantize the weights to 16 bit inside the matrix multiply:
    /// the weights keep their size; the multiplies run at 16-bit speed.
    WeightOnly,
    /// The engine converts the weights to 16 bit when it loads them: they take 2 bytes each.
    Upcast,
    /// The engine cannot run the format on this GPU.
    Unsupported,
}

impl Support {
    pub fn describe(self) -> &'static str {
        match self {
            Support::Native => "native",
            Support::WeightOnly => "weight-only",
            Support::Upcast => "upcast",
            Support::Unsupported => "unsupported",
        }
    }
}

/// The tensor type a format needs that the architecture lacks, if any.
pub fn missing_tensor(quant: &Entry<'_>, arch: Option<&Entry<'_>>) -> Option<TensorType> {
    let tensor = quant.as_quant().tensor?;
    let arch = arch?.as_arch();
    let has = |ty: TensorType| arch.rate(ty).is_some_and(|r| r > 0.0);
    // A 16-bit format runs on 16-bit tensor cores of either kind (Volta and Turing run
    // bf16 checkpoints as fp16: the same bytes).
    let native = match tensor {
        TensorType::Bf16 | TensorType::Fp16 => has(TensorType::Bf16) || has(TensorType::Fp16),
        other => has(other),
    };
    (!native).then_some(tensor)
}

/// How `engine` runs `quant` on a GPU of architecture `arch` (unknown architecture:
/// [`Support::Native`], no judgement).
pub fn support(quant: &Entry<'_>, arch: Option<&Entry<'_>>, engine: &Entry<'_>) -> Support {
    if missing_tensor(quant, arch).is_none() {
        return Support::Native;
    }
    let weight_only_kernels = arch.and_then(|a| a.as_arch().weight_only) == Some(YesNo::Yes);
    match engine.as_engine().fallback {
        Some(Fallback::WeightOnly) if weight_only_kernels => Support::WeightOnly,
        // Kernels that dequantize every format they load themselves (ggml's), on any GPU.
        Some(Fallback::Dequantize) => Support::WeightOnly,
        Some(Fallback::Upcast) => Support::Upcast,
        _ => Support::Unsupported,
    }
}

/// The sentence that says why a format is not native, and what the engine does instead.
pub fn note(
    quant: &Entry<'_>,
    quant_name: &str,
    arch: Option<&Entry<'_>>,
    engine_name: &str,
    engine: &Entry<'_>,
    gpu_name: &str,
) -> String {
    let Some(tensor) = missing_tensor(quant, arch) else {
        return format!("{gpu_name} runs {quant_name} natively");
    };
    let arch_name = arch
        .and_then(|a| a.as_arch().name.as_deref())
        .unwrap_or("its architecture");
    let ty = tensor.name().to_uppercase();
    let lacks = format!("{gpu_name} ({arch_name}) has no {ty} tensor cores");
    match support(quant, arch, engine) {
        Support::Native => format!("{gpu_name} runs {quant_name} natively"),
        Support::WeightOnly => format!(
            "{lacks}: {engine_name} runs {quant_name} weight-only (dequantized to 16 bit in its kernels): memory as {quant_name}, matrix multiplies at 16-bit speed"
        ),
        Support::Upcast => format!(
            "{lacks}: {engine_name} upcasts {quant_name} weights to 16 bit when it loads them, so they take 2 bytes per parameter"
        ),
        Support::Unsupported => match engine.as_engine().fallback {
            Some(Fallback::WeightOnly) => format!(
                "{lacks}, and no weight-only kernels that {engine_name} could run {quant_name} with instead"
            ),
            _ => format!("{lacks}, and {engine_name} has no other way to run {quant_name}"),
        },
    }
}

/// The architecture entry a GPU names in its `arch` field, if it names one in scope.
pub fn arch_of<'db>(
    db: &'db dyn crate::db::Db,
    scope: &crate::names::Scope<'db>,
    gpu: &Entry<'db>,
) -> Option<&'db Entry<'db>> {
    let name = gpu.as_gpu().arch.as_ref()?;
    scope
        .lookup(crate::syntax::ast::DeclKind::Arch, name)
        .map(|key| super::entry_of(db, key))
}
