//! Positions: LSP counts UTF-16 code units per line; the compiler counts bytes.
//!
//! A [`LineIndex`] is built once per text (O(n)) and answers both directions in
//! O(log n), so that converting every diagnostic, token or hint of a file stays linear
//! in its size. Lines end at `\n`; positions a client sends past the end of a line,
//! past the last line or inside a character (half a surrogate pair) are clamped.

use tower_lsp_server::ls_types::{Position, Range};

/// A character that is not a single byte, a single UTF-16 unit.
#[derive(Clone, Copy, Debug)]
struct Wide {
    /// Byte offset of the character.
    byte: usize,
    /// Its UTF-8 and UTF-16 lengths.
    len8: u8,
    len16: u8,
    /// UTF-16 offset of the character from the start of the text.
    unit: usize,
}

/// Line starts and the non-ASCII characters of one text.
#[derive(Clone, Debug)]
pub struct LineIndex {
    len: usize,
    /// Byte offset of every line start (the first is 0).
    starts: Vec<usize>,
    /// Every multibyte character, in order.
    wide: Vec<Wide>,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        let mut starts = vec![0];
        let mut wide = Vec::new();
        let mut unit = 0;
        for (i, c) in text.char_indices() {
            if c == '\n' {
                starts.push(i + 1);
            }
            if !c.is_ascii() {
                wide.push(Wide {
                    byte: i,
                    len8: c.len_utf8() as u8,
                    len16: c.len_utf16() as u8,
                    unit,
                });
            }
            unit += c.len_utf16();
        }
        LineIndex {
            len: text.len(),
            starts,
            wide,
        }
    }

    /// The UTF-16 offset from the start of the text of a byte offset (a char boundary,
    /// or it counts from the start of the character it is in).
    fn unit_of(&self, byte: usize) -> usize {
        // The last wide character that starts before `byte`.
        let n = self.wide.partition_point(|w| w.byte < byte);
        match n.checked_sub(1).map(|i| self.wide[i]) {
            None => byte,
            Some(w) if byte < w.byte + w.len8 as usize => w.unit,
            Some(w) => w.unit + w.len16 as usize + (byte - w.byte - w.len8 as usize),
        }
    }

    /// The byte offset of a UTF-16 offset from the start of the text; inside a
    /// character, the character's start.
    fn byte_of(&self, unit: usize) -> usize {
        let n = self.wide.partition_point(|w| w.unit < unit);
        match n.checked_sub(1).map(|i| self.wide[i]) {
            None => unit,
            Some(w) if unit < w.unit + w.len16 as usize => w.byte,
            Some(w) => w.byte + w.len8 as usize + (unit - w.unit - w.len16 as usize),
        }
    }

    /// The byte offset where line `line` ends (its `\n`, or the end of the text).
    fn line_end(&self, line: usize) -> usize {
        self.starts
            .get(line + 1)
            .map(|next| next - 1)
            .unwrap_or(self.len)
    }

    /// The byte offset of an LSP position, clamped into the text and its line.
    pub fn offset(&self, position: Position) -> usize {
        let line = position.line as usize;
        let Some(&start) = self.starts.get(line) else {
            return self.len;
        };
        let end = self.line_end(line);
        let target = self
            .unit_of(start)
            .saturating_add(position.character as usize);
        self.byte_of(target).clamp(start, end)
    }

    /// The LSP position of a byte offset (clamped into the text; inside a character, the
    /// character's start).
    pub fn position(&self, offset: usize) -> Position {
        let offset = offset.min(self.len);
        let line = self.starts.partition_point(|s| *s <= offset) - 1;
        let character = self.unit_of(offset) - self.unit_of(self.starts[line]);
        Position {
            line: line as u32,
            character: character as u32,
        }
    }

    pub fn range(&self, start: usize, end: usize) -> Range {
        Range {
            start: self.position(start),
            end: self.position(end),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plain scan the index replaces.
    fn slow_position(text: &str, offset: usize) -> Position {
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

    #[test]
    fn round_trips_with_multibyte_characters() {
        let text = "a = 1 // café\nb = \"𝄞\" x\n\nnaïve 中文 😀\r\nend";
        let index = LineIndex::new(text);
        for offset in 0..=text.len() + 3 {
            let position = index.position(offset);
            assert_eq!(position, slow_position(text, offset), "offset {offset}");
            let back = index.offset(position);
            assert!(text.is_char_boundary(back));
            if text.is_char_boundary(offset) {
                assert_eq!(back, offset.min(text.len()));
            }
        }
        assert_eq!(
            index.position(text.find('x').unwrap()),
            Position {
                line: 1,
                character: 9
            }
        );
    }

    #[test]
    fn hostile_positions_are_clamped() {
        let text = "b = \"𝄞\"\nshort\n";
        let index = LineIndex::new(text);
        let at = |line, character| index.offset(Position { line, character });
        // Inside the surrogate pair of 𝄞 (UTF-16 units 5 and 6): its start.
        assert_eq!(at(0, 6), text.find('𝄞').unwrap());
        // Past the end of a line: the line's end, not the next line.
        assert_eq!(at(1, 999), text.find("short").unwrap() + 5);
        assert_eq!(at(0, u32::MAX), text.find('\n').unwrap());
        // Past the last line.
        assert_eq!(at(99, 0), text.len());
        assert_eq!(at(u32::MAX, u32::MAX), text.len());
        assert_eq!(LineIndex::new("").offset(Position::new(3, 3)), 0);
    }
}
