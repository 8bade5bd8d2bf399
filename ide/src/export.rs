//! `export`: the launch command of a deployment for a serving engine, as the seed pages
//! show them (a `vllm serve` command line, an Ollama Modelfile with the server's
//! environment, a `llama-server` command line).

use crate::db::{self, Db, SourceFile};
use crate::eval::deployment::Setup;
use crate::eval::schema::{Dialect, QuantKind, SpecMethod, Valid};
use crate::syntax::ast::DeclKind;

/// The engines `export` writes launch commands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Vllm,
    Ollama,
    Llamacpp,
    Tgi,
    Lmdeploy,
    Mlx,
}

impl Target {
    pub const ALL: [Target; 6] = [
        Target::Vllm,
        Target::Ollama,
        Target::Llamacpp,
        Target::Tgi,
        Target::Lmdeploy,
        Target::Mlx,
    ];

    /// The engine dialect (`engine`'s `dialect` field) this target writes.
    pub fn dialect(self) -> Dialect {
        match self {
            Target::Vllm => Dialect::Vllm,
            Target::Ollama => Dialect::Ollama,
            Target::Llamacpp => Dialect::Llamacpp,
            Target::Tgi => Dialect::Tgi,
            Target::Lmdeploy => Dialect::Lmdeploy,
            Target::Mlx => Dialect::Mlx,
        }
    }

    /// The dialect's spelling (`--engine vllm`).
    pub fn name(self) -> &'static str {
        self.dialect().name()
    }

    /// The target of an engine `dialect`, when `export` writes that engine.
    pub fn from_dialect(dialect: Dialect) -> Option<Target> {
        Target::ALL.into_iter().find(|t| t.dialect() == dialect)
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

/// Writes the launch command of deployment `name` in `file` for `target`; without a
/// target, for the engine the deployment names (its `dialect`).
pub fn export(
    db: &dyn Db,
    file: SourceFile,
    name: &str,
    target: impl Into<Option<Target>>,
) -> Result<String, ExportError> {
    let target = target.into();
    let key = find_deployment(db, file, name)?;
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
    let entry = |kind: DeclKind, name: &str| {
        scope
            .lookup(kind, name)
            .map(|key| crate::eval::entry_of(db, key))
    };
    let engine_entry = entry(DeclKind::Engine, &setup.engine);
    let target = resolve_target(setup, engine_entry, target)?;
    // The engine's memory figures: the deployment's engine when it is of the target's
    // dialect (an `extends` copy included), else the stdlib engine of that dialect.
    let target_engine = engine_entry
        .filter(|e| target_of(e) == Some(target))
        .or_else(|| entry(DeclKind::Engine, target.name()))
        .map(|e| e.as_engine());
    let quant_entry = entry(DeclKind::Quant, &setup.quant);
    let runs = quant_entry.is_none_or(|quant| quant.runs_on(target.name()));
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
    // The id the deployment wrote (`model = "meta-llama/Llama-3.1-8B-Instruct"`) is the
    // one served, whatever catalog entry it resolved to (a curated entry owns its base
    // and instruct ids alike).
    let written = crate::db::decl(db, key)
        .and_then(|decl| decl.field("model").map(|f| f.value.kind.clone()))
        .and_then(|kind| match kind {
            crate::syntax::ast::ExprKind::Str(lit) => lit.plain(),
            _ => None,
        })
        .filter(|text| !deployfit_compiler::external::is_path(text));
    let catalog = Catalog {
        setup,
        written_hf: written
            .clone()
            .filter(|text| Valid::HfRepo.check_str(text).is_ok()),
        written_ollama: written
            .filter(|text| !text.contains('/') && Valid::OllamaTag.check_str(text).is_ok()),
        model: entry(DeclKind::Model, &setup.model),
        quant: quant_entry.map(|e| e.as_quant()),
        kv: entry(DeclKind::Kv, &setup.kv_cache).map(|e| e.as_kv()),
        engine: target_engine,
        gpu_layers,
    };
    catalog.names_exportable()?;
    plan_supported(setup, target)?;
    catalog.write(target)
}

/// The deployment `name` among `file`'s declarations; a usage error with the closest name
/// (or the list of deployments) when there is none.
fn find_deployment<'db>(
    db: &'db dyn Db,
    file: SourceFile,
    name: &str,
) -> Result<db::DeclKey<'db>, ExportError> {
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
    Ok(key)
}

/// The export target an engine's `dialect` names, as the typed `Target`.
fn target_of(e: &crate::eval::Entry<'_>) -> Option<Target> {
    e.as_engine().dialect.and_then(Target::from_dialect)
}

/// The target asked for, else the one the deployment's engine's `dialect` names; a usage
/// error listing the targets when neither gives one.
fn resolve_target(
    setup: &Setup,
    engine_entry: Option<&crate::eval::Entry<'_>>,
    target: Option<Target>,
) -> Result<Target, ExportError> {
    let dialect = engine_entry.and_then(|e| e.as_engine().dialect);
    match target.or_else(|| dialect.and_then(Target::from_dialect)) {
        Some(target) => Ok(target),
        None => {
            let names: Vec<&str> = Target::ALL.iter().map(|t| t.name()).collect();
            Err(ExportError {
                usage: true,
                ..error(
                    format!(
                        "`export` writes no launch command for engine `{}` (dialect `{}`)",
                        setup.engine,
                        dialect.map_or("none", Dialect::name)
                    ),
                    format!("pass --engine with one of {}", names.join(", ")),
                )
            })
        }
    }
}

/// The catalog facts an export writes from: the deployment's setup, its model's entry
/// (for the ids), its quant's and KV cache's views, the target engine's memory figures,
/// and the layers on the GPU.
struct Catalog<'a, 'db> {
    setup: &'a Setup,
    /// The Hugging Face id or Ollama tag the deployment's `model = "…"` wrote, if any.
    written_hf: Option<String>,
    written_ollama: Option<String>,
    model: Option<&'db crate::eval::Entry<'db>>,
    quant: Option<&'db crate::eval::views::Quant>,
    kv: Option<&'db crate::eval::views::Kv>,
    engine: Option<&'db crate::eval::views::Engine>,
    gpu_layers: Option<u64>,
}

/// The engines' own spellings come from the catalog (`vllm_name`, `vllm_quantization`
/// ...), never from entry names: an `extends` copy exports as its original. They are
/// validated again, like the ids.
fn flag(value: Option<&String>) -> Option<String> {
    value
        .filter(|value| Valid::Flag.check_str(value).is_ok())
        .cloned()
}

impl Catalog<'_, '_> {
    /// Refuses entry names that are not plain identifiers, since they reach the output.
    fn names_exportable(&self) -> Result<(), ExportError> {
        let setup = self.setup;
        for name in [&setup.model, &setup.quant, &setup.kv_cache] {
            if !is_identifier(name) {
                return Err(error(
                    format!("`{name}` is not a plain name and cannot be exported"),
                    "name catalog entries with letters, digits and `_`",
                ));
            }
        }
        Ok(())
    }

    /// The model's id in `field` (`hf`, `ollama`), validated.
    fn id(
        &self,
        field: &str,
        value: Option<&String>,
        valid: Valid,
    ) -> Result<Option<String>, ExportError> {
        // Every string that reaches the output is checked again here, whatever `check`
        // said: an id written but rejected (so absent from the entry) refuses the export.
        let setup = self.setup;
        let written = self.model.is_some_and(|e| e.owners.contains_key(field));
        match value {
            Some(id) => match valid.check_str(id) {
                Ok(()) => Ok(Some(id.clone())),
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
    }

    /// The model's Hugging Face id (`hf`), validated.
    fn hf(&self) -> Result<Option<String>, ExportError> {
        if let Some(written) = &self.written_hf {
            return Ok(Some(written.clone()));
        }
        let hf = self.model.and_then(|e| e.as_model().hf.as_ref());
        self.id("hf", hf, Valid::HfRepo)
    }

    /// The quant's and KV cache's format facts the TGI, LMDeploy and MLX exporters need.
    fn formats(&self) -> Formats {
        let (quant, kv) = (self.quant, self.kv);
        Formats {
            bits: quant.and_then(|q| q.bits),
            tgi_quantize: flag(quant.and_then(|q| q.tgi_quantize.as_ref())),
            lmdeploy_format: flag(quant.and_then(|q| q.lmdeploy_format.as_ref())),
            mlx_mode: flag(quant.and_then(|q| q.mlx_mode.as_ref())),
            group_size: quant.and_then(|q| q.group_size),
            kv_bytes: kv.and_then(|kv| kv.bytes),
        }
    }

    /// Writes the launch command for `target` with its exporter.
    fn write(&self, target: Target) -> Result<String, ExportError> {
        let setup = self.setup;
        let (quant, kv, target_engine) = (self.quant, self.kv, self.engine);
        let kind = quant.and_then(|q| q.kind);
        let formats = self.formats();
        match target {
            Target::Vllm => vllm(
                setup,
                self.hf()?,
                kind,
                flag(kv.and_then(|kv| kv.vllm_name.as_ref())),
                flag(quant.and_then(|q| q.vllm_quantization.as_ref())),
                setup
                    .memory_utilization
                    .or_else(|| target_engine.and_then(|e| e.utilization))
                    .unwrap_or(0.9),
            ),
            Target::Ollama => ollama(
                setup,
                match &self.written_ollama {
                    Some(tag) => Some(tag.clone()),
                    None => self.id(
                        "ollama",
                        self.model.and_then(|e| e.as_model().ollama.as_ref()),
                        Valid::OllamaTag,
                    )?,
                },
                flag(kv.and_then(|kv| kv.ollama_name.as_ref())),
                self.gpu_layers,
            ),
            Target::Llamacpp => llamacpp(
                setup,
                self.hf()?,
                flag(kv.and_then(|kv| kv.llamacpp_name.as_ref())),
                self.gpu_layers,
            ),
            Target::Tgi => tgi(
                setup,
                self.hf()?,
                &formats,
                flag(kv.and_then(|kv| kv.tgi_name.as_ref())),
                setup
                    .memory_utilization
                    .or_else(|| target_engine.and_then(|e| e.utilization))
                    .unwrap_or(TGI_WIGGLE_ROOM),
            ),
            Target::Lmdeploy => lmdeploy(
                setup,
                self.hf()?,
                &formats,
                flag(kv.and_then(|kv| kv.lmdeploy_quant_policy.as_ref())),
                setup
                    .memory_utilization
                    .or_else(|| target_engine.and_then(|e| e.kv_free_share))
                    .unwrap_or(LMDEPLOY_CACHE_MAX_ENTRY_COUNT),
            ),
            Target::Mlx => mlx(setup, self.hf()?, &formats),
        }
    }
}

/// What the weight format and the KV cache are, as the new exporters need them.
struct Formats {
    /// The quant's nominal bits (16 for unquantized weights).
    bits: Option<f64>,
    /// The quant's own flag values per engine (`tgi_quantize` ...).
    tgi_quantize: Option<String>,
    lmdeploy_format: Option<String>,
    mlx_mode: Option<String>,
    group_size: Option<f64>,
    /// Bytes per KV element.
    kv_bytes: Option<f64>,
}

impl Formats {
    /// Unquantized weights: no format flag is needed.
    fn unquantized(&self) -> bool {
        self.bits.is_some_and(|bits| bits >= 16.0)
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
    kind: Option<QuantKind>,
    kv: Option<String>,
    quantization: Option<String>,
    utilization: f64,
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
    if setup.enforce_eager {
        lines.push("  --enforce-eager".into());
    }
    if let Some(tokens) = setup.batched_tokens {
        lines.push(format!("  --max-num-batched-tokens {tokens}"));
    }
    // docs.vllm.ai serving/parallelism_scaling: `--pipeline-parallel-size`;
    // serving/expert_parallel_deployment: `--enable-expert-parallel`.
    if setup.pipeline > 1 {
        lines.push(format!("  --pipeline-parallel-size {}", setup.pipeline));
    }
    if setup.expert_parallel {
        lines.push("  --enable-expert-parallel".into());
    }
    let mut head_note = String::new();
    if let Some(spec) = &setup.speculative {
        let (config, note) = vllm_speculative_config(spec)?;
        lines.push(format!("  --speculative-config {}", shell_quote(&config)));
        head_note = note;
    }
    lines.push("  --port 8000".into());
    let note = match kind {
        Some(kind @ (QuantKind::Awq | QuantKind::Gptq)) => format!(
            "# {hf} is the unquantized checkpoint: point `vllm serve` at a {} repository of it.\n",
            kind.name().to_uppercase()
        ),
        _ => String::new(),
    };
    Ok(format!("{note}{head_note}{}\n", lines.join(" \\\n")))
}

/// vLLM's `--speculative-config` JSON for a deployment's `speculative { }`
/// (docs.vllm.ai features/speculative_decoding: `method` is `eagle3`, `mtp`, `ngram` or
/// `draft_model`, with `num_speculative_tokens`; EAGLE and draft models name their
/// checkpoint in `model`), and a note when the command needs a checkpoint the catalog
/// does not name.
fn vllm_speculative_config(
    spec: &crate::eval::deployment::SpeculativeSetup,
) -> Result<(String, String), ExportError> {
    let tokens = spec.tokens;
    let model = match &spec.draft_hf {
        Some(hf) => {
            if let Some(problem) = crate::eval::schema::hf_repo_problem(hf) {
                return Err(error(
                    format!("the draft model's `hf` is not a Hugging Face id: {problem}"),
                    "fix the draft model's `hf` (`org/name`)",
                ));
            }
            format!(",\"model\":\"{hf}\"")
        }
        None => String::new(),
    };
    let kind = SpecMethod::parse(&spec.method);
    let (method, note) = match kind {
        Some(SpecMethod::Eagle3) if model.is_empty() => (
            "eagle3",
            "# EAGLE-3 needs its head's checkpoint: add \"model\":\"<org>/<EAGLE-3 head>\" to --speculative-config (or name it with `draft = ...`).\n".to_string(),
        ),
        Some(SpecMethod::Eagle3) => ("eagle3", String::new()),
        Some(SpecMethod::Mtp) => ("mtp", String::new()),
        Some(SpecMethod::Ngram) => ("ngram", String::new()),
        _ if model.is_empty() => {
            return Err(error(
                format!(
                    "the draft model `{}` has no Hugging Face id",
                    spec.draft.as_deref().unwrap_or("?")
                ),
                "add `hf = \"org/name\"` to the draft model",
            ));
        }
        _ => ("draft_model", String::new()),
    };
    let lookup = if kind == Some(SpecMethod::Ngram) {
        ",\"prompt_lookup_max\":4"
    } else {
        ""
    };
    Ok((
        format!("{{\"method\":\"{method}\",\"num_speculative_tokens\":{tokens}{model}{lookup}}}"),
        note,
    ))
}

/// Refuses a plan the target's command cannot express: pipeline stages, expert
/// parallelism and speculative decoding are written for vLLM (and n-gram speculation for
/// TGI, `--speculate`); other engines run one tensor-parallel group.
fn plan_supported(setup: &Setup, target: Target) -> Result<(), ExportError> {
    if target == Target::Vllm {
        return Ok(());
    }
    let what = if setup.pipeline > 1 {
        Some("pipeline stages (`pipeline`)")
    } else if setup.expert_parallel {
        Some("expert parallelism (`expert_parallel`)")
    } else {
        match &setup.speculative {
            Some(spec)
                if !(target == Target::Tgi
                    && SpecMethod::parse(&spec.method) == Some(SpecMethod::Ngram)) =>
            {
                Some("speculative decoding (`speculative { }`)")
            }
            _ => None,
        }
    };
    match what {
        Some(what) => Err(error(
            format!("`export {}` writes no flag for {what}", target.name()),
            "export it for vLLM (`--target vllm`), which takes them, or remove the setting",
        )),
        None => Ok(()),
    }
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
         # OLLAMA_NUM_PARALLEL={seqs} OLLAMA_FLASH_ATTENTION={flash} OLLAMA_KV_CACHE_TYPE={kv} ollama serve\n",
        flash = u8::from(setup.flash_attention.unwrap_or(true)),
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

/// TGI sizes its KV cache from `cuda_memory_fraction × TGI_WIGGLE_ROOM` of the GPU, so an
/// engine `utilization` is written as `--cuda-memory-fraction utilization / 0.90`.
// source: huggingface/text-generation-inference@db931fcf42da018a3657580c64bf2720f167f9ab
//   server/text_generation_server/models/globals.py: TGI_WIGGLE_ROOM = float(os.getenv("TGI_WIGGLE_ROOM", "0.90"))
//   server/text_generation_server/models/flash_causal_lm.py: get_free_memory(device, MEMORY_FRACTION * TGI_WIGGLE_ROOM)
const TGI_WIGGLE_ROOM: f64 = 0.90;

/// LMDeploy's `--cache-max-entry-count` default: the KV cache's share of the free memory.
// source: InternLM/lmdeploy@1263d5cd889b7ad500e85b8eb20401327a4516ab lmdeploy/cli/utils.py
//   cache_max_entry_count: default=0.8, "The percentage of free gpu memory occupied by the k/v cache"
const LMDEPLOY_CACHE_MAX_ENTRY_COUNT: f64 = 0.8;

/// A ratio as a flag value: three decimals, no trailing zeros.
fn ratio(value: f64) -> f64 {
    (value * 1000.0).round() / 1000.0
}

/// The note above a command for a pre-quantized format: the catalog's `hf` id is the
/// base checkpoint.
fn base_checkpoint_note(hf: &str, command: &str, format: &str) -> String {
    format!(
        "# {hf} is the unquantized checkpoint: point `{command}` at a {} repository of it.\n",
        format.to_uppercase()
    )
}

fn need_hf(setup: &Setup, hf: Option<String>) -> Result<String, ExportError> {
    hf.ok_or_else(|| {
        error(
            format!("model `{}` has no Hugging Face id", setup.model),
            format!(
                "add `hf = \"org/name\"` to `{}` (with `extends`)",
                setup.model
            ),
        )
    })
}

/// The engine's own value for the weight format: the quant's field, nothing for
/// unquantized weights, else a refusal.
fn format_flag(
    setup: &Setup,
    formats: &Formats,
    value: &Option<String>,
    engine: &str,
    field: &str,
) -> Result<Option<String>, ExportError> {
    match value {
        Some(value) => Ok(Some(value.clone())),
        None if formats.unquantized() => Ok(None),
        None => Err(error(
            format!("{engine} has no format flag for `{}` weights", setup.quant),
            format!(
                "give `{}` a `{field}` (with `extends`), or choose a quant {engine} runs",
                setup.quant
            ),
        )),
    }
}

/// `text-generation-launcher`: TGI's launcher (the Docker image's entrypoint takes the
/// same flags).
// source: huggingface/text-generation-inference@db931fcf42da018a3657580c64bf2720f167f9ab
//   launcher/src/main.rs (Args): --model-id, --num-shard, --quantize, --kv-cache-dtype,
//   --max-input-tokens (must be < --max-total-tokens), --max-total-tokens,
//   --cuda-memory-fraction (default 1.0), --port (default 3000)
fn tgi(
    setup: &Setup,
    hf: Option<String>,
    formats: &Formats,
    kv: Option<String>,
    utilization: f64,
) -> Result<String, ExportError> {
    let hf = need_hf(setup, hf)?;
    // Without --kv-cache-dtype TGI stores KV in the model's 16-bit dtype.
    if kv.is_none() && formats.kv_bytes != Some(2.0) {
        return Err(error(
            format!("TGI has no `{}` KV cache", setup.kv_cache),
            "use kv_cache = fp16, bf16 or fp8 with TGI",
        ));
    }
    if setup.context < 2 {
        return Err(error(
            format!(
                "TGI needs a context of at least 2 tokens, not {}",
                setup.context
            ),
            "TGI's --max-input-tokens must be below --max-total-tokens: set context = 2 or more",
        ));
    }
    let fraction = ratio(utilization / TGI_WIGGLE_ROOM);
    if !(fraction > 0.0 && fraction <= 1.0) {
        return Err(error(
            format!(
                "TGI cannot use {:.1} % of GPU memory: it keeps {:.0} % back (TGI_WIGGLE_ROOM)",
                utilization * 100.0,
                (1.0 - TGI_WIGGLE_ROOM) * 100.0
            ),
            format!(
                "set memory_utilization to at most {:.0}% with TGI",
                TGI_WIGGLE_ROOM * 100.0
            ),
        ));
    }
    let quantize = format_flag(setup, formats, &formats.tgi_quantize, "TGI", "tgi_quantize")?;
    let mut lines = vec![
        format!("text-generation-launcher --model-id {}", shell_quote(&hf)),
        format!("  --num-shard {}", setup.count),
    ];
    if let Some(quantize) = &quantize {
        lines.push(format!("  --quantize {}", shell_quote(quantize)));
    }
    if let Some(kv) = &kv {
        lines.push(format!("  --kv-cache-dtype {}", shell_quote(kv)));
    }
    lines.push(format!("  --max-input-tokens {}", setup.context - 1));
    lines.push(format!("  --max-total-tokens {}", setup.context));
    lines.push(format!("  --cuda-memory-fraction {fraction}"));
    if let Some(tokens) = setup.batched_tokens {
        lines.push(format!("  --max-batch-prefill-tokens {tokens}"));
    }
    // launcher/src/main.rs (Args): `--speculate N`, n-gram speculation without Medusa
    // heads.
    if let Some(spec) = &setup.speculative {
        lines.push(format!("  --speculate {}", spec.tokens));
    }
    lines.push("  --port 3000".into());
    // fp8 is quantized on load from the base checkpoint; awq/gptq need their own repository.
    let note = match quantize.as_deref() {
        Some(q @ ("awq" | "gptq")) => base_checkpoint_note(&hf, "--model-id", q),
        _ => String::new(),
    };
    Ok(format!("{note}{}\n", lines.join(" \\\n")))
}

/// `lmdeploy serve api_server` with the TurboMind backend.
// source: InternLM/lmdeploy@1263d5cd889b7ad500e85b8eb20401327a4516ab lmdeploy/cli/serve.py and
//   lmdeploy/cli/utils.py: model_path, --backend {pytorch, turbomind} (default turbomind),
//   --tp ("Should be 2^n"), --session-len, --max-batch-size, --cache-max-entry-count,
//   --quant-policy (0 none, 4 int4, 8 int8; fp8 not on TurboMind: lmdeploy/messages.py),
//   --model-format {hf, awq, gptq, compressed-tensors, fp8, mxfp4}, --server-port (23333)
fn lmdeploy(
    setup: &Setup,
    hf: Option<String>,
    formats: &Formats,
    policy: Option<String>,
    cache_share: f64,
) -> Result<String, ExportError> {
    let hf = need_hf(setup, hf)?;
    let policy = policy.ok_or_else(|| {
        error(
            format!("LMDeploy TurboMind has no `{}` KV cache", setup.kv_cache),
            "use kv_cache = fp16 or bf16 with LMDeploy",
        )
    })?;
    if !setup.count.is_power_of_two() {
        return Err(error(
            format!(
                "LMDeploy's --tp must be a power of two, not {}",
                setup.count
            ),
            "set count to 1, 2, 4 or 8 with LMDeploy",
        ));
    }
    let cache = ratio(cache_share);
    if !(cache > 0.0 && cache <= 1.0) {
        return Err(error(
            format!("LMDeploy's --cache-max-entry-count {cache} is not a share of free memory"),
            "set memory_utilization between 1% and 100% with LMDeploy",
        ));
    }
    let format = format_flag(
        setup,
        formats,
        &formats.lmdeploy_format,
        "LMDeploy",
        "lmdeploy_format",
    )?;
    let mut lines = vec![
        format!("lmdeploy serve api_server {}", shell_quote(&hf)),
        "  --backend turbomind".to_string(),
        format!("  --tp {}", setup.count),
        format!("  --session-len {}", setup.context),
        format!("  --max-batch-size {}", setup.seqs),
        format!("  --cache-max-entry-count {cache}"),
        format!("  --quant-policy {}", shell_quote(&policy)),
    ];
    if let Some(format) = &format {
        lines.push(format!("  --model-format {}", shell_quote(format)));
    }
    if let Some(tokens) = setup.batched_tokens {
        lines.push(format!("  --max-prefill-token-num {tokens}"));
    }
    lines.push("  --server-port 23333".into());
    let note = match &format {
        Some(format) => base_checkpoint_note(&hf, "lmdeploy serve api_server", format),
        None => String::new(),
    };
    Ok(format!("{note}{}\n", lines.join(" \\\n")))
}

/// `mlx_lm.server`, after `mlx_lm.convert` for a quantized format.
// source: ml-explore/mlx-lm@d78bf58e217c904ec282ed8da9b947491f78c022 mlx_lm/server.py (main):
//   --model, --decode-concurrency (default 32), --port (default 8080); mlx_lm/convert.py:
//   --hf-path, --mlx-path, -q, --q-bits, --q-group-size, --q-mode {affine, mxfp4, nvfp4, mxfp8}
fn mlx(setup: &Setup, hf: Option<String>, formats: &Formats) -> Result<String, ExportError> {
    let hf = need_hf(setup, hf)?;
    if setup.count != 1 {
        return Err(error(
            format!(
                "export writes mlx_lm.server for one GPU, not count = {}",
                setup.count
            ),
            "set count = 1 with MLX (one Apple machine)",
        ));
    }
    if formats.kv_bytes != Some(2.0) {
        return Err(error(
            format!("mlx_lm.server has no `{}` KV cache", setup.kv_cache),
            "use kv_cache = fp16 or bf16 with MLX",
        ));
    }
    let serve = |model: &str| {
        format!(
            "mlx_lm.server --model {} \\\n  --decode-concurrency {} \\\n  --port 8080\n",
            shell_quote(model),
            setup.seqs
        )
    };
    let Some(mode) = &formats.mlx_mode else {
        if formats.unquantized() {
            return Ok(serve(&hf));
        }
        return Err(error(
            format!(
                "mlx-lm has no quantization mode for `{}` weights",
                setup.quant
            ),
            format!(
                "give `{}` an `mlx_mode` (with `extends`), or choose a quant MLX runs",
                setup.quant
            ),
        ));
    };
    let (Some(bits), Some(group)) = (formats.bits, formats.group_size) else {
        return Err(error(
            format!(
                "`{}` has no `bits` or `group_size` for mlx_lm.convert",
                setup.quant
            ),
            format!("give `{}` both (with `extends`)", setup.quant),
        ));
    };
    let base = hf.rsplit('/').next().unwrap_or(&hf);
    let path = format!("mlx_models/{base}-{}", setup.quant);
    Ok(format!(
        "# Convert the checkpoint once, then serve the converted folder:\n\
         mlx_lm.convert --hf-path {hf} --mlx-path {path} \\\n  -q --q-bits {bits} --q-group-size {group} --q-mode {mode}\n\
         {serve}",
        hf = shell_quote(&hf),
        path = shell_quote(&path),
        mode = shell_quote(mode),
        serve = serve(&path),
    ))
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
