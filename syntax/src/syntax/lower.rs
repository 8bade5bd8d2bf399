//! pest pairs → typed AST. Declarations get spans relative to their own start.

use std::sync::{Arc, LazyLock};

use pest::Parser;
use pest::iterators::Pair;
use pest::pratt_parser::{Assoc, Op, PrattParser};

use super::ast::*;
use super::parsed::{DeployParser, Parsed, PlacedDecl, Rule, SyntaxError};
use super::split::comment_start;
use super::{errors, split};
use crate::codes::Code;
use crate::span::Span;
use crate::units;

/// Longer expressions are refused: evaluation and formatting recurse over the tree.
const MAX_OPERATORS: usize = 512;

static PRATT: LazyLock<PrattParser<Rule>> = LazyLock::new(|| {
    PrattParser::new()
        .op(Op::infix(Rule::or, Assoc::Left))
        .op(Op::infix(Rule::and, Assoc::Left))
        .op(Op::prefix(Rule::not))
        .op(Op::infix(Rule::eq_eq, Assoc::Left)
            | Op::infix(Rule::ne, Assoc::Left)
            | Op::infix(Rule::lt, Assoc::Left)
            | Op::infix(Rule::le, Assoc::Left)
            | Op::infix(Rule::gt, Assoc::Left)
            | Op::infix(Rule::ge, Assoc::Left))
        .op(Op::infix(Rule::add, Assoc::Left) | Op::infix(Rule::sub, Assoc::Left))
        .op(Op::infix(Rule::mul, Assoc::Left) | Op::infix(Rule::div, Assoc::Left))
        .op(Op::prefix(Rule::neg))
        .op(Op::postfix(Rule::access))
});

/// Lowering state: `base` is subtracted from absolute offsets (the declaration's start).
struct Lower<'a> {
    text: &'a str,
    base: usize,
    errors: &'a mut Vec<SyntaxError>,
    /// Set when an entry's expression was refused (too long, too deep): the entry is
    /// dropped so that a stand-in value cannot cause errors of its own.
    broken: bool,
}

pub(super) fn chunk(text: &str, source: &str, start: usize, parsed: &mut Parsed) {
    let pairs = match DeployParser::parse(Rule::chunk, source) {
        Ok(mut pairs) => pairs.next().map(|p| p.into_inner()),
        Err(error) => {
            parsed.errors.push(errors::convert(error, text, start));
            return;
        }
    };
    for pair in pairs.into_iter().flatten() {
        match pair.as_rule() {
            Rule::import => {
                let mut lower = Lower {
                    text,
                    base: 0,
                    errors: &mut parsed.errors,
                    broken: false,
                };
                let span = lower.abs(&pair, start);
                let string = pair
                    .into_inner()
                    .find(|p| p.as_rule() == Rule::string)
                    .map(|p| {
                        let span = lower.abs(&p, start);
                        (lower.string(p, start), span)
                    });
                if let Some((lit, path_span)) = string {
                    parsed.imports.push(Import {
                        path: lit.plain().unwrap_or_default(),
                        path_span,
                        span,
                    });
                }
            }
            Rule::decl => {
                let offset = pair.as_span().start() + start;
                let mut lower = Lower {
                    text,
                    base: offset,
                    errors: &mut parsed.errors,
                    broken: false,
                };
                let decl = lower.decl(pair, start);
                parsed.decls.push(PlacedDecl {
                    offset: offset as u32,
                    decl: Arc::new(decl),
                });
            }
            _ => {}
        }
    }
}

impl Lower<'_> {
    /// The span of `pair` (whose offsets are relative to `start` in the file), made
    /// relative to this lowering's base.
    fn abs(&self, pair: &Pair<Rule>, start: usize) -> Span {
        let span = pair.as_span();
        let end = trim_end(self.text, span.start() + start, span.end() + start);
        Span::new(span.start() + start - self.base, end - self.base)
    }

    fn ident(&self, pair: Pair<Rule>, start: usize) -> Ident {
        Ident {
            name: pair.as_str().to_string(),
            span: self.abs(&pair, start),
        }
    }

    fn decl(&mut self, pair: Pair<Rule>, start: usize) -> Decl {
        let span = self.abs(&pair, start);
        let mut docs = Vec::new();
        let mut kind = None;
        let mut name = None;
        let mut extends = None;
        let mut from = None;
        let mut body = None;
        for inner in pair.into_inner() {
            match inner.as_rule() {
                Rule::doc => docs.push(
                    inner
                        .into_inner()
                        .next()
                        .map(|t| t.as_str().trim().to_string())
                        .unwrap_or_default(),
                ),
                Rule::decl_kind => {
                    kind = Some((
                        DeclKind::from_keyword(inner.as_str()).unwrap_or(DeclKind::Deployment),
                        self.abs(&inner, start),
                    ))
                }
                Rule::ident => name = Some(self.ident(inner, start)),
                Rule::extends => {
                    extends = inner
                        .into_inner()
                        .find(|p| p.as_rule() == Rule::ident)
                        .map(|p| self.ident(p, start))
                }
                Rule::from => {
                    from = inner
                        .into_inner()
                        .find(|p| p.as_rule() == Rule::string)
                        .map(|p| self.string(p, start))
                }
                Rule::block => body = Some(self.block(inner, start)),
                _ => {}
            }
        }
        let (kind, kind_span) = kind.unwrap_or((DeclKind::Deployment, span));
        let no_body = Span::new(span.end as usize, span.end as usize);
        Decl {
            kind,
            kind_span,
            name: name.unwrap_or(Ident {
                name: String::new(),
                span,
            }),
            extends,
            from,
            doc: (!docs.is_empty()).then(|| docs.join("\n")),
            body: body.unwrap_or(Block {
                entries: Vec::new(),
                span: no_body,
            }),
            span,
        }
    }

    fn block(&mut self, pair: Pair<Rule>, start: usize) -> Block {
        let span = self.abs(&pair, start);
        let mut entries = Vec::new();
        for inner in pair.into_inner() {
            if std::mem::take(&mut self.broken) {
                entries.pop();
            }
            let entry_span = self.abs(&inner, start);
            match inner.as_rule() {
                Rule::field => {
                    let mut parts = inner.into_inner();
                    let name = parts.next().map(|p| self.ident(p, start));
                    let value = parts
                        .find(|p| p.as_rule() == Rule::expr)
                        .map(|p| self.expr(p, start));
                    if let (Some(name), Some(value)) = (name, value) {
                        entries.push(Entry::Field(Field {
                            name,
                            value,
                            span: entry_span,
                        }));
                    }
                }
                Rule::nested => {
                    let mut parts = inner.into_inner();
                    let name = parts.next().map(|p| self.ident(p, start));
                    let body = parts.next().map(|p| self.block(p, start));
                    if let (Some(name), Some(body)) = (name, body) {
                        entries.push(Entry::Nested(Nested {
                            name,
                            body,
                            span: entry_span,
                        }));
                    }
                }
                Rule::require => {
                    let mut cond = None;
                    let mut message = None;
                    for part in inner.into_inner() {
                        match part.as_rule() {
                            Rule::expr => cond = Some(self.expr(part, start)),
                            Rule::string => message = Some(self.string(part, start)),
                            _ => {}
                        }
                    }
                    if let Some(cond) = cond {
                        entries.push(Entry::Require(Require {
                            cond,
                            message,
                            span: entry_span,
                        }));
                    }
                }
                Rule::objective => {
                    let mut maximize = false;
                    let mut expr = None;
                    for part in inner.into_inner() {
                        match part.as_rule() {
                            Rule::kw_maximize => maximize = true,
                            Rule::expr => expr = Some(self.expr(part, start)),
                            _ => {}
                        }
                    }
                    if let Some(expr) = expr {
                        entries.push(Entry::Objective(Objective {
                            maximize,
                            expr,
                            span: entry_span,
                        }));
                    }
                }
                _ => {}
            }
        }
        if std::mem::take(&mut self.broken) {
            entries.pop();
        }
        Block { entries, span }
    }

    fn expr(&mut self, pair: Pair<Rule>, start: usize) -> Expr {
        let span = self.abs(&pair, start);
        let operators = pair
            .clone()
            .into_inner()
            .filter(|p| {
                matches!(
                    p.as_rule(),
                    Rule::or
                        | Rule::and
                        | Rule::eq_eq
                        | Rule::ne
                        | Rule::lt
                        | Rule::le
                        | Rule::gt
                        | Rule::ge
                        | Rule::add
                        | Rule::sub
                        | Rule::mul
                        | Rule::div
                        | Rule::neg
                        | Rule::not
                        | Rule::access
                )
            })
            .count();
        if operators > MAX_OPERATORS {
            self.errors.push(SyntaxError {
                code: Code::SyntaxTooLong,
                message: format!(
                    "this expression has {operators} operators; the limit is {MAX_OPERATORS}"
                ),
                span: Span::new(span.start as usize, span.start as usize + 1)
                    .shift(self.base as u32),
                label: "this expression is too long".into(),
                help: "split it into smaller requires or rules".into(),
            });
            self.broken = true;
            return Expr {
                kind: ExprKind::Name("false".into()),
                span,
            };
        }
        let errors = std::cell::RefCell::new(std::mem::take(self.errors));
        let broken = std::cell::Cell::new(false);
        let text = self.text;
        let base = self.base;
        let result = PRATT
            .map_primary(|primary| {
                let mut lower = Lower {
                    text,
                    base,
                    errors: &mut errors.borrow_mut(),
                    broken: false,
                };
                let expr = lower.primary(primary, start);
                broken.set(broken.get() || lower.broken);
                expr
            })
            .map_prefix(|op, operand| {
                let op_span = Span::new(
                    op.as_span().start() + start - base,
                    op.as_span().end() + start - base,
                );
                let kind = if op.as_rule() == Rule::neg {
                    UnaryOp::Neg
                } else {
                    UnaryOp::Not
                };
                Expr {
                    span: op_span.cover(operand.span),
                    kind: ExprKind::Unary(kind, Box::new(operand)),
                }
            })
            .map_postfix(|operand, op| {
                let name = op
                    .into_inner()
                    .next()
                    .map(|p| Ident {
                        name: p.as_str().to_string(),
                        span: Span::new(
                            p.as_span().start() + start - base,
                            p.as_span().end() + start - base,
                        ),
                    })
                    .unwrap_or(Ident {
                        name: String::new(),
                        span: operand.span,
                    });
                Expr {
                    span: operand.span.cover(name.span),
                    kind: ExprKind::Access(Box::new(operand), name),
                }
            })
            .map_infix(|lhs, op, rhs| {
                let op = match op.as_rule() {
                    Rule::or => BinaryOp::Or,
                    Rule::and => BinaryOp::And,
                    Rule::eq_eq => BinaryOp::Eq,
                    Rule::ne => BinaryOp::Ne,
                    Rule::lt => BinaryOp::Lt,
                    Rule::le => BinaryOp::Le,
                    Rule::gt => BinaryOp::Gt,
                    Rule::ge => BinaryOp::Ge,
                    Rule::add => BinaryOp::Add,
                    Rule::sub => BinaryOp::Sub,
                    Rule::mul => BinaryOp::Mul,
                    _ => BinaryOp::Div,
                };
                Expr {
                    span: lhs.span.cover(rhs.span),
                    kind: ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)),
                }
            })
            .parse(pair.into_inner());
        *self.errors = errors.into_inner();
        self.broken |= broken.get();
        Expr {
            span: result.span.cover(span).min_to(span),
            ..result
        }
    }

    fn list(&mut self, pair: Pair<Rule>, start: usize) -> Vec<Expr> {
        pair.into_inner()
            .filter(|p| p.as_rule() == Rule::expr)
            .map(|p| self.expr(p, start))
            .collect()
    }

    fn primary(&mut self, pair: Pair<Rule>, start: usize) -> Expr {
        let span = self.abs(&pair, start);
        let kind = match pair.as_rule() {
            Rule::hole => ExprKind::Hole,
            Rule::one_of => ExprKind::OneOf(self.list(pair, start)),
            Rule::list => ExprKind::List(self.list(pair, start)),
            Rule::paren => {
                let inner = pair
                    .into_inner()
                    .find(|p| p.as_rule() == Rule::expr)
                    .map(|p| self.expr(p, start));
                match inner {
                    Some(inner) => ExprKind::Paren(Box::new(inner)),
                    None => ExprKind::Name("false".into()),
                }
            }
            Rule::call => {
                let mut parts = pair.into_inner();
                let name = parts.next().map(|p| self.ident(p, start)).unwrap_or(Ident {
                    name: String::new(),
                    span,
                });
                let args = parts
                    .filter(|p| p.as_rule() == Rule::expr)
                    .map(|p| self.expr(p, start))
                    .collect();
                ExprKind::Call(name, args)
            }
            Rule::ident => ExprKind::Name(pair.as_str().to_string()),
            Rule::string => ExprKind::Str(self.string(pair, start)),
            Rule::quantity => {
                let text = pair.as_str().to_string();
                let mut number = "0";
                let mut suffix = None;
                let mut unit = None;
                for part in pair.into_inner() {
                    match part.as_rule() {
                        Rule::number => number = part.as_str(),
                        Rule::suffix => suffix = Some(part.as_str()),
                        Rule::unit => unit = Some(part.as_str()),
                        _ => {}
                    }
                }
                let value = units::literal(number, suffix, unit)
                    .unwrap_or_else(|| units::Quantity::number(units::Num::Int(0)));
                ExprKind::Literal { text, value }
            }
            Rule::money => {
                let text = pair.as_str().to_string();
                let mut number = "0";
                let mut suffix = None;
                let mut per = None;
                for part in pair.into_inner() {
                    match part.as_rule() {
                        Rule::number => number = part.as_str(),
                        Rule::suffix => suffix = Some(part.as_str()),
                        Rule::money_per => per = Some(&part.as_str()[1..]),
                        _ => {}
                    }
                }
                ExprKind::Literal {
                    text,
                    value: units::money(number, suffix, per),
                }
            }
            _ => ExprKind::Name("false".into()),
        };
        Expr { kind, span }
    }

    fn string(&mut self, pair: Pair<Rule>, start: usize) -> StrLit {
        let span = self.abs(&pair, start);
        let mut parts = Vec::new();
        for part in pair.into_inner() {
            match part.as_rule() {
                Rule::string_text => push_text(&mut parts, part.as_str()),
                Rule::escape => push_text(
                    &mut parts,
                    match &part.as_str()[1..] {
                        "n" => "\n",
                        other => other,
                    },
                ),
                Rule::interp => {
                    if let Some(body) = part.into_inner().next() {
                        let body_start = body.as_span().start() + start;
                        if let Some(expr) = self.interpolation(body.as_str(), body_start) {
                            parts.push(StrPart::Interp(expr));
                        }
                    }
                }
                _ => {}
            }
        }
        StrLit { parts, span }
    }

    /// Parses the text of `{...}` in a string as an expression.
    fn interpolation(&mut self, source: &str, body_start: usize) -> Option<Expr> {
        if let Some(at) = split::too_deep(source) {
            self.errors.push(errors::too_deep(body_start + at));
            self.broken = true;
            return None;
        }
        match DeployParser::parse(Rule::interp_expr, source) {
            Ok(mut pairs) => {
                let expr = pairs
                    .next()?
                    .into_inner()
                    .find(|p| p.as_rule() == Rule::expr)?;
                Some(self.expr(expr, body_start))
            }
            Err(error) => {
                let mut error = errors::convert(error, self.text, body_start);
                error.message = format!("in `{{...}}` interpolation: {}", error.message);
                self.errors.push(error);
                self.broken = true;
                None
            }
        }
    }
}

/// pest's spans of non-atomic rules include the whitespace and comments skipped after
/// their last token; diagnostics should underline only the tokens.
fn trim_end(text: &str, start: usize, mut end: usize) -> usize {
    loop {
        let trimmed = text[start..end].trim_end_matches([' ', '\t', '\r', '\n', ';']);
        end = start + trimmed.len();
        // The last line of the span (never before `start`): searching only the span
        // keeps this linear in it, not in the whole line (a long one-line string with
        // thousands of `{...}` made this quadratic).
        let line_start = text[start..end]
            .rfind('\n')
            .map(|i| start + i + 1)
            .unwrap_or(start);
        match comment_start(&text[line_start..end]) {
            Some(at) => end = line_start + at,
            None => return end,
        }
    }
}

fn push_text(parts: &mut Vec<StrPart>, text: &str) {
    if let Some(StrPart::Text(last)) = parts.last_mut() {
        last.push_str(text);
    } else {
        parts.push(StrPart::Text(text.to_string()));
    }
}

trait MinTo {
    fn min_to(self, outer: Span) -> Span;
}

impl MinTo for Span {
    /// The expression's span is the whole `expr` pair (it includes prefix operators).
    fn min_to(self, outer: Span) -> Span {
        outer
    }
}
