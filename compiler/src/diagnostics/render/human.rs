//! The human format: miette's graphical reports, then a one-line summary.

use std::fmt;
use std::sync::Arc;

use miette::{
    Diagnostic as MietteDiagnostic, GraphicalReportHandler, GraphicalTheme, LabeledSpan,
    NamedSource, SourceCode,
};

use super::{HumanOptions, counts};
use crate::diagnostics::{Diagnostic, Report, Severity};

/// A diagnostic as miette sees it. Labels in other files than the primary one become
/// related reports with their own source.
struct Shown {
    diag: Diagnostic,
    source: NamedSource<String>,
    labels: Vec<LabeledSpan>,
    related: Vec<Related>,
}

/// A label in another file, shown as a note with its own snippet.
struct Related {
    message: String,
    source: NamedSource<String>,
    span: LabeledSpan,
}

impl fmt::Debug for Shown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Shown").field("code", &self.diag.code).finish()
    }
}

impl fmt::Display for Shown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.diag.message)
    }
}

impl std::error::Error for Shown {}

impl MietteDiagnostic for Shown {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        Some(Box::new(&self.diag.code))
    }

    fn severity(&self) -> Option<miette::Severity> {
        Some(match self.diag.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
            Severity::Info => miette::Severity::Advice,
        })
    }

    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.diag
            .help
            .as_ref()
            .map(|h| Box::new(h) as Box<dyn fmt::Display>)
    }

    fn source_code(&self) -> Option<&dyn SourceCode> {
        Some(&self.source)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        Some(Box::new(self.labels.iter().cloned()))
    }

    fn related<'a>(&'a self) -> Option<Box<dyn Iterator<Item = &'a dyn MietteDiagnostic> + 'a>> {
        if self.related.is_empty() {
            return None;
        }
        Some(Box::new(self.related.iter().map(|r| r as &dyn MietteDiagnostic)))
    }
}

impl fmt::Debug for Related {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl fmt::Display for Related {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Related {}

impl MietteDiagnostic for Related {
    fn severity(&self) -> Option<miette::Severity> {
        Some(miette::Severity::Advice)
    }

    fn source_code(&self) -> Option<&dyn SourceCode> {
        Some(&self.source)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        Some(Box::new(std::iter::once(self.span.clone())))
    }
}

fn labeled(text: &str, span: crate::span::Span, primary: bool) -> LabeledSpan {
    let label = (!text.is_empty()).then(|| text.to_string());
    let range = (span.start as usize, span.len());
    if primary {
        LabeledSpan::new_primary_with_span(label, range)
    } else {
        LabeledSpan::new_with_span(label, range)
    }
}

fn named(path: &std::path::Path, text: Option<Arc<str>>) -> NamedSource<String> {
    NamedSource::new(
        path.display().to_string(),
        text.map(|t| t.to_string()).unwrap_or_default(),
    )
    .with_language("deploy")
}

pub fn render(report: &Report<'_>, files: usize, options: HumanOptions) -> String {
    let theme = if options.color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let handler = GraphicalReportHandler::new_themed(theme)
        .with_width(options.width)
        .with_links(false);
    let mut out = String::new();
    for diag in report.diagnostics {
        let mut labels = vec![labeled(&diag.label, diag.span, true)];
        let mut related = Vec::new();
        for label in &diag.labels {
            if label.file == diag.file {
                labels.push(labeled(&label.message, label.span, false));
            } else {
                related.push(Related {
                    message: format!("{}: {}", label.file.display(), label.message),
                    source: named(&label.file, (report.source)(&label.file)),
                    span: labeled(&label.message, label.span, false),
                });
            }
        }
        let shown = Shown {
            diag: diag.clone(),
            source: named(&diag.file, (report.source)(&diag.file)),
            labels,
            related,
        };
        if handler.render_report(&mut out, &shown).is_err() {
            out.push_str(&format!(
                "{}: {} [{}]\n",
                diag.severity.as_str(),
                diag.message,
                diag.code
            ));
        }
        out.push('\n');
    }
    let (errors, warnings, infos) = counts(report.diagnostics);
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    out.push_str(&format!(
        "{}: {}, {}, {}\n",
        plural(files, "file"),
        plural(errors, "error"),
        plural(warnings, "warning"),
        plural(infos, "note"),
    ));
    out
}
