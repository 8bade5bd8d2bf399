//! Byte spans.

/// A half-open byte range `[start, end)` in a source text.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    serde::Serialize,
    serde::Deserialize,
)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Span {
        Span {
            start: start as u32,
            end: end.max(start) as u32,
        }
    }

    pub fn len(self) -> usize {
        (self.end - self.start) as usize
    }

    pub fn is_empty(self) -> bool {
        self.start == self.end
    }

    /// This span moved right by `offset` bytes.
    pub fn shift(self, offset: u32) -> Span {
        Span {
            start: self.start + offset,
            end: self.end + offset,
        }
    }

    /// The smallest span covering both.
    pub fn cover(self, other: Span) -> Span {
        Span {
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }

    pub fn contains(self, offset: u32) -> bool {
        self.start <= offset && offset <= self.end
    }
}

/// The start offset of every line, for line/column lookups in O(log n).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineIndex {
    starts: Vec<u32>,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        let starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i as u32 + 1))
            .collect();
        LineIndex { starts }
    }

    /// The byte offset where the line holding `offset` starts.
    pub fn line_start(&self, offset: usize) -> usize {
        let line = self
            .starts
            .partition_point(|start| *start as usize <= offset);
        self.starts[line.max(1) - 1] as usize
    }

    /// 1-based line and column (in characters) of a byte offset in `text`.
    pub fn line_col(&self, text: &str, offset: u32) -> (usize, usize) {
        let offset = (offset as usize).min(text.len());
        let offset = (0..=offset)
            .rev()
            .find(|i| text.is_char_boundary(*i))
            .unwrap_or(0);
        let line = self
            .starts
            .partition_point(|start| *start as usize <= offset);
        let line_start = self.starts[line - 1] as usize;
        (line, text[line_start..offset].chars().count() + 1)
    }
}

/// 1-based line and column (in characters) of a byte offset.
pub fn line_col(text: &str, offset: u32) -> (usize, usize) {
    let offset = (offset as usize).min(text.len());
    let offset = (0..=offset)
        .rev()
        .find(|i| text.is_char_boundary(*i))
        .unwrap_or(0);
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map(|i| i + 1).unwrap_or(0);
    let column = before[line_start..].chars().count() + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_index_agrees_with_a_scan() {
        let text = "ab\ncé\n\nlast";
        let index = LineIndex::new(text);
        for offset in 0..=text.len() as u32 + 2 {
            assert_eq!(
                index.line_col(text, offset),
                line_col(text, offset),
                "offset {offset}"
            );
        }
    }
}
