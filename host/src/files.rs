//! Reading `.deploy` files from disk, which is untrusted: only regular files, never
//! more than [`MAX_FILE_BYTES`], never blocking on a FIFO or a device, each real file
//! and each real directory once however many links lead to it.
//!
//! The CLI (`check`, `fmt`), [`crate::Workspace::load`] and the import loader all read
//! through here, so the same rules hold everywhere.

use std::collections::HashSet;
use std::fmt;
use std::path::{Path, PathBuf};

use deployfit_artifacts::file::kind_of;

pub use deployfit_compiler::db::{EXTENSION, is_deploy_path};

/// The largest file deployfit reads: 32 MiB, far above any real deployment file
/// (the stdlib is under 100 KB), small enough to check in a few seconds.
pub const MAX_FILE_BYTES: u64 = 32 << 20;

/// Why a file was not read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReadError {
    /// The path does not name a `.deploy` file.
    NotDeploy,
    /// A directory, FIFO, socket or device.
    NotRegular(&'static str),
    /// Larger than [`MAX_FILE_BYTES`] (the size seen, at least).
    TooLarge(u64),
    /// The operating system refused (missing, permissions, ...).
    Io(String),
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::NotDeploy => write!(f, "only `.{EXTENSION}` files are read"),
            ReadError::NotRegular(kind) => write!(f, "it is {kind}, not a regular file"),
            ReadError::TooLarge(size) => write!(
                f,
                "it is {} bytes, over the limit of {} bytes ({} MiB)",
                size,
                MAX_FILE_BYTES,
                MAX_FILE_BYTES >> 20
            ),
            ReadError::Io(message) => f.write_str(message),
        }
    }
}

/// An I/O error in words, without Rust's `(os error N)`.
fn io(error: &std::io::Error) -> ReadError {
    ReadError::Io(deployfit_artifacts::file::io_words(error))
}

/// The bytes of a regular `.deploy` file of at most [`MAX_FILE_BYTES`].
pub fn read(path: &Path) -> Result<Vec<u8>, ReadError> {
    if !is_deploy_path(path) {
        return Err(ReadError::NotDeploy);
    }
    read_regular(path)
}

/// The bytes of a regular file of at most [`MAX_FILE_BYTES`], whatever its name, read
/// through the one opener of user files ([`deployfit_artifacts::file`]): the same rules
/// as every model artifact.
fn read_regular(path: &Path) -> Result<Vec<u8>, ReadError> {
    use deployfit_artifacts::file::{FileError, read_bytes};
    read_bytes(path, MAX_FILE_BYTES).map_err(|e| match e {
        FileError::NotRegular(kind) => ReadError::NotRegular(kind),
        FileError::System => ReadError::NotRegular("a link into /proc or /sys"),
        FileError::TooLarge { size, .. } => ReadError::TooLarge(size),
        FileError::Io(words) => ReadError::Io(words),
    })
}

/// What [`collect`] found: the files to read, in order, and what it passed over.
#[derive(Debug, Default)]
pub struct Collected {
    /// Each real `.deploy` file once, under the first path that reached it, sorted.
    pub files: Vec<PathBuf>,
    /// Entries named `*.deploy` inside folders that are not regular files (FIFOs,
    /// devices, broken links), with the reason.
    pub skipped: Vec<(PathBuf, ReadError)>,
}

/// A path given on the command line that cannot be used.
#[derive(Debug)]
pub struct CollectError {
    pub path: PathBuf,
    pub reason: ReadError,
}

impl fmt::Display for CollectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot read `{}`: {}", self.path.display(), self.reason)
    }
}

/// Expands files and directories into `.deploy` files. Directories are searched
/// recursively, skipping hidden folders and `target`; each real directory is walked
/// once (symbolic-link loops end) and each real file is listed once (`examples` and
/// `examples/../examples` give the same files once).
pub fn collect(paths: &[PathBuf]) -> Result<Collected, CollectError> {
    let default = [PathBuf::from(".")];
    let paths = if paths.is_empty() {
        &default[..]
    } else {
        paths
    };
    let mut walk = Walk::default();
    for path in paths {
        let meta = std::fs::metadata(path).map_err(|e| CollectError {
            path: path.clone(),
            reason: io(&e),
        })?;
        if meta.is_dir() {
            walk.dir(path);
        } else if !is_deploy_path(path) {
            return Err(CollectError {
                path: path.clone(),
                reason: ReadError::NotDeploy,
            });
        } else if !meta.is_file() {
            return Err(CollectError {
                path: path.clone(),
                reason: ReadError::NotRegular(kind_of(&meta.file_type())),
            });
        } else {
            walk.file(path);
        }
    }
    walk.found.files.sort();
    Ok(walk.found)
}

#[derive(Default)]
struct Walk {
    seen_dirs: HashSet<PathBuf>,
    seen_files: HashSet<PathBuf>,
    found: Collected,
}

impl Walk {
    fn display(path: &Path) -> PathBuf {
        path.strip_prefix("./").unwrap_or(path).to_path_buf()
    }

    fn file(&mut self, path: &Path) {
        let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        if self.seen_files.insert(real) {
            self.found.files.push(Walk::display(path));
        }
    }

    /// An explicit stack rather than recursion: depth is bounded by the file system,
    /// not by ours.
    fn dir(&mut self, root: &Path) {
        let mut stack = vec![root.to_path_buf()];
        while let Some(dir) = stack.pop() {
            let Ok(real) = std::fs::canonicalize(&dir) else {
                continue;
            };
            if !self.seen_dirs.insert(real) {
                continue;
            }
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            let mut entries: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
            entries.sort();
            let mut subdirs = Vec::new();
            for path in entries {
                let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
                // `metadata` follows links: a link to a folder is a folder.
                match std::fs::metadata(&path) {
                    Ok(meta) if meta.is_dir() => {
                        let hidden = name.starts_with('.') || name == "target";
                        if !hidden {
                            subdirs.push(path);
                        }
                    }
                    Ok(meta) if is_deploy_path(&path) => {
                        if meta.is_file() {
                            self.file(&path);
                        } else {
                            let kind = kind_of(&meta.file_type());
                            self.found
                                .skipped
                                .push((Walk::display(&path), ReadError::NotRegular(kind)));
                        }
                    }
                    Err(error) if is_deploy_path(&path) => {
                        self.found.skipped.push((Walk::display(&path), io(&error)))
                    }
                    _ => {}
                }
            }
            // Reversed so that the stack visits folders in name order.
            stack.extend(subdirs.into_iter().rev());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_deploy_files_are_read() {
        assert_eq!(read(Path::new("/etc/passwd")), Err(ReadError::NotDeploy));
        assert!(matches!(
            read(Path::new("/nonexistent/x.deploy")),
            Err(ReadError::Io(_))
        ));
    }

    #[cfg(unix)]
    #[test]
    fn devices_are_refused_without_reading() {
        assert_eq!(
            read_regular(Path::new("/dev/zero")),
            Err(ReadError::NotRegular("a device"))
        );
    }
}
