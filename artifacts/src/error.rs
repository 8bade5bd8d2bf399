//! The one error type of the crate.

use std::fmt;

/// Why an artifact could not be read.
///
/// Every variant carries a message that names what was wrong and how to fix it;
/// [`crate::read`] prefixes it with the file name. [`ArtifactError::kind`] is a stable short
/// identifier for programs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArtifactError {
    /// The file or folder could not be opened or read.
    Io(String),
    /// A size, count or length in the file is over this crate's bound.
    TooLarge(String),
    /// The bytes do not follow the format (truncated, bad magic, bad JSON, inconsistent).
    Malformed(String),
    /// A well-formed file that this crate does not handle (GGUF v1, unknown ggml type, ...).
    Unsupported(String),
    /// A field the computation needs is absent.
    Missing(String),
    /// A product or sum does not fit in 64 bits.
    Overflow(String),
}

impl ArtifactError {
    /// Stable short kind: `io`, `too-large`, `malformed`, `unsupported`, `missing`, `overflow`.
    pub fn kind(&self) -> &'static str {
        match self {
            ArtifactError::Io(_) => "io",
            ArtifactError::TooLarge(_) => "too-large",
            ArtifactError::Malformed(_) => "malformed",
            ArtifactError::Unsupported(_) => "unsupported",
            ArtifactError::Missing(_) => "missing",
            ArtifactError::Overflow(_) => "overflow",
        }
    }

    /// The message, without the kind.
    pub fn message(&self) -> &str {
        match self {
            ArtifactError::Io(m)
            | ArtifactError::TooLarge(m)
            | ArtifactError::Malformed(m)
            | ArtifactError::Unsupported(m)
            | ArtifactError::Missing(m)
            | ArtifactError::Overflow(m) => m,
        }
    }

    /// The same error with `file: ` in front of the message.
    pub fn in_file(self, file: &str) -> ArtifactError {
        let f = |m: String| format!("{file}: {m}");
        match self {
            ArtifactError::Io(m) => ArtifactError::Io(f(m)),
            ArtifactError::TooLarge(m) => ArtifactError::TooLarge(f(m)),
            ArtifactError::Malformed(m) => ArtifactError::Malformed(f(m)),
            ArtifactError::Unsupported(m) => ArtifactError::Unsupported(f(m)),
            ArtifactError::Missing(m) => ArtifactError::Missing(f(m)),
            ArtifactError::Overflow(m) => ArtifactError::Overflow(f(m)),
        }
    }
}

impl fmt::Display for ArtifactError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message(), self.kind())
    }
}

impl std::error::Error for ArtifactError {}

/// Checked arithmetic on exact integers: every product and sum of the crate goes through here.
pub(crate) fn mul(factors: &[u64]) -> Result<u64, ArtifactError> {
    let mut acc: u128 = 1;
    for &x in factors {
        acc = acc
            .checked_mul(u128::from(x))
            .ok_or_else(|| overflow(factors))?;
    }
    u64::try_from(acc).map_err(|_| overflow(factors))
}

pub(crate) fn add(a: u64, b: u64) -> Result<u64, ArtifactError> {
    a.checked_add(b)
        .ok_or_else(|| ArtifactError::Overflow(format!("{a} + {b} does not fit in 64 bits")))
}

pub(crate) fn sum(terms: &[u64]) -> Result<u64, ArtifactError> {
    terms.iter().try_fold(0u64, |acc, &t| add(acc, t))
}

fn overflow(factors: &[u64]) -> ArtifactError {
    ArtifactError::Overflow(format!(
        "the product {factors:?} does not fit in 64 bits; check the dimensions in the file"
    ))
}
