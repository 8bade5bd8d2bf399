//! Requires and rules: a deployment's own `require`s, then every rule in scope, with
//! severities, `allow`, interpolated messages, and labels on the fields each one reads.

use std::collections::BTreeSet;

use crate::db::{Db, DeclKey};
use crate::diagnostics::codes::Code;
use crate::diagnostics::{Diag, Loc, Severity};
use crate::eval::deployment::{Cx, DeploymentEnv};
use crate::eval::entry::{find_expr, not_finite};
use crate::eval::figures::property;
use crate::eval::schema::{Level, field_spec};
use crate::eval::{Checker, Env, EvalError, Value, eval, interpolate, reads};
use crate::names::Scope;
use crate::syntax::ast::{Decl, DeclKind, Entry as AstEntry, Expr, Require};

/// Checks the requires and the objective of a deployment with holes for names, units and
/// types before the solver runs (errors go to `diags`); `false` when there are errors, so
/// that no candidate is tried.
pub fn statically_sound<'db>(cx: Cx<'_, 'db>, diags: &mut Vec<Diag<'db>>) -> bool {
    let before = diags.len();
    check_statically(cx, diags);
    !diags[before..]
        .iter()
        .any(|d| d.severity == crate::diagnostics::Severity::Error)
}

/// The requires and objectives of a deployment that cannot be evaluated (holes,
/// unresolved fields) are still checked for names, units and types.
pub fn check_statically<'db>(cx: Cx<'_, 'db>, diags: &mut Vec<Diag<'db>>) {
    let Cx {
        scope, key, decl, ..
    } = cx;
    let mut checker = Checker {
        scope,
        anchor: key,
        diags: Vec::new(),
    };
    for entry in &decl.body.entries {
        match entry {
            AstEntry::Require(require) => {
                checker.condition(&require.cond);
                huge_literals(key, &require.cond, "this require", &mut checker.diags);
                if let Some(message) = &require.message {
                    checker.string(message);
                }
            }
            AstEntry::Objective(objective) => {
                objective_is_quantity(&mut checker, &objective.expr);
                huge_literals(key, &objective.expr, "the objective", &mut checker.diags);
            }
            _ => {}
        }
    }
    diags.extend(checker.diags);
}

/// `deploy::eval::overflow` on each literal beyond ±1e300 (`1e400`): what evaluation
/// would report, for a deployment that is not evaluated.
fn huge_literals<'db>(key: DeclKey<'db>, root: &Expr, what: &str, diags: &mut Vec<Diag<'db>>) {
    use crate::syntax::ast::{ExprKind, StrPart};
    let mut stack = vec![root];
    while let Some(expr) = stack.pop() {
        match &expr.kind {
            ExprKind::Literal { value, .. } if !value.is_finite() => diags.push(not_finite(
                Loc::Decl(key, expr.span),
                value.is_nan(),
                &crate::fmt::expression(expr),
                what,
            )),
            ExprKind::List(items) | ExprKind::OneOf(items) | ExprKind::Call(_, items) => {
                stack.extend(items)
            }
            ExprKind::Paren(inner) | ExprKind::Unary(_, inner) | ExprKind::Access(inner, _) => {
                stack.push(inner)
            }
            ExprKind::Binary(_, lhs, rhs) => {
                stack.push(rhs);
                stack.push(lhs);
            }
            ExprKind::Str(lit) => stack.extend(lit.parts.iter().filter_map(|p| match p {
                StrPart::Interp(e) => Some(e),
                _ => None,
            })),
            ExprKind::Literal { .. } | ExprKind::Name(_) | ExprKind::Hole => {}
        }
    }
}

fn objective_is_quantity(checker: &mut Checker<'_, '_>, expr: &Expr) {
    if let Some(ty) = checker.expr(expr)
        && !matches!(ty, crate::eval::Ty::Q(_))
    {
        checker.diags.push(
            Diag::error(
                Code::TypeMismatch,
                "an objective must be a quantity to minimize or maximize",
                Loc::Decl(checker.anchor, expr.span),
            )
            .label("not a quantity")
            .help("write `minimize cost_per_hour` or `maximize decode_tps`"),
        );
    }
}

/// Labels on the deployment fields an expression reads, with their values.
fn field_labels<'db>(
    key: DeclKey<'db>,
    decl: &Decl,
    env: &DeploymentEnv<'_, 'db>,
    exprs: &[&Expr],
) -> Vec<(Loc<'db>, String, String)> {
    let mut names = Vec::new();
    for expr in exprs {
        reads(expr, &mut names);
    }
    let mut fields = BTreeSet::new();
    for name in &names {
        if let Some(prop) = property(name) {
            fields.extend(prop.deps.iter().copied());
        } else if field_spec(DeclKind::Deployment, name).is_some() {
            fields.insert(name.as_str());
        }
    }
    let mut labels = Vec::new();
    for entry in &decl.body.entries {
        let (name, span) = match entry {
            AstEntry::Field(field) => (field.name.name.as_str(), field.span),
            AstEntry::Nested(nested) => (nested.name.name.as_str(), nested.name.span),
            _ => continue,
        };
        if fields.contains(name) {
            let text = contribution(env, name, &names);
            labels.push((Loc::Decl(key, span), text, name.to_string()));
        }
    }
    labels
}

/// What a field contributes to the figures, for its label: "KV cache 5.00 GiB".
fn contribution(env: &DeploymentEnv<'_, '_>, field: &str, reads: &[String]) -> String {
    let reads_any = |names: &[&str]| reads.iter().any(|r| names.contains(&r.as_str()));
    let about_cost = reads_any(&["cost_per_hour", "cost_per_mtok"]);
    let about_speed = reads_any(&[
        "decode_tps",
        "throughput",
        "prefill_tps",
        "ttft",
        "tpot",
        "ttft_p99",
        "tpot_p99",
        "ttft_p50",
        "tpot_p50",
        "queue",
    ]);
    let prop = |name: &str| match env.figures.get(name) {
        Some(Ok(value)) => value.display(),
        _ => "?".to_string(),
    };
    let entry_field = |kind: DeclKind, of: &str, name: &str| match env.fields.get(of) {
        Some(Value::Ref(_, entry)) => env.field_of(kind, entry, name).map(|v| v.display()),
        _ => None,
    };
    let value = env
        .fields
        .get(field)
        .map(Value::display)
        .unwrap_or_default();
    match field {
        // A model materialized from the registry or a file has a generated name; the
        // text the user wrote is right under the label.
        "model"
            if env
                .scope
                .lookup(DeclKind::Model, &value)
                .is_some_and(|key| {
                    key.file(env.db).path(env.db)
                        == std::path::Path::new(crate::db::RESOLVED_MODELS_PATH)
                }) =>
        {
            format!("weights {}", prop("weights_memory"))
        }
        "model" => format!("{value}: weights {}", prop("weights_memory")),
        "quant" => match entry_field(DeclKind::Quant, "quant", "bpw") {
            Some(bpw) => format!("{bpw} bits per weight"),
            None => value,
        },
        "context" => format!(
            "{value} tokens per sequence: KV cache {}",
            prop("kv_memory")
        ),
        "seqs" if value == "1" => "1 sequence".to_string(),
        "seqs" => format!("{value} sequences share the KV cache"),
        "kv_cache" => match entry_field(DeclKind::Kv, "kv_cache", "bytes") {
            Some(bytes) if bytes == "1" => "1 byte per KV element".to_string(),
            Some(bytes) => format!("{bytes} bytes per KV element"),
            None => value,
        },
        "engine" => format!("{value}: overhead {} per GPU", prop("overhead_memory")),
        "gpu" if about_cost => match (&env.figures.offer, &env.figures.instances) {
            (Ok(offer), Ok(_)) => format!(
                "{value}: {} × offer {offer}, {}",
                prop("instances"),
                prop("cost_per_hour")
            ),
            _ if env.figures.cost_per_hour.is_ok() => {
                format!("{value}: {}, {}", prop("pricing"), prop("cost_per_hour"))
            }
            _ => format!("{value}: no price ({} pricing)", prop("pricing")),
        },
        "gpu" if about_speed => match entry_field(DeclKind::Gpu, "gpu", "bandwidth") {
            Some(bandwidth) => format!("{value}: {bandwidth} memory bandwidth"),
            None => value,
        },
        "gpu" => match entry_field(DeclKind::Gpu, "gpu", "memory") {
            Some(memory) => format!("{memory} per GPU, {} usable", prop("usable_memory")),
            None => value,
        },
        "count" if value == "1" => format!("1 GPU: {}", prop("memory_per_gpu")),
        "count" => format!("{value} GPUs: {} each", prop("memory_per_gpu")),
        "memory_utilization" => format!("{value} of GPU memory usable"),
        "replicas" => format!("{value} replicas"),
        "workload" => {
            let part = |name: &str| env.workload.get(name).map(Value::display);
            match (part("rate"), part("prompt"), part("output")) {
                (Some(rate), Some(prompt), Some(output)) => {
                    format!("{rate}, {prompt} prompt + {output} output tokens per request")
                }
                _ => "the workload".to_string(),
            }
        }
        _ => format!("{field} = {value}"),
    }
}

/// The figures an expression reads, with their values: "(decode_tps = 15.2 tok/s)".
/// The figures an expression reads, with their values: ` (ttft = 1.2 s, …)`.
pub(crate) fn figures(env: &DeploymentEnv<'_, '_>, expr: &Expr) -> String {
    let mut names = Vec::new();
    reads(expr, &mut names);
    let mut seen = BTreeSet::new();
    let parts: Vec<String> = names
        .iter()
        .filter(|name| property(name).is_some() && seen.insert(name.as_str()))
        .filter_map(|name| match env.figures.get(name.as_str()) {
            Some(Ok(value)) => Some(format!("{name} = {}", value.display())),
            _ => None,
        })
        .collect();
    let mut parts = parts;
    let reads_any = |list: &[&str]| names.iter().any(|n| list.contains(&n.as_str()));
    // Name the resource that binds: memory capacity, or what limits a decode step.
    if reads_any(&[
        "fits",
        "headroom",
        "utilization",
        "memory_per_gpu",
        "max_context",
    ]) && env.figures.fits == Ok(false)
    {
        parts.push("memory-bound: the deployment does not fit".to_string());
    } else if reads_any(&[
        "decode_tps",
        "throughput",
        "tpot",
        "cost_per_mtok",
        "load",
        "replicas_needed",
    ]) && let Ok(bound) = &env.figures.bound
    {
        parts.push(format!("decode is {bound}"));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!(" ({})", parts.join(", "))
    }
}

/// The help of `deploy::cost::no_offer`.
pub(crate) const NO_OFFER_HELP: &str = "write `pricing = owned` (with `owned { amortize = 3 years; power = $0.15/kWh }` to change the defaults), choose a `gpu` that an offer in stdlib/offers.deploy rents, widen `provider`/`region`, or declare an `offer` for it";

fn eval_problem<'db>(
    key: DeclKey<'db>,
    error: EvalError,
    at: Loc<'db>,
    what: &str,
    root: Option<&Expr>,
) -> Option<Diag<'db>> {
    match error {
        EvalError::Missing(missing) if missing.starts_with(crate::eval::estimate::NO_OFFER) => Some(
            Diag::error(Code::CostNoOffer, format!("cannot check {what}: {missing}"), at)
                .label("no offer rents this GPU")
                .help(NO_OFFER_HELP),
        ),
        EvalError::Missing(missing) => {
            let help = if missing.contains("workload") {
                "add a `workload { rate = ... prompt = ... output = ... }` block to the deployment"
            } else {
                "add the figure to the catalog entry (`gpu my_card extends ... { memory = ... }`) or choose another entry"
            };
            Some(
                Diag::error(
                    Code::EvalMissingFact,
                    format!("cannot check {what}: {missing}"),
                    at,
                )
                .label("needs a figure the catalog lacks")
                .help(help),
            )
        }
        EvalError::DivisionByZero(span) => Some(
            Diag::error(
                Code::EvalDivisionByZero,
                format!("{what} divides by zero"),
                Loc::Decl(key, span),
            )
            .label("this is zero")
            .help("guard the division or divide by a figure that cannot be zero"),
        ),
        EvalError::NotFinite {
            figure: Some(figure),
            nan,
            ..
        } => Some(
            not_finite(at, nan, &figure, what)
                .label(format!("reads `{figure}`, which is not finite"))
                .help(format!(
                    "`{figure}` is not a finite number (see the error on the deployment): fix the catalog figures it is computed from"
                )),
        ),
        EvalError::NotFinite {
            span, nan, figure: None,
        } => {
            let (loc, text) = match (span, root) {
                (Some(span), Some(root)) => (
                    Loc::Decl(key, span),
                    find_expr(root, span).map(crate::fmt::expression),
                ),
                _ => (at, root.map(crate::fmt::expression)),
            };
            Some(not_finite(loc, nan, &text.unwrap_or_default(), what))
        }
        EvalError::Invalid => None,
    }
}

/// One error per catalog entry the deployment uses that has a rejected figure (an
/// out-of-range `bpw`, …): the deployment is not evaluated, and says why even when the
/// entry is in an imported file whose diagnostics are not shown. The code is the one of
/// the entry's own error.
fn rejected_inputs<'db>(
    db: &'db dyn Db,
    scope: &Scope<'db>,
    key: DeclKey<'db>,
    decl: &Decl,
    env: &DeploymentEnv<'_, 'db>,
) -> Vec<Diag<'db>> {
    let mut out = Vec::new();
    for field in ["model", "quant", "kv_cache", "engine", "gpu"] {
        let Some(Value::Ref(kind, name)) = env.fields.get(field) else {
            continue;
        };
        let Some(entry_key) = scope.lookup(*kind, name) else {
            continue;
        };
        let entry = crate::eval::entry_of(db, entry_key);
        let Some(figure) = entry.rejected_figures().next() else {
            continue;
        };
        // The error on the field, in the declaration that writes it.
        let cause = entry.owners.get(figure).and_then(|owner| {
            let written = entry.spans.get(figure)?;
            crate::eval::entry_of(db, *owner).diags.iter().find(|d| {
                matches!(d.loc, Loc::Decl(k, s) if k == *owner
                    && written.start <= s.start && s.end <= written.end)
            })
        });
        let at = decl.field(field).map_or(decl.name.span, |f| f.span);
        let mut diag = Diag::error(
            Code::FieldType,
            format!(
                "`{name}` has an invalid `{figure}`, so this deployment is not evaluated{}",
                cause
                    .map(|d| format!(" ({})", d.message))
                    .unwrap_or_default()
            ),
            Loc::Decl(key, at),
        )
        .label(format!("uses `{name}`"))
        .help(format!(
            "fix `{figure}` in `{name}` (or the entry it extends), or choose another {}",
            kind.keyword()
        ));
        // The code of the error on the field, when there is one.
        if let Some(cause) = cause {
            diag.code = cause.code.clone();
        }
        out.push(diag);
    }
    out
}

/// One error per deployment whose estimate has figures that are not finite numbers (a
/// catalog figure so large or small that a computation overflows), with labels on the
/// fields they depend on.
fn figures_not_finite<'db>(
    key: DeclKey<'db>,
    decl: &Decl,
    env: &DeploymentEnv<'_, 'db>,
) -> Option<Diag<'db>> {
    let mut names = Vec::new();
    let mut any_infinite = false;
    for (name, value) in env.figures.values() {
        if let Err(EvalError::NotFinite { nan, .. }) = value {
            names.push(name);
            any_infinite |= !nan;
        }
    }
    if names.is_empty() {
        return None;
    }
    let list = names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ");
    let (figures, what, they) = match (names.len(), any_infinite) {
        (1, true) => ("figure", "overflows", "it is not a finite number"),
        (1, false) => ("figure", "is undefined", "it is not a number"),
        (_, true) => ("figures", "overflow", "they are not finite numbers"),
        (_, false) => ("figures", "are undefined", "they are not numbers"),
    };
    let deps: Vec<Expr> = names
        .iter()
        .map(|name| Expr {
            kind: crate::syntax::ast::ExprKind::Name(name.to_string()),
            span: decl.name.span,
        })
        .collect();
    let labels = field_labels(key, decl, env, &deps.iter().collect::<Vec<_>>());
    let fields: Vec<String> = labels.iter().map(|(_, _, n)| format!("`{n}`")).collect();
    let mut diag = Diag::error(
        Code::EvalOverflow,
        format!("the estimated {figures} {list} {what}: {they}"),
        Loc::Decl(key, decl.name.span),
    )
    .label("figures not finite")
    .help(format!(
        "a catalog figure behind {} is far too large or too small: give it a realistic value",
        if fields.is_empty() {
            "them".to_string()
        } else {
            fields.join(", ")
        }
    ));
    diag.labels = labels
        .into_iter()
        .map(|(loc, text, _)| (loc, text))
        .collect();
    Some(diag)
}

fn check_require<'db>(
    checker: &mut Checker<'_, 'db>,
    key: DeclKey<'db>,
    decl: &Decl,
    env: &DeploymentEnv<'_, 'db>,
    require: &Require,
) -> Option<Diag<'db>> {
    let before = checker.diags.len();
    checker.condition(&require.cond);
    if let Some(message) = &require.message {
        checker.string(message);
    }
    if checker.diags.len() > before {
        return None;
    }
    let at = Loc::Decl(key, require.span);
    match eval(env, &require.cond) {
        Ok(Value::Bool(true)) => None,
        Ok(_) => {
            let custom = require
                .message
                .as_ref()
                .filter(|_| env.messages)
                .and_then(|m| interpolate(env, m).ok());
            let figures = figures(env, &require.cond);
            let message = match custom {
                Some(text) => format!("{text}{figures}"),
                None => format!(
                    "`require {}` does not hold{figures}",
                    crate::fmt::expression(&require.cond)
                ),
            };
            let labels = field_labels(key, decl, env, &[&require.cond]);
            let fields: Vec<String> = labels
                .iter()
                .map(|(_, _, name)| format!("`{name}`"))
                .collect();
            let help = if fields.is_empty() {
                "change the deployment so this holds, or relax the bound".to_string()
            } else {
                format!(
                    "this depends on {}: change one of them, or relax the bound",
                    fields.join(", ")
                )
            };
            let mut diag = Diag::error(Code::RequireFailed, message, at)
                .label("this does not hold")
                .help(help);
            diag.labels = labels
                .into_iter()
                .map(|(loc, text, _)| (loc, text))
                .collect();
            Some(diag)
        }
        Err(error) => eval_problem(key, error, at, "this require", Some(&require.cond)),
    }
}

/// Checks a resolved deployment: its requires, then every rule in scope.
pub fn check<'db>(cx: Cx<'_, 'db>, env: &DeploymentEnv<'_, 'db>, diags: &mut Vec<Diag<'db>>) {
    let Cx {
        db,
        scope,
        key,
        decl,
    } = cx;
    diags.extend(rejected_inputs(db, scope, key, decl, env));
    diags.extend(figures_not_finite(key, decl, env));
    check_requires(cx, env, diags);
    check_rules(cx, env, diags);
}

/// The deployment's own requires and objectives: the type checker's diagnostics, then
/// the requires that fail.
fn check_requires<'db>(cx: Cx<'_, 'db>, env: &DeploymentEnv<'_, 'db>, diags: &mut Vec<Diag<'db>>) {
    let Cx {
        scope, key, decl, ..
    } = cx;
    let mut checker = Checker {
        scope,
        anchor: key,
        diags: Vec::new(),
    };
    let mut failures = Vec::new();
    for entry in &decl.body.entries {
        match entry {
            AstEntry::Require(require) => {
                failures.extend(check_require(&mut checker, key, decl, env, require));
            }
            AstEntry::Objective(objective) => objective_is_quantity(&mut checker, &objective.expr),
            _ => {}
        }
    }
    diags.extend(checker.diags);
    diags.extend(failures);
}

/// Every rule in scope whose `when` holds for the deployment, less those it allows,
/// those replaced by a rule that `extends` them and those with errors of their own.
fn check_rules<'db>(cx: Cx<'_, 'db>, env: &DeploymentEnv<'_, 'db>, diags: &mut Vec<Diag<'db>>) {
    let Cx { db, scope, .. } = cx;
    let allowed: BTreeSet<String> = match env.fields.get("allow") {
        Some(Value::List(items)) => items.iter().map(Value::display).collect(),
        _ => BTreeSet::new(),
    };
    let rules: Vec<DeclKey<'db>> = scope.names(DeclKind::Rule).map(|(_, k)| k).collect();
    // A rule that `extends` another replaces it.
    let replaced: BTreeSet<String> = rules
        .iter()
        .flat_map(|rule| {
            crate::eval::entry_of(db, *rule)
                .ancestors
                .iter()
                .map(|a| a.name(db).clone())
        })
        .collect();
    let mut reported_missing = false;
    for rule in rules {
        let name = rule.name(db);
        if replaced.contains(name) {
            continue;
        }
        let entry = crate::eval::entry_of(db, rule);
        let lineage: Vec<&String> = std::iter::once(name)
            .chain(entry.ancestors.iter().map(|a| a.name(db)))
            .collect();
        if lineage.iter().any(|n| allowed.contains(*n))
            || entry.diags.iter().any(|d| d.severity == Severity::Error)
        {
            continue;
        }
        let Some(when) = entry.exprs.get("when") else {
            continue;
        };
        let severity = rule_severity(entry);
        if !rule_applies(cx, env, name, when, &mut reported_missing, diags) {
            continue;
        }
        diags.push(rule_diag(cx, env, entry, name, when, severity));
    }
}

/// A rule's `level` as a severity: a warning unless it says otherwise.
fn rule_severity(entry: &crate::eval::Entry<'_>) -> Severity {
    match entry.fields.get("level") {
        Some(Value::Symbol(level)) => match Level::parse(level) {
            Some(Level::Error) => Severity::Error,
            Some(Level::Info) => Severity::Info,
            Some(Level::Warn) | None => Severity::Warning,
        },
        _ => Severity::Warning,
    }
}

/// Whether rule `name`'s `when` holds for the deployment. A `when` that cannot be
/// evaluated is reported on the deployment (a missing figure once per deployment:
/// `reported_missing`) and does not apply.
fn rule_applies<'db>(
    cx: Cx<'_, 'db>,
    env: &DeploymentEnv<'_, 'db>,
    name: &str,
    when: &Expr,
    reported_missing: &mut bool,
    diags: &mut Vec<Diag<'db>>,
) -> bool {
    let Cx { key, decl, .. } = cx;
    let at = Loc::Decl(key, decl.name.span);
    match eval(env, when) {
        Ok(Value::Bool(true)) => true,
        Ok(_) => false,
        Err(EvalError::Missing(missing)) => {
            // One note per deployment: the estimate lacks a figure, so the rules
            // that need it are skipped.
            if !*reported_missing {
                *reported_missing = true;
                diags.push(
                    Diag::new(
                        Code::EvalMissingFact,
                        Severity::Warning,
                        format!("some rules cannot be checked: {missing}"),
                        at,
                    )
                    .label("not fully checked")
                    .help("add the missing figure to the catalog entry (with `extends`), or choose an entry that has it"),
                );
            }
            false
        }
        Err(EvalError::NotFinite {
            figure: Some(_), ..
        }) => {
            // Reported once on the deployment by `figures_not_finite`.
            false
        }
        Err(EvalError::NotFinite {
            span,
            nan,
            figure: None,
        }) => {
            // The rule's expression belongs to the rule's declaration (its spans are
            // relative to it): point at the deployment and name the expression.
            let inner = span.and_then(|span| find_expr(when, span)).unwrap_or(when);
            diags.push(not_finite(
                at,
                nan,
                &crate::fmt::expression(inner),
                &format!("rule `{name}`"),
            ));
            false
        }
        Err(EvalError::DivisionByZero(span)) => {
            // As above: the span is in the rule's declaration, not the deployment's.
            let zero = find_expr(when, span).map(crate::fmt::expression);
            diags.push(
                Diag::error(
                    Code::EvalDivisionByZero,
                    format!(
                        "rule `{name}` divides by zero{}",
                        zero.map(|z| format!(": `{z}` is zero")).unwrap_or_default()
                    ),
                    at,
                )
                .label("checked here")
                .help(format!(
                    "guard the division in rule `{name}`'s `when`, or divide by a figure that cannot be zero"
                )),
            );
            false
        }
        Err(error) => {
            diags.extend(eval_problem(
                key,
                error,
                at,
                &format!("rule `{name}`"),
                Some(when),
            ));
            false
        }
    }
}

/// The diagnostic of rule `name` applying to the deployment: its code, its rendered
/// `message` and `help`, labels on the fields its `when` reads, and its fixes.
fn rule_diag<'db>(
    cx: Cx<'_, 'db>,
    env: &DeploymentEnv<'_, 'db>,
    entry: &crate::eval::Entry<'db>,
    name: &str,
    when: &Expr,
    severity: Severity,
) -> Diag<'db> {
    let Cx { key, decl, .. } = cx;
    let at = Loc::Decl(key, decl.name.span);
    let render = |field: &str| {
        let expr = entry.exprs.get(field).filter(|_| env.messages);
        expr.and_then(|expr| match &expr.kind {
            crate::syntax::ast::ExprKind::Str(lit) => interpolate(env, lit).ok(),
            _ => None,
        })
    };
    let code = match entry.fields.get("code") {
        Some(Value::Str(code)) => code.clone(),
        _ => format!("deploy::rule::{name}"),
    };
    let message = render("message").unwrap_or_else(|| format!("rule `{name}` applies"));
    let help = render("help").unwrap_or_else(|| {
        format!("fix the deployment, or add `allow = [{name}]` to it if this is intended")
    });
    let mut diag = Diag::rule(code, severity, message, at)
        .label(format!("rule `{name}`"))
        .help(help);
    diag.labels = field_labels(key, decl, env, &[when])
        .into_iter()
        .map(|(loc, text, _)| (loc, text))
        .collect();
    if env.messages {
        diag.suggestions = fixes(key, decl, env, entry);
    }
    diag
}

/// A rule's `fix { FIELD = EXPR }` as structured suggestions on the deployment: each
/// field set to its value, written as source (`context = 32k`), replacing the field's
/// value or inserted at the top of the block. A value that is not valid for the field
/// (a context of 0 tokens) is not offered.
fn fixes<'db>(
    key: DeclKey<'db>,
    decl: &Decl,
    env: &DeploymentEnv<'_, 'db>,
    rule: &crate::eval::Entry<'db>,
) -> Vec<(String, Loc<'db>, String)> {
    let mut out = Vec::new();
    for (name, expr) in &rule.exprs {
        let Some(field) = name.strip_prefix("fix.") else {
            continue;
        };
        let Some(spec) = field_spec(DeclKind::Deployment, field) else {
            continue;
        };
        let Some(text) = eval(env, expr).ok().and_then(|v| source_text(&v, spec)) else {
            continue;
        };
        let title = format!("Set `{field} = {text}`");
        match decl.field(field) {
            Some(existing) => out.push((title, Loc::Decl(key, existing.value.span), text)),
            None => {
                let at = decl.body.span.start as usize + 1;
                out.push((
                    title,
                    Loc::Decl(key, crate::span::Span::new(at, at)),
                    format!("\n    {field} = {text}"),
                ));
            }
        }
    }
    out
}

/// A value as a field would be written, when it is valid for the field: whole token
/// counts as `32k` or `40960`, counts as integers, entries by name.
fn source_text(value: &Value, spec: &crate::eval::schema::FieldSpec) -> Option<String> {
    use crate::eval::schema::FieldTy;
    match (value, spec.ty) {
        (Value::Q(q), FieldTy::Q(_) | FieldTy::Number) => {
            let v = q.value();
            if !(v.is_finite() && v >= 1.0 && v.fract() == 0.0 && v <= u32::MAX as f64) {
                return None;
            }
            let n = v as u64;
            Some(
                if spec.ty == FieldTy::Q(crate::units::Dim::TOKENS) && n.is_multiple_of(1024) {
                    format!("{}k", n / 1024)
                } else {
                    n.to_string()
                },
            )
        }
        (Value::Ref(kind, name), FieldTy::Ref(want)) if *kind == want => Some(name.clone()),
        _ => None,
    }
}
