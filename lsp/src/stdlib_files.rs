//! The stdlib files written out so that a client can open them (go-to-definition,
//! references into the catalog).
//!
//! They go to a private per-user folder, never a fixed name in the shared temp folder:
//! `$XDG_RUNTIME_DIR`, else `$XDG_CACHE_HOME`, else `~/.cache`, under
//! `deployfit/stdlib-VERSION-HASH` (HASH: of the embedded stdlib), each folder created
//! owner-only (0o700) or, when it exists, accepted only if it is a real folder (not a
//! link) owned by the current user and not writable by group or others. Without a
//! usable one, a fresh folder with a random name in the temp folder, created 0o700.
//! Files are written to a new temporary name (O_CREAT|O_EXCL, never through a link) and
//! renamed into place, and before a location is served the file is opened without
//! following links and its bytes compared with the text the compiler has: a file that
//! differs is rewritten, or not served.

use std::hash::{BuildHasher, Hasher};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// A random 64-bit number (std's per-process random hash keys; no dependency).
fn random() -> u64 {
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    hasher.write_u32(std::process::id());
    hasher.finish()
}

/// FNV-1a of the embedded stdlib: the folder name changes when the catalog does.
fn stdlib_hash() -> String {
    let mut hash: u64 = 0xcbf29ce484222325;
    for (path, text) in deployfit_host::db::STDLIB {
        for byte in path.bytes().chain([0]).chain(text.bytes()).chain([0]) {
            hash ^= byte as u64;
            hash = hash.wrapping_mul(0x100000001b3);
        }
    }
    format!("{:016x}", hash)
}

fn folder_name() -> String {
    format!(
        "stdlib-{}-{}",
        env!("CARGO_PKG_VERSION"),
        &stdlib_hash()[..12]
    )
}

#[cfg(unix)]
mod private {
    use std::fs::{DirBuilder, File, OpenOptions};
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
    use std::path::Path;

    /// `O_NOFOLLOW`: opening a link fails (Linux's value; elsewhere `create_new`'s
    /// O_EXCL already refuses links, and the owner and content checks catch the rest).
    #[cfg(any(target_os = "linux", target_os = "android"))]
    const O_NOFOLLOW: i32 = 0o400000;
    #[cfg(target_os = "macos")]
    const O_NOFOLLOW: i32 = 0x100;
    #[cfg(not(any(target_os = "linux", target_os = "android", target_os = "macos")))]
    const O_NOFOLLOW: i32 = 0;

    /// The effective uid, without libc: the owner of something this process creates.
    pub fn current_uid() -> Option<u32> {
        if let Ok(metadata) = std::fs::metadata("/proc/self") {
            return Some(metadata.uid());
        }
        let probe = std::env::temp_dir().join(format!(".deployfit-uid-{:x}", super::random()));
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&probe)
            .ok()?;
        let uid = file.metadata().ok()?.uid();
        let _ = std::fs::remove_file(&probe);
        Some(uid)
    }

    /// Whether `metadata` is private to `uid`: owned by it, not writable by others.
    pub fn private_to(metadata: &std::fs::Metadata, uid: u32) -> bool {
        metadata.uid() == uid && metadata.mode() & 0o022 == 0
    }

    /// Creates `path` owner-only, or accepts it if it is already a private folder.
    pub fn private_dir(path: &Path, uid: u32) -> bool {
        match DirBuilder::new().mode(0o700).create(path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(_) => return false,
        }
        // `symlink_metadata`: a link to a folder is not accepted.
        std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_dir() && private_to(&m, uid))
    }

    /// A new folder with a fresh name (it did not exist), owner-only.
    pub fn fresh_dir(path: &Path) -> bool {
        DirBuilder::new().mode(0o700).create(path).is_ok()
    }

    pub fn create_new(path: &Path) -> std::io::Result<File> {
        OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(O_NOFOLLOW)
            .open(path)
    }

    /// Opens a file for reading if it is a regular file private to `uid`, not a link.
    pub fn open_private(path: &Path, uid: u32) -> Option<File> {
        let file = OpenOptions::new()
            .read(true)
            .custom_flags(O_NOFOLLOW)
            .open(path)
            .ok()?;
        let metadata = file.metadata().ok()?;
        (metadata.file_type().is_file() && private_to(&metadata, uid)).then_some(file)
    }
}

#[cfg(not(unix))]
mod private {
    use std::fs::{File, OpenOptions};
    use std::path::Path;

    pub fn current_uid() -> Option<u32> {
        Some(0)
    }

    pub fn private_dir(_: &Path, _: u32) -> bool {
        false
    }

    pub fn fresh_dir(path: &Path) -> bool {
        std::fs::create_dir(path).is_ok()
    }

    pub fn create_new(path: &Path) -> std::io::Result<File> {
        OpenOptions::new().write(true).create_new(true).open(path)
    }

    pub fn open_private(path: &Path, _: u32) -> Option<File> {
        let metadata = std::fs::symlink_metadata(path).ok()?;
        if !metadata.file_type().is_file() {
            return None;
        }
        File::open(path).ok()
    }
}

/// The private folder the stdlib files are written to.
#[derive(Debug)]
pub struct StdlibFiles {
    dir: PathBuf,
    uid: u32,
}

impl StdlibFiles {
    /// Finds or creates the folder; `None` when no private folder can be had.
    pub fn new() -> Option<StdlibFiles> {
        let uid = private::current_uid()?;
        let name = folder_name();
        let env_dir = |name: &str| {
            std::env::var_os(name)
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
        };
        let bases = [
            env_dir("XDG_RUNTIME_DIR"),
            env_dir("XDG_CACHE_HOME"),
            env_dir("HOME").map(|home| home.join(".cache")),
        ];
        for base in bases.into_iter().flatten() {
            if !base.is_dir() {
                continue;
            }
            let ours = base.join("deployfit");
            let dir = ours.join(&name);
            if private::private_dir(&ours, uid) && private::private_dir(&dir, uid) {
                return Some(StdlibFiles { dir, uid });
            }
            eprintln!(
                "deployfit lsp: {} is not a private folder of this user; not writing the stdlib there",
                dir.display()
            );
        }
        for _ in 0..8 {
            let dir =
                std::env::temp_dir().join(format!("deployfit-{name}-{uid}-{:016x}", random()));
            if private::fresh_dir(&dir) {
                return Some(StdlibFiles { dir, uid });
            }
        }
        None
    }

    /// The path of the stdlib file `name` holding exactly `text`, written if needed;
    /// `None` if it cannot be made so.
    pub fn file(&self, name: &str, text: &str) -> Option<PathBuf> {
        // A stdlib file name is a plain name (`gpus.deploy`): nothing else is written.
        if name.is_empty() || name.contains(['/', '\\']) || name.starts_with('.') {
            return None;
        }
        let target = self.dir.join(name);
        if self.holds(&target, text) {
            return Some(target);
        }
        self.write(&target, text)?;
        self.holds(&target, text).then_some(target)
    }

    /// Whether `path` is a private regular file (not a link) whose bytes are `text`.
    fn holds(&self, path: &Path, text: &str) -> bool {
        let Some(file) = private::open_private(path, self.uid) else {
            return false;
        };
        let mut bytes = Vec::with_capacity(text.len());
        file.take(text.len() as u64 + 1)
            .read_to_end(&mut bytes)
            .is_ok()
            && bytes == text.as_bytes()
    }

    /// Writes `text` to a fresh temporary name and renames it onto `target` (a rename
    /// replaces a link; it never writes through one).
    fn write(&self, target: &Path, text: &str) -> Option<()> {
        for _ in 0..8 {
            let temporary = self.dir.join(format!(".tmp-{:016x}", random()));
            let mut file = match private::create_new(&temporary) {
                Ok(file) => file,
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(_) => return None,
            };
            let written = file.write_all(text.as_bytes()).and_then(|_| file.flush());
            drop(file);
            if written.is_err() || std::fs::rename(&temporary, target).is_err() {
                let _ = std::fs::remove_file(&temporary);
                return None;
            }
            return Some(());
        }
        None
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn refuses_links_and_foreign_content() {
        let dir = std::env::temp_dir().join(format!("deployfit-stdlib-test-{:x}", random()));
        assert!(private::fresh_dir(&dir));
        let files = StdlibFiles {
            dir: dir.clone(),
            uid: private::current_uid().unwrap(),
        };
        let victim = dir.join("victim.txt");
        std::fs::write(&victim, "secret").unwrap();
        std::os::unix::fs::symlink(&victim, dir.join("gpus.deploy")).unwrap();
        std::fs::write(dir.join("models.deploy"), "foreign").unwrap();

        let gpus = files.file("gpus.deploy", "gpu a {}\n").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "secret");
        assert!(
            !std::fs::symlink_metadata(&gpus)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read_to_string(&gpus).unwrap(), "gpu a {}\n");
        let models = files.file("models.deploy", "model m {}\n").unwrap();
        assert_eq!(std::fs::read_to_string(models).unwrap(), "model m {}\n");
        assert_eq!(files.file("../x.deploy", "x"), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
