//! Multi-GPU plans beyond tensor parallelism, and speculative decoding: a deployment's
//! `pipeline`, `expert_parallel` and `speculative { }`, resolved to numbers
//! ([`Plan`]), and the diagnostics for settings that cannot run
//! (docs/calibration-serving.md, "Pipeline and expert parallelism" and "Speculative
//! decoding"; docs/language.md).

use std::collections::BTreeMap;

use super::deployment::Cx;
use super::entry::Entry;
use super::value::{Value, as_count};
use crate::diagnostics::codes::Code;
use crate::diagnostics::{Diag, Loc, Severity};
use crate::syntax::ast::DeclKind;

/// How a speculative drafter proposes tokens (`speculative { method }`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// An EAGLE-3 head: about one decoder layer of the target's width, fed the target's
    /// hidden states.
    Eagle3,
    /// The model's own multi-token-prediction layer (DeepSeek-V3/R1, GLM, Qwen3-Next).
    Mtp,
    /// Prompt n-gram lookup: no model, drafted on the CPU.
    Ngram,
    /// A separate, smaller model (`draft = <model>`).
    Draft,
}

impl Method {
    pub fn parse(word: &str) -> Option<Method> {
        Some(match word {
            "eagle3" => Method::Eagle3,
            "mtp" => Method::Mtp,
            "ngram" => Method::Ngram,
            "draft" => Method::Draft,
            _ => return None,
        })
    }

    pub fn keyword(self) -> &'static str {
        match self {
            Method::Eagle3 => "eagle3",
            Method::Mtp => "mtp",
            Method::Ngram => "ngram",
            Method::Draft => "draft",
        }
    }

    /// The per-token acceptance rate assumed when the deployment gives none
    /// (docs/calibration-serving.md, "Speculative decoding"): MTP 0.85 (DeepSeek-V3
    /// technical report §5.4.3: the second token is accepted 85–90 % of the time), EAGLE-3
    /// 0.7 and a draft model 0.6 (a chain of 3 drafted tokens then yields 2.2–2.5 tokens
    /// per step, the range of published EAGLE chain-draft acceptance lengths; not fitted),
    /// n-gram lookup 0.3 (it only hits when the output repeats the prompt).
    pub fn default_acceptance(self) -> f64 {
        match self {
            Method::Eagle3 => 0.7,
            Method::Mtp => 0.85,
            Method::Ngram => 0.3,
            Method::Draft => 0.6,
        }
    }
}

/// Tokens drafted per step when `speculative { }` does not say (vLLM's and SGLang's
/// examples use 3).
pub const DEFAULT_SPECULATIVE_TOKENS: u64 = 3;

/// A deployment's `speculative { }`, resolved.
#[derive(Clone, Copy, Debug)]
pub struct Speculative<'a, 'db> {
    pub method: Method,
    /// Tokens drafted per step, `k`.
    pub tokens: u64,
    /// Chance that each drafted token is accepted, `a`.
    pub acceptance: f64,
    /// The draft model (`method = draft`) and its name.
    pub draft: Option<(&'a Entry<'db>, &'a str)>,
}

impl Speculative<'_, '_> {
    /// Expected tokens one target step yields per sequence: the accepted prefix of the `k`
    /// drafted tokens plus the target's own next token, `(1 − a^(k+1)) / (1 − a)`
    /// (Leviathan et al. 2023, eq. 1), `k + 1` when every draft is accepted.
    pub fn expected_tokens(&self) -> f64 {
        expected_tokens(self.tokens as f64, self.acceptance)
    }
}

/// `(1 − a^(k+1)) / (1 − a)`, and `k + 1` at `a = 1`.
pub fn expected_tokens(tokens: f64, acceptance: f64) -> f64 {
    let a = acceptance.clamp(0.0, 1.0);
    if a >= 1.0 - 1e-12 {
        tokens + 1.0
    } else {
        (1.0 - a.powf(tokens + 1.0)) / (1.0 - a)
    }
}

/// A deployment's plan beyond `count`: pipeline stages, expert parallelism, speculation.
#[derive(Clone, Copy, Debug)]
pub struct Plan<'a, 'db> {
    /// Pipeline-parallel stages, each of `count` GPUs (1: none).
    pub pipeline: u64,
    pub expert_parallel: bool,
    pub speculative: Option<Speculative<'a, 'db>>,
}

impl Default for Plan<'_, '_> {
    fn default() -> Self {
        Plan {
            pipeline: 1,
            expert_parallel: false,
            speculative: None,
        }
    }
}

/// `pipeline` and `expert_parallel` from a deployment's fields.
pub(crate) fn plan_fields(fields: &BTreeMap<String, Value>) -> (u64, bool) {
    let pipeline = match fields.get("pipeline") {
        Some(Value::Q(q)) => as_count(*q).unwrap_or(1).max(1),
        _ => 1,
    };
    let expert_parallel =
        matches!(fields.get("expert_parallel"), Some(Value::Symbol(yes)) if yes == "true");
    (pipeline, expert_parallel)
}

/// `speculative { }` as written: the method (default `eagle3` when the block names none
/// and has no `draft`, else `draft`), tokens, acceptance and the draft model's name.
pub(crate) struct SpeculativeFields {
    pub method: Method,
    pub tokens: u64,
    pub acceptance: Option<f64>,
    pub draft: Option<String>,
}

pub(crate) fn speculative_fields(block: &BTreeMap<String, Value>) -> SpeculativeFields {
    let draft = match block.get("draft") {
        Some(Value::Ref(_, name)) => Some(name.clone()),
        _ => None,
    };
    let method = match block.get("method") {
        Some(Value::Symbol(word)) => Method::parse(word),
        _ => None,
    }
    .unwrap_or(if draft.is_some() {
        Method::Draft
    } else {
        Method::Eagle3
    });
    SpeculativeFields {
        method,
        tokens: match block.get("tokens") {
            Some(Value::Q(q)) => as_count(*q).unwrap_or(DEFAULT_SPECULATIVE_TOKENS),
            _ => DEFAULT_SPECULATIVE_TOKENS,
        },
        acceptance: block
            .get("acceptance")
            .and_then(Value::quantity)
            .map(|q| q.value()),
        draft,
    }
}

/// The diagnostics of a plan that cannot run: more stages than layers, expert
/// parallelism on a dense model, a tensor-parallel group that crosses nodes (a warning:
/// slow) or does not fill whole nodes, pipeline, experts or speculation on an engine
/// without serving kernels, `method = draft` without a draft model. Returns whether the
/// deployment may be evaluated (no error).
pub(crate) fn check_plan<'db>(
    cx: Cx<'_, 'db>,
    fields: &BTreeMap<String, Value>,
    speculative: Option<&BTreeMap<String, Value>>,
    diags: &mut Vec<Diag<'db>>,
) -> bool {
    let Cx {
        db,
        scope,
        key,
        decl,
    } = cx;
    let entry = |kind: DeclKind, field: &str| match fields.get(field) {
        Some(Value::Ref(_, name)) => scope
            .lookup(kind, name)
            .map(|k| (super::entry_of(db, k), name.clone())),
        _ => None,
    };
    let span = |field: &str| decl.field(field).map(|f| f.value.span);
    let mut ok = true;
    let (pipeline, expert_parallel) = plan_fields(fields);
    let count = match fields.get("count") {
        Some(Value::Q(q)) => as_count(*q).unwrap_or(1).max(1),
        _ => 1,
    };
    let model = entry(DeclKind::Model, "model");
    let engine = entry(DeclKind::Engine, "engine");
    let gpu = entry(DeclKind::Gpu, "gpu");
    let serving = engine
        .as_ref()
        .is_some_and(|(e, _)| e.symbol("kernels") == Some("serving"));
    let engine_name = engine.as_ref().map_or("generic", |(_, n)| n.as_str());

    if let (Some((model, model_name)), Some(at)) = (&model, span("pipeline"))
        && let Some(layers) = model.number("layers")
        && pipeline as f64 > layers
    {
        diags.push(
            Diag::error(
                Code::ParallelPipelineExceedsLayers,
                format!(
                    "`pipeline = {pipeline}` asks for more stages than `{model_name}` has layers ({layers})"
                ),
                Loc::Decl(key, at),
            )
            .label(format!("{pipeline} stages"))
            .help(format!(
                "each stage needs at least one layer: write `pipeline = {}` or fewer, or raise `count` instead",
                layers as u64
            )),
        );
        ok = false;
    }
    if expert_parallel
        && let (Some((model, model_name)), Some(at)) = (&model, span("expert_parallel"))
    {
        let params = model.number("params").unwrap_or(0.0);
        let active = model.number("active_params").unwrap_or(params);
        let experts = model.number("experts").unwrap_or(0.0);
        if experts <= 1.0 && active >= params {
            diags.push(
                Diag::error(
                    Code::ParallelNoExperts,
                    format!(
                        "`expert_parallel = true` on `{model_name}`, a dense model: it has no experts to spread"
                    ),
                    Loc::Decl(key, at),
                )
                .label("dense model")
                .help("remove `expert_parallel = true` (tensor parallelism splits a dense model), or choose a mixture-of-experts model"),
            );
            ok = false;
        }
    }
    let asks_parallel = pipeline > 1 || expert_parallel;
    if asks_parallel && engine.is_some() && !serving {
        let (field, what) = if pipeline > 1 {
            ("pipeline", "pipeline stages")
        } else {
            ("expert_parallel", "expert parallelism")
        };
        if let Some(at) = span(field) {
            diags.push(
                Diag::error(
                    Code::ParallelUnsupported,
                    format!("`{engine_name}` does not run {what}: its kernels are not a serving engine's (`kernels = serving`)"),
                    Loc::Decl(key, at),
                )
                .label(format!("{what} on {engine_name}"))
                .help(format!("choose `engine = vllm` or `sglang`, or remove `{field}`; {engine_name} splits a model over `count` GPUs by itself")),
            );
            ok = false;
        }
    }
    if let Some((gpu, gpu_name)) = &gpu
        && let Some(per_node) = gpu.number("gpus_per_node").map(|n| n.max(1.0) as u64)
        && let Some(at) = span("count")
    {
        if count > per_node && count % per_node != 0 {
            diags.push(
                Diag::error(
                    Code::ParallelUnevenNodes,
                    format!(
                        "`count = {count}` does not fill whole nodes: a `{gpu_name}` node holds {per_node} GPUs"
                    ),
                    Loc::Decl(key, at),
                )
                .label(format!("{count} GPUs per tensor-parallel group"))
                .help(format!(
                    "write `count = {per_node}` and `pipeline = {}` (stages across nodes), or `count = {}`",
                    count.div_ceil(per_node),
                    count.div_ceil(per_node) * per_node
                )),
            );
            ok = false;
        } else if count > per_node {
            let link = gpu
                .number("node_link")
                .map(|b| format!("{:.0} GB/s", b / 1e9))
                .unwrap_or_else(|| "the network".to_string());
            diags.push(
                Diag::new(
                    Code::ParallelTensorAcrossNodes,
                    Severity::Warning,
                    format!(
                        "`count = {count}` spans {} nodes of {per_node} `{gpu_name}`: every layer's all-reduce crosses {link} instead of the GPUs' own link",
                        count / per_node
                    ),
                    Loc::Decl(key, at),
                )
                .label("tensor parallelism across nodes")
                .help(format!(
                    "keep tensor parallelism inside a node: `count = {per_node}` with `pipeline = {}`",
                    (count / per_node) * pipeline
                )),
            );
        }
    }
    if let Some(block) = speculative {
        let spec = speculative_fields(block);
        let block_span = decl.nested("speculative").map(|n| n.name.span);
        if engine.is_some()
            && !serving
            && let Some(at) = block_span
        {
            diags.push(
                Diag::error(
                    Code::SpeculativeUnsupported,
                    format!("speculative decoding is modelled for serving engines only, not `{engine_name}`"),
                    Loc::Decl(key, at),
                )
                .label(format!("speculative decoding on {engine_name}"))
                .help("choose `engine = vllm` or `sglang` (they take `--speculative-config`), or remove the `speculative { }` block"),
            );
            ok = false;
        }
        if spec.method == Method::Draft
            && spec.draft.is_none()
            && let Some(at) = block_span
        {
            diags.push(
                Diag::error(
                    Code::SpeculativeNoDraft,
                    "`method = draft` needs a draft model, and the block names none",
                    Loc::Decl(key, at),
                )
                .label("no `draft`")
                .help("add `draft = <model>` inside `speculative { }`, naming a small catalog model with the target's tokenizer (`llama_3_2_1b` for Llama 3), or use `method = eagle3`, `mtp` or `ngram`"),
            );
            ok = false;
        }
    }
    ok
}
