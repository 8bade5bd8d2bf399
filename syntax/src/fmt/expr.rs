//! Expressions, literals and strings, printed from the AST on one line.
//!
//! The printer emits exactly the source's tokens (parentheses included, because they are
//! kept as [`ExprKind::Paren`]), so the printed text parses back to the same tree without
//! any precedence reasoning here.

use crate::syntax::ast::{Expr, ExprKind, StrLit, StrPart, UnaryOp};

/// Appends `expr` to `out`.
pub(super) fn expr(out: &mut String, expr_: &Expr) {
    match &expr_.kind {
        ExprKind::Literal { text, .. } => literal(out, text),
        ExprKind::Str(lit) => string(out, lit),
        ExprKind::Name(name) => out.push_str(name),
        ExprKind::Hole => out.push('?'),
        ExprKind::OneOf(items) => {
            out.push_str("one_of ");
            list(out, items);
        }
        ExprKind::List(items) => list(out, items),
        ExprKind::Paren(inner) => {
            out.push('(');
            expr(out, inner);
            out.push(')');
        }
        ExprKind::Unary(op, operand) => {
            // `not` is a word and needs a space before its operand; `-` attaches.
            out.push_str(match op {
                UnaryOp::Neg => "-",
                UnaryOp::Not => "not ",
            });
            expr(out, operand);
        }
        ExprKind::Binary(op, lhs, rhs) => {
            expr(out, lhs);
            out.push(' ');
            out.push_str(op.symbol());
            out.push(' ');
            expr(out, rhs);
        }
        ExprKind::Access(target, field) => {
            expr(out, target);
            out.push('.');
            out.push_str(&field.name);
        }
        ExprKind::Call(name, args) => {
            out.push_str(&name.name);
            out.push('(');
            separated(out, args);
            out.push(')');
        }
    }
}

fn list(out: &mut String, items: &[Expr]) {
    out.push('[');
    separated(out, items);
    out.push(']');
}

fn separated(out: &mut String, items: &[Expr]) {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        expr(out, item);
    }
}

/// A number, quantity or money literal from its source spelling: the unit is separated
/// from the number by exactly one space, except `%`, which attaches (`95%`).
pub(super) fn literal(out: &mut String, text: &str) {
    if text.starts_with('$') {
        // Money has no inner whitespace in the grammar: `$1.20/h`, `$329`.
        out.push_str(text);
        return;
    }
    let (number, unit) = split_quantity(text);
    out.push_str(number);
    match unit {
        Some("%") => out.push('%'),
        Some(unit) => {
            out.push(' ');
            out.push_str(unit);
        }
        None => {}
    }
}

/// Splits a quantity's spelling into the number (with its `k`/`M` suffix) and the unit.
fn split_quantity(text: &str) -> (&str, Option<&str>) {
    if let Some(at) = text.find([' ', '\t']) {
        let unit = text[at..].trim_start_matches([' ', '\t']);
        return (&text[..at], (!unit.is_empty()).then_some(unit));
    }
    // Without whitespace the unit may still be attached (`12GiB`): it starts after the
    // number proper, unless what follows is only the `k`/`M` context suffix.
    let mut at = number_len(text);
    // The `k`/`M` suffix belongs to the number when no name character follows it
    // (`1k%` is 1024 %, `1MB` is one megabyte).
    if let [b'k' | b'M', next @ ..] = &text.as_bytes()[at..]
        && !next
            .first()
            .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
    {
        at += 1;
    }
    let rest = &text[at..];
    if rest.is_empty() || rest == "k" || rest == "M" {
        (text, None)
    } else {
        (&text[..at], Some(rest))
    }
}

/// The length of the leading `number` (digits, `_`, fraction, exponent) in `text`.
fn number_len(text: &str) -> usize {
    let bytes = text.as_bytes();
    let digits = |mut i: usize| {
        while i < bytes.len() && (bytes[i].is_ascii_digit() || bytes[i] == b'_') {
            i += 1;
        }
        i
    };
    let mut i = digits(0);
    if bytes.get(i) == Some(&b'.') && bytes.get(i + 1).is_some_and(u8::is_ascii_digit) {
        i = digits(i + 1);
    }
    if matches!(bytes.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        if matches!(bytes.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        if bytes.get(j).is_some_and(u8::is_ascii_digit) {
            i = digits(j);
        }
    }
    i
}

/// A string literal, re-escaped, with interpolations printed as `{expr}`.
pub(super) fn string(out: &mut String, lit: &StrLit) {
    out.push('"');
    for part in &lit.parts {
        match part {
            StrPart::Text(text) => {
                for c in text.chars() {
                    match c {
                        '"' => out.push_str("\\\""),
                        '\\' => out.push_str("\\\\"),
                        '\n' => out.push_str("\\n"),
                        '{' => out.push_str("\\{"),
                        '}' => out.push_str("\\}"),
                        c => out.push(c),
                    }
                }
            }
            StrPart::Interp(inner) => {
                out.push('{');
                expr(out, inner);
                out.push('}');
            }
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lit(text: &str) -> String {
        let mut out = String::new();
        literal(&mut out, text);
        out
    }

    #[test]
    fn literals_normalize_unit_spacing() {
        assert_eq!(lit("12   GiB"), "12 GiB");
        assert_eq!(lit("864\tGB/s"), "864 GB/s");
        assert_eq!(lit("12GiB"), "12 GiB");
        assert_eq!(lit("95 %"), "95%");
        assert_eq!(lit("95%"), "95%");
        assert_eq!(lit("32k"), "32k");
        assert_eq!(lit("2k  tokens"), "2k tokens");
        assert_eq!(lit("1.5e3ms"), "1.5e3 ms");
        assert_eq!(lit("19_851_336_256 B"), "19_851_336_256 B");
        assert_eq!(lit("$1.20/h"), "$1.20/h");
        assert_eq!(lit("$329"), "$329");
        assert_eq!(lit("7"), "7");
    }
}
