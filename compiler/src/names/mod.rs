//! Names: one scope per file (stdlib + imports + the file), one namespace per kind.

use std::collections::BTreeMap;

use crate::db::{self, Db, DeclKey, SourceFile};
use crate::diagnostics::{Diag, Loc, Severity};
use crate::syntax::ast::DeclKind;

/// The names a file sees.
#[derive(Clone, Debug, PartialEq, Eq, salsa::SalsaValue)]
pub struct Scope<'db> {
    pub entries: BTreeMap<(DeclKind, String), DeclKey<'db>>,
    /// (the definition that wins, a later one with the same kind and name)
    pub conflicts: Vec<(DeclKey<'db>, DeclKey<'db>)>,
}

impl<'db> Scope<'db> {
    pub fn lookup(&self, kind: DeclKind, name: &str) -> Option<DeclKey<'db>> {
        self.entries.get(&(kind, name.to_string())).copied()
    }

    /// All names of one kind, in order.
    pub fn names(&self, kind: DeclKind) -> impl Iterator<Item = (&str, DeclKey<'db>)> {
        self.entries
            .range((kind, String::new())..)
            .take_while(move |((k, _), _)| *k == kind)
            .map(|((_, name), key)| (name.as_str(), *key))
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

pub fn build_scope<'db>(db: &'db dyn Db, file: SourceFile) -> Scope<'db> {
    let mut scope = Scope {
        entries: BTreeMap::new(),
        conflicts: Vec::new(),
    };
    let mut files: Vec<SourceFile> = db.project().stdlib(db).clone();
    let mut imported = db::reachable(db, file);
    imported.reverse();
    files.extend(imported);
    if !file.is_stdlib(db) {
        files.push(file);
    }
    for source in files {
        for key in db::decl_keys(db, source) {
            let id = (key.kind(db), key.name(db).clone());
            match scope.entries.get(&id) {
                Some(first) => scope.conflicts.push((*first, *key)),
                None => {
                    scope.entries.insert(id, *key);
                }
            }
        }
    }
    scope
}

/// Name-level problems of a file: duplicates, stdlib redefinitions, imports.
pub fn scope_diags<'db>(db: &'db dyn Db, file: SourceFile) -> Vec<Diag<'db>> {
    let mut diags = Vec::new();
    for (first, second) in &db::scope(db, file).conflicts {
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
                            "deploy::name::duplicate",
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
                    "deploy::name::redefines_stdlib",
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
                    "deploy::name::duplicate",
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
            None => diags.push(
                Diag::error(
                    "deploy::name::import_missing",
                    format!("cannot read `{}`", import.path.display()),
                    loc,
                )
                .label("imported here")
                .help(
                    "imports are relative to this file's folder; check the path and the file name",
                ),
            ),
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
                        Diag::new("deploy::name::import_cycle", Severity::Error, message, loc)
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
