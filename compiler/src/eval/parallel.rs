//! Multi-GPU plans beyond tensor parallelism, and speculative decoding: a deployment's
//! `pipeline`, `expert_parallel` and `speculative { }`, resolved to numbers
//! ([`Plan`]), and the diagnostics for settings that cannot run
//! (docs/calibration-serving.md, "Pipeline and expert parallelism" and "Speculative
//! decoding"; docs/language.md).

use std::collections::BTreeMap;

use super::entry::Entry;
use super::schema::Boolean;
use super::value::{Value, as_count};

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
    let expert_parallel = matches!(
        fields.get("expert_parallel"),
        Some(Value::Symbol(word)) if Boolean::parse(word) == Some(Boolean::True)
    );
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
