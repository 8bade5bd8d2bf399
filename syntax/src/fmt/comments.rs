//! A lexical scan for comments, which the parser drops.
//!
//! The scan knows just enough of the token structure to avoid false positives: `//`
//! inside a string literal is text, except inside a `{...}` interpolation, where the
//! interpolated expression is parsed again with comments allowed, so a comment there is
//! real and must be kept too.

/// One `//` (or `///`) comment: its byte range in the source and its text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Comment {
    /// The offset of the first `/`.
    pub start: usize,
    /// The offset just past the comment: the end of its line, or the `}` that closes
    /// the interpolation it sits in.
    pub end: usize,
    /// The comment as it will be printed, without trailing whitespace.
    pub text: String,
}

/// Where the scanner is, lexically.
#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Code,
    Str,
    Interp,
}

/// Every comment in `text`, in source order.
pub(super) fn scan(text: &str) -> Vec<Comment> {
    let bytes = text.as_bytes();
    let mut comments = Vec::new();
    let mut state = State::Code;
    let mut i = 0;
    while i < bytes.len() {
        let byte = bytes[i];
        let starts_comment = byte == b'/' && bytes.get(i + 1) == Some(&b'/');
        match state {
            State::Code => {
                if starts_comment {
                    // A comment in code runs to the end of its line.
                    let end = find(bytes, i, |b| b == b'\n');
                    comments.push(comment(text, i, end));
                    i = end;
                    continue;
                }
                if byte == b'"' {
                    state = State::Str;
                }
            }
            State::Str => match byte {
                // An escape hides the next byte (`\"`, `\{`), so skip both; the escaped
                // byte is always ASCII, so this never splits a character.
                b'\\' => i += 1,
                b'"' | b'\n' => state = State::Code,
                b'{' => state = State::Interp,
                _ => {}
            },
            State::Interp => {
                if starts_comment {
                    // The interpolation body ends at `}`, `"` or a newline, and so does
                    // a comment inside it.
                    let end = find(bytes, i, |b| matches!(b, b'}' | b'"' | b'\n'));
                    comments.push(comment(text, i, end));
                    i = end;
                    continue;
                }
                match byte {
                    b'}' => state = State::Str,
                    b'"' | b'\n' => state = State::Code,
                    _ => {}
                }
            }
        }
        i += 1;
    }
    comments
}

/// The first offset at or after `from` whose byte satisfies `stop`, or the end.
fn find(bytes: &[u8], from: usize, stop: impl Fn(u8) -> bool) -> usize {
    bytes[from..]
        .iter()
        .position(|&b| stop(b))
        .map_or(bytes.len(), |at| from + at)
}

fn comment(text: &str, start: usize, end: usize) -> Comment {
    Comment {
        start,
        end,
        text: text[start..end].trim_end().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(text: &str) -> Vec<String> {
        scan(text).into_iter().map(|c| c.text).collect()
    }

    #[test]
    fn finds_line_and_doc_comments_but_not_slashes_in_strings() {
        let text = "/// doc\nx = \"http://a\" // real  \r\ny = 5 GB/s\n// last";
        assert_eq!(texts(text), vec!["/// doc", "// real", "// last"]);
    }

    #[test]
    fn escapes_and_interpolations() {
        let text = "m = \"a \\\" // no {x // yes} \\{ // no\" // end";
        assert_eq!(texts(text), vec!["// yes", "// end"]);
        let comments = scan(text);
        assert_eq!(&text[comments[0].end..comments[0].end + 1], "}");
    }
}
