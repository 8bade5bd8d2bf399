//! The one diagnostic type, and its renderers (human, json, github, sarif).
//!
//! Queries build [`Diag`]s whose locations may be relative to a declaration (so that
//! they stay equal when text above them moves); [`crate::db`] turns them into
//! [`Diagnostic`]s with file paths and absolute spans at the end of the pipeline.

pub mod codes;
pub mod render;

use std::path::PathBuf;

use serde::Serialize;

use crate::db::{DeclKey, SourceFile};
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
    pub fn new(code: &str, severity: Severity, message: impl Into<String>, loc: Loc<'db>) -> Self {
        Diag {
            code: code.to_string(),
            severity,
            message: message.into(),
            loc,
            label: String::new(),
            labels: Vec::new(),
            help: None,
            suggestions: Vec::new(),
        }
    }

    pub fn error(code: &str, message: impl Into<String>, loc: Loc<'db>) -> Self {
        Diag::new(code, Severity::Error, message, loc)
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
    pub summaries: &'a [crate::db::DeploymentSummary],
    pub source: &'a dyn Fn(&std::path::Path) -> Option<std::sync::Arc<str>>,
}
