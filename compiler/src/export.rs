//! `export`: the launch command of a deployment for a serving engine, as the seed pages
//! show them (a `vllm serve` command line, an Ollama Modelfile with the server's
//! environment, a `llama-server` command line).

use crate::db::{self, Db, SourceFile};
use crate::eval::Value;
use crate::eval::deployment::Setup;
use crate::eval::schema::Valid;
use crate::syntax::ast::DeclKind;

/// The engines `export` writes launch commands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Vllm,
    Ollama,
    Llamacpp,
}

impl Target {
    pub fn name(self) -> &'static str {
        match self {
            Target::Vllm => "vllm",
            Target::Ollama => "ollama",
            Target::Llamacpp => "llamacpp",
        }
    }
}

/// Why a deployment cannot be exported, with the fix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExportError {
    pub message: String,
    pub help: String,
    /// The request itself was wrong (an unknown deployment), not the deployment.
    pub usage: bool,
}

fn error(message: impl Into<String>, help: impl Into<String>) -> ExportError {
    ExportError {
        message: message.into(),
        help: help.into(),
        usage: false,
    }
}

/// Writes the launch command of deployment `name` in `file` for `target`.
pub fn export(
    db: &dyn Db,
    file: SourceFile,
    name: &str,
    target: Target,
) -> Result<String, ExportError> {
    let keys: Vec<_> = db::decl_keys(db, file)
        .iter()
        .copied()
        .filter(|key| key.kind(db) == DeclKind::Deployment)
        .collect();
    let Some(key) = keys.iter().copied().find(|key| key.name(db) == name) else {
        let names: Vec<&str> = keys.iter().map(|k| k.name(db).as_str()).collect();
        let help = crate::names::closest(name, names.iter().copied())
            .map(|s| format!("did you mean `{s}`?"))
            .unwrap_or_else(|| format!("the deployments are {}", names.join(", ")));
        return Err(ExportError {
            usage: true,
            ..error(format!("no deployment `{name}` in this file"), help)
        });
    };
    let result = crate::check::deployment(db, key);
    let Some(setup) = &result.setup else {
        return Err(error(
            format!("deployment `{name}` could not be evaluated"),
            "run `deployfit check` on the file and fix its errors first",
        ));
    };
    // Layers on the GPU when `offload = auto` keeps some in system RAM, or 0 with
    // `gpu = cpu`: llama.cpp's `--n-gpu-layers`, Ollama's `num_gpu`.
    let gpu_layers = result
        .breakdown
        .as_ref()
        .and_then(|b| match (b.gpu_layers, b.layers) {
            (Some(gpu), Some(all)) if gpu < all => Some(gpu),
            _ => None,
        });
    let scope = crate::names::scope(db, file);
    let field = |kind: DeclKind, entry: &str, field: &str| -> Option<Value> {
        let key = scope.lookup(kind, entry)?;
        crate::eval::entry_of(db, key).fields.get(field).cloned()
    };
    let text = |kind, entry: &str, name: &str| match field(kind, entry, name) {
        Some(Value::Str(text)) | Some(Value::Symbol(text)) => Some(text),
        _ => None,
    };
    let runs = scope
        .lookup(DeclKind::Quant, &setup.quant)
        .is_none_or(|key| crate::eval::entry_of(db, key).runs_on(target.name()));
    if !runs {
        return Err(error(
            format!("{} weights do not run on {}", setup.quant, target.name()),
            format!(
                "export for an engine listed in {}'s `engines`, or choose a quant that {} runs",
                setup.quant,
                target.name()
            ),
        ));
    }
    // Every string that reaches the output is checked again here, whatever `check`
    // said: an id written but rejected (so absent from the entry) refuses the export.
    let model_entry = scope
        .lookup(DeclKind::Model, &setup.model)
        .map(|key| crate::eval::entry_of(db, key));
    let id = |field: &str, valid: Valid| -> Result<Option<String>, ExportError> {
        let written = model_entry.is_some_and(|e| e.owners.contains_key(field));
        match text(DeclKind::Model, &setup.model, field) {
            Some(id) => match valid.check_str(&id) {
                Ok(()) => Ok(Some(id)),
                Err(problem) => Err(invalid(setup, field, valid, &problem)),
            },
            None if written => Err(invalid(
                setup,
                field,
                valid,
                "`deployfit check` reports why",
            )),
            None => Ok(None),
        }
    };
    for name in [&setup.model, &setup.quant, &setup.kv_cache] {
        if !is_identifier(name) {
            return Err(error(
                format!("`{name}` is not a plain name and cannot be exported"),
                "name catalog entries with letters, digits and `_`",
            ));
        }
    }
    let kind = text(DeclKind::Quant, &setup.quant, "kind").unwrap_or_default();
    // The engines' own spellings come from the catalog (`vllm_name`, `vllm_quantization`
    // ...), never from entry names: an `extends` copy exports as its original. They are
    // validated again, like the ids.
    let flag = |kind: DeclKind, entry: &str, field: &str| {
        text(kind, entry, field).filter(|value| Valid::Flag.check_str(value).is_ok())
    };
    let kv = |field: &str| flag(DeclKind::Kv, &setup.kv_cache, field);
    match target {
        Target::Vllm => vllm(
            setup,
            id("hf", Valid::HfRepo)?,
            &kind,
            kv("vllm_name"),
            flag(DeclKind::Quant, &setup.quant, "vllm_quantization"),
        ),
        Target::Ollama => ollama(
            setup,
            id("ollama", Valid::OllamaTag)?,
            kv("ollama_name"),
            gpu_layers,
        ),
        Target::Llamacpp => llamacpp(
            setup,
            id("hf", Valid::HfRepo)?,
            kv("llamacpp_name"),
            gpu_layers,
        ),
    }
}

/// The refusal for an `hf`/`ollama` string that is not a valid id.
fn invalid(setup: &Setup, field: &str, valid: Valid, problem: &str) -> ExportError {
    error(
        format!(
            "model `{}` has an `{field}` that is not {}: {problem}",
            setup.model,
            valid.describe()
        ),
        format!(
            "fix `{field}` (`deployfit check` points at it); export never prints an id it cannot validate"
        ),
    )
}

/// A catalog name as the grammar writes it: ASCII letters, digits and `_`.
fn is_identifier(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// One shell word: unchanged when it holds only characters no POSIX shell treats
/// specially (`A-Z a-z 0-9 _ . / : = @ % + -`), else in single quotes with each `'`
/// written as `'\''`. (Quoting does not stop a word from being read as an option: ids
/// that start with `-` are rejected by their validation instead.)
pub fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word.chars().all(|c| {
            c.is_ascii_alphanumeric()
                || matches!(c, '_' | '.' | '/' | ':' | '=' | '@' | '%' | '+' | '-')
        });
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

fn vllm(
    setup: &Setup,
    hf: Option<String>,
    kind: &str,
    kv: Option<String>,
    quantization: Option<String>,
) -> Result<String, ExportError> {
    let hf = hf.ok_or_else(|| {
        error(
            format!("model `{}` has no Hugging Face id", setup.model),
            format!(
                "add `hf = \"org/name\"` to `{}` (with `extends`)",
                setup.model
            ),
        )
    })?;
    let kv = kv.ok_or_else(|| {
        error(
            format!("vLLM has no `{}` KV cache", setup.kv_cache),
            "use kv_cache = fp8 or fp16 with vLLM",
        )
    })?;
    let utilization = setup.memory_utilization.unwrap_or(0.9);
    let mut lines = vec![
        format!("vllm serve {}", shell_quote(&hf)),
        format!("  --tensor-parallel-size {}", setup.count),
        format!("  --max-model-len {}", setup.context),
        format!("  --max-num-seqs {}", setup.seqs),
        format!(
            "  --gpu-memory-utilization {}",
            (utilization * 1000.0).round() / 1000.0
        ),
        format!("  --kv-cache-dtype {}", shell_quote(&kv)),
    ];
    if let Some(quantization) = quantization {
        lines.push(format!("  --quantization {}", shell_quote(&quantization)));
    }
    lines.push("  --port 8000".into());
    let note = match kind {
        "awq" | "gptq" => format!(
            "# {hf} is the base checkpoint: point `vllm serve` at a {} repository of it.\n",
            kind.to_uppercase()
        ),
        _ => String::new(),
    };
    Ok(format!("{note}{}\n", lines.join(" \\\n")))
}

fn ollama(
    setup: &Setup,
    tag: Option<String>,
    kv: Option<String>,
    gpu_layers: Option<u64>,
) -> Result<String, ExportError> {
    let tag = tag.ok_or_else(|| {
        error(
            format!("model `{}` has no Ollama tag", setup.model),
            format!(
                "add `ollama = \"name:tag\"` to `{}` (with `extends`)",
                setup.model
            ),
        )
    })?;
    let kv = kv.ok_or_else(|| {
        error(
            format!("Ollama has no `{}` KV cache", setup.kv_cache),
            "use kv_cache = q8_0, q4_0 or fp16 with Ollama",
        )
    })?;
    Ok(format!(
        "# Save as Modelfile, then run: ollama create {name} -f Modelfile\n\
         FROM {tag}\n\
         PARAMETER num_ctx {context}\n\
         {num_gpu}\
         \n\
         # Environment for `ollama serve` ({seqs} parallel sequence{plural}, {kv} KV cache):\n\
         # OLLAMA_NUM_PARALLEL={seqs} OLLAMA_FLASH_ATTENTION=1 OLLAMA_KV_CACHE_TYPE={kv} ollama serve\n",
        name = shell_quote(&format!("{}-{}", setup.model, setup.quant.to_lowercase())),
        context = setup.context,
        seqs = setup.seqs,
        plural = if setup.seqs == 1 { "" } else { "s" },
        num_gpu = gpu_layers
            .map(|layers| format!("PARAMETER num_gpu {layers}\n"))
            .unwrap_or_default(),
    ))
}

fn llamacpp(
    setup: &Setup,
    hf: Option<String>,
    kv: Option<String>,
    gpu_layers: Option<u64>,
) -> Result<String, ExportError> {
    let kv = kv.ok_or_else(|| {
        error(
            format!("llama.cpp has no `{}` KV cache", setup.kv_cache),
            "use kv_cache = q8_0, q4_0 or fp16 with llama.cpp",
        )
    })?;
    let base = hf
        .as_deref()
        .and_then(|id| id.rsplit('/').next())
        .unwrap_or(&setup.model)
        .to_string();
    // llama-server's -c is the context of all slots together.
    let mut lines = vec![
        format!(
            "llama-server -m {}",
            shell_quote(&format!("models/{base}-{}.gguf", setup.quant))
        ),
        format!("  --ctx-size {}", setup.context * setup.seqs),
        format!("  --parallel {}", setup.seqs),
        format!("  --n-gpu-layers {}", gpu_layers.unwrap_or(999)),
        "  --flash-attn on".to_string(),
        format!("  --cache-type-k {}", shell_quote(&kv)),
        format!("  --cache-type-v {}", shell_quote(&kv)),
    ];
    if setup.count > 1 {
        lines.push("  --split-mode layer".into());
    }
    lines.push("  --port 8080".into());
    Ok(format!("{}\n", lines.join(" \\\n")))
}

#[cfg(test)]
mod tests {
    use super::shell_quote;

    #[test]
    fn shell_words_are_quoted() {
        assert_eq!(shell_quote("THUDM/GLM-4-9B-0414"), "THUDM/GLM-4-9B-0414");
        assert_eq!(shell_quote("models/x-Q4_K_M.gguf"), "models/x-Q4_K_M.gguf");
        assert_eq!(shell_quote("x/y; rm -rf ~"), "'x/y; rm -rf ~'");
        assert_eq!(shell_quote("$(id)"), "'$(id)'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("a\nb"), "'a\nb'");
    }
}
