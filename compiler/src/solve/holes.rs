//! The values a hole (`?`, `one_of [...]`) of a deployment field can take: the search
//! space of the solver ([`super::search`]) and of a mixed fleet ([`super::fleet`]).

use crate::diagnostics::codes::Code;
use crate::diagnostics::{Diag, Loc, Severity};
use crate::eval::Value;
use crate::eval::deployment::{Cx, Resolved};
use crate::eval::entry::const_field;
use crate::eval::schema::{FieldTy, field_spec};
use crate::syntax::ast::{DeclKind, ExprKind, Field};

/// Counts `?` tries for tensor parallelism.
pub const COUNTS: [i128; 4] = [1, 2, 4, 8];
/// Replicas `?` tries, up to this many.
pub const MAX_REPLICAS: i128 = 16;
/// The values one hole can take.
pub(crate) fn hole_values<'db>(
    cx: Cx<'_, 'db>,
    resolved: &Resolved,
    field: &Field,
) -> Result<Vec<Value>, Box<Diag<'db>>> {
    let Cx { db, scope, key, .. } = cx;
    let name = field.name.name.as_str();
    let spec = field_spec(DeclKind::Deployment, name).ok_or_else(|| {
        Box::new(
            Diag::error(
                Code::SolveUnsupported,
                format!("`{name}` cannot be left open: it is not a deployment field"),
                Loc::Decl(key, field.value.span),
            )
            .label("not a deployment field")
            .help("holes fill deployment fields (`gpu = ?`, `quant = one_of [...]`); fix the field's name"),
        )
    })?;
    match &field.value.kind {
        ExprKind::OneOf(items) => items
            .iter()
            .map(|item| {
                let one = Field {
                    name: field.name.clone(),
                    value: item.clone(),
                    span: item.span,
                };
                const_field(db, scope, key, &one, spec)
            })
            .collect::<Result<Vec<_>, _>>(),
        _ => match (spec.ty, name) {
            (FieldTy::Ref(kind), _) if kind != DeclKind::Model => Ok(scope
                .names(kind)
                // An engine entry for other releases of an engine (`release_of`) is that
                // engine at a `version`, not an engine of its own to try.
                .filter(|(_, entry_key)| {
                    kind != DeclKind::Engine
                        || crate::eval::entry_of(db, *entry_key)
                            .as_engine()
                            .release_of
                            .is_none()
                })
                .map(|(entry, _)| Value::Ref(kind, entry.to_string()))
                .collect()),
            (_, "count") => {
                let heads = match resolved.fields.get("model") {
                    Some(Value::Ref(_, model)) => scope
                        .lookup(DeclKind::Model, model)
                        .and_then(|k| crate::eval::entry_of(db, k).as_model().heads),
                    _ => None,
                };
                Ok(COUNTS
                    .iter()
                    .filter(|count| heads.is_none_or(|h| h as i128 % **count == 0))
                    .map(|count| {
                        Value::Q(crate::units::Quantity::new(
                            crate::units::Num::Int(*count),
                            crate::units::Dim::NONE,
                        ))
                    })
                    .collect())
            }
            (_, "replicas") => Ok((1..=MAX_REPLICAS)
                .map(|n| {
                    Value::Q(crate::units::Quantity::new(
                        crate::units::Num::Int(n),
                        crate::units::Dim::NONE,
                    ))
                })
                .collect()),
            _ => Err(Box::new(
                Diag::new(
                    Code::SolveUnsupported,
                    Severity::Error,
                    format!("`{name} = ?` has no catalog to search"),
                    Loc::Decl(key, field.value.span),
                )
                .label("cannot enumerate")
                .help(format!("list the values to try: `{name} = one_of [...]`")),
            )),
        },
    }
}
