//! `check --fix` and `--diff`: the diagnostics' structured fixes applied to a file's text,
//! where they are unambiguous, and the change as a unified diff.

use std::path::Path;

use crate::diagnostics::{Diagnostic, Severity};

/// A file's text with the fixes applied, and which were.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fixed {
    pub text: String,
    /// (code, fix title) of each applied fix, in the order of the text.
    pub applied: Vec<(String, String)>,
}

/// Applies the fixes of `diagnostics` to `text`, the contents of `path`. A fix is applied
/// when it is unambiguous: its diagnostic is an error or a warning (an info's suggestion,
/// such as pinning a solver's choice, changes what the file means) and offers exactly one
/// fix, in this file, on a valid span of the text, overlapping no other applied fix.
/// Fixes that overlap are all left out; the text is otherwise unchanged.
pub fn apply(path: &Path, text: &str, diagnostics: &[Diagnostic]) -> Fixed {
    let mut edits: Vec<(usize, usize, &str, &Diagnostic)> = diagnostics
        .iter()
        .filter(|d| matches!(d.severity, Severity::Error | Severity::Warning))
        .filter(|d| d.suggestions.len() == 1)
        .filter_map(|d| {
            let s = &d.suggestions[0];
            let (start, end) = (s.location.span.start as usize, s.location.span.end as usize);
            let valid = s.location.file == path
                && start <= end
                && text.is_char_boundary(start)
                && text.is_char_boundary(end);
            valid.then_some((start, end, s.replacement.as_str(), d))
        })
        .collect();
    edits.sort_by_key(|(start, end, _, _)| (*start, *end));
    edits.dedup_by(|b, a| a.0 == b.0 && a.1 == b.1 && a.2 == b.2);
    // Overlapping edits (or two insertions at one point) are ambiguous: drop them all.
    let mut keep = vec![true; edits.len()];
    for i in 1..edits.len() {
        let (prev, this) = (&edits[i - 1], &edits[i]);
        if this.0 < prev.1 || (this.0 == prev.0 && this.0 == this.1) {
            keep[i - 1] = false;
            keep[i] = false;
        }
    }
    let mut out = String::with_capacity(text.len());
    let mut applied = Vec::new();
    let mut at = 0;
    for ((start, end, replacement, diag), keep) in edits.into_iter().zip(keep) {
        if !keep {
            continue;
        }
        out.push_str(&text[at..start]);
        out.push_str(replacement);
        at = end;
        applied.push((diag.code.clone(), diag.suggestions[0].title.clone()));
    }
    out.push_str(&text[at..]);
    Fixed { text: out, applied }
}

/// The change from `old` to `new` as a unified diff with 3 lines of context, headed
/// `--- a/PATH` / `+++ b/PATH`; empty when they are equal.
pub fn unified_diff(path: &Path, old: &str, new: &str) -> String {
    if old == new {
        return String::new();
    }
    let name = path.to_string_lossy().replace('\\', "/");
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{name}"), &format!("b/{name}"))
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::{Location, Suggestion};
    use crate::span::Span;

    fn diag(severity: Severity, edits: &[(u32, u32, &str)]) -> Diagnostic {
        let place = |start: u32, end: u32| Location {
            file: "f.deploy".into(),
            span: Span { start, end },
            line: 1,
            column: 1,
            end_line: 1,
            end_column: 1,
        };
        Diagnostic {
            code: "deploy::x".into(),
            severity,
            message: String::new(),
            location: place(0, 0),
            label: String::new(),
            labels: Vec::new(),
            help: None,
            suggestions: edits
                .iter()
                .map(|(s, e, r)| Suggestion {
                    title: format!("set {r}"),
                    location: place(*s, *e),
                    replacement: r.to_string(),
                })
                .collect(),
        }
    }

    #[test]
    fn applies_single_fixes_and_leaves_ambiguous_ones() {
        let path = Path::new("f.deploy");
        let text = "context = 128k // é\nseqs = 4\n";
        let fixed = apply(
            path,
            text,
            &[
                diag(Severity::Error, &[(10, 14, "32k")]),
                // Two fixes offered: ambiguous.
                diag(Severity::Warning, &[(27, 28, "1"), (27, 28, "2")]),
                // An info's suggestion is not applied.
                diag(Severity::Info, &[(27, 28, "3")]),
            ],
        );
        assert_eq!(fixed.text, "context = 32k // é\nseqs = 4\n");
        assert_eq!(fixed.applied.len(), 1);
        // Overlapping edits are both dropped; a span inside `é` is refused.
        let overlapping = apply(
            path,
            text,
            &[
                diag(Severity::Error, &[(10, 14, "32k")]),
                diag(Severity::Error, &[(12, 16, "x")]),
                diag(Severity::Error, &[(19, 20, "e")]),
            ],
        );
        assert_eq!(overlapping.text, text);
        assert!(overlapping.applied.is_empty());
        // Another file's fix is not applied here.
        let other = apply(
            Path::new("g.deploy"),
            text,
            &[diag(Severity::Error, &[(10, 14, "32k")])],
        );
        assert_eq!(other.text, text);
    }

    #[test]
    fn diff_is_unified() {
        let diff = unified_diff(Path::new("d/f.deploy"), "a\nb\nc\n", "a\nB\nc\n");
        assert!(
            diff.starts_with("--- a/d/f.deploy\n+++ b/d/f.deploy\n@@ -1,3 +1,3 @@\n"),
            "{diff}"
        );
        assert!(diff.contains("-b\n+B\n"));
        assert_eq!(unified_diff(Path::new("f"), "x", "x"), "");
    }
}
