//! Splits a file into chunks at declaration boundaries, before pest sees it.
//!
//! Each chunk is parsed on its own, so a broken block only costs its own chunk: the
//! errors in every other declaration are still reported. The scan also measures bracket
//! nesting, so that hostile input (10,000 open parentheses) is refused with a diagnostic
//! instead of recursing deeply in the parser.

use crate::span::Span;

/// Deeper nesting than this is refused; real files nest a handful of levels.
pub const MAX_DEPTH: usize = 64;

pub struct Chunk {
    pub span: Span,
    /// Where nesting first went past [`MAX_DEPTH`], if it did.
    pub too_deep_at: Option<usize>,
}

const STARTERS: [&str; 11] = [
    "arch",
    "gpu",
    "model",
    "quant",
    "kv",
    "engine",
    "host",
    "offer",
    "rule",
    "deployment",
    "import",
];

/// Whether the line (after its indentation) starts a declaration: `KIND NAME` or `import "`.
fn starts_declaration(rest: &str) -> bool {
    STARTERS.iter().any(|kw| {
        rest.strip_prefix(kw).is_some_and(|after| {
            let trimmed = after.trim_start_matches([' ', '\t']);
            after.len() != trimmed.len()
                && if *kw == "import" {
                    trimmed.starts_with('"')
                } else {
                    trimmed.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                }
        })
    })
}

pub fn split(text: &str) -> Vec<Chunk> {
    let mut chunks = Vec::new();
    let mut chunk_start = 0;
    let mut depth: usize = 0;
    let mut too_deep_at = None;
    // Start of the run of comment lines (`//` and `///`) directly above the current line:
    // they belong to the declaration below them, doc comments included.
    let mut doc_run_start: Option<usize> = None;
    let mut line_start = 0;
    for line in text.split_inclusive('\n') {
        let indent = line.len() - line.trim_start_matches([' ', '\t']).len();
        let rest = &line[indent..];
        let is_boundary =
            line_start > chunk_start && starts_declaration(rest) && (indent == 0 || depth == 0);
        if is_boundary {
            let boundary = doc_run_start.unwrap_or(line_start);
            if boundary > chunk_start {
                chunks.push(Chunk {
                    span: Span::new(chunk_start, boundary),
                    too_deep_at,
                });
                chunk_start = boundary;
                too_deep_at = None;
                depth = 0;
            }
        }
        if rest.starts_with("//") {
            doc_run_start.get_or_insert(line_start);
        } else {
            doc_run_start = None;
        }
        scan_brackets(line, line_start, &mut depth, &mut too_deep_at);
        line_start += line.len();
    }
    if chunk_start < text.len() || chunks.is_empty() {
        chunks.push(Chunk {
            span: Span::new(chunk_start, text.len()),
            too_deep_at,
        });
    }
    chunks
}

/// Tracks bracket depth over one line, skipping strings and comments.
fn scan_brackets(line: &str, offset: usize, depth: &mut usize, too_deep_at: &mut Option<usize>) {
    let bytes = line.as_bytes();
    let mut i = 0;
    let mut in_string = false;
    while i < bytes.len() {
        let byte = bytes[i];
        if in_string {
            match byte {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
        } else {
            match byte {
                b'"' => in_string = true,
                b'/' if bytes.get(i + 1) == Some(&b'/') => return,
                b'(' | b'[' | b'{' => {
                    *depth += 1;
                    if *depth > MAX_DEPTH && too_deep_at.is_none() {
                        *too_deep_at = Some(offset + i);
                    }
                }
                b')' | b']' | b'}' => *depth = depth.saturating_sub(1),
                _ => {}
            }
        }
        i += 1;
    }
}

/// The offset where bracket nesting in `text` first exceeds [`MAX_DEPTH`].
pub fn too_deep(text: &str) -> Option<usize> {
    let mut depth = 0;
    let mut at = None;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        scan_brackets(line, offset, &mut depth, &mut at);
        offset += line.len();
    }
    at
}

/// Where a `//` comment starts in one line, outside string literals.
pub(super) fn comment_start(line: &str) -> Option<usize> {
    let bytes = line.as_bytes();
    let mut in_string = false;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if in_string => i += 1,
            b'"' => in_string = !in_string,
            b'/' if !in_string && bytes.get(i + 1) == Some(&b'/') => return Some(i),
            _ => {}
        }
        i += 1;
    }
    None
}

/// `text` with every plain `//` comment (not a `///` doc comment) replaced by spaces, byte
/// for byte, so offsets are unchanged; `None` when it has none. The grammar skips comments
/// anyway; pest skips a run of spaces much faster than a comment it matches character by
/// character, and the generated catalog is 40 % comments (`// source:`, `// derived:`).
pub(super) fn mask_comments(text: &str) -> Option<String> {
    let mut masked: Option<Vec<u8>> = None;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if let Some(at) = comment_start(line) {
            let bytes = line.as_bytes();
            if bytes.get(at + 2) != Some(&b'/') {
                let body = line.trim_end_matches(['\n', '\r']).len();
                let out = masked.get_or_insert_with(|| text.as_bytes().to_vec());
                out[offset + at..offset + body].fill(b' ');
            }
        }
        offset += line.len();
    }
    // Whole characters from an ASCII `/` to the line end became ASCII spaces: still UTF-8.
    masked.and_then(|bytes| String::from_utf8(bytes).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_at_declarations_and_keeps_docs() {
        let text = "// header\ngpu a { memory = 1 GiB }\n/// doc\ndeployment b {\n  model = x\n}\n";
        let chunks = split(text);
        let pieces: Vec<&str> = chunks
            .iter()
            .map(|c| &text[c.span.start as usize..c.span.end as usize])
            .collect();
        assert_eq!(
            pieces,
            vec![
                "// header\ngpu a { memory = 1 GiB }\n",
                "/// doc\ndeployment b {\n  model = x\n}\n"
            ]
        );
    }

    #[test]
    fn comments_become_spaces_and_docs_strings_and_offsets_stay() {
        let text = "/// dóc // kept\ngpu a { // ünï \"x\"\r\n  name = \"a // b\" // ü\n}\n";
        let masked = mask_comments(text).unwrap();
        assert_eq!(masked.len(), text.len());
        let blank = |comment: &str| " ".repeat(comment.len());
        assert_eq!(
            masked,
            format!(
                "/// dóc // kept\ngpu a {{ {}\r\n  name = \"a // b\" {}\n}}\n",
                blank("// ünï \"x\""),
                blank("// ü")
            )
        );
        assert_eq!(mask_comments("gpu a { }\n/// only docs\n"), None);
    }

    #[test]
    fn deep_nesting_is_found() {
        let text = format!("deployment a {{ x = {} }}", "(".repeat(100));
        assert!(split(&text)[0].too_deep_at.is_some());
    }
}
