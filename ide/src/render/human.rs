//! The human format: miette's graphical reports, then a one-line summary.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

use miette::{
    Diagnostic as MietteDiagnostic, GraphicalReportHandler, GraphicalTheme, LabeledSpan,
    MietteError, MietteSpanContents, SourceCode, SourceSpan, SpanContents,
};

use super::common::{HumanOptions, counts, terminal_text as escaped};
use crate::diagnostics::{Diagnostic, Location, Report, Severity};

/// A diagnostic as miette sees it. Labels in other files than the primary one become
/// related reports with their own source.
struct Shown {
    diag: Diagnostic,
    source: Option<Box<dyn SourceCode>>,
    labels: Vec<LabeledSpan>,
    related: Vec<Related>,
}

/// A label in another file, shown as a note with its own snippet.
struct Related {
    message: String,
    source: Option<Box<dyn SourceCode>>,
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
        self.source.as_deref()
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
        self.source.as_deref()
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        Some(Box::new(std::iter::once(self.span.clone())))
    }
}

/// The longest part of a line shown, in bytes; longer lines are cut around the labels
/// (with `…`), which also keeps every column miette draws far below its limit of 65,535.
const MAX_LINE_BYTES: usize = 240;
/// How much of a long line is shown before the first label on it.
const LINE_MARGIN: usize = 60;
/// A label is drawn over at most this many lines and bytes of its span.
const MAX_LABEL_LINES: usize = 12;
const MAX_LABEL_BYTES: usize = 4096;
/// Labels whose lines are at most this many lines apart share one region of the excerpt.
const MERGE_GAP: usize = 16;

/// Appends source text for a terminal: control characters (an escape sequence in a
/// comment could otherwise drive the user's terminal) and bidirectional overrides
/// (which make shown code differ from what is parsed) become visible stand-ins of the
/// same UTF-8 length, so every offset and column stays right.
fn push_printable(out: &mut String, text: &str) {
    for c in text.chars() {
        let stand_in = match c {
            '\t' => c,
            // C0 controls and DEL, one byte each (U+001A stands for invalid UTF-8).
            '\0'..='\u{1f}' | '\u{7f}' => '?',
            // C1 controls, two bytes each.
            '\u{80}'..='\u{9f}' => '¿',
            // Zero-width and bidirectional formatting characters, three bytes each.
            '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => {
                '\u{fffd}'
            }
            c => c,
        };
        debug_assert_eq!(stand_in.len_utf8(), c.len_utf8());
        out.push(stand_in);
    }
}

/// A diagnostic with every text escaped by [`super::common::terminal_text`].
fn escaped_diagnostic(diag: &Diagnostic) -> Diagnostic {
    let mut diag = diag.clone();
    diag.message = escaped(&diag.message);
    diag.label = escaped(&diag.label);
    diag.help = diag.help.as_deref().map(escaped);
    for label in &mut diag.labels {
        label.message = escaped(&label.message);
    }
    diag
}

/// The text of one file and where its lines start, computed once per render.
struct FileText {
    text: Arc<str>,
    starts: Vec<usize>,
}

impl FileText {
    fn new(text: Arc<str>) -> FileText {
        let starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        FileText { text, starts }
    }

    /// The 0-based line of a byte offset.
    fn line_of(&self, offset: usize) -> usize {
        self.starts.partition_point(|start| *start <= offset) - 1
    }

    /// A line's byte range, without its line break.
    fn line_range(&self, line: usize) -> (usize, usize) {
        let start = self.starts[line];
        let end = self
            .starts
            .get(line + 1)
            .map(|next| next - 1)
            .unwrap_or(self.text.len());
        let end = if self.text[start..end].ends_with('\r') {
            end - 1
        } else {
            end
        };
        (start, end)
    }

    fn floor(&self, offset: usize) -> usize {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        offset
    }
}

/// A label to draw: its span in the file, its true position (from the diagnostic) and
/// its text.
struct Mark<'a> {
    span: crate::span::Span,
    location: &'a Location,
    text: &'a str,
    primary: bool,
}

/// Consecutive lines of a file as shown: each line whole, or cut to a window.
struct Region {
    /// Where `text` starts in the excerpt's own offsets (see [`Excerpt`]).
    start: usize,
    text: String,
    /// The file's 0-based line number of the first line.
    first_line: usize,
}

/// What miette reads instead of the whole file: only the lines around the labels (one
/// line of context above and below, as miette shows), long lines cut. Labels are given
/// to miette in the excerpt's own offsets, the regions laid end to end with a gap of one
/// byte, so a span never covers two regions. Building it costs the size of the excerpt,
/// not of the file, and the header keeps the label's true line and column.
struct Excerpt {
    name: String,
    regions: Vec<Region>,
    /// (offset in the excerpt, 0-based line, 0-based column in characters) of each label.
    positions: Vec<(usize, usize, usize)>,
}

impl SourceCode for Excerpt {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        context_lines_before: usize,
        context_lines_after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        let region = self
            .regions
            .iter()
            .find(|r| {
                r.start <= span.offset() && span.offset() + span.len() <= r.start + r.text.len()
            })
            .ok_or(MietteError::OutOfBounds)?;
        let local = SourceSpan::new((span.offset() - region.start).into(), span.len());
        let contents =
            region
                .text
                .as_str()
                .read_span(&local, context_lines_before, context_lines_after)?;
        let exact = (context_lines_before == 0 && context_lines_after == 0)
            .then(|| self.positions.iter().find(|p| p.0 == span.offset()))
            .flatten();
        let (line, column) = match exact {
            Some((_, line, column)) => (*line, *column),
            None => (contents.line() + region.first_line, contents.column()),
        };
        Ok(Box::new(
            MietteSpanContents::new_named(
                self.name.clone(),
                contents.data(),
                SourceSpan::new(
                    (contents.span().offset() + region.start).into(),
                    contents.span().len(),
                ),
                line,
                column,
                contents.line_count() + region.first_line,
            )
            .with_language("deploy"),
        ))
    }
}

/// One shown line: the file bytes `[from, to)` of a line, at `at` in its region's text.
struct ShownLine {
    from: usize,
    to: usize,
    at: usize,
}

impl ShownLine {
    /// Where a file offset on this line lands in the region's text (clamped to what is
    /// shown).
    fn place(&self, offset: usize) -> usize {
        self.at + offset.clamp(self.from, self.to) - self.from
    }
}

/// Builds the excerpt of `file` for `marks`, and the labels in its offsets.
fn excerpt(path: &Path, file: &FileText, marks: &[Mark<'_>]) -> (Excerpt, Vec<LabeledSpan>) {
    let last_line = file.starts.len() - 1;
    // Each mark's span, clamped to the file, to char boundaries and to a few lines.
    let spans: Vec<(usize, usize, usize, usize)> = marks
        .iter()
        .map(|mark| {
            let start = file.floor(mark.span.start as usize);
            let first = file.line_of(start);
            let line_cap = file
                .line_range((first + MAX_LABEL_LINES - 1).min(last_line))
                .1;
            let end = file
                .floor(mark.span.end as usize)
                .max(start)
                .min(file.floor(start.saturating_add(MAX_LABEL_BYTES)))
                .min(line_cap.max(start));
            let last = file.line_of(if end > start { end - 1 } else { start });
            (start, end, first, last)
        })
        .collect();
    // The lines to show: each mark's, with one line of context, merged when they are at
    // most MERGE_GAP lines apart, so that miette can draw nearby labels in one snippet
    // (showing the lines between) as it does with the whole file.
    let mut ranges: Vec<(usize, usize)> = spans
        .iter()
        .map(|(_, _, first, last)| (first.saturating_sub(1), (last + 1).min(last_line)))
        .collect();
    ranges.sort_unstable();
    let mut merged: Vec<(usize, usize)> = Vec::new();
    for (first, last) in ranges {
        match merged.last_mut() {
            Some(previous) if first <= previous.1 + 1 + MERGE_GAP => {
                previous.1 = previous.1.max(last)
            }
            _ => merged.push((first, last)),
        }
    }
    let mut regions = Vec::new();
    let mut lines: HashMap<usize, (usize, ShownLine)> = HashMap::new();
    let mut next_start = 0;
    for (first, last) in merged {
        let mut text = String::new();
        for line in first..=last {
            let (start, end) = file.line_range(line);
            let (from, to) = if end - start <= MAX_LINE_BYTES {
                (start, end)
            } else {
                // Cut around the first label point on the line.
                let point = spans
                    .iter()
                    .flat_map(|(s, e, _, _)| [*s, *e])
                    .filter(|p| (start..=end).contains(p))
                    .min()
                    .unwrap_or(start);
                let from = file.floor(point.saturating_sub(LINE_MARGIN).max(start));
                let to = file.floor((from + MAX_LINE_BYTES).min(end));
                (from, to)
            };
            if from > start {
                text.push('…');
            }
            let at = text.len();
            push_printable(&mut text, &file.text[from..to]);
            if to < end {
                text.push('…');
            }
            text.push('\n');
            lines.insert(line, (regions.len(), ShownLine { from, to, at }));
        }
        if last == last_line {
            // The file's last line has no line break (after a final one it is empty).
            text.pop();
        }
        let length = text.len();
        regions.push(Region {
            start: next_start,
            text,
            first_line: first,
        });
        next_start += length + 1;
    }
    let locate = |offset: usize| -> usize {
        // Every mark's lines are in a region; the fallback is never taken.
        lines
            .get(&file.line_of(offset))
            .map(|(index, shown)| regions[*index].start + shown.place(offset))
            .unwrap_or(0)
    };
    let mut positions = Vec::new();
    let labels = marks
        .iter()
        .zip(&spans)
        .map(|(mark, (start, end, _, _))| {
            let from = locate(*start);
            let to = locate(*end).max(from);
            positions.push((
                from,
                mark.location.line.saturating_sub(1),
                mark.location.column.saturating_sub(1),
            ));
            let label = (!mark.text.is_empty()).then(|| mark.text.to_string());
            if mark.primary {
                LabeledSpan::new_primary_with_span(label, (from, to - from))
            } else {
                LabeledSpan::new_with_span(label, (from, to - from))
            }
        })
        .collect();
    (
        Excerpt {
            name: escaped(&path.display().to_string()),
            regions,
            positions,
        },
        labels,
    )
}

/// Each file's text, read once per render (the source callback copies the file).
struct Files<'a> {
    source: &'a dyn Fn(&Path) -> Option<Arc<str>>,
    cache: HashMap<PathBuf, Option<Rc<FileText>>>,
}

impl Files<'_> {
    fn get(&mut self, path: &Path) -> Option<Rc<FileText>> {
        if let Some(file) = self.cache.get(path) {
            return file.clone();
        }
        let file = (self.source)(path).map(|text| Rc::new(FileText::new(text)));
        self.cache.insert(path.to_path_buf(), file.clone());
        file
    }
}

/// One line per deployment: "team_chat (file:4): fits, 9.17 GiB of 11.40 GiB usable …".
fn summary_line(summary: &crate::diagnostics::DeploymentSummary) -> String {
    let figure = |name: &str| summary.figures.get(name).map(String::as_str);
    let location = format!(
        "{}:{}",
        escaped(&summary.file.display().to_string()),
        summary.line
    );
    if let (Some(fleet), Some(cost)) = (figure("fleet"), figure("cost_per_hour")) {
        return format!("{} ({location}): mixed fleet {fleet}, {cost}", summary.name);
    }
    let fits = match summary.values.get("fits") {
        Some(crate::eval::figures::JsonFigure::Flag(fits)) => *fits,
        _ => return format!("{} ({location}): not evaluated", summary.name),
    };
    let offloaded = matches!(
        summary.values.get("offloaded"),
        Some(crate::eval::figures::JsonFigure::Flag(true))
    );
    let gpu_share = match summary.values.get("gpu_share") {
        Some(crate::eval::figures::JsonFigure::Number(share)) => Some(*share),
        _ => None,
    };
    let mut parts = vec![match (fits, offloaded, gpu_share) {
        // `ollama ps`'s processor column: "18%/82% CPU/GPU".
        (true, true, Some(share)) => {
            let gpu = (share * 100.0).round().clamp(0.0, 100.0);
            format!("fits with offload ({:.0}%/{gpu:.0}% CPU/GPU)", 100.0 - gpu)
        }
        (true, true, None) => "fits with offload".to_string(),
        (true, false, _) => "fits".to_string(),
        (false, _, _) => "does not fit".to_string(),
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
    let mut texts = Files {
        source: report.source,
        cache: HashMap::new(),
    };
    for diag in report.diagnostics {
        let diag = &escaped_diagnostic(diag);
        let mut marks = vec![Mark {
            span: diag.location.span,
            location: &diag.location,
            text: &diag.label,
            primary: true,
        }];
        let mut related = Vec::new();
        for label in &diag.labels {
            let place = &label.location;
            let mark = Mark {
                span: place.span,
                location: place,
                text: &label.message,
                primary: false,
            };
            if place.file == diag.location.file {
                marks.push(mark);
            } else {
                let (source, span) = match texts.get(&place.file) {
                    Some(file) => {
                        let (excerpt, mut labels) = excerpt(&place.file, &file, &[mark]);
                        (
                            Some(Box::new(excerpt) as Box<dyn SourceCode>),
                            labels.remove(0),
                        )
                    }
                    None => (None, LabeledSpan::new_with_span(None, (0, 0))),
                };
                related.push(Related {
                    message: format!(
                        "{}: {}",
                        escaped(&place.file.display().to_string()),
                        label.message
                    ),
                    source,
                    span,
                });
            }
        }
        let (source, labels) = match texts.get(&diag.location.file) {
            Some(file) => {
                let (excerpt, labels) = excerpt(&diag.location.file, &file, &marks);
                (Some(Box::new(excerpt) as Box<dyn SourceCode>), labels)
            }
            None => (None, Vec::new()),
        };
        let shown = Shown {
            diag: diag.clone(),
            source,
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
    if options.quiet {
        return out;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::span::Span;
    use miette::NamedSource;

    fn location(text: &str, offset: u32) -> Location {
        let (line, column) = crate::span::line_col(text, offset);
        Location {
            file: PathBuf::from("t.deploy"),
            span: Span::new(offset as usize, offset as usize),
            line,
            column,
            end_line: line,
            end_column: column,
        }
    }

    fn diagnostic(spans: &[(usize, usize)]) -> Diagnostic {
        Diagnostic {
            code: "deploy::test::code".into(),
            severity: Severity::Error,
            message: "message".into(),
            location: Location {
                file: PathBuf::from("t.deploy"),
                span: Span::new(0, 0),
                line: 1,
                column: 1,
                end_line: 1,
                end_column: 1,
            },
            label: String::new(),
            labels: Vec::new(),
            help: Some("help".into()),
            suggestions: Vec::new(),
        }
        .with_spans(spans)
    }

    /// A test diagnostic with a primary span and secondary labels.
    trait WithSpans {
        fn with_spans(self, spans: &[(usize, usize)]) -> Diagnostic;
    }

    impl WithSpans for Diagnostic {
        fn with_spans(mut self, spans: &[(usize, usize)]) -> Diagnostic {
            self.location.span = Span::new(spans[0].0, spans[0].1);
            self.label = "primary".into();
            self.labels = spans[1..]
                .iter()
                .enumerate()
                .map(|(i, (start, end))| crate::diagnostics::Label {
                    location: Location {
                        span: Span::new(*start, *end),
                        ..self.location.clone()
                    },
                    message: format!("secondary {i}"),
                })
                .collect();
            self
        }
    }

    /// Renders one diagnostic through the excerpt and, when `whole_too`, the old way (the
    /// whole file as miette's source).
    fn both(text: &str, spans: &[(usize, usize)], whole_too: bool) -> (String, String) {
        let mut diag = diagnostic(spans);
        diag.location = Location {
            span: diag.location.span,
            ..location(text, diag.location.span.start)
        };
        for label in &mut diag.labels {
            label.location = Location {
                span: label.location.span,
                ..location(text, label.location.span.start)
            };
        }
        let handler = GraphicalReportHandler::new_themed(GraphicalTheme::unicode_nocolor())
            .with_width(100)
            .with_links(false);
        let whole = Shown {
            diag: diag.clone(),
            source: Some(Box::new(
                NamedSource::new("t.deploy", text.to_string()).with_language("deploy"),
            )),
            labels: spans
                .iter()
                .enumerate()
                .map(|(i, (start, end))| {
                    let label = if i == 0 {
                        "primary".to_string()
                    } else {
                        format!("secondary {}", i - 1)
                    };
                    if i == 0 {
                        LabeledSpan::new_primary_with_span(Some(label), (*start, end - start))
                    } else {
                        LabeledSpan::new_with_span(Some(label), (*start, end - start))
                    }
                })
                .collect(),
            related: Vec::new(),
        };
        let file = FileText::new(Arc::from(text));
        let mut marks = vec![Mark {
            span: diag.location.span,
            location: &diag.location,
            text: &diag.label,
            primary: true,
        }];
        for label in &diag.labels {
            marks.push(Mark {
                span: label.location.span,
                location: &label.location,
                text: &label.message,
                primary: false,
            });
        }
        let (excerpt, labels) = excerpt(Path::new("t.deploy"), &file, &marks);
        let cut = Shown {
            diag: diag.clone(),
            source: Some(Box::new(excerpt)),
            labels,
            related: Vec::new(),
        };
        let mut new = String::new();
        handler.render_report(&mut new, &cut).unwrap();
        if !whole_too {
            return (String::new(), new);
        }
        let mut old = String::new();
        handler.render_report(&mut old, &whole).unwrap();
        (old, new)
    }

    #[test]
    fn the_excerpt_renders_like_the_whole_file() {
        let lines: Vec<String> = (0..40).map(|i| format!("line {i} = value_{i}")).collect();
        let text = lines.join("\n") + "\n";
        let at = |line: usize, column: usize| {
            text.match_indices('\n')
                .nth(line.wrapping_sub(1))
                .map(|(i, _)| i + 1)
                .unwrap_or(0)
                + column
        };
        let cases: Vec<Vec<(usize, usize)>> = vec![
            vec![(at(0, 0), at(0, 4))],
            vec![(at(5, 2), at(5, 6))],
            vec![(at(39, 0), at(39, 4))],
            vec![(text.len(), text.len())],
            vec![(at(3, 0), at(3, 0))],
            // A label over three lines.
            vec![(at(10, 3), at(12, 5))],
            // Labels near each other, drawn in one snippet.
            vec![(at(20, 0), at(20, 4)), (at(24, 5), at(24, 9))],
            vec![
                (at(2, 0), at(2, 4)),
                (at(3, 5), at(3, 9)),
                (at(4, 1), at(4, 2)),
            ],
            // Far apart: two snippets.
            vec![(at(1, 0), at(1, 4)), (at(35, 5), at(35, 9))],
            vec![(at(30, 0), at(30, 4)), (at(2, 5), at(2, 9))],
        ];
        for spans in cases {
            let (old, new) = both(&text, &spans, true);
            assert_eq!(old, new, "spans {spans:?}");
        }
        // No final line break, CRLF line breaks, tabs.
        let text = "a = 1\r\nb\t= 2\r\nc = 3";
        for spans in [
            vec![(0, 1)],
            vec![(7, 8)],
            vec![(text.len() - 1, text.len())],
            vec![(text.len(), text.len())],
        ] {
            let (old, new) = both(text, &spans, true);
            assert_eq!(old, new, "spans {spans:?}");
        }
    }

    #[test]
    fn long_lines_are_cut_and_the_header_keeps_the_true_column() {
        let text = format!("{}bogus\n", "é".repeat(70_000));
        let start = text.len() - 6;
        let (_, new) = both(&text, &[(start, start + 5)], false);
        assert!(new.contains("[t.deploy:1:70001]"), "{new}");
        assert!(new.contains("…éééé"), "{new}");
        assert!(new.lines().all(|l| l.chars().count() < 400), "{new}");
        // A label spanning far more than is shown, and lines long on both sides.
        let text = format!("{0}\n{0}x{0}\n{0}\n", "y".repeat(100_000));
        let (_, new) = both(&text, &[(50_000, 250_000)], false);
        assert!(new.contains("[t.deploy:1:50001]"), "{new}");
        assert!(new.lines().all(|l| l.chars().count() < 400), "{new}");
    }
}
