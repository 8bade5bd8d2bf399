//! Every stable diagnostic code, with a one-line summary; docs/language.md lists them
//! and tests/fixtures/diagnostics holds one file per code.
//!
//! The compiler names its codes by [`Code`] variants; the strings appear here only.
//! Rules produce their codes at run time as strings (the compiler's `Diag::rule`):
//! the stdlib's rules set `code = "deploy::fit::..."` (listed here so that they are
//! documented), a user rule without `code` gets `deploy::rule::NAME` ([`Code::Rule`]
//! stands for that family).

use std::fmt;

/// Defines [`Code`] and its tables from one list of `Variant = "code", "summary";`.
macro_rules! codes {
    ($($variant:ident = $code:literal, $summary:literal;)+) => {
        /// A stable diagnostic code. Each variant's documentation is its summary.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
        pub enum Code {
            $(
                #[doc = $summary]
                #[doc = ""]
                #[doc = concat!("`", $code, "`")]
                $variant,
            )+
        }

        impl Code {
            /// Every code, in this file's order.
            pub const ALL: &'static [Code] = &[$(Code::$variant),+];

            /// The code as it is printed and serialized (`deploy::name::unknown`).
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Code::$variant => $code,)+
                }
            }

            /// What the code means, in one line (SARIF's rule descriptions).
            pub const fn summary(self) -> &'static str {
                match self {
                    $(Code::$variant => $summary,)+
                }
            }
        }

        /// (code, what it means), the strings of [`Code::ALL`] in the same order.
        pub const CODES: &[(&str, &str)] = &[$(($code, $summary)),+];
    };
}

codes! {
    SyntaxUnexpected = "deploy::syntax::unexpected",
        "the parser found a token it did not expect";
    SyntaxUnterminatedString = "deploy::syntax::unterminated_string",
        "a string is not closed on its line";
    SyntaxTooDeep = "deploy::syntax::too_deep",
        "brackets nest deeper than the parser allows";
    SyntaxTooLong = "deploy::syntax::too_long",
        "an expression has more operators than the parser allows";
    SyntaxInvalidUtf8 = "deploy::syntax::invalid_utf8",
        "the file is not valid UTF-8";
    SyntaxLimit = "deploy::syntax::limit",
        "the parser's work limit was reached";
    ModelUnreadable = "deploy::model::unreadable",
        "a model named by a file (config.json, safetensors, GGUF, a folder) cannot be read as one";
    ModelIncomplete = "deploy::model::incomplete",
        "a model from the registry or a file lacks part of its architecture (expert counts, MLA latent sizes, sliding-window layout)";
    ModelFormatMismatch = "deploy::model::format_mismatch",
        "a deployment's quant differs from the weight format its model file holds (a GGUF's type, a quantized checkpoint's quantization_config)";
    NameUnknown = "deploy::name::unknown",
        "a name does not resolve to an entry of the expected kind";
    NameAmbiguous = "deploy::name::ambiguous",
        "a name fits several entries of the expected kind (`H100`: the SXM5, PCIe and NVL cards); the help lists them";
    NameExtendsTooDeep = "deploy::name::extends_too_deep",
        "an entry is more `extends` links from its chain's start than are followed (32)";
    NameDuplicate = "deploy::name::duplicate",
        "a name is defined twice in one kind";
    NameRedefinesStdlib = "deploy::name::redefines_stdlib",
        "a user file defines a name the stdlib already has";
    NameExtendsCycle = "deploy::name::extends_cycle",
        "`extends` chains loop back on themselves";
    NameImportMissing = "deploy::name::import_missing",
        "an imported file does not exist or cannot be read";
    NameImportNotDeploy = "deploy::name::import_not_deploy",
        "an import names a file that is not a `.deploy` file";
    NameImportCycle = "deploy::name::import_cycle",
        "files import each other in a cycle";
    NameUnknownFunction = "deploy::name::unknown_function",
        "a call to a function the language does not have";
    FieldUnknown = "deploy::field::unknown",
        "a field the declaration kind does not have";
    FieldDuplicate = "deploy::field::duplicate",
        "a field given twice in one block";
    FieldMissing = "deploy::field::missing",
        "a required field is absent";
    FieldOutOfRange = "deploy::field::out_of_range",
        "a numeric field's value is outside the range the field allows (a negative size, a zero count, a share above 100 %)";
    FieldInvalidId = "deploy::field::invalid_id",
        "an `hf` or `ollama` string is not a valid Hugging Face repository id or Ollama tag, or a rule's `code` is not `area::name`";
    FieldType = "deploy::field::type",
        "a field's value has the wrong kind (a string where a name is expected, …)";
    UnitExpected = "deploy::unit::expected",
        "a field's value has the wrong dimension (a number where bytes are expected, …)";
    UnitMismatch = "deploy::unit::mismatch",
        "an operation mixes unlike dimensions";
    TypeNotBool = "deploy::type::not_bool",
        "a condition is not true/false";
    TypeMismatch = "deploy::type::mismatch",
        "an operator is applied to values it does not accept";
    EvalDivisionByZero = "deploy::eval::division_by_zero",
        "an expression divides by zero";
    EvalOverflow = "deploy::eval::overflow",
        "a number, a result or an estimated figure is not finite: beyond ±1e300, infinite or undefined";
    EvalMissingFact = "deploy::eval::missing_fact",
        "a catalog entry lacks a figure the estimate needs";
    CostNoOffer = "deploy::cost::no_offer",
        "`pricing = cloud` and no catalog offer rents the GPU (with the deployment's provider, region, offer and spot)";
    RequireFailed = "deploy::require::failed",
        "a `require` of the deployment does not hold";
    SolveUnsupported = "deploy::solve::unsupported",
        "a hole the solver cannot enumerate (`context = ?`)";
    SolveTooManyCandidates = "deploy::solve::too_many_candidates",
        "the holes have more candidates than the solver searches (the limit is 100,000)";
    SolveChosen = "deploy::solve::chosen",
        "info: the solver's choice for a hole, with its figures";
    SolveNoSolution = "deploy::solve::no_solution",
        "no assignment of the holes satisfies every require and error-level rule";
    FleetChosen = "deploy::fleet::chosen",
        "info: the mixed fleet the solver chose (`fleet = mixed`): replicas per GPU type, its cost, and the best single type beside it";
    FleetNoWorkload = "deploy::fleet::no_workload",
        "`fleet = mixed` without a workload whose classes have a `rate`, `prompt` and `output`";
    FleetInfeasible = "deploy::fleet::infeasible",
        "`fleet = mixed`: no candidate GPU type serves a request class within its requires";
    FleetClassesWithoutFleet = "deploy::fleet::classes_without_fleet",
        "a workload has request classes but the deployment is not `fleet = mixed`";
    FitDoesNotFit = "deploy::fit::does_not_fit",
        "built-in rule: the deployment needs more memory than the GPUs offer";
    FitNoKvBudget = "deploy::fit::no_kv_budget",
        "built-in rule: the engine would not start: weights and engine memory leave no KV cache";
    FitContextExceedsKvCapacity = "deploy::fit::context_exceeds_kv_capacity",
        "built-in rule: the engine would not start: one sequence of the context needs more KV cache than it can allocate";
    FitCudaGraphsOom = "deploy::fit::cuda_graphs_oom",
        "built-in rule: the engine would run out of memory capturing CUDA graphs on top of its share of the GPU";
    FitTightFit = "deploy::fit::tight_fit",
        "built-in rule: the deployment fits with under 10 % to spare";
    FitUnifiedMemoryTight = "deploy::fit::unified_memory_tight",
        "built-in rule: on unified memory the system shares, the engine's share leaves the system under 10 %";
    FitOffloaded = "deploy::fit::offloaded",
        "built-in rule: some layers run on the CPU from system RAM (offload = auto, or Ollama's own split)";
    FitContextExceedsModel = "deploy::fit::context_exceeds_model",
        "built-in rule: the context is longer than the model's window";
    FitQuantEngineMismatch = "deploy::fit::quant_engine_mismatch",
        "built-in rule: the weight format does not run on the engine";
    FitEngineGpuUnsupported = "deploy::fit::engine_gpu_unsupported",
        "built-in rule (warning): the engine is not documented to run on the GPU's architecture";
    FitKvHeadsReplicated = "deploy::fit::kv_heads_replicated",
        "built-in rule (info): the KV cache cannot be split evenly over the GPUs, so parts are replicated";
    FitLowBitQuant = "deploy::fit::low_bit_quant",
        "built-in rule: the weights are packed in fewer than 4 bits";
    FitKvEngineMismatch = "deploy::fit::kv_engine_mismatch",
        "built-in rule: the engine does not store a KV cache of that dtype";
    FitQuantUnsupportedOnGpu = "deploy::fit::quant_unsupported_on_gpu",
        "built-in rule: the GPU has no tensor cores for the weight format and the engine has no fallback";
    FitQuantNotNative = "deploy::fit::quant_not_native",
        "built-in rule (warning): the GPU has no tensor cores for the weight format; the engine runs it weight-only or upcast";
    FitOffloadUnsupported = "deploy::fit::offload_unsupported",
        "`offload = auto` on an engine that cannot keep layers in system RAM";
    ParallelPipelineExceedsLayers = "deploy::parallel::pipeline_exceeds_layers",
        "`pipeline` asks for more stages than the model has layers";
    ParallelNoExperts = "deploy::parallel::no_experts",
        "`expert_parallel = true` on a dense model";
    ParallelUnsupported = "deploy::parallel::unsupported",
        "`pipeline` or `expert_parallel` on an engine without serving kernels";
    ParallelUnevenNodes = "deploy::parallel::uneven_nodes",
        "a tensor-parallel group larger than a node that does not fill whole nodes (the GPU's `gpus_per_node`)";
    ParallelTensorAcrossNodes = "deploy::parallel::tensor_across_nodes",
        "warning: a tensor-parallel group spans nodes, so its all-reduces cross the slower `node_link`";
    SpeculativeUnsupported = "deploy::speculative::unsupported",
        "`speculative { }` on an engine without serving kernels";
    SpeculativeNoDraft = "deploy::speculative::no_draft",
        "`speculative { method = draft }` without a `draft` model";
    Rule = "deploy::rule::NAME",
        "a user rule named NAME fired (its code unless the rule sets `code`)";
}

impl Code {
    /// The listed code spelled `code`, if any (a rule's own code usually is not).
    pub fn parse(code: &str) -> Option<Code> {
        Code::ALL
            .iter()
            .copied()
            .find(|known| known.as_str() == code)
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn codes_are_unique_and_round_trip() {
        let variants: HashSet<Code> = Code::ALL.iter().copied().collect();
        assert_eq!(variants.len(), Code::ALL.len());
        let strings: HashSet<&str> = Code::ALL.iter().map(|code| code.as_str()).collect();
        assert_eq!(strings.len(), Code::ALL.len());
        for code in Code::ALL {
            assert_eq!(Code::parse(code.as_str()), Some(*code));
            assert_eq!(code.to_string(), code.as_str());
            // `deploy::AREA::NAME`
            let parts: Vec<&str> = code.as_str().split("::").collect();
            assert_eq!(parts.len(), 3, "{code}");
            assert_eq!(parts[0], "deploy", "{code}");
            assert!(!code.summary().is_empty(), "{code}");
        }
        let pairs: Vec<(&str, &str)> = Code::ALL
            .iter()
            .map(|code| (code.as_str(), code.summary()))
            .collect();
        assert_eq!(pairs, CODES);
    }

    #[test]
    fn codes_spell_as_documented() {
        assert_eq!(Code::NameUnknown.as_str(), "deploy::name::unknown");
        assert_eq!(
            Code::SyntaxInvalidUtf8.as_str(),
            "deploy::syntax::invalid_utf8"
        );
        assert_eq!(Code::Rule.as_str(), "deploy::rule::NAME");
        assert_eq!(
            Code::SolveTooManyCandidates.summary(),
            "the holes have more candidates than the solver searches (the limit is 100,000)"
        );
        // A rule's own code is a string, not a listed code.
        assert_eq!(Code::parse("deploy::rule::slow"), None);
        assert_eq!(Code::parse("acme::slow"), None);
        assert_eq!(Code::parse(""), None);
    }
}
