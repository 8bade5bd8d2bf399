//! Every stable diagnostic code, with a one-line summary; docs/language.md lists them
//! and tests/fixtures/diagnostics holds one file per code.

/// (code, what it means)
pub const CODES: &[(&str, &str)] = &[
    (
        "deploy::syntax::unexpected",
        "the parser found a token it did not expect",
    ),
    (
        "deploy::syntax::unterminated_string",
        "a string is not closed on its line",
    ),
    (
        "deploy::syntax::too_deep",
        "brackets nest deeper than the parser allows",
    ),
    (
        "deploy::syntax::too_long",
        "an expression has more operators than the parser allows",
    ),
    (
        "deploy::syntax::invalid_utf8",
        "the file is not valid UTF-8",
    ),
    (
        "deploy::syntax::limit",
        "the parser's work limit was reached",
    ),
    (
        "deploy::model::unreadable",
        "a model named by a file (config.json, safetensors, GGUF, a folder) cannot be read as one",
    ),
    (
        "deploy::model::incomplete",
        "a model from the registry or a file lacks part of its architecture (expert counts, MLA latent sizes, sliding-window layout)",
    ),
    (
        "deploy::name::unknown",
        "a name does not resolve to an entry of the expected kind",
    ),
    (
        "deploy::name::extends_too_deep",
        "an entry is more `extends` links from its chain's start than are followed (32)",
    ),
    (
        "deploy::name::duplicate",
        "a name is defined twice in one kind",
    ),
    (
        "deploy::name::redefines_stdlib",
        "a user file defines a name the stdlib already has",
    ),
    (
        "deploy::name::extends_cycle",
        "`extends` chains loop back on themselves",
    ),
    (
        "deploy::name::import_missing",
        "an imported file does not exist or cannot be read",
    ),
    (
        "deploy::name::import_not_deploy",
        "an import names a file that is not a `.deploy` file",
    ),
    (
        "deploy::name::import_cycle",
        "files import each other in a cycle",
    ),
    (
        "deploy::name::unknown_function",
        "a call to a function the language does not have",
    ),
    (
        "deploy::field::unknown",
        "a field the declaration kind does not have",
    ),
    (
        "deploy::field::duplicate",
        "a field given twice in one block",
    ),
    ("deploy::field::missing", "a required field is absent"),
    (
        "deploy::field::out_of_range",
        "a numeric field's value is outside the range the field allows (a negative size, a zero count, a share above 100 %)",
    ),
    (
        "deploy::field::invalid_id",
        "an `hf` or `ollama` string is not a valid Hugging Face repository id or Ollama tag, or a rule's `code` is not `area::name`",
    ),
    (
        "deploy::field::type",
        "a field's value has the wrong kind (a string where a name is expected, …)",
    ),
    (
        "deploy::unit::expected",
        "a field's value has the wrong dimension (a number where bytes are expected, …)",
    ),
    (
        "deploy::unit::mismatch",
        "an operation mixes unlike dimensions",
    ),
    ("deploy::type::not_bool", "a condition is not true/false"),
    (
        "deploy::type::mismatch",
        "an operator is applied to values it does not accept",
    ),
    (
        "deploy::eval::division_by_zero",
        "an expression divides by zero",
    ),
    (
        "deploy::eval::overflow",
        "a number, a result or an estimated figure is not finite: beyond ±1e300, infinite or undefined",
    ),
    (
        "deploy::eval::missing_fact",
        "a catalog entry lacks a figure the estimate needs",
    ),
    (
        "deploy::require::failed",
        "a `require` of the deployment does not hold",
    ),
    (
        "deploy::solve::unsupported",
        "a hole the solver cannot enumerate (`context = ?`)",
    ),
    (
        "deploy::solve::too_many_candidates",
        "the holes have more candidates than the solver searches (the limit is 100,000)",
    ),
    (
        "deploy::solve::chosen",
        "info: the solver's choice for a hole, with its figures",
    ),
    (
        "deploy::solve::no_solution",
        "no assignment of the holes satisfies every require and error-level rule",
    ),
    (
        "deploy::fit::does_not_fit",
        "built-in rule: the deployment needs more memory than the GPUs offer",
    ),
    (
        "deploy::fit::tight_fit",
        "built-in rule: the deployment fits with under 10 % to spare",
    ),
    (
        "deploy::fit::context_exceeds_model",
        "built-in rule: the context is longer than the model's window",
    ),
    (
        "deploy::fit::quant_engine_mismatch",
        "built-in rule: the weight format does not run on the engine",
    ),
    (
        "deploy::fit::kv_heads_replicated",
        "built-in rule (info): the KV cache cannot be split evenly over the GPUs, so parts are replicated",
    ),
    (
        "deploy::fit::low_bit_quant",
        "built-in rule: the weights are packed in fewer than 4 bits",
    ),
    (
        "deploy::rule::NAME",
        "a user rule named NAME fired (its code unless the rule sets `code`)",
    ),
];
