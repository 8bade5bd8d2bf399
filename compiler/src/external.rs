//! The names of models that are not catalog declarations: a Hugging Face id or Ollama
//! tag, or a model file. The host crate (`deployfit-host`, its `external` module) reads
//! the registry and the files and materializes each into a `model` declaration named
//! here, in one stdlib-like file, [`RESOLVED_MODELS_PATH`]; names and `extends` need only
//! the name, so the analysis core never touches the registry or the disk.

use std::path::{Path, PathBuf};

pub use crate::db::RESOLVED_MODELS_PATH;

/// Whether a model string names a file rather than an id: it starts with `./`, `../` or
/// `/`, or ends in `.json`, `.gguf` or `.safetensors`.
pub fn is_path(text: &str) -> bool {
    text.starts_with("./")
        || text.starts_with("../")
        || text.starts_with('/')
        || [".json", ".gguf", ".safetensors"]
            .iter()
            .any(|ext| text.to_ascii_lowercase().ends_with(ext))
}

/// The file a model path names, relative to the folder of the file that names it.
pub fn artifact_path(importer: &Path, text: &str) -> PathBuf {
    crate::db::import_path(importer, text)
}

/// The name of the declaration generated for a model string: a readable slug of the
/// string (and, for a path, of where it points) with a hash, so that two strings never
/// share a name and the same string always gets the same one. `importer` is the file
/// that names it (only paths depend on it).
pub fn decl_name(text: &str, importer: &Path) -> String {
    let (prefix, key) = if is_path(text) {
        ("file", artifact_path(importer, text).display().to_string())
    } else {
        ("hub", text.to_ascii_lowercase())
    };
    let mut slug = String::new();
    for c in text.chars().rev() {
        if slug.len() >= 40 {
            break;
        }
        if c.is_ascii_alphanumeric() {
            slug.insert(0, c.to_ascii_lowercase());
        } else if !slug.starts_with('_') {
            slug.insert(0, '_');
        }
    }
    let slug = slug.trim_matches('_');
    format!("{prefix}_{slug}_{:08x}", fnv1a(key.as_bytes()))
}

/// FNV-1a, 32 bits: a stable hash for names (not for security).
fn fnv1a(bytes: &[u8]) -> u32 {
    let mut hash: u32 = 0x811c_9dc5;
    for b in bytes {
        hash ^= u32::from(*b);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    hash
}

/// Why the host did not fetch a Hugging Face id from the Hub, and how to supply the file
/// (`Project::hub`), when it tried.
pub fn hub_note(db: &dyn crate::db::Db, text: &str, importer: &Path) -> Option<String> {
    db.project()
        .hub(db)
        .get(&decl_name(text, importer))
        .cloned()
}

/// A help followed by the Hub's note for the id, when there is one.
pub fn with_hub_note(db: &dyn crate::db::Db, text: &str, importer: &Path, help: String) -> String {
    match hub_note(db, text, importer) {
        Some(note) => format!("{help} — {note}"),
        None => help,
    }
}
