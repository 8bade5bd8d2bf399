//! The salsa database, the base every query stands on: inputs (source files, the
//! embedded stdlib), declaration keys, and the queries that need nothing above them —
//! parse, declarations, imports, line index. The queries of each later stage live beside
//! their code: `names::scope`, `eval::entry_of`, `check::deployment`,
//! `check::file_diags`.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::span::{LineIndex, Span};
use crate::syntax::{self, Parsed, ast::Decl, ast::DeclKind};

/// One source text: a user file or a stdlib file.
#[salsa::input(debug)]
pub struct SourceFile {
    #[returns(ref)]
    pub path: PathBuf,
    #[returns(ref)]
    pub text: String,
    /// Byte offset of the first invalid UTF-8 sequence when the file was read from disk.
    #[returns(copy)]
    pub invalid_utf8_at: Option<u32>,
    #[returns(copy)]
    pub is_stdlib: bool,
}

/// The set of files the database knows: the stdlib and every user file loaded so far.
#[salsa::input(debug)]
pub struct Project {
    #[returns(ref)]
    pub stdlib: Vec<SourceFile>,
    #[returns(ref)]
    pub files: BTreeMap<PathBuf, SourceFile>,
    /// Imported paths that were not loaded, and why (not a regular file, too large,
    /// not a `.deploy` file, missing): the import's diagnostic says so.
    #[returns(ref)]
    pub unreadable: BTreeMap<PathBuf, String>,
    /// Models named by a string that could not be materialized (a file that cannot be
    /// read as a model), by generated declaration name: the deployment's diagnostic says
    /// why (see [`crate::external`]).
    #[returns(ref)]
    pub external: BTreeMap<String, String>,
    /// Hugging Face ids named by a string that the host did not fetch from the Hub, by
    /// generated declaration name: why, and how to supply the file (offline, not found,
    /// gated); the unknown-model diagnostic adds it to its help.
    #[returns(ref)]
    pub hub: BTreeMap<String, String>,
}

/// A declaration by identity: file, kind, name and which occurrence (a name defined
/// twice in one file keeps both apart).
#[salsa::interned(debug)]
pub struct DeclKey<'db> {
    #[returns(copy)]
    pub file: SourceFile,
    #[returns(copy)]
    pub kind: DeclKind,
    #[returns(ref)]
    pub name: String,
    #[returns(copy)]
    pub nth: u32,
}

#[salsa::db]
pub trait Db: salsa::Database {
    fn project(&self) -> Project;
}

#[salsa::db]
#[derive(Clone)]
pub struct Database {
    storage: salsa::Storage<Self>,
    project: Option<Project>,
    log: Arc<Mutex<Option<Vec<String>>>>,
}

#[salsa::db]
impl salsa::Database for Database {}

#[salsa::db]
impl Db for Database {
    fn project(&self) -> Project {
        self.project
            .expect("the project input is created in Database::new")
    }
}

/// The path of the generated file that holds the models materialized from the registry
/// or from files ([`crate::external`]).
pub const RESOLVED_MODELS_PATH: &str = "<resolved>/models.deploy";

/// The stdlib, embedded in the binary.
pub const STDLIB: &[(&str, &str)] = &[
    (
        "stdlib/archs.deploy",
        include_str!("../stdlib/archs.deploy"),
    ),
    ("stdlib/gpus.deploy", include_str!("../stdlib/gpus.deploy")),
    (
        "stdlib/gpus_bulk.deploy",
        include_str!("../stdlib/gpus_bulk.deploy"),
    ),
    (
        "stdlib/models.deploy",
        include_str!("../stdlib/models.deploy"),
    ),
    (
        "stdlib/quants.deploy",
        include_str!("../stdlib/quants.deploy"),
    ),
    ("stdlib/kv.deploy", include_str!("../stdlib/kv.deploy")),
    (
        "stdlib/engines.deploy",
        include_str!("../stdlib/engines.deploy"),
    ),
    (
        "stdlib/hosts.deploy",
        include_str!("../stdlib/hosts.deploy"),
    ),
    (
        "stdlib/offers.deploy",
        include_str!("../stdlib/offers.deploy"),
    ),
    (
        "stdlib/rules.deploy",
        include_str!("../stdlib/rules.deploy"),
    ),
];

impl Default for Database {
    fn default() -> Self {
        Database::new()
    }
}

impl Database {
    pub fn new() -> Database {
        let log: Arc<Mutex<Option<Vec<String>>>> = Arc::default();
        let storage = salsa::Storage::new(Some(Box::new({
            let log = log.clone();
            move |event: salsa::Event| {
                if let salsa::EventKind::WillExecute { database_key } = event.kind
                    && let Ok(mut guard) = log.lock()
                    && let Some(entries) = guard.as_mut()
                {
                    entries.push(format!("{database_key:?}"));
                }
            }
        })
            as Box<dyn Fn(salsa::Event) + Send + Sync>));
        let mut db = Database {
            storage,
            project: None,
            log,
        };
        let mut stdlib: Vec<SourceFile> = STDLIB
            .iter()
            .map(|(path, text)| {
                SourceFile::new(&db, PathBuf::from(path), text.to_string(), None, true)
            })
            .collect();
        // The models materialized from the registry or from files, empty until a
        // deployment names one (`Workspace` keeps it in step).
        stdlib.push(SourceFile::new(
            &db,
            PathBuf::from(RESOLVED_MODELS_PATH),
            String::new(),
            None,
            true,
        ));
        db.project = Some(Project::new(
            &db,
            stdlib,
            BTreeMap::new(),
            BTreeMap::new(),
            BTreeMap::new(),
            BTreeMap::new(),
        ));
        db
    }

    /// Starts recording which queries execute (for incrementality tests).
    pub fn start_log(&self) {
        if let Ok(mut guard) = self.log.lock() {
            *guard = Some(Vec::new());
        }
    }

    /// The queries executed since [`Database::start_log`], as salsa names them.
    pub fn take_log(&self) -> Vec<String> {
        self.log
            .lock()
            .ok()
            .and_then(|mut guard| guard.as_mut().map(std::mem::take))
            .unwrap_or_default()
    }
}

// `STDLIB_TREES`: each stdlib file's syntax tree, parsed and encoded by `build.rs`.
include!(concat!(env!("OUT_DIR"), "/stdlib_trees.rs"));

/// The build script's tree of an embedded stdlib file, when `text` is that file's
/// embedded text: the same parser ran on the same text, so it equals a fresh parse
/// (tested); any other text (a test's replacement) is parsed as usual.
pub(crate) fn stdlib_tree(path: &Path, text: &str) -> Option<Parsed> {
    let name = path.to_str()?;
    let (_, embedded) = STDLIB.iter().find(|(p, _)| *p == name)?;
    if *embedded != text {
        return None;
    }
    let (_, bytes) = STDLIB_TREES.iter().find(|(p, _)| *p == name)?;
    postcard::from_bytes(bytes).ok()
}

/// The text of one chunk of a file (see [`syntax::split`]), interned so that equal
/// chunks share one parse.
#[salsa::interned(debug)]
pub struct ChunkText<'db> {
    #[returns(ref)]
    pub text: String,
}

/// The parse of one chunk, offsets relative to the chunk.
#[salsa::tracked(returns(ref))]
pub fn parse_chunk<'db>(db: &'db dyn Db, chunk: ChunkText<'db>) -> Parsed {
    syntax::parse_chunk(chunk.text(db))
}

/// The parse of one file: its chunks' parses, each memoized. A stdlib file whose text
/// is the embedded one is decoded from the tree the build script parsed instead.
#[salsa::tracked(returns(ref))]
pub fn parse(db: &dyn Db, file: SourceFile) -> Parsed {
    let text = file.text(db);
    if file.is_stdlib(db)
        && let Some(parsed) = stdlib_tree(file.path(db), text)
    {
        return parsed;
    }
    let mut parsed = Parsed::default();
    for chunk in syntax::split::split(text) {
        let start = chunk.span.start as usize;
        let source = &text[start..chunk.span.end as usize];
        let interned = ChunkText::new(db, source.to_string());
        parsed.append(parse_chunk(db, interned), start as u32);
    }
    parsed
}

/// The declarations of a file, by key, with their offsets. Re-runs on every edit of
/// the file but compares equal (and stops propagation) unless a declaration was added,
/// removed or renamed.
#[salsa::tracked(returns(ref))]
pub fn decl_keys<'db>(db: &'db dyn Db, file: SourceFile) -> Vec<DeclKey<'db>> {
    let mut seen: BTreeMap<(DeclKind, &str), u32> = BTreeMap::new();
    parse(db, file)
        .decls
        .iter()
        .map(|placed| {
            let nth = seen
                .entry((placed.decl.kind, placed.decl.name.name.as_str()))
                .or_insert(0);
            let key = DeclKey::new(
                db,
                file,
                placed.decl.kind,
                placed.decl.name.name.clone(),
                *nth,
            );
            *nth += 1;
            key
        })
        .collect()
}

/// Each declaration key's index in [`Parsed::decls`], for constant-time lookups.
#[salsa::tracked(returns(ref))]
pub fn decl_indices<'db>(db: &'db dyn Db, file: SourceFile) -> HashMap<DeclKey<'db>, usize> {
    decl_keys(db, file)
        .iter()
        .enumerate()
        .map(|(index, key)| (*key, index))
        .collect()
}

fn placed<'db>(db: &'db dyn Db, key: DeclKey<'db>) -> Option<&'db syntax::PlacedDecl> {
    let file = key.file(db);
    decl_indices(db, file)
        .get(&key)
        .and_then(|index| parse(db, file).decls.get(*index))
}

/// The syntax tree of one declaration (spans relative to its start).
#[salsa::tracked(returns(clone))]
pub fn decl<'db>(db: &'db dyn Db, key: DeclKey<'db>) -> Option<Arc<Decl>> {
    placed(db, key).map(|placed| placed.decl.clone())
}

/// Where a declaration starts in its file.
pub fn decl_offset(db: &dyn Db, key: DeclKey<'_>) -> u32 {
    placed(db, key).map(|placed| placed.offset).unwrap_or(0)
}

/// An import statement resolved against the project's files.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ResolvedImport {
    pub path: PathBuf,
    pub span: Span,
    pub file: Option<SourceFile>,
}

/// The extension of the files deployfit reads.
pub const EXTENSION: &str = "deploy";

/// Whether a path names a `.deploy` file (by its extension).
pub fn is_deploy_path(path: &Path) -> bool {
    path.extension().is_some_and(|ext| ext == EXTENSION)
}

/// The path an import names, relative to the importing file's folder.
pub fn import_path(importer: &Path, relative: &str) -> PathBuf {
    let base = importer.parent().unwrap_or(Path::new(""));
    normalize(&base.join(relative))
}

/// Removes `.` and resolvable `..` components, so one file has one path.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other),
        }
    }
    out
}

#[salsa::tracked(returns(ref))]
pub fn imports(db: &dyn Db, file: SourceFile) -> Vec<ResolvedImport> {
    let files = db.project().files(db);
    parse(db, file)
        .imports
        .iter()
        .map(|import| {
            let path = import_path(file.path(db), &import.path);
            ResolvedImport {
                file: files.get(&path).copied(),
                path,
                span: import.span,
            }
        })
        .collect()
}

/// Line starts of a file, for line and column numbers.
#[salsa::tracked(returns(ref))]
pub fn line_index(db: &dyn Db, file: SourceFile) -> LineIndex {
    LineIndex::new(file.text(db))
}

/// Every file reachable through imports from `file`, itself excluded.
pub fn reachable(db: &dyn Db, file: SourceFile) -> Vec<SourceFile> {
    let mut seen = BTreeSet::new();
    let mut order = Vec::new();
    let mut stack = vec![file];
    while let Some(current) = stack.pop() {
        for import in imports(db, current) {
            if let Some(next) = import.file
                && next != file
                && seen.insert(next.path(db).clone())
            {
                order.push(next);
                stack.push(next);
            }
        }
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_stdlib_file_has_a_tree_equal_to_a_fresh_parse() {
        assert_eq!(STDLIB_TREES.len(), STDLIB.len());
        for (path, text) in STDLIB {
            let tree = stdlib_tree(Path::new(path), text)
                .unwrap_or_else(|| panic!("{path} has no tree from build.rs"));
            assert!(!tree.decls.is_empty(), "{path}");
            assert_eq!(tree, syntax::parse(text), "{path}");
        }
    }

    #[test]
    fn other_text_at_a_stdlib_path_is_parsed_as_usual() {
        let (path, text) = STDLIB[0];
        assert!(stdlib_tree(Path::new(path), &format!("{text}\n")).is_none());
        let mut db = Database::new();
        let file = db.project().stdlib(&db)[0];
        let edited = format!("{text}\ngpu extra_card {{ memory = 1 GiB }}\n");
        use salsa::Setter;
        file.set_text(&mut db).to(edited.clone());
        assert_eq!(*parse(&db, file), syntax::parse(&edited));
    }
}
