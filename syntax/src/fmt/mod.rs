//! The canonical formatter: `deployfit fmt`.
//!
//! Declarations, entries and expressions are printed from the typed AST; comments,
//! which the parser drops, come from a lexical scan of the source (see [`comments`])
//! and are put back next to the entry they belong to. The layout:
//!
//! - top-level items are separated by one blank line, except that consecutive imports
//!   stay together;
//! - `KIND NAME [extends OTHER] {` on one line, entries indented four spaces per level,
//!   `}` on its own line, and `KIND NAME {}` for an empty block;
//! - the `=` of consecutive fields line up (a blank line, a comment line or any other
//!   entry ends the run);
//! - one blank line is kept where the source had one or more, never at the start or end
//!   of a block;
//! - a comment on its own line stays on its own line before the next entry (or before
//!   the `}` or at the end of the file when nothing follows); a comment after an entry on
//!   the same line stays after it, one space away; a comment inside a multi-line
//!   expression moves before its entry.

mod comments;
mod expr;

use comments::Comment;

use crate::span::Span;
use crate::syntax::{
    self,
    ast::{Block, Decl, Entry, ExprKind, Import},
};

/// Why a file could not be formatted: its first syntax error.
#[derive(Debug, Clone, PartialEq)]
pub struct FormatError {
    pub message: String,
    pub span: Span,
}

impl std::fmt::Display for FormatError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for FormatError {}

/// Formats a whole file. Errors when the file has syntax errors (formatting a broken file would lose text).
/// One expression in canonical form, for messages ("requirement `fits` not met").
pub fn expression(expr: &crate::syntax::ast::Expr) -> String {
    let mut out = String::new();
    expr::expr(&mut out, expr);
    out
}

pub fn format(text: &str) -> Result<String, FormatError> {
    let parsed = syntax::parse(text);
    if let Some(error) = parsed.errors.first() {
        return Err(FormatError {
            message: error.message.clone(),
            span: error.span,
        });
    }
    let mut printer = Printer {
        text,
        comments: comments::scan(text),
        next: 0,
    };
    let mut items: Vec<(usize, TopItem)> = parsed
        .imports
        .iter()
        .map(|import| (import.span.start as usize, TopItem::Import(import)))
        .chain(parsed.decls.iter().map(|placed| {
            let offset = placed.offset as usize;
            (offset, TopItem::Decl(&placed.decl, offset))
        }))
        .collect();
    items.sort_by_key(|(start, _)| *start);
    let lines = printer.file(items.into_iter().map(|(_, item)| item));
    let mut out = String::new();
    for line in lines {
        out.push_str(&line);
        out.push('\n');
    }
    if out.is_empty() {
        // Even an empty file ends with exactly one newline.
        out.push('\n');
    }
    Ok(out)
}

/// The four spaces of one indentation level.
const INDENT: &str = "    ";

/// A top-level item with what is needed to place it in the source.
enum TopItem<'a> {
    Import(&'a Import),
    /// The declaration and its absolute offset (its own spans are relative to it).
    Decl(&'a Decl, usize),
}

/// One printed piece of a block or of the file, before blank lines and alignment.
struct Unit {
    /// Whether a blank line goes before it.
    blank: bool,
    kind: UnitKind,
}

enum UnitKind {
    /// A comment on its own line.
    Comment(String),
    /// `name = value`, aligned with its neighbours when printed.
    Field {
        name: String,
        value: String,
        trailing: Option<String>,
    },
    /// Anything else, already laid out (relative indentation, trailing comment included).
    Lines(Vec<String>),
}

struct Printer<'a> {
    text: &'a str,
    comments: Vec<Comment>,
    /// The first comment not printed yet; comments are printed in source order.
    next: usize,
}

impl Printer<'_> {
    fn file<'d>(&mut self, items: impl Iterator<Item = TopItem<'d>>) -> Vec<String> {
        let mut units: Vec<Unit> = Vec::new();
        let mut prev_end = 0;
        let mut prev_was_import = false;
        for item in items {
            let (span_start, span_end, is_import) = match &item {
                TopItem::Import(import) => {
                    (import.span.start as usize, import.span.end as usize, true)
                }
                TopItem::Decl(decl, offset) => (
                    offset + decl.span.start as usize,
                    offset + decl.span.end as usize,
                    false,
                ),
            };
            let start = self.skip_trivia(span_start);
            let end = self.trim_trivia(span_end).max(start);
            let group_first = units.len();
            self.leading(&mut units, &mut prev_end, start);
            let blank = self.has_blank(prev_end, start) && !units.is_empty();
            match &item {
                TopItem::Import(import) => {
                    // A comment inside an import's string interpolation cannot stay
                    // there, so it moves before the import.
                    let inner = self.take_comments_before(end);
                    let line = self.import(import);
                    push_with_inner(&mut units, blank, inner, UnitKind::Lines(vec![line]));
                }
                TopItem::Decl(decl, offset) => {
                    // `model NAME from "…"` without a block stays one line.
                    let lines = if decl.from.is_some() && decl.body.span.is_empty() {
                        vec![decl_header(decl)]
                    } else {
                        self.block(&decl_header(decl), &decl.body, *offset, start)
                    };
                    units.push(Unit {
                        blank,
                        kind: UnitKind::Lines(lines),
                    });
                }
            }
            // Items are one blank line apart, but imports in a row stay together; a
            // comment that opens an import keeps the source's blank line, so that
            // groups of imports survive.
            if let Some(first) = units.get_mut(group_first) {
                if !(prev_was_import && is_import) {
                    first.blank = true;
                } else if !matches!(first.kind, UnitKind::Comment(_)) {
                    first.blank = false;
                }
            }
            prev_end = self.trailing(&mut units, end);
            prev_was_import = is_import;
        }
        // Comments after the last item stay at the end of the file.
        self.leading(&mut units, &mut prev_end, self.text.len());
        render(units)
    }

    /// An import line, with its path printed like any other string.
    fn import(&self, import: &Import) -> String {
        let source = self.slice(
            import.path_span.start as usize,
            import.path_span.end as usize,
        );
        // The import's AST only keeps the plain path, so the literal is parsed again as a
        // field value to print interpolations and escapes like everywhere else.
        let reparsed = syntax::parse(&format!("rule r {{ x = {source} }}"));
        let lit = reparsed
            .decls
            .first()
            .and_then(|placed| placed.decl.field("x").map(|field| field.value.kind.clone()));
        let mut line = String::from("import ");
        match lit {
            Some(ExprKind::Str(lit)) if reparsed.errors.is_empty() => expr::string(&mut line, &lit),
            _ => line.push_str(source),
        }
        line
    }

    /// A block with its header line, as lines with relative indentation: `header {`, the
    /// entries one level in, `}`. The block's spans are relative to `offset`; its header
    /// starts at `start` in the source.
    fn block(&mut self, header: &str, block: &Block, offset: usize, start: usize) -> Vec<String> {
        let lbrace = offset + block.span.start as usize;
        let rbrace = (offset + block.span.end as usize)
            .saturating_sub(1)
            .max(lbrace);
        // A comment inside the header (`files // note` then `{` on the next line) cannot
        // stay there. It moves into the block, before the first entry: moving it above a
        // declaration instead would separate the declaration from its `///` doc lines.
        let header_inner = self.take_comments_before(lbrace.max(start));
        // A comment right after the `{` stays on the header line.
        let header_comment = self.same_line_comment(lbrace + 1, rbrace);
        let mut prev_end = header_comment
            .as_ref()
            .map_or(lbrace + 1, |comment| comment.end);
        let mut units: Vec<Unit> = header_inner
            .into_iter()
            .map(|text| Unit {
                blank: false,
                kind: UnitKind::Comment(text),
            })
            .collect();
        for entry in &block.entries {
            let span = entry.span();
            let start = self.skip_trivia(offset + span.start as usize);
            let end = self.trim_trivia(offset + span.end as usize).max(start);
            self.leading(&mut units, &mut prev_end, start);
            let blank = self.has_blank(prev_end, start) && !units.is_empty();
            let kind = match entry {
                Entry::Nested(nested) => {
                    let lines = self.block(&nested.name.name, &nested.body, offset, start);
                    units.push(Unit {
                        blank,
                        kind: UnitKind::Lines(lines),
                    });
                    None
                }
                Entry::Field(field) => {
                    let mut value = String::new();
                    expr::expr(&mut value, &field.value);
                    Some(UnitKind::Field {
                        name: field.name.name.clone(),
                        value,
                        trailing: None,
                    })
                }
                Entry::Require(require) => {
                    let mut line = String::from("require ");
                    expr::expr(&mut line, &require.cond);
                    if let Some(message) = &require.message {
                        line.push_str(" else ");
                        expr::string(&mut line, message);
                    }
                    Some(UnitKind::Lines(vec![line]))
                }
                Entry::Objective(objective) => {
                    let mut line = String::from(if objective.maximize {
                        "maximize "
                    } else {
                        "minimize "
                    });
                    expr::expr(&mut line, &objective.expr);
                    Some(UnitKind::Lines(vec![line]))
                }
            };
            if let Some(kind) = kind {
                // Comments inside a (multi-line) expression move before the entry.
                let inner = self.take_comments_before(end);
                push_with_inner(&mut units, blank, inner, kind);
            }
            prev_end = self.trailing(&mut units, end);
        }
        // Comments after the last entry stay before the `}`.
        self.leading(&mut units, &mut prev_end, rbrace);

        let mut lines = Vec::new();
        match header_comment {
            None if units.is_empty() => {
                lines.push(format!("{header} {{}}"));
                return lines;
            }
            None => lines.push(format!("{header} {{")),
            Some(comment) => lines.push(format!("{header} {{ {}", comment.text)),
        }
        for line in render(units) {
            lines.push(if line.is_empty() {
                line
            } else {
                format!("{INDENT}{line}")
            });
        }
        lines.push("}".to_string());
        lines
    }

    /// Pushes the unprinted comments that start before `until` as own-line comments,
    /// each keeping a blank line before it if the source had one.
    fn leading(&mut self, units: &mut Vec<Unit>, prev_end: &mut usize, until: usize) {
        while let Some(comment) = self.comments.get(self.next) {
            if comment.start >= until {
                break;
            }
            units.push(Unit {
                blank: self.has_blank(*prev_end, comment.start) && !units.is_empty(),
                kind: UnitKind::Comment(comment.text.clone()),
            });
            *prev_end = comment.end;
            self.next += 1;
        }
    }

    /// Takes the unprinted comments that start before `until`: those inside an entry or
    /// a header, which move before it.
    fn take_comments_before(&mut self, until: usize) -> Vec<String> {
        let mut taken = Vec::new();
        while let Some(comment) = self.comments.get(self.next) {
            if comment.start >= until {
                break;
            }
            // A doc comment cannot stand inside an expression: there the parser reads
            // `///` as the operator `/` followed by a `//` comment. The `/` is printed
            // with the expression, so only the `//` comment moves; printing `///` on its
            // own line before a field could instead turn it into a division.
            let text = match comment.text.strip_prefix('/') {
                Some(rest) if rest.starts_with("//") => rest.to_string(),
                _ => comment.text.clone(),
            };
            taken.push(text);
            self.next += 1;
        }
        taken
    }

    /// Attaches a comment that follows on the same line after `end` to the last unit,
    /// and returns where the source continues.
    fn trailing(&mut self, units: &mut Vec<Unit>, end: usize) -> usize {
        let Some(comment) = self.same_line_comment(end, self.text.len()) else {
            return end;
        };
        let after = comment.end;
        match units.last_mut().map(|unit| &mut unit.kind) {
            Some(UnitKind::Field { trailing, .. }) => *trailing = Some(comment.text),
            Some(UnitKind::Lines(lines)) if !lines.is_empty() => {
                if let Some(line) = lines.last_mut() {
                    line.push(' ');
                    line.push_str(&comment.text);
                }
            }
            // The last unit is always the entry just printed, so this is only a guard
            // that keeps the comment rather than dropping it.
            _ => units.push(Unit {
                blank: false,
                kind: UnitKind::Comment(comment.text),
            }),
        }
        after
    }

    /// Takes the next comment if it starts before `limit` and only whitespace (no line
    /// break) separates it from `from`.
    fn same_line_comment(&mut self, from: usize, limit: usize) -> Option<Comment> {
        let comment = self.comments.get(self.next)?;
        if comment.start < from || comment.start >= limit {
            return None;
        }
        let between = self.slice(from, comment.start);
        if !between
            .bytes()
            .all(|b| matches!(b, b' ' | b'\t' | b'\r' | b';'))
        {
            return None;
        }
        self.next += 1;
        Some(comment.clone())
    }

    /// Whether the source has a blank line between `from` and `to`.
    fn has_blank(&self, from: usize, to: usize) -> bool {
        self.slice(from, to).matches('\n').count() >= 2
    }

    /// The first offset at or after `at` that is neither whitespace, `;` nor a comment.
    fn skip_trivia(&self, mut at: usize) -> usize {
        let bytes = self.text.as_bytes();
        while at < bytes.len() {
            if let Some(comment) = self.comment_starting_at(at) {
                at = comment.end;
            } else if is_trivia(bytes[at]) {
                at += 1;
            } else {
                break;
            }
        }
        at
    }

    /// The offset just past the last token before `at`: spans of rules that end in a
    /// repetition also cover the whitespace and comments after them.
    fn trim_trivia(&self, at: usize) -> usize {
        let bytes = self.text.as_bytes();
        let mut at = at.min(bytes.len());
        while at > 0 {
            if let Some(comment) = self.comment_covering(at) {
                at = comment.start;
            } else if is_trivia(bytes[at - 1]) {
                at -= 1;
            } else {
                break;
            }
        }
        at
    }

    fn comment_starting_at(&self, at: usize) -> Option<&Comment> {
        let index = self.comments.partition_point(|c| c.start < at);
        self.comments.get(index).filter(|c| c.start == at)
    }

    /// The comment whose text ends at or runs past `at` (the one holding byte `at - 1`).
    fn comment_covering(&self, at: usize) -> Option<&Comment> {
        let index = self.comments.partition_point(|c| c.start < at);
        let comment = self.comments.get(index.checked_sub(1)?)?;
        (at <= comment.end).then_some(comment)
    }

    /// `text[from..to]`, empty when the range is out of order or not on characters.
    fn slice(&self, from: usize, to: usize) -> &str {
        self.text.get(from..to).unwrap_or("")
    }
}

fn is_trivia(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\r' | b'\n' | b';')
}

/// `KIND NAME [extends OTHER]` or `model NAME from "…"`.
fn decl_header(decl: &Decl) -> String {
    let mut header = format!("{} {}", decl.kind.keyword(), decl.name.name);
    if let Some(base) = &decl.extends {
        header.push_str(" extends ");
        header.push_str(&base.name);
    }
    if let Some(from) = &decl.from {
        header.push_str(" from ");
        expr::string(&mut header, from);
    }
    header
}

/// Pushes the comments moved out of an entry, then the entry; the first of them takes
/// the entry's blank line.
fn push_with_inner(units: &mut Vec<Unit>, blank: bool, inner: Vec<String>, kind: UnitKind) {
    let mut blank = blank;
    for comment in inner {
        units.push(Unit {
            blank,
            kind: UnitKind::Comment(comment),
        });
        blank = false;
    }
    units.push(Unit { blank, kind });
}

/// Names longer than this (in characters) are not aligned with their neighbours, so
/// that one long name does not pad every other line of its run.
const ALIGN_LIMIT: usize = 40;

/// Lays units out as lines at indentation zero: blank lines where asked (never first),
/// and the `=` of each run of fields aligned.
fn render(units: Vec<Unit>) -> Vec<String> {
    let mut lines = Vec::new();
    let mut index = 0;
    while index < units.len() {
        // A run of fields: consecutive `Field` units with no blank line inside.
        let mut run_end = index + 1;
        if matches!(units[index].kind, UnitKind::Field { .. }) {
            while run_end < units.len()
                && !units[run_end].blank
                && matches!(units[run_end].kind, UnitKind::Field { .. })
            {
                run_end += 1;
            }
        }
        let width = units[index..run_end]
            .iter()
            .map(|unit| match &unit.kind {
                UnitKind::Field { name, .. } => name.chars().count(),
                _ => 0,
            })
            .filter(|width| *width <= ALIGN_LIMIT)
            .max()
            .unwrap_or(0);
        for (offset, unit) in units[index..run_end].iter().enumerate() {
            if unit.blank && index + offset > 0 {
                lines.push(String::new());
            }
            match &unit.kind {
                UnitKind::Comment(text) => lines.push(text.clone()),
                UnitKind::Field {
                    name,
                    value,
                    trailing,
                } => {
                    // Padded by hand: `format!`'s width is limited to 65,535.
                    let mut line = name.clone();
                    let pad = width.saturating_sub(name.chars().count());
                    line.extend(std::iter::repeat_n(' ', pad));
                    line.push_str(" = ");
                    line.push_str(value);
                    if let Some(comment) = trailing {
                        line.push(' ');
                        line.push_str(comment);
                    }
                    lines.push(line);
                }
                UnitKind::Lines(block) => lines.extend(block.iter().cloned()),
            }
        }
        index = run_end;
    }
    lines
}

#[cfg(test)]
mod tests;
