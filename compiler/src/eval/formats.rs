//! A written quant against the format a model file declares: a GGUF file holds one format
//! (its `general.file_type`), a quantized checkpoint another (its `quantization_config`),
//! and `quant = …` cannot change the bytes on disk (`deploy::model::format_mismatch`).

use std::collections::BTreeMap;

use super::value::Value;
use crate::db::{Db, DeclKey};
use crate::diagnostics::codes::Code;
use crate::diagnostics::{Diag, Loc, Severity};
use crate::external;
use crate::names::Scope;
use crate::syntax::ast::{Decl, DeclKind, ExprKind};

/// Warns when the deployment's `model` is a file whose declared format (the generated
/// model's `default_quant`) is a GGUF type or under 16 bits, and the deployment writes
/// another quant (not one that `extends` it). `decl` is the deployment `key` declares,
/// `fields` its resolved fields.
pub(crate) fn check_file_format<'db>(
    db: &'db dyn Db,
    scope: &Scope<'db>,
    key: DeclKey<'db>,
    decl: &Decl,
    fields: &BTreeMap<String, Value>,
    diags: &mut Vec<Diag<'db>>,
) {
    let (Some(model_field), Some(quant_field)) = (decl.field("model"), decl.field("quant")) else {
        return;
    };
    let ExprKind::Str(lit) = &model_field.value.kind else {
        return;
    };
    let text = lit.plain().unwrap_or_default();
    if !external::is_path(&text) {
        return;
    }
    let (Some(Value::Ref(_, model)), Some(Value::Ref(_, quant))) =
        (fields.get("model"), fields.get("quant"))
    else {
        return;
    };
    let Some(model_key) = scope.lookup(DeclKind::Model, model) else {
        return;
    };
    let Some(file_quant) = super::entry_of(db, model_key)
        .as_model()
        .default_quant
        .clone()
    else {
        return;
    };
    let Some(file_key) = scope.lookup(DeclKind::Quant, &file_quant) else {
        return;
    };
    let file_entry = super::entry_of(db, file_key);
    let gguf = text.to_ascii_lowercase().ends_with(".gguf");
    let packed = file_entry.as_quant().bits.is_some_and(|b| b < 16.0);
    if !gguf && !packed {
        return;
    }
    let written = scope
        .lookup(DeclKind::Quant, quant)
        .map(|k| super::entry_of(db, k));
    let same = quant == &file_quant
        || written.is_some_and(|w| w.ancestor_names.iter().any(|n| n == &file_quant));
    if same {
        return;
    }
    diags.push(
        Diag::new(
            Code::ModelFormatMismatch,
            Severity::Warning,
            format!(
                "the model file holds {file_quant} weights, but the deployment says `quant = {quant}`: the figures are for weights the file does not have"
            ),
            Loc::Decl(key, quant_field.value.span),
        )
        .label(format!("the file is {file_quant}"))
        .help(format!(
            "remove `quant` (the file's format is the default) or write `quant = {file_quant}`; for {quant}, point `model` at a file in that format"
        )),
    );
}
