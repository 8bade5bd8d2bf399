//! Names: one scope per file (stdlib + imports + the file), one namespace per kind.

pub mod resolve;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use crate::db::{self, Db, DeclKey, SourceFile};
use crate::diagnostics::codes::Code;
use crate::diagnostics::{Diag, Loc, Severity};
use crate::span::Span;
use crate::syntax::ast::{Decl, DeclKind};

/// The names a file sees.
#[derive(Clone, Debug, PartialEq, Eq, salsa::SalsaValue)]
pub struct Scope<'db> {
    /// Per kind, name → the definition that wins. Names are shared (`Arc<str>`), so a
    /// file's scope starts as a cheap copy of the stdlib's ([`stdlib_scope`]).
    entries: BTreeMap<DeclKind, BTreeMap<Arc<str>, DeclKey<'db>>>,
    /// (the definition that wins, a later one with the same kind and name)
    pub conflicts: Vec<(DeclKey<'db>, DeclKey<'db>)>,
}

impl<'db> Scope<'db> {
    pub fn lookup(&self, kind: DeclKind, name: &str) -> Option<DeclKey<'db>> {
        self.entries.get(&kind)?.get(name).copied()
    }

    /// All names of one kind, in order.
    pub fn names(&self, kind: DeclKind) -> impl Iterator<Item = (&str, DeclKey<'db>)> {
        self.entries
            .get(&kind)
            .into_iter()
            .flatten()
            .map(|(name, key)| (&**name, *key))
    }

    /// Every definition that wins, by kind then name.
    pub fn keys(&self) -> impl Iterator<Item = DeclKey<'db>> + '_ {
        self.entries
            .values()
            .flat_map(|names| names.values().copied())
    }

    /// Adds a file's declarations after those already in scope: the first definition of a
    /// kind and name wins, a later one is a conflict.
    fn add(&mut self, db: &'db dyn Db, source: SourceFile) {
        for key in db::decl_keys(db, source) {
            let names = self.entries.entry(key.kind(db)).or_default();
            match names.get(key.name(db).as_str()) {
                Some(first) => self.conflicts.push((*first, *key)),
                None => {
                    names.insert(Arc::from(key.name(db).as_str()), *key);
                }
            }
        }
    }

    /// The closest name of `kind` to `name`, for "did you mean".
    pub fn suggest(&self, kind: DeclKind, name: &str) -> Option<String> {
        closest(name, self.names(kind).map(|(n, _)| n))
    }
}

/// The candidate most similar to `name`, if any is similar enough to be a likely typo.
pub fn closest<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> Option<String> {
    let wanted = name.to_lowercase();
    candidates
        .map(|candidate| {
            let lower = candidate.to_lowercase();
            let mut score = strsim::jaro_winkler(&wanted, &lower);
            if !wanted.is_empty() && (lower.contains(&wanted) || wanted.contains(&lower)) {
                score = score.max(0.9);
            }
            (score, candidate)
        })
        .filter(|(score, _)| *score >= 0.75)
        .max_by(|a, b| a.0.total_cmp(&b.0).then_with(|| b.1.cmp(a.1)))
        .map(|(_, candidate)| candidate.to_string())
}

/// The most `extends` links an entry may be from its root (the entry of its chain that
/// extends nothing). Past it the chain is not followed: the entry one link too far gets
/// `deploy::name::extends_too_deep`, and the entries below it are evaluated with their
/// own fields only. Documented in docs/language.md (`extends`).
pub const MAX_EXTENDS_DEPTH: usize = 32;

/// Where an entry's `extends` chain leads, as seen from its file's scope.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, salsa::SalsaValue)]
pub enum Chain {
    /// This many links to the root (0: the entry extends nothing or an unknown name).
    Depth(usize),
    /// The entry is on a cycle of this many entries.
    Cycle(usize),
    /// The chain runs into a cycle the entry is not part of.
    IntoCycle,
}

/// The name an entry's `extends` names, or, for `model NAME from "…"`, the name of the
/// model materialized from that file or id ([`crate::external::decl_name`]), with the
/// span to point at.
pub fn parent_ref(db: &dyn Db, key: DeclKey<'_>, decl: &Decl) -> Option<(String, Span)> {
    if let Some(parent) = &decl.extends {
        return Some((parent.name.clone(), parent.span));
    }
    let from = decl.from.as_ref()?;
    let text = from.plain()?;
    Some((
        crate::external::decl_name(&text, key.file(db).path(db)),
        from.span,
    ))
}

/// The parent an entry's `extends` (or `from`) names, looked up in `scope`.
fn extends_parent<'db>(
    db: &'db dyn Db,
    scope: &Scope<'db>,
    key: DeclKey<'db>,
) -> Option<DeclKey<'db>> {
    let decl = db::decl(db, key)?;
    let (parent, _) = parent_ref(db, key, &decl)?;
    scope.lookup(key.kind(db), &parent)
}

/// The chain of every entry in a file's scope, in time linear in the scope: each entry
/// is visited once, following parents until an entry whose chain is known.
#[salsa::tracked(returns(ref))]
pub fn extends_chains<'db>(db: &'db dyn Db, file: SourceFile) -> HashMap<DeclKey<'db>, Chain> {
    let scope = scope(db, file);
    let mut chains: HashMap<DeclKey<'db>, Chain> = HashMap::new();
    for start in scope.keys() {
        let mut path: Vec<DeclKey<'db>> = Vec::new();
        let mut on_path: HashMap<DeclKey<'db>, usize> = HashMap::new();
        let mut current = Some(start);
        // The chain of the last entry left on `path`.
        let tail = loop {
            let Some(key) = current else {
                break Chain::Depth(0);
            };
            if let Some(known) = chains.get(&key) {
                break match known {
                    Chain::Depth(d) => Chain::Depth(d + 1),
                    Chain::Cycle(_) | Chain::IntoCycle => Chain::IntoCycle,
                };
            }
            if let Some(&at) = on_path.get(&key) {
                let length = path.len() - at;
                for member in path.drain(at..) {
                    chains.insert(member, Chain::Cycle(length));
                }
                break Chain::IntoCycle;
            }
            on_path.insert(key, path.len());
            path.push(key);
            current = extends_parent(db, scope, key);
        };
        // Each entry's chain is its parent's plus one link.
        let mut chain = tail;
        for key in path.into_iter().rev() {
            chains.insert(key, chain);
            chain = match chain {
                Chain::Depth(d) => Chain::Depth(d + 1),
                _ => Chain::IntoCycle,
            };
        }
    }
    chains
}

/// The chain of one entry: from its file's table, or, for a second definition of a name
/// (which is not in the scope), from its parent's.
pub fn extends_chain<'db>(db: &'db dyn Db, key: DeclKey<'db>) -> Chain {
    let chains = extends_chains(db, key.file(db));
    if let Some(chain) = chains.get(&key) {
        return *chain;
    }
    let scope = scope(db, key.file(db));
    match extends_parent(db, scope, key).and_then(|parent| chains.get(&parent)) {
        None => Chain::Depth(0),
        Some(Chain::Depth(d)) => Chain::Depth(d + 1),
        Some(_) => Chain::IntoCycle,
    }
}

/// Whether an entry's `extends` chain must not be followed: `Some` with the problem to
/// report on the entry (a chain one link over [`MAX_EXTENDS_DEPTH`], a cycle longer than
/// it), or `Some(None)` when an entry nearer the root already reports it.
pub fn extends_stop<'db>(db: &'db dyn Db, key: DeclKey<'db>) -> Option<Option<Diag<'db>>> {
    let chain = extends_chain(db, key);
    let span = || {
        db::decl(db, key)
            .and_then(|decl| parent_ref(db, key, &decl).map(|(_, span)| span))
            .unwrap_or_default()
    };
    match chain {
        Chain::Depth(d) if d <= MAX_EXTENDS_DEPTH => None,
        Chain::Depth(d) if d == MAX_EXTENDS_DEPTH + 1 => Some(Some(
            Diag::error(
                Code::NameExtendsTooDeep,
                format!(
                    "`{}` is {d} `extends` links from the entry its chain starts at; the limit is {MAX_EXTENDS_DEPTH}",
                    key.name(db)
                ),
                Loc::Decl(key, span()),
            )
            .label("one link too many")
            .help(format!(
                "extend an entry nearer the start of the chain, or write the fields here: at most {MAX_EXTENDS_DEPTH} links are followed (entries further down use only their own fields)"
            )),
        )),
        Chain::Depth(_) => Some(None),
        Chain::Cycle(length) if length > MAX_EXTENDS_DEPTH => Some(Some(
            Diag::error(
                Code::NameExtendsCycle,
                format!("`{}` extends itself through a cycle", key.name(db)),
                Loc::Decl(key, span()),
            )
            .label("the chain loops back here")
            .help("break the cycle: one entry of the chain must extend a catalog entry or nothing"),
        )),
        Chain::Cycle(_) | Chain::IntoCycle => None,
    }
}

/// The stdlib's names (the embedded files and the generated models file): built once per
/// revision and copied by every file's [`scope`], so that a command over many files does
/// not rebuild the ~3,000-name catalog map for each.
#[salsa::tracked(returns(ref))]
pub fn stdlib_scope<'db>(db: &'db dyn Db, project: db::Project) -> Scope<'db> {
    let mut scope = Scope {
        entries: BTreeMap::new(),
        conflicts: Vec::new(),
    };
    for source in project.stdlib(db) {
        scope.add(db, *source);
    }
    scope
}

/// The names visible from a file: stdlib, the file, and its imports (transitively).
#[salsa::tracked(returns(ref))]
pub fn scope<'db>(db: &'db dyn Db, file: SourceFile) -> Scope<'db> {
    let mut scope = stdlib_scope(db, db.project()).clone();
    if file.is_stdlib(db) {
        return scope;
    }
    let mut imported = db::reachable(db, file);
    imported.reverse();
    for source in imported {
        if !source.is_stdlib(db) {
            scope.add(db, source);
        }
    }
    scope.add(db, file);
    scope
}

/// Name-level problems of a file: duplicates, stdlib redefinitions, imports.
pub fn scope_diags<'db>(db: &'db dyn Db, file: SourceFile) -> Vec<Diag<'db>> {
    let mut diags = Vec::new();
    for (first, second) in &scope(db, file).conflicts {
        if second.file(db) != file {
            // Two imported files define the same name: the first one wins, so say so at
            // the import that brings in the second.
            if first.file(db) != file && !second.file(db).is_stdlib(db) {
                let via = db::imports(db, file).iter().find(|import| {
                    import.file.is_some_and(|target| {
                        target == second.file(db)
                            || db::reachable(db, target).contains(&second.file(db))
                    })
                });
                if let Some(import) = via {
                    let kind = second.kind(db).keyword();
                    let name = second.name(db);
                    diags.push(
                        Diag::error(
                            Code::NameDuplicate,
                            format!(
                                "`{kind} {name}` is defined both in `{}` and in `{}`",
                                first.file(db).path(db).display(),
                                second.file(db).path(db).display()
                            ),
                            Loc::File(file, import.span),
                        )
                        .label("this import brings in the second definition")
                        .help(format!("rename one of the two `{kind} {name}` entries")),
                    );
                }
            }
            continue;
        }
        let name_loc = |key: DeclKey<'db>| {
            let span = db::decl(db, key)
                .map(|decl| decl.name.span)
                .unwrap_or_default();
            Loc::Decl(key, span)
        };
        let kind = second.kind(db).keyword();
        let name = second.name(db);
        if first.file(db).is_stdlib(db) {
            diags.push(
                Diag::error(
                    Code::NameRedefinesStdlib,
                    format!("`{kind} {name}` is already defined in the stdlib"),
                    name_loc(*second),
                )
                .label("redefined here")
                .with_label(name_loc(*first), "the stdlib entry")
                .help(format!(
                    "to change it, give yours a new name: `{kind} my_{name} extends {name} {{ ... }}`"
                )),
            );
        } else {
            diags.push(
                Diag::error(
                    Code::NameDuplicate,
                    format!("`{kind} {name}` is defined twice"),
                    name_loc(*second),
                )
                .label("defined again here")
                .with_label(name_loc(*first), "first defined here")
                .help(format!(
                    "rename one of them or remove the second `{kind} {name}`"
                )),
            );
        }
    }
    for import in db::imports(db, file) {
        let loc = Loc::File(file, import.span);
        match import.file {
            None if !crate::db::is_deploy_path(&import.path) => diags.push(
                Diag::error(
                    Code::NameImportNotDeploy,
                    format!(
                        "`{}` is not a `.deploy` file; only `.deploy` files are imported",
                        import.path.display()
                    ),
                    loc,
                )
                .label("not a .deploy file")
                .help("import a `.deploy` file: move the declarations into `NAME.deploy` and import that"),
            ),
            None => {
                let reason = db
                    .project()
                    .unreadable(db)
                    .get(&import.path)
                    .map(|reason| format!(": {reason}"))
                    .unwrap_or_default();
                diags.push(
                    Diag::error(
                        Code::NameImportMissing,
                        format!("cannot read `{}`{reason}", import.path.display()),
                        loc,
                    )
                    .label("imported here")
                    .help(
                        "imports are relative to this file's folder and name a regular `.deploy` file; check the path and the file name",
                    ),
                )
            }
            Some(target) => {
                if target == file || db::reachable(db, target).contains(&file) {
                    let message = if target == file {
                        "this file imports itself".to_string()
                    } else {
                        format!(
                            "`{}` imports this file back: imports must not form a cycle",
                            import.path.display()
                        )
                    };
                    diags.push(
                        Diag::new(Code::NameImportCycle, Severity::Error, message, loc)
                            .label("cycle starts here")
                            .help(
                                "move the shared declarations into a third file that both import",
                            ),
                    );
                }
            }
        }
    }
    diags
}
