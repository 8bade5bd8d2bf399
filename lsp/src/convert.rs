//! Positions: LSP counts UTF-16 code units per line; the compiler counts bytes.

use tower_lsp_server::ls_types::{Position, Range};

/// The byte offset of an LSP position, clamped into the text.
pub fn offset(text: &str, position: Position) -> usize {
    let mut line_start = 0;
    for _ in 0..position.line {
        match text[line_start..].find('\n') {
            Some(i) => line_start += i + 1,
            None => return text.len(),
        }
    }
    let line_end = text[line_start..]
        .find('\n')
        .map(|i| line_start + i)
        .unwrap_or(text.len());
    let mut units = 0;
    for (i, c) in text[line_start..line_end].char_indices() {
        if units >= position.character as usize {
            return line_start + i;
        }
        units += c.len_utf16();
    }
    line_end
}

/// The LSP position of a byte offset.
pub fn position(text: &str, offset: usize) -> Position {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() as u32;
    let line_start = before.rfind('\n').map(|i| i + 1).unwrap_or(0);
    let character = before[line_start..]
        .chars()
        .map(char::len_utf16)
        .sum::<usize>() as u32;
    Position { line, character }
}

pub fn range(text: &str, start: usize, end: usize) -> Range {
    Range {
        start: position(text, start),
        end: position(text, end),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_with_multibyte_characters() {
        let text = "a = 1 // café\nb = \"𝄞\" x\n";
        for (i, _) in text.char_indices() {
            assert_eq!(offset(text, position(text, i)), i);
        }
        assert_eq!(
            position(text, text.find('x').unwrap()),
            Position {
                line: 1,
                character: 9
            }
        );
    }
}
