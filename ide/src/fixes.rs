//! `check --fix` and `--diff`: the diagnostics' structured fixes applied to a file's text,
//! where they are unambiguous, and the change as a unified diff.

use std::collections::BTreeMap;
use std::path::Path;

use crate::diagnostics::{Diagnostic, Severity};

/// A file's text with the fixes applied, and which were.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fixed {
    pub text: String,
    /// (code, fix title) of each applied fix, in the order they were applied.
    pub applied: Vec<(String, String)>,
}

/// One candidate fix: the byte range it replaces, the replacement, and its diagnostic's
/// code and the fix's title.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Edit {
    start: usize,
    end: usize,
    replacement: String,
    code: String,
    title: String,
}

/// The fixes of `diagnostics` that are unambiguous: the diagnostic is an error or a warning
/// (an info's suggestion, such as pinning a solver's choice, changes what the file means)
/// and offers exactly one fix, in this file, on a valid span of the text. Fixes that touch
/// the same span or overlap (or two insertions at one point) are all left out. Sorted by
/// position.
fn candidates(path: &Path, text: &str, diagnostics: &[Diagnostic]) -> Vec<Edit> {
    let mut edits: Vec<Edit> = diagnostics
        .iter()
        .filter(|d| matches!(d.severity, Severity::Error | Severity::Warning))
        .filter(|d| d.suggestions.len() == 1)
        .filter_map(|d| {
            let s = &d.suggestions[0];
            let (start, end) = (s.location.span.start as usize, s.location.span.end as usize);
            let valid = s.location.file == path
                && start <= end
                && end <= text.len()
                && text.is_char_boundary(start)
                && text.is_char_boundary(end);
            valid.then(|| Edit {
                start,
                end,
                replacement: s.replacement.clone(),
                code: d.code.clone(),
                title: s.title.clone(),
            })
        })
        .collect();
    edits.sort_by_key(|e| (e.start, e.end));
    edits.dedup_by(|b, a| a.start == b.start && a.end == b.end && a.replacement == b.replacement);
    let mut keep = vec![true; edits.len()];
    for i in 1..edits.len() {
        let (prev, this) = (&edits[i - 1], &edits[i]);
        if this.start < prev.end || this.start == prev.start {
            keep[i - 1] = false;
            keep[i] = false;
        }
    }
    edits
        .into_iter()
        .zip(keep)
        .filter_map(|(edit, keep)| keep.then_some(edit))
        .collect()
}

/// `text` with `edits` (sorted, not overlapping) applied.
fn splice(text: &str, edits: &[&Edit]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for edit in edits {
        out.push_str(&text[at..edit.start]);
        out.push_str(&edit.replacement);
        at = edit.end;
    }
    out.push_str(&text[at..]);
    out
}

/// Applies the fixes of `diagnostics` to `text`, the contents of `path`, without checking
/// what they lead to: each unambiguous fix ([`candidates`]) once. `check --fix` uses
/// [`apply_checked`], which keeps only the fixes that make the file better.
pub fn apply(path: &Path, text: &str, diagnostics: &[Diagnostic]) -> Fixed {
    let edits = candidates(path, text, diagnostics);
    let all: Vec<&Edit> = edits.iter().collect();
    Fixed {
        text: splice(text, &all),
        applied: edits
            .iter()
            .map(|e| (e.code.clone(), e.title.clone()))
            .collect(),
    }
}

/// The most times [`apply_checked`] re-checks one file: each try is a full check, and a
/// file can offer many fixes. Past it the fixes found so far are kept (each already
/// checked), and a second `--fix` may find more; real files need a handful.
pub const MAX_FIX_CHECKS: usize = 64;

/// Errors, and each (code, severity) of the errors and warnings, counted.
fn tally(diagnostics: &[Diagnostic]) -> (usize, BTreeMap<(&str, u8), usize>) {
    let mut counts = BTreeMap::new();
    let mut errors = 0;
    for d in diagnostics {
        let level = match d.severity {
            Severity::Error => {
                errors += 1;
                0
            }
            Severity::Warning => 1,
            _ => continue,
        };
        *counts.entry((d.code.as_str(), level)).or_insert(0) += 1;
    }
    (errors, counts)
}

/// The oracle of `--fix`: the fixed text is better when it has fewer errors and no new
/// problem (no error or warning whose code is new or more frequent than before).
fn better(before: &[Diagnostic], after: &[Diagnostic]) -> bool {
    let (errors_before, before) = tally(before);
    let (errors_after, after) = tally(after);
    errors_after < errors_before
        && after
            .iter()
            .all(|(key, n)| before.get(key).is_some_and(|m| n <= m))
}

/// `check --fix` and `--diff`: the fixes of the file's diagnostics that make it better,
/// each proven by checking the fixed text (`check` returns the diagnostics of a text).
///
/// First every unambiguous fix together; if that is not better, one at a time from the
/// end of the file (so the earlier spans stay valid), each kept only when it is better.
/// Then again on the fixed text's own fixes, until none helps: a second `--fix` finds
/// nothing more to do (within [`MAX_FIX_CHECKS`] checks). A fix that would create a
/// cycle, a duplicate field or any other new problem is never applied.
pub fn apply_checked(
    path: &Path,
    text: &str,
    mut check: impl FnMut(&str) -> Vec<Diagnostic>,
) -> Fixed {
    let mut current = text.to_string();
    let mut diagnostics = check(&current);
    let mut applied = Vec::new();
    let mut budget = MAX_FIX_CHECKS;
    loop {
        let edits = candidates(path, &current, &diagnostics);
        if edits.is_empty() || budget == 0 {
            break;
        }
        let mut progressed = false;
        if edits.len() > 1 {
            budget -= 1;
            let all: Vec<&Edit> = edits.iter().collect();
            let fixed = splice(&current, &all);
            let after = check(&fixed);
            if better(&diagnostics, &after) {
                applied.extend(edits.iter().map(|e| (e.code.clone(), e.title.clone())));
                current = fixed;
                diagnostics = after;
                progressed = true;
            }
        }
        if !progressed {
            for edit in edits.iter().rev() {
                if budget == 0 {
                    break;
                }
                budget -= 1;
                let fixed = splice(&current, &[edit]);
                let after = check(&fixed);
                if better(&diagnostics, &after) {
                    applied.push((edit.code.clone(), edit.title.clone()));
                    current = fixed;
                    diagnostics = after;
                    progressed = true;
                }
            }
        }
        if !progressed {
            break;
        }
    }
    Fixed {
        text: current,
        applied,
    }
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
