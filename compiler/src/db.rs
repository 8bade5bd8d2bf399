//! The salsa database: inputs (source files, the embedded stdlib) and the query pipeline
//! `parse → decl → scope → entry / deployment → file_diagnostics`.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::diagnostics::{Diag, Diagnostic, Label, Loc, Location, Suggestion};
use crate::eval;
use crate::names::{self, Scope};
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

/// The stdlib, embedded in the binary.
pub const STDLIB: &[(&str, &str)] = &[
    (
        "stdlib/gpus.deploy",
        include_str!("../../stdlib/gpus.deploy"),
    ),
    (
        "stdlib/models.deploy",
        include_str!("../../stdlib/models.deploy"),
    ),
    (
        "stdlib/quants.deploy",
        include_str!("../../stdlib/quants.deploy"),
    ),
    ("stdlib/kv.deploy", include_str!("../../stdlib/kv.deploy")),
    (
        "stdlib/engines.deploy",
        include_str!("../../stdlib/engines.deploy"),
    ),
    (
        "stdlib/rules.deploy",
        include_str!("../../stdlib/rules.deploy"),
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
        let stdlib = STDLIB
            .iter()
            .map(|(path, text)| {
                SourceFile::new(&db, PathBuf::from(path), text.to_string(), None, true)
            })
            .collect();
        db.project = Some(Project::new(&db, stdlib, BTreeMap::new(), BTreeMap::new()));
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

/// The parse of one file: its chunks' parses, each memoized.
#[salsa::tracked(returns(ref))]
pub fn parse(db: &dyn Db, file: SourceFile) -> Parsed {
    let text = file.text(db);
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

/// The names visible from a file: stdlib, the file, and its imports (transitively).
#[salsa::tracked(returns(ref))]
pub fn scope<'db>(db: &'db dyn Db, file: SourceFile) -> Scope<'db> {
    names::build_scope(db, file)
}

/// Where the `extends` chain of every entry in a file's scope leads (see
/// [`names::extends_chains`]).
#[salsa::tracked(returns(ref))]
pub fn extends_chains<'db>(
    db: &'db dyn Db,
    file: SourceFile,
) -> HashMap<DeclKey<'db>, names::Chain> {
    names::extends_chains(db, file)
}

/// A catalog entry (gpu, model, quant, kv, engine, rule) with `extends` applied and its
/// fields evaluated.
#[salsa::tracked(returns(ref))]
pub fn entry<'db>(db: &'db dyn Db, key: DeclKey<'db>) -> eval::Entry<'db> {
    eval::entry::evaluate_entry(db, key)
}

/// A deployment: fields resolved, figures estimated, requires and rules checked.
#[salsa::tracked(returns(ref))]
pub fn deployment<'db>(db: &'db dyn Db, key: DeclKey<'db>) -> eval::DeploymentResult<'db> {
    eval::deployment::evaluate(db, key)
}

/// Every diagnostic of a file, in the pipeline's relative form.
#[salsa::tracked(returns(ref))]
pub fn file_diags<'db>(db: &'db dyn Db, file: SourceFile) -> Vec<Diag<'db>> {
    let mut diags = Vec::new();
    if let Some(at) = file.invalid_utf8_at(db) {
        diags.push(
            Diag::error(
                "deploy::syntax::invalid_utf8",
                "the file is not valid UTF-8",
                Loc::File(file, Span::new(at as usize, at as usize + 1)),
            )
            .label("invalid byte sequence")
            .help("save the file as UTF-8"),
        );
    }
    for error in &parse(db, file).errors {
        diags.push(
            Diag::error(
                error.code,
                error.message.clone(),
                Loc::File(file, error.span),
            )
            .label(error.label.clone())
            .help(error.help.clone()),
        );
    }
    diags.extend(names::scope_diags(db, file));
    for key in decl_keys(db, file) {
        if key.kind(db) == DeclKind::Deployment {
            diags.extend(deployment(db, *key).diags.iter().cloned());
        } else {
            diags.extend(entry(db, *key).diags.iter().cloned());
        }
    }
    diags
}

/// Resolves a pipeline location to a path and an absolute span.
pub fn resolve_loc(db: &dyn Db, loc: Loc<'_>) -> (SourceFile, Span) {
    match loc {
        Loc::File(file, span) => (file, span),
        Loc::Decl(key, span) => (key.file(db), span.shift(decl_offset(db, key))),
    }
}

/// Line starts of a file, for line and column numbers.
#[salsa::tracked(returns(ref))]
pub fn line_index(db: &dyn Db, file: SourceFile) -> LineIndex {
    LineIndex::new(file.text(db))
}

fn finish_label(db: &dyn Db, loc: Loc<'_>, message: &str) -> Label {
    let (file, span) = resolve_loc(db, loc);
    let text = file.text(db);
    let index = line_index(db, file);
    let (line, column) = index.line_col(text, span.start);
    let (end_line, end_column) = index.line_col(text, span.end);
    Label {
        location: Location {
            file: file.path(db).clone(),
            span,
            line,
            column,
            end_line,
            end_column,
        },
        message: message.to_string(),
    }
}

/// The finished diagnostics of a file, sorted by position.
pub fn diagnostics(db: &dyn Db, file: SourceFile) -> Vec<Diagnostic> {
    let mut out: Vec<Diagnostic> = file_diags(db, file)
        .iter()
        .map(|diag| {
            let primary = finish_label(db, diag.loc, &diag.label);
            Diagnostic {
                code: diag.code.clone(),
                severity: diag.severity,
                message: diag.message.clone(),
                location: primary.location,
                label: diag.label.clone(),
                labels: diag
                    .labels
                    .iter()
                    .map(|(loc, text)| finish_label(db, *loc, text))
                    .collect(),
                help: diag.help.clone(),
                suggestions: diag
                    .suggestions
                    .iter()
                    .map(|(title, loc, replacement)| Suggestion {
                        title: title.clone(),
                        location: finish_label(db, *loc, "").location,
                        replacement: replacement.clone(),
                    })
                    .collect(),
            }
        })
        .collect();
    out.sort_by(|a, b| (a.location.span.start, &a.code).cmp(&(b.location.span.start, &b.code)));
    out.dedup();
    out
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

/// The figures of one deployment, as display strings, for summaries.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct DeploymentSummary {
    pub name: String,
    pub file: PathBuf,
    pub line: usize,
    /// Property name → value as printed (`"9.17 GiB"`); absent when not computable.
    pub figures: BTreeMap<String, String>,
}

/// One summary per deployment of a file, in source order.
pub fn deployment_summaries(db: &dyn Db, file: SourceFile) -> Vec<DeploymentSummary> {
    decl_keys(db, file)
        .iter()
        .filter(|key| key.kind(db) == DeclKind::Deployment)
        .map(|key| {
            let name_span = decl(db, *key).map(|d| d.name.span).unwrap_or_default();
            let (_, span) = resolve_loc(db, Loc::Decl(*key, name_span));
            let figures = deployment(db, *key)
                .props
                .iter()
                .flatten()
                .filter_map(|(name, value)| {
                    value.as_ref().ok().map(|v| (name.clone(), v.display()))
                })
                .collect();
            DeploymentSummary {
                name: key.name(db).clone(),
                file: file.path(db).clone(),
                line: line_index(db, file).line_col(file.text(db), span.start).0,
                figures,
            }
        })
        .collect()
}
