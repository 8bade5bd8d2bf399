//! Turns pest's rule lists into sentences: "expected `=` or `{` after `gpu`".

use pest::error::{ErrorVariant, InputLocation};

use super::parsed::{Rule, SyntaxError};
use super::split::{self, comment_start};
use crate::codes::Code;
use crate::span::Span;

/// What a rule looks like to a user; `None` hides the rule from the message.
fn describe(rule: Rule) -> Option<&'static str> {
    Some(match rule {
        Rule::decl | Rule::decl_kind | Rule::import | Rule::kw_import | Rule::doc => {
            "a declaration (`deployment`, `gpu`, `model`, `quant`, `kv`, `engine`, `rule`) or `import`"
        }
        Rule::EOI => "end of file",
        Rule::ident => "a name",
        Rule::extends | Rule::kw_extends => "`extends`",
        // `from` is only for models; naming it after every other kind would mislead.
        Rule::from | Rule::kw_from => return None,
        Rule::lbrace => "`{`",
        Rule::block_end => "`}`",
        Rule::eq => "`=`",
        Rule::require | Rule::kw_require => "`require`",
        Rule::objective | Rule::kw_minimize | Rule::kw_maximize => "`minimize`/`maximize`",
        Rule::field | Rule::nested => "a field",
        Rule::kw_else => "`else`",
        Rule::expr
        | Rule::hole
        | Rule::one_of
        | Rule::kw_one_of
        | Rule::list
        | Rule::money
        | Rule::quantity
        | Rule::call
        | Rule::paren
        | Rule::neg
        | Rule::not
        | Rule::kw_not
        | Rule::number
        | Rule::interp_expr => "a value",
        Rule::string => "a string",
        Rule::string_end => "a closing `\"`",
        Rule::list_end => "`]`",
        Rule::lbracket => "`[`",
        Rule::comma => "`,`",
        Rule::lparen => "`(`",
        Rule::paren_end => "`)`",
        Rule::access => "`.`",
        Rule::or
        | Rule::and
        | Rule::kw_and
        | Rule::kw_or
        | Rule::eq_eq
        | Rule::ne
        | Rule::le
        | Rule::ge
        | Rule::lt
        | Rule::gt
        | Rule::add
        | Rule::sub
        | Rule::mul
        | Rule::div => "an operator",
        Rule::unit | Rule::simple_unit | Rule::compound_unit => "a unit",
        Rule::suffix => "`k` or `M`",
        Rule::money_per => "`/h` or `/Mtok`",
        Rule::escape => "an escape (`\\\"`, `\\\\`, `\\n`, `\\{`)",
        Rule::interp | Rule::interp_body => "`{expression}`",
        _ => return None,
    })
}

/// `text` without trailing whitespace and trailing `//` comments, line by line.
fn before_comments(text: &str) -> &str {
    let mut before = text.trim_end();
    loop {
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        match comment_start(&before[line_start..]) {
            Some(at) => before = before[..line_start + at].trim_end(),
            None => return before,
        }
    }
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The token that ends just before `pos` (comments skipped), for "after `gpu`".
fn previous_token(text: &str, pos: usize) -> Option<&str> {
    let before = before_comments(&text[..pos]);
    let last = before.chars().last()?;
    if last.is_ascii_alphanumeric() || last == '_' {
        // The byte after the last character that is not part of the word: `rfind`
        // gives that character's start, and it may be several bytes long (`naïve`).
        let start = before
            .char_indices()
            .rev()
            .find(|(_, c)| !(c.is_ascii_alphanumeric() || *c == '_'))
            .map(|(i, c)| i + c.len_utf8())
            .unwrap_or(0);
        Some(&before[start..])
    } else {
        Some(&before[before.len() - last.len_utf8()..])
    }
}

/// The token found at `pos`, for "found `rtx`".
fn found_token(text: &str, pos: usize) -> (String, usize) {
    let rest = &text[pos..];
    let Some(first) = rest.chars().next() else {
        return ("end of file".into(), 0);
    };
    if first == '\n' || first == '\r' {
        return ("end of line".into(), first.len_utf8());
    }
    if first.is_ascii_alphanumeric() || first == '_' {
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        (format!("`{}`", &rest[..end]), end)
    } else {
        (format!("`{first}`"), first.len_utf8())
    }
}

/// A word with a non-ASCII letter at `pos` (`naïve`): its span, when there is one.
fn non_ascii_word(text: &str, pos: usize) -> Option<Span> {
    let c = text[pos..].chars().next()?;
    if c.is_ascii() || !is_word_char(c) {
        return None;
    }
    let start = text[..pos]
        .char_indices()
        .rev()
        .find(|(_, c)| !is_word_char(*c))
        .map_or(0, |(i, c)| i + c.len_utf8());
    let end = text[pos..]
        .char_indices()
        .find(|(_, c)| !is_word_char(*c))
        .map_or(text.len(), |(i, _)| pos + i);
    Some(Span::new(start, end))
}

/// Converts a pest error on `source` (which starts at `base` in the whole `text`).
pub(super) fn convert(error: pest::error::Error<Rule>, text: &str, base: usize) -> SyntaxError {
    let pos = match error.location {
        InputLocation::Pos(pos) => pos,
        InputLocation::Span((start, _)) => start,
    } + base;
    let mut pos = pos.min(text.len());
    while !text.is_char_boundary(pos) {
        pos -= 1;
    }
    if let Some(span) = non_ascii_word(text, pos) {
        let word = &text[span.start as usize..span.end as usize];
        return SyntaxError {
            code: Code::SyntaxUnexpected,
            message: format!(
                "`{word}` is not a name: names are ASCII letters, digits and `_`"
            ),
            span,
            label: "not an ASCII name".into(),
            help: "spell the name in ASCII (`naive`, not `naïve`); other text belongs in a string or a `//` comment".into(),
        };
    }
    let (found, found_len) = found_token(text, pos);
    let mut wanted: Vec<&'static str> = Vec::new();
    match &error.variant {
        ErrorVariant::ParsingError { positives, .. } => {
            for rule in positives {
                if let Some(description) = describe(*rule)
                    && !wanted.contains(&description)
                {
                    wanted.push(description);
                }
            }
        }
        ErrorVariant::CustomError { message } => {
            return SyntaxError {
                code: Code::SyntaxLimit,
                message: format!("the parser gave up here: {message}"),
                span: Span::new(pos, pos + found_len),
                label: "here".into(),
                help: "simplify this declaration or split it into several".into(),
            };
        }
    }
    // "a value" and "an operator" together just mean the expression is unfinished.
    if wanted.contains(&"a value") {
        let starts_a_value = ["an operator", "`.`", "`[`", "`(`", "a string", "a name"];
        wanted.retain(|w| !starts_a_value.contains(w));
    }
    if wanted.contains(&"a closing `\"`") && text[pos..].starts_with('\\') {
        let escape: String = text[pos..].chars().take(2).collect();
        return SyntaxError {
            code: Code::SyntaxUnexpected,
            message: format!("unknown escape `{escape}` in a string"),
            span: Span::new(pos, pos + escape.len()),
            label: "unknown escape".into(),
            help: "the escapes are `\\\"`, `\\\\`, `\\n`, `\\{` and `\\}`".into(),
        };
    }
    if wanted.contains(&"a closing `\"`") {
        return SyntaxError {
            code: Code::SyntaxUnterminatedString,
            message: "this string is not closed before the end of the line".into(),
            span: Span::new(pos, pos + found_len),
            label: "string ends here".into(),
            help: "close the string with `\"`; write `\\n` for a line break inside it".into(),
        };
    }
    let expected = match wanted.as_slice() {
        [] => "something else".to_string(),
        [one] => one.to_string(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    };
    let after = previous_token(text, pos)
        .map(|token| format!(" after `{token}`"))
        .unwrap_or_default();
    let help = help_for(&wanted, &found);
    SyntaxError {
        code: Code::SyntaxUnexpected,
        message: format!("expected {expected}{after}, found {found}"),
        span: Span::new(pos, pos + found_len),
        label: format!("expected {expected}"),
        help,
    }
}

fn help_for(wanted: &[&str], found: &str) -> String {
    if wanted.contains(&"`=`") && wanted.contains(&"`{`") {
        "a field is `name = value`; a declaration is `KIND NAME { ... }`".into()
    } else if wanted.contains(&"`=`") {
        "a field is written `name = value`".into()
    } else if wanted.contains(&"a closing `\"`") {
        "close the string with `\"` on the same line".into()
    } else if wanted.contains(&"`}`") && found == "end of file" {
        "close the block with `}`".into()
    } else if wanted.contains(&"`)`") {
        "close the parenthesis with `)`".into()
    } else if wanted.contains(&"a value") {
        "write a value: a number with a unit (`12 GiB`, `32k`), a name, or a string".into()
    } else if wanted.iter().any(|w| w.starts_with("a declaration")) {
        "start a declaration with its kind and name: `deployment chat { ... }`".into()
    } else {
        "see docs/language.md for the syntax".into()
    }
}

pub(super) fn too_deep(at: usize) -> SyntaxError {
    SyntaxError {
        code: Code::SyntaxTooDeep,
        message: format!(
            "brackets nest more than {} levels deep here",
            split::MAX_DEPTH
        ),
        span: Span::new(at, at + 1),
        label: "too deep".into(),
        help: "split the expression into named fields or simpler parts".into(),
    }
}
