//! The one diagnostic type (its renderers, one per output format, are the IDE crate's
//! `render`).
//!
//! Queries build [`Diag`]s whose locations may be relative to a declaration (so that
//! they stay equal when text above them moves); [`finish`] turns them into
//! [`Diagnostic`]s with file paths and absolute spans at the end of the pipeline.
//!
//! This module stands below everything that emits diagnostics: it knows the database's
//! keys and files, nothing of names, evaluation or rules.

pub use deployfit_syntax::codes;

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;

use crate::db::{Db, DeclKey, SourceFile, decl_offset, line_index};
use crate::diagnostics::codes::Code;
use crate::span::Span;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// Where a diagnostic points, as a query sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, salsa::SalsaValue)]
pub enum Loc<'db> {
    /// An absolute span in a file.
    File(SourceFile, Span),
    /// A span relative to the start of a declaration.
    Decl(DeclKey<'db>, Span),
}

/// A diagnostic inside the pipeline.
#[derive(Clone, Debug, PartialEq, salsa::SalsaValue)]
pub struct Diag<'db> {
    pub code: String,
    pub severity: Severity,
    pub message: String,
    pub loc: Loc<'db>,
    pub label: String,
    pub labels: Vec<(Loc<'db>, String)>,
    pub help: Option<String>,
    /// Machine-applicable fixes: (title, where, replacement text).
    pub suggestions: Vec<(String, Loc<'db>, String)>,
}

impl<'db> Diag<'db> {
    pub fn new(code: Code, severity: Severity, message: impl Into<String>, loc: Loc<'db>) -> Self {
        Diag::with_code(code.as_str().to_string(), severity, message.into(), loc)
    }

    pub fn error(code: Code, message: impl Into<String>, loc: Loc<'db>) -> Self {
        Diag::new(code, Severity::Error, message, loc)
    }

    /// A diagnostic of a rule, whose code is a string made at run time: the rule's
    /// `code` field, or `deploy::rule::NAME`.
    pub fn rule(
        code: String,
        severity: Severity,
        message: impl Into<String>,
        loc: Loc<'db>,
    ) -> Self {
        Diag::with_code(code, severity, message.into(), loc)
    }

    fn with_code(code: String, severity: Severity, message: String, loc: Loc<'db>) -> Self {
        Diag {
            code,
            severity,
            message,
            loc,
            label: String::new(),
            labels: Vec::new(),
            help: None,
            suggestions: Vec::new(),
        }
    }

    pub fn label(mut self, text: impl Into<String>) -> Self {
        self.label = text.into();
        self
    }

    pub fn with_label(mut self, loc: Loc<'db>, text: impl Into<String>) -> Self {
        self.labels.push((loc, text.into()));
        self
    }

    pub fn help(mut self, text: impl Into<String>) -> Self {
        self.help = Some(text.into());
        self
    }

    /// When there is one, a replacement of the primary span (the name a "did you mean"
    /// help names), as a structured suggestion editors can apply.
    pub fn suggest(mut self, replacement: Option<impl Into<String>>) -> Self {
        if let Some(replacement) = replacement {
            let replacement = replacement.into();
            self.suggestions.push((
                format!("Replace with `{replacement}`"),
                self.loc,
                replacement,
            ));
        }
        self
    }
}

/// A finished diagnostic: file paths, absolute byte spans, 1-based lines and columns.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    pub code: String,
    pub severity: Severity,
    pub message: String,
    #[serde(flatten)]
    pub location: Location,
    /// The text under the primary span's caret.
    pub label: String,
    pub labels: Vec<Label>,
    pub help: Option<String>,
    /// Machine-applicable fixes: replace the text at a location.
    pub suggestions: Vec<Suggestion>,
}

/// A fix an editor or tool can apply: replace the text at `location` with `replacement`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Suggestion {
    pub title: String,
    #[serde(flatten)]
    pub location: Location,
    pub replacement: String,
}

/// A place in a file: byte span, and 1-based lines and columns (in characters); the
/// end is exclusive.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Location {
    pub file: PathBuf,
    pub span: Span,
    pub line: usize,
    pub column: usize,
    pub end_line: usize,
    pub end_column: usize,
}

/// A secondary location: a field that contributed, the other definition of a name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Label {
    #[serde(flatten)]
    pub location: Location,
    pub message: String,
}

/// Everything a renderer needs: the diagnostics and the text of each file they name.
pub struct Report<'a> {
    pub diagnostics: &'a [Diagnostic],
    /// The figures of every deployment checked.
    pub summaries: &'a [DeploymentSummary],
    pub source: &'a dyn Fn(&std::path::Path) -> Option<std::sync::Arc<str>>,
}

/// The figures of one deployment, as display strings, for summaries.
#[derive(Clone, Debug, PartialEq)]
pub struct DeploymentSummary {
    pub name: String,
    pub file: PathBuf,
    pub line: usize,
    /// The line the declaration ends on (not in the JSON output).
    pub end_line: usize,
    /// The deployment's doc comment (`///`), if any (not in the JSON output).
    pub doc: Option<String>,
    /// Property name → value as printed (`"9.17 GiB"`); absent when not computable.
    pub figures: BTreeMap<String, String>,
    /// The same figures as numbers, flags and words, under keys that name their unit
    /// (`memory_per_gpu_bytes`; `figures::json_key`): what `--format json` prints.
    pub values: BTreeMap<String, deployfit_model::figures::JsonFigure>,
}

/// Resolves a pipeline location to a path and an absolute span.
pub fn resolve_loc(db: &dyn Db, loc: Loc<'_>) -> (SourceFile, Span) {
    match loc {
        Loc::File(file, span) => (file, span),
        Loc::Decl(key, span) => (key.file(db), span.shift(decl_offset(db, key))),
    }
}

fn finish_label(db: &dyn Db, loc: Loc<'_>, message: &str) -> Label {
    let (file, span) = resolve_loc(db, loc);
    let text = file.text(db);
    let index = line_index(db, file);
    let (line, column) = index.line_col(text, span.start);
    let (end_line, end_column) = index.line_col(text, span.end);
    Label {
        location: Location {
            file: file.path(db).clone(),
            span,
            line,
            column,
            end_line,
            end_column,
        },
        message: message.to_string(),
    }
}

/// Finished diagnostics, with paths and absolute spans, sorted by position.
pub fn finish(db: &dyn Db, diags: &[Diag<'_>]) -> Vec<Diagnostic> {
    let mut out: Vec<Diagnostic> = diags
        .iter()
        .map(|diag| {
            let primary = finish_label(db, diag.loc, &diag.label);
            Diagnostic {
                code: diag.code.clone(),
                severity: diag.severity,
                message: diag.message.clone(),
                location: primary.location,
                label: diag.label.clone(),
                labels: diag
                    .labels
                    .iter()
                    .map(|(loc, text)| finish_label(db, *loc, text))
                    .collect(),
                help: diag.help.clone(),
                suggestions: diag
                    .suggestions
                    .iter()
                    .map(|(title, loc, replacement)| Suggestion {
                        title: title.clone(),
                        location: finish_label(db, *loc, "").location,
                        replacement: replacement.clone(),
                    })
                    .collect(),
            }
        })
        .collect();
    out.sort_by(|a, b| (a.location.span.start, &a.code).cmp(&(b.location.span.start, &b.code)));
    out.dedup();
    out
}
