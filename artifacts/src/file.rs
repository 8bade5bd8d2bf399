//! The one way deployfit opens a file named by a user: `.deploy` files and their imports
//! (`deployfit_compiler::files`) and every model artifact (config.json, index, safetensors
//! and GGUF files, directly or inside a folder) go through [`open_regular`].
//!
//! The rules, the same everywhere:
//! - only regular files: a FIFO, socket, device or directory is refused before it is
//!   opened (so a FIFO never blocks the open), and again on the open descriptor (so a file
//!   swapped in between is caught);
//! - never through `/proc` (or `/sys`): `/dev/stdin`, `/dev/fd/N` and `/proc/self/fd/N`
//!   are links to the process's own standard input, which may be a regular file when it is
//!   redirected from one; a link anywhere in the path's chain that leads there is refused;
//! - opened non-blocking, and read through a `take` bound so a file that grows while it is
//!   read stops at the caller's limit.

use std::fmt;
use std::fs::File;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

/// Why a file was not opened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileError {
    /// A directory, FIFO, socket or device (the words say which).
    NotRegular(&'static str),
    /// A path that leads through `/proc` or `/sys` (such as `/dev/stdin`).
    System,
    /// Larger than the caller's limit: the size seen, and the limit.
    TooLarge { size: u64, limit: u64 },
    /// The operating system refused (missing, permissions, ...), in words.
    Io(String),
}

impl fmt::Display for FileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FileError::NotRegular(kind) => write!(f, "it is {kind}, not a regular file"),
            FileError::System => f.write_str(
                "it leads into /proc or /sys (such as /dev/stdin), not to a regular file",
            ),
            FileError::TooLarge { size, limit } => {
                write!(f, "it is {size} bytes, over the limit of {limit} bytes")
            }
            FileError::Io(message) => f.write_str(message),
        }
    }
}

/// An I/O error in words, without Rust's `(os error N)`.
pub fn io_words(error: &std::io::Error) -> String {
    use std::io::ErrorKind;
    match error.kind() {
        ErrorKind::NotFound => "no such file".to_string(),
        ErrorKind::PermissionDenied => "permission denied".to_string(),
        _ => {
            let text = error.to_string();
            match text.find(" (os error") {
                Some(at) => text[..at].to_string(),
                None => text,
            }
        }
    }
}

/// What kind of thing a file type is, in words.
pub fn kind_of(file_type: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "a FIFO";
        }
        if file_type.is_char_device() || file_type.is_block_device() {
            return "a device";
        }
        if file_type.is_socket() {
            return "a socket";
        }
    }
    if file_type.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

/// The folders no user file is read from: the kernel's views of processes and devices.
fn is_system(path: &Path) -> bool {
    let mut parts = path.components();
    matches!(parts.next(), Some(Component::RootDir))
        && matches!(parts.next(), Some(Component::Normal(top)) if top == "proc" || top == "sys")
}

/// Most symbolic links followed when looking for one into `/proc` (Linux's own limit).
const MAX_LINKS: usize = 40;

/// Whether `path`, or a link on the way to it, leads into `/proc` or `/sys`.
pub fn leads_into_system(path: &Path) -> bool {
    if is_system(path) {
        return true;
    }
    // The links of the last component, one at a time: `/dev/stdin` → `/proc/self/fd/0`
    // (whose own target is the real input, a regular file when it is redirected).
    let mut current = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        let Ok(meta) = std::fs::symlink_metadata(&current) else {
            break;
        };
        if !meta.file_type().is_symlink() {
            break;
        }
        let Ok(target) = std::fs::read_link(&current) else {
            break;
        };
        let next: PathBuf = if target.is_absolute() {
            target
        } else {
            current
                .parent()
                .map(|dir| dir.join(&target))
                .unwrap_or(target)
        };
        if is_system(&next) {
            return true;
        }
        current = next;
    }
    // A folder on the way that is (or links into) /proc: `fd/0` with `fd` → /proc/self/fd.
    let canonical_parent = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .and_then(|p| std::fs::canonicalize(p).ok());
    canonical_parent.is_some_and(|p| is_system(&p))
        || std::fs::canonicalize(path).is_ok_and(|p| is_system(&p))
}

/// Opens without blocking: opening a FIFO for reading otherwise waits for a writer.
fn open_nonblocking(path: &Path) -> std::io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    options.open(path)
}

/// Opens a regular file for reading, by the rules above, and returns it with its length.
pub fn open_regular(path: &Path) -> Result<(File, u64), FileError> {
    if leads_into_system(path) {
        return Err(FileError::System);
    }
    let meta = std::fs::metadata(path).map_err(|e| FileError::Io(io_words(&e)))?;
    if !meta.is_file() {
        return Err(FileError::NotRegular(kind_of(&meta.file_type())));
    }
    let file = open_nonblocking(path).map_err(|e| FileError::Io(io_words(&e)))?;
    let meta = file.metadata().map_err(|e| FileError::Io(io_words(&e)))?;
    if !meta.is_file() {
        return Err(FileError::NotRegular(kind_of(&meta.file_type())));
    }
    Ok((file, meta.len()))
}

/// The bytes of a regular file of at most `limit` bytes.
pub fn read_bytes(path: &Path, limit: u64) -> Result<Vec<u8>, FileError> {
    let (file, len) = open_regular(path)?;
    if len > limit {
        return Err(FileError::TooLarge { size: len, limit });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| FileError::Io(io_words(&e)))?;
    if bytes.len() as u64 > limit {
        return Err(FileError::TooLarge {
            size: bytes.len() as u64,
            limit,
        });
    }
    Ok(bytes)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("deployfit-file-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn links_into_proc_and_special_files_are_refused() {
        let dir = scratch("links");
        let stdin = dir.join("stdin.json");
        std::os::unix::fs::symlink("/dev/stdin", &stdin).unwrap();
        assert_eq!(open_regular(&stdin).unwrap_err(), FileError::System);
        let fd = dir.join("fd");
        std::os::unix::fs::symlink("/proc/self/fd", &fd).unwrap();
        assert_eq!(open_regular(&fd.join("0")).unwrap_err(), FileError::System);
        assert_eq!(
            open_regular(Path::new("/proc/self/status")).unwrap_err(),
            FileError::System
        );
        assert_eq!(
            open_regular(Path::new("/dev/null")).unwrap_err(),
            FileError::NotRegular("a device")
        );
        assert_eq!(
            open_regular(&dir).unwrap_err(),
            FileError::NotRegular("a directory")
        );
        let plain = dir.join("é.json");
        std::fs::write(&plain, b"{}").unwrap();
        let link = dir.join("link.json");
        std::os::unix::fs::symlink(&plain, &link).unwrap();
        assert_eq!(read_bytes(&link, 10).unwrap(), b"{}");
        assert_eq!(
            read_bytes(&plain, 1).unwrap_err(),
            FileError::TooLarge { size: 2, limit: 1 }
        );
    }
}
