//! What more than one renderer shares: the human renderer's options, severity counts,
//! and the escaping of text for a terminal.

use crate::diagnostics::{Diagnostic, Severity};

/// Options of the human renderer.
#[derive(Clone, Copy, Debug)]
pub struct HumanOptions {
    pub color: bool,
    pub width: usize,
    /// Only the diagnostics: no per-deployment summary lines, no totals line (`-q`).
    pub quiet: bool,
}

/// Counts per severity: (errors, warnings, infos).
pub fn counts(diagnostics: &[Diagnostic]) -> (usize, usize, usize) {
    let count = |s: Severity| diagnostics.iter().filter(|d| d.severity == s).count();
    (
        count(Severity::Error),
        count(Severity::Warning),
        count(Severity::Info),
    )
}

/// Text that is not source (messages, helps, labels, paths, table cells) for a terminal: control
/// and bidirectional formatting characters other than line breaks and tabs are written
/// as escapes (`\u{1b}`).
pub fn terminal_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let unsafe_char = (c.is_control() && c != '\n' && c != '\t')
            || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
        if unsafe_char {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out
}

/// A stable identity for a diagnostic across runs and line moves: FNV-1a (64-bit) over
/// its code, file, message and label, in hex. Renderers that need unique fingerprints
/// number repeats.
pub fn fingerprint(diag: &Diagnostic) -> String {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut hash = OFFSET;
    let path = diag.location.file.to_string_lossy();
    for part in [diag.code.as_str(), &path, &diag.message, &diag.label] {
        for byte in part.bytes().chain([0u8]) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(PRIME);
        }
    }
    format!("{hash:016x}")
}
