//! Evaluation: values, the static check of expressions (names, units, types) and their
//! evaluation over a deployment's properties.

// The model's numerics and tables, their own crate (model/), under the paths the compiler
// has always used.
pub use deployfit_model::{figures, ollama, schema, sim, speed, value, views};

pub mod deployment;
pub mod entry;
pub mod estimate;
mod formats;
pub mod parallel;
pub mod support;

use crate::db::DeclKey;
use crate::diagnostics::codes::Code;
use crate::diagnostics::{Diag, Loc};
use crate::names::{Scope, closest};
use crate::span::Span;
use crate::syntax::ast::{BinaryOp, DeclKind, Expr, ExprKind, Ident, StrLit, StrPart, UnaryOp};
use crate::units::{Dim, Quantity};
use figures::{PROPERTIES, property};
use schema::{FieldTy, WORKLOAD, field_spec, schema};

pub use entry::{Entry, entry_of};
pub use value::{EvalError, Value, as_count};

/// The static type of an expression.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ty {
    Q(Dim),
    Bool,
    Str,
    Ref(DeclKind),
    Symbol(&'static [&'static str]),
    List,
    Workload,
}

impl Ty {
    pub fn of_field(ty: FieldTy) -> Ty {
        match ty {
            FieldTy::Q(dim) => Ty::Q(dim),
            FieldTy::Number | FieldTy::Ratio => Ty::Q(Dim::NONE),
            FieldTy::Str | FieldTy::Message => Ty::Str,
            FieldTy::Symbol(words) => Ty::Symbol(words),
            FieldTy::Ref(kind) => Ty::Ref(kind),
            FieldTy::RefList(_) | FieldTy::StrList => Ty::List,
            FieldTy::Predicate => Ty::Bool,
            FieldTy::Block => Ty::Workload,
        }
    }

    /// The type in words, for messages (`bytes`, `true/false`, `a string`).
    pub(crate) fn describe(self) -> String {
        match self {
            Ty::Q(dim) => dim.describe(),
            Ty::Bool => "true/false".into(),
            Ty::Str => "a string".into(),
            Ty::Ref(kind) => kind.describe().into(),
            Ty::Symbol(_) => "a word".into(),
            Ty::List => "a list".into(),
            Ty::Workload => "the workload block".into(),
        }
    }
}

/// The functions expressions may call.
pub const FUNCTIONS: &[&str] = &["min", "max", "abs", "ceil", "floor"];

/// Checks expressions written against a deployment (requires, rules' `when` and
/// messages, objectives) before anything is evaluated: names, units, types.
pub struct Checker<'a, 'db> {
    pub scope: &'a Scope<'db>,
    pub anchor: DeclKey<'db>,
    pub diags: Vec<Diag<'db>>,
}

fn name_ty(name: &str) -> Option<Ty> {
    match name {
        "true" | "false" => Some(Ty::Bool),
        _ => property(name)
            .map(|prop| Ty::of_field(prop.ty))
            .or_else(|| field_spec(DeclKind::Deployment, name).map(|spec| Ty::of_field(spec.ty))),
    }
}

/// Every name an expression over a deployment may use.
pub fn deployment_names() -> impl Iterator<Item = &'static str> {
    PROPERTIES
        .iter()
        .map(|p| p.name)
        .chain(schema(DeclKind::Deployment).iter().map(|s| s.name))
        .chain(["true", "false"])
}

impl<'db> Checker<'_, 'db> {
    fn loc(&self, span: Span) -> Loc<'db> {
        Loc::Decl(self.anchor, span)
    }

    /// Checks a condition: the expression must be true/false.
    pub fn condition(&mut self, expr: &Expr) -> bool {
        match self.expr(expr) {
            Some(Ty::Bool) => true,
            Some(other) => {
                let diag = Diag::error(
                    Code::TypeNotBool,
                    format!(
                        "a condition must be true or false, but this is {}",
                        other.describe()
                    ),
                    self.loc(expr.span),
                )
                .label("not a condition")
                .help(match other {
                    Ty::Q(dim) if !dim.is_none() => {
                        "compare it with a bound: `... >= 20 tok/s`, `... <= 80%`".to_string()
                    }
                    _ => "compare it with something: `==`, `<`, `>=` …".to_string(),
                });
                self.diags.push(diag);
                false
            }
            None => false,
        }
    }

    pub fn string(&mut self, lit: &StrLit) -> bool {
        let mut ok = true;
        for part in &lit.parts {
            if let StrPart::Interp(expr) = part {
                ok &= self.expr(expr).is_some();
            }
        }
        ok
    }

    fn unknown_name(&mut self, name: &str, span: Span) {
        let suggestion = closest(name, deployment_names());
        let help = match &suggestion {
            Some(s) => format!("did you mean `{s}`?"),
            None => {
                "properties are listed in docs/language.md (weights_memory, fits, decode_tps, …)"
                    .to_string()
            }
        };
        self.diags.push(
            Diag::error(
                Code::NameUnknown,
                format!("unknown name `{name}`: not a property or field of a deployment"),
                self.loc(span),
            )
            .label("unknown")
            .help(help)
            .suggest(suggestion),
        );
    }

    /// The type of `expr`, or `None` after reporting why it has none.
    pub fn expr(&mut self, expr: &Expr) -> Option<Ty> {
        match &expr.kind {
            ExprKind::Literal { value, .. } => Some(Ty::Q(value.dim)),
            ExprKind::Str(lit) => self.string(lit).then_some(Ty::Str),
            ExprKind::Name(name) => match name_ty(name) {
                Some(ty) => Some(ty),
                None => {
                    self.unknown_name(name, expr.span);
                    None
                }
            },
            ExprKind::Hole | ExprKind::OneOf(_) => {
                self.diags.push(
                    Diag::error(
                        Code::TypeMismatch,
                        "a hole (`?`, `one_of`) can only be the value of a field",
                        self.loc(expr.span),
                    )
                    .label("not allowed here")
                    .help("write a concrete value here, or move the hole to a deployment field"),
                );
                None
            }
            ExprKind::List(items) => {
                let mut ok = true;
                for item in items {
                    ok &= self.expr(item).is_some();
                }
                ok.then_some(Ty::List)
            }
            ExprKind::Paren(inner) => self.expr(inner),
            ExprKind::Unary(op, operand) => self.unary(expr, *op, operand),
            ExprKind::Binary(op, lhs, rhs) => self.binary(expr, *op, lhs, rhs),
            ExprKind::Access(base, field) => self.access(base, field),
            ExprKind::Call(name, args) => self.call(expr, name, args),
        }
    }

    /// The type of `op operand` (`expr`): a negated quantity or a negated boolean.
    fn unary(&mut self, expr: &Expr, op: UnaryOp, operand: &Expr) -> Option<Ty> {
        let ty = self.expr(operand)?;
        match (op, ty) {
            (UnaryOp::Neg, Ty::Q(dim)) => Some(Ty::Q(dim)),
            (UnaryOp::Not, Ty::Bool) => Some(Ty::Bool),
            (UnaryOp::Neg, other) => {
                self.mismatch(expr.span, format!("cannot negate {}", other.describe()));
                None
            }
            (UnaryOp::Not, other) => {
                self.mismatch(
                    expr.span,
                    format!("`not` needs true/false, found {}", other.describe()),
                );
                None
            }
        }
    }

    /// The type of `base.field`: a field of a catalog entry or of the workload.
    fn access(&mut self, base: &Expr, field: &Ident) -> Option<Ty> {
        let ty = self.expr(base)?;
        let spec = match ty {
            Ty::Ref(kind) => field_spec(kind, &field.name).map(|s| (s, kind.keyword())),
            Ty::Workload => WORKLOAD
                .iter()
                .find(|s| s.name == field.name)
                .map(|s| (s, "workload")),
            other => {
                self.mismatch(field.span, format!("{} has no fields", other.describe()));
                return None;
            }
        };
        match spec {
            Some((spec, _)) => Some(Ty::of_field(spec.ty)),
            None => {
                let candidates: Vec<&str> = match ty {
                    Ty::Ref(kind) => schema(kind).iter().map(|s| s.name).collect(),
                    _ => WORKLOAD.iter().map(|s| s.name).collect(),
                };
                let suggestion = closest(&field.name, candidates.iter().copied());
                let help = match &suggestion {
                    Some(s) => format!("did you mean `{s}`?"),
                    None => format!("the fields are {}", schema::quote_list(&candidates)),
                };
                self.diags.push(
                    Diag::error(
                        Code::FieldUnknown,
                        format!("{} has no field `{}`", ty.describe(), field.name),
                        self.loc(field.span),
                    )
                    .label("unknown field")
                    .help(help)
                    .suggest(suggestion),
                );
                None
            }
        }
    }

    /// The type of the call `name(args)` (`expr`): one of [`FUNCTIONS`] over quantities
    /// of one unit.
    fn call(&mut self, expr: &Expr, name: &Ident, args: &[Expr]) -> Option<Ty> {
        let mut tys = Vec::new();
        for arg in args {
            tys.push(self.expr(arg)?);
        }
        if !FUNCTIONS.contains(&name.name.as_str()) {
            let suggestion = closest(&name.name, FUNCTIONS.iter().copied());
            let help = match &suggestion {
                Some(s) => format!("did you mean `{s}`?"),
                None => format!("the functions are {}", schema::quote_list(FUNCTIONS)),
            };
            self.diags.push(
                Diag::error(
                    Code::NameUnknownFunction,
                    format!("there is no function `{}`", name.name),
                    self.loc(name.span),
                )
                .label("unknown function")
                .help(help)
                .suggest(suggestion),
            );
            return None;
        }
        let single = matches!(name.name.as_str(), "abs" | "ceil" | "floor");
        if args.is_empty() || (single && args.len() != 1) {
            self.mismatch(
                expr.span,
                format!(
                    "`{}` takes {}",
                    name.name,
                    if single {
                        "one argument"
                    } else {
                        "one or more arguments"
                    }
                ),
            );
            return None;
        }
        let mut dim = None;
        for (arg, ty) in args.iter().zip(&tys) {
            let Ty::Q(d) = ty else {
                self.mismatch(
                    arg.span,
                    format!("`{}` needs quantities, found {}", name.name, ty.describe()),
                );
                return None;
            };
            match dim {
                None => dim = Some(*d),
                Some(first) if !first.compatible(*d) => {
                    self.unit_mismatch(&args[0], first, arg, *d, "mixed in one call");
                    return None;
                }
                Some(first) if first.is_none() => dim = Some(*d),
                Some(_) => {}
            }
        }
        dim.map(Ty::Q)
    }

    fn not_quantities(&mut self, expr: &Expr, op: BinaryOp, left: Ty, right: Ty) -> Option<Ty> {
        self.mismatch(
            expr.span,
            format!(
                "`{}` needs quantities, not {} and {}",
                op.symbol(),
                left.describe(),
                right.describe()
            ),
        );
        None
    }

    fn mismatch(&mut self, span: Span, message: String) {
        self.diags.push(
            Diag::error(Code::TypeMismatch, message, self.loc(span))
                .label("here")
                .help("see docs/language.md for what each operator accepts"),
        );
    }

    /// Reports unlike dimensions; when one side is a bare number literal, the help
    /// suggests the unit it probably lacks.
    fn unit_mismatch(&mut self, lhs: &Expr, left: Dim, rhs: &Expr, right: Dim, what: &str) {
        let bare = |e: &Expr, d: Dim| {
            matches!(&e.kind, ExprKind::Literal { text, .. } if d.is_none() && !text.ends_with('%'))
                .then(|| match &e.kind {
                    ExprKind::Literal { text, .. } => text.clone(),
                    _ => String::new(),
                })
        };
        let (message, help, span) = if let Some(text) = bare(rhs, right) {
            (
                format!("expected {}, found a number", left.describe()),
                left.suggest(&text).map(|s| format!("write {s}")),
                rhs.span,
            )
        } else if let Some(text) = bare(lhs, left) {
            (
                format!("expected {}, found a number", right.describe()),
                right.suggest(&text).map(|s| format!("write {s}")),
                lhs.span,
            )
        } else {
            (
                format!(
                    "{} and {} cannot be {what}",
                    left.describe(),
                    right.describe()
                ),
                None,
                lhs.span.cover(rhs.span),
            )
        };
        self.diags.push(
            Diag::error(Code::UnitMismatch, message, self.loc(span))
                .label(format!("{} here", right.describe()))
                .with_label(self.loc(lhs.span), left.describe())
                .help(help.unwrap_or_else(|| {
                    "convert one side so both have the same dimension (for example divide bytes by a bandwidth to get a time)".into()
                })),
        );
    }

    fn binary(&mut self, expr: &Expr, op: BinaryOp, lhs: &Expr, rhs: &Expr) -> Option<Ty> {
        if matches!(op, BinaryOp::Eq | BinaryOp::Ne) {
            // `kv_cache == fp16`: a bare name on one side takes its kind from the other.
            for (known, other) in [(lhs, rhs), (rhs, lhs)] {
                if let ExprKind::Name(name) = &other.kind
                    && name_ty(name).is_none()
                {
                    let ty = self.expr(known)?;
                    return self.name_of_kind(ty, name, other.span).then_some(Ty::Bool);
                }
            }
        }
        let left = self.expr(lhs);
        let right = self.expr(rhs);
        let (left, right) = (left?, right?);
        match op {
            BinaryOp::And | BinaryOp::Or => {
                for (side, ty) in [(lhs, left), (rhs, right)] {
                    if ty != Ty::Bool {
                        self.mismatch(
                            side.span,
                            format!(
                                "`{}` needs true/false on both sides, found {}",
                                op.symbol(),
                                ty.describe()
                            ),
                        );
                        return None;
                    }
                }
                Some(Ty::Bool)
            }
            BinaryOp::Eq | BinaryOp::Ne => match (left, right) {
                (Ty::Q(a), Ty::Q(b)) if !a.compatible(b) => {
                    self.unit_mismatch(lhs, a, rhs, b, "compared");
                    None
                }
                (Ty::Q(_), Ty::Q(_)) => Some(Ty::Bool),
                (a, b) if std::mem::discriminant(&a) == std::mem::discriminant(&b) => {
                    Some(Ty::Bool)
                }
                (Ty::Str, Ty::Symbol(_)) | (Ty::Symbol(_), Ty::Str) => Some(Ty::Bool),
                (a, b) => {
                    self.mismatch(
                        expr.span,
                        format!("cannot compare {} with {}", a.describe(), b.describe()),
                    );
                    None
                }
            },
            BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge => match (left, right) {
                (Ty::Q(a), Ty::Q(b)) if a.compatible(b) => Some(Ty::Bool),
                (Ty::Q(a), Ty::Q(b)) => {
                    self.unit_mismatch(lhs, a, rhs, b, "compared");
                    None
                }
                (a, b) => {
                    self.mismatch(
                        expr.span,
                        format!(
                            "`{}` compares quantities, not {} and {}",
                            op.symbol(),
                            a.describe(),
                            b.describe()
                        ),
                    );
                    None
                }
            },
            BinaryOp::Add | BinaryOp::Sub => match (left, right) {
                (Ty::Q(a), Ty::Q(b)) if a.compatible(b) => {
                    Some(Ty::Q(if a.is_none() { b } else { a }))
                }
                (Ty::Q(a), Ty::Q(b)) => {
                    self.unit_mismatch(
                        lhs,
                        a,
                        rhs,
                        b,
                        if op == BinaryOp::Add {
                            "added"
                        } else {
                            "subtracted"
                        },
                    );
                    None
                }
                (a, b) => self.not_quantities(expr, op, a, b),
            },
            BinaryOp::Mul | BinaryOp::Div => match (left, right) {
                (Ty::Q(a), Ty::Q(b)) => Some(Ty::Q(if op == BinaryOp::Mul {
                    a.mul(b)
                } else {
                    a.div(b)
                })),
                (a, b) => self.not_quantities(expr, op, a, b),
            },
        }
    }

    /// Checks that `name` is an entry of the reference's kind (or a word of the
    /// symbol's set), with a suggestion when it is not.
    fn name_of_kind(&mut self, ty: Ty, name: &str, span: Span) -> bool {
        let (found, suggestion, what) = match ty {
            Ty::Ref(kind) => (
                self.scope.lookup(kind, name).is_some(),
                self.scope.suggest(kind, name),
                kind.describe().to_string(),
            ),
            Ty::Symbol(words) => (
                words.contains(&name),
                closest(name, words.iter().copied()),
                format!("one of {}", schema::quote_list(words)),
            ),
            Ty::Str => return true,
            _ => {
                self.unknown_name(name, span);
                return false;
            }
        };
        if !found {
            let help = match &suggestion {
                Some(s) => format!("did you mean `{s}`?"),
                None => format!("write {what} from the catalog"),
            };
            self.diags.push(
                Diag::error(
                    Code::NameUnknown,
                    format!("unknown name `{name}`: expected {what}"),
                    self.loc(span),
                )
                .label("unknown")
                .help(help)
                .suggest(suggestion),
            );
        }
        found
    }
}

/// What an expression can read while it is evaluated.
pub trait Env {
    fn get(&self, name: &str) -> Option<Result<Value, EvalError>>;
    fn field_of(&self, kind: DeclKind, name: &str, field: &str) -> Option<Value>;
}

/// Evaluates a checked expression; a quantity that is not finite (a huge literal, an
/// overflow, 0/0) is an error naming the innermost expression that produced it.
pub fn eval(env: &dyn Env, expr: &Expr) -> Result<Value, EvalError> {
    match eval_node(env, expr)? {
        Value::Q(q) if !q.is_finite() => Err(EvalError::NotFinite {
            span: Some(expr.span),
            figure: None,
            nan: q.is_nan(),
        }),
        value => Ok(value),
    }
}

fn eval_node(env: &dyn Env, expr: &Expr) -> Result<Value, EvalError> {
    match &expr.kind {
        ExprKind::Literal { value, .. } => Ok(Value::Q(*value)),
        ExprKind::Str(lit) => interpolate(env, lit).map(Value::Str),
        ExprKind::Name(name) => match name.as_str() {
            "true" => Ok(Value::Bool(true)),
            "false" => Ok(Value::Bool(false)),
            _ => env
                .get(name)
                .unwrap_or_else(|| Ok(Value::Symbol(name.clone()))),
        },
        ExprKind::Hole | ExprKind::OneOf(_) => Err(EvalError::Invalid),
        ExprKind::List(items) => items
            .iter()
            .map(|item| eval(env, item))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::List),
        ExprKind::Paren(inner) => eval(env, inner),
        ExprKind::Unary(op, operand) => match (op, eval(env, operand)?) {
            (UnaryOp::Neg, Value::Q(q)) => Ok(Value::Q(Quantity {
                num: q.num.negate(),
                ..q
            })),
            (UnaryOp::Not, Value::Bool(b)) => Ok(Value::Bool(!b)),
            _ => Err(EvalError::Invalid),
        },
        ExprKind::Binary(op, lhs, rhs) => {
            // `and`/`or` short-circuit, so `fits and utilization > 90%` never needs a
            // figure the left side already ruled out.
            if matches!(op, BinaryOp::And | BinaryOp::Or) {
                let left = matches!(eval(env, lhs)?, Value::Bool(true));
                return match (op, left) {
                    (BinaryOp::And, false) => Ok(Value::Bool(false)),
                    (BinaryOp::Or, true) => Ok(Value::Bool(true)),
                    _ => match eval(env, rhs)? {
                        Value::Bool(b) => Ok(Value::Bool(b)),
                        _ => Err(EvalError::Invalid),
                    },
                };
            }
            let left = eval(env, lhs)?;
            let right = eval(env, rhs)?;
            binary(*op, left, right, rhs.span)
        }
        ExprKind::Access(base, field) => match eval(env, base)? {
            Value::Ref(kind, name) => env
                .field_of(kind, &name, &field.name)
                .ok_or_else(|| EvalError::Missing(format!("`{name}` has no `{}`", field.name))),
            Value::Symbol(name) if name == "workload" => env
                .field_of(DeclKind::Deployment, "workload", &field.name)
                .ok_or_else(|| EvalError::Missing(format!("the workload has no `{}`", field.name))),
            _ => Err(EvalError::Invalid),
        },
        ExprKind::Call(name, args) => {
            let values = args
                .iter()
                .map(|arg| eval(env, arg)?.quantity().ok_or(EvalError::Invalid))
                .collect::<Result<Vec<_>, _>>()?;
            let first = *values.first().ok_or(EvalError::Invalid)?;
            let dim = values
                .iter()
                .map(|q| q.dim)
                .find(|d| !d.is_none())
                .unwrap_or(first.dim);
            let pick = |better: fn(f64, f64) -> bool| {
                values
                    .iter()
                    .copied()
                    .reduce(|a, b| if better(b.value(), a.value()) { b } else { a })
                    .map(|q| Quantity { dim, ..q })
            };
            let result = match name.name.as_str() {
                "min" => pick(|a, b| a < b),
                "max" => pick(|a, b| a > b),
                "abs" => Some(Quantity::real(first.value().abs(), dim)),
                "ceil" => Some(Quantity::real(first.value().ceil(), dim)),
                "floor" => Some(Quantity::real(first.value().floor(), dim)),
                _ => None,
            };
            result.map(Value::Q).ok_or(EvalError::Invalid)
        }
    }
}

fn binary(op: BinaryOp, left: Value, right: Value, rhs_span: Span) -> Result<Value, EvalError> {
    use std::cmp::Ordering;
    match op {
        BinaryOp::Eq | BinaryOp::Ne => {
            let equal = match (&left, &right) {
                (Value::Q(a), Value::Q(b)) => a.value() == b.value(),
                (
                    Value::Ref(_, a) | Value::Symbol(a) | Value::Str(a),
                    Value::Ref(_, b) | Value::Symbol(b) | Value::Str(b),
                ) => a == b,
                (a, b) => a == b,
            };
            Ok(Value::Bool(equal == (op == BinaryOp::Eq)))
        }
        BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge => {
            let (Value::Q(a), Value::Q(b)) = (left, right) else {
                return Err(EvalError::Invalid);
            };
            let ordering = a.value().partial_cmp(&b.value());
            let result = match (op, ordering) {
                (_, None) => false,
                (BinaryOp::Lt, Some(o)) => o == Ordering::Less,
                (BinaryOp::Le, Some(o)) => o != Ordering::Greater,
                (BinaryOp::Gt, Some(o)) => o == Ordering::Greater,
                (_, Some(o)) => o != Ordering::Less,
            };
            Ok(Value::Bool(result))
        }
        _ => {
            let (Value::Q(a), Value::Q(b)) = (left, right) else {
                return Err(EvalError::Invalid);
            };
            let pick_dim = |a: Dim, b: Dim| if a.is_none() { b } else { a };
            let q = match op {
                BinaryOp::Add => Quantity::new(a.num.plus(b.num), pick_dim(a.dim, b.dim)),
                BinaryOp::Sub => Quantity::new(a.num.minus(b.num), pick_dim(a.dim, b.dim)),
                BinaryOp::Mul => Quantity::new(a.num.times(b.num), a.dim.mul(b.dim)),
                _ => Quantity::new(
                    a.num
                        .over(b.num)
                        .ok_or(EvalError::DivisionByZero(rhs_span))?,
                    a.dim.div(b.dim),
                ),
            };
            Ok(Value::Q(q))
        }
    }
}

/// Renders an interpolated string.
pub fn interpolate(env: &dyn Env, lit: &StrLit) -> Result<String, EvalError> {
    let mut out = String::new();
    for part in &lit.parts {
        match part {
            StrPart::Text(text) => out.push_str(text),
            StrPart::Interp(expr) => match eval(env, expr)? {
                // A model reads as its display name where it has one: a model generated
                // from a registry id or a file reads as what the user wrote.
                Value::Ref(DeclKind::Model, name) => {
                    match env.field_of(DeclKind::Model, &name, "name") {
                        Some(Value::Str(display)) => out.push_str(&display),
                        _ => out.push_str(&name),
                    }
                }
                value => out.push_str(&value.display()),
            },
        }
    }
    Ok(out)
}

/// The names an expression reads (properties, fields, `workload`), for labels.
pub fn reads(expr: &Expr, out: &mut Vec<String>) {
    match &expr.kind {
        ExprKind::Name(name) => out.push(name.clone()),
        ExprKind::Str(lit) => {
            for part in &lit.parts {
                if let StrPart::Interp(e) = part {
                    reads(e, out);
                }
            }
        }
        ExprKind::List(items) | ExprKind::OneOf(items) | ExprKind::Call(_, items) => {
            items.iter().for_each(|e| reads(e, out))
        }
        ExprKind::Paren(inner) | ExprKind::Unary(_, inner) | ExprKind::Access(inner, _) => {
            reads(inner, out)
        }
        ExprKind::Binary(_, lhs, rhs) => {
            reads(lhs, out);
            reads(rhs, out);
        }
        ExprKind::Literal { .. } | ExprKind::Hole => {}
    }
}

/// Evaluates a constant expression (catalog figures): literals and arithmetic only.
pub fn eval_const(expr: &Expr) -> Result<Value, EvalError> {
    struct NoNames;
    impl Env for NoNames {
        fn get(&self, _: &str) -> Option<Result<Value, EvalError>> {
            Some(Err(EvalError::Invalid))
        }
        fn field_of(&self, _: DeclKind, _: &str, _: &str) -> Option<Value> {
            None
        }
    }
    eval(&NoNames, expr)
}
