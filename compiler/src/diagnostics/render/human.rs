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
        f.debug_struct("Shown")
            .field("code", &self.diag.code)
            .finish()
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
        Some(Box::new(
            self.related.iter().map(|r| r as &dyn MietteDiagnostic),
        ))
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

/// One line per deployment: "team_chat (file:4): fits, 9.17 GiB of 11.40 GiB usable …".
fn summary_line(summary: &crate::db::DeploymentSummary) -> String {
    let figure = |name: &str| summary.figures.get(name).map(String::as_str);
    let location = format!("{}:{}", summary.file.display(), summary.line);
    let Some(fits) = figure("fits") else {
        return format!("{} ({location}): not evaluated", summary.name);
    };
    let mut parts = vec![if fits == "true" {
        "fits".to_string()
    } else {
        "does not fit".to_string()
    }];
    if let (Some(need), Some(usable), Some(share)) = (
        figure("memory_per_gpu"),
        figure("usable_memory"),
        figure("utilization"),
    ) {
        parts.push(format!("{need} of {usable} usable per GPU ({share})"));
    }
    if let Some(max) = figure("max_context") {
        parts.push(format!("max context {max}"));
    }
    if let Some(tps) = figure("decode_tps") {
        parts.push(format!("~{tps} per sequence"));
    }
    if let Some(cost) = figure("cost_per_hour") {
        parts.push(cost.to_string());
    }
    format!("{} ({location}): {}", summary.name, parts.join(", "))
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
        let mut labels = vec![labeled(&diag.label, diag.location.span, true)];
        let mut related = Vec::new();
        for label in &diag.labels {
            let place = &label.location;
            if place.file == diag.location.file {
                labels.push(labeled(&label.message, place.span, false));
            } else {
                related.push(Related {
                    message: format!("{}: {}", place.file.display(), label.message),
                    source: named(&place.file, (report.source)(&place.file)),
                    span: labeled(&label.message, place.span, false),
                });
            }
        }
        let shown = Shown {
            diag: diag.clone(),
            source: named(&diag.location.file, (report.source)(&diag.location.file)),
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
    for summary in report.summaries {
        out.push_str(&summary_line(summary));
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
