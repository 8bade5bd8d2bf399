//! The IDE's way in, in rust-analyzer's shape: an [`AnalysisHost`] owns the workspace
//! and applies changes; an [`Analysis`] is a cheap snapshot of it (a cloned salsa
//! database, `Send`) that answers IDE questions on any thread.
//!
//! Every question returns [`Cancellable`]: when the host is changed while a snapshot is
//! computing, salsa cancels the snapshot at its next query, and the answer is
//! `Err(Cancelled)` instead of stale work finished late. A change waits until every
//! snapshot has been dropped, so a snapshot must never be held while waiting for
//! whoever changes the host.

use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::db::{self, Database, SourceFile};
use crate::diagnostics::Diagnostic;
use crate::ide;
use crate::span::Span;
use crate::workspace::Workspace;

/// Why a question on a snapshot was not answered: the host changed (or a query the
/// snapshot waited on panicked on another thread).
pub use salsa::Cancelled;

/// The answer of a question on a snapshot.
pub type Cancellable<T> = Result<T, Cancelled>;

/// Owns the workspace; every change goes through it.
#[derive(Default)]
pub struct AnalysisHost {
    workspace: Workspace,
}

impl AnalysisHost {
    pub fn new() -> AnalysisHost {
        AnalysisHost::default()
    }

    /// A snapshot of the current state, to be questioned off the lock.
    pub fn analysis(&self) -> Analysis {
        Analysis {
            db: self.workspace.db().clone(),
        }
    }

    /// The workspace, to read (cheap bookkeeping: paths, texts, imports).
    pub fn workspace(&self) -> &Workspace {
        &self.workspace
    }

    /// The workspace, to change. Cancels every outstanding snapshot and waits for them
    /// to be dropped on the first write.
    pub fn workspace_mut(&mut self) -> &mut Workspace {
        &mut self.workspace
    }

    /// Sets a user file's text (see [`Workspace::set_file`]) and reads the files it
    /// imports from disk.
    pub fn set_file(&mut self, path: &Path, text: String) -> SourceFile {
        let file = self.workspace.set_file(path, text);
        self.workspace.load_imports(file);
        file
    }

    /// Forgets a user file (see [`Workspace::remove_file`]).
    pub fn remove_file(&mut self, path: &Path) {
        self.workspace.remove_file(path);
    }

    /// Reads the not yet loaded files `file` imports (see [`Workspace::load_imports`]).
    pub fn load_imports(&mut self, file: SourceFile) {
        self.workspace.load_imports(file);
    }

    /// Reads a file from disk (see [`Workspace::load`]).
    pub fn load(&mut self, path: &Path) -> Result<SourceFile, crate::files::ReadError> {
        self.workspace.load(path)
    }

    /// The path of a file.
    pub fn path(&self, file: SourceFile) -> PathBuf {
        file.path(self.workspace.db()).clone()
    }

    /// The files `file` imports, directly or not (cheap: parse and import queries).
    pub fn reachable(&self, file: SourceFile) -> Vec<SourceFile> {
        db::reachable(self.workspace.db(), file)
    }

    /// The text of a loaded user or stdlib file.
    pub fn source(&self, path: &Path) -> Option<Arc<str>> {
        self.workspace.source(path)
    }

    /// Whether `path` names an embedded stdlib file.
    pub fn is_stdlib(path: &Path) -> bool {
        db::STDLIB.iter().any(|(p, _)| Path::new(p) == path)
    }
}

/// A snapshot of the host: clone it freely, send it to another thread, drop it soon.
#[derive(Clone)]
pub struct Analysis {
    db: Database,
}

impl Analysis {
    /// Runs `f` on the snapshot, turning salsa's cancellation into `Err(Cancelled)`.
    fn with<T>(&self, f: impl FnOnce(&Database) -> T) -> Cancellable<T> {
        Cancelled::catch(AssertUnwindSafe(|| f(&self.db)))
    }

    pub fn diagnostics(&self, file: SourceFile) -> Cancellable<Vec<Diagnostic>> {
        self.with(|db| crate::check::diagnostics(db, file))
    }

    pub fn hover(&self, file: SourceFile, offset: usize) -> Cancellable<Option<ide::Hover>> {
        self.with(|db| ide::hover(db, file, offset))
    }

    pub fn completions(
        &self,
        file: SourceFile,
        offset: usize,
    ) -> Cancellable<Vec<ide::Completion>> {
        self.with(|db| ide::completions(db, file, offset))
    }

    pub fn definition(&self, file: SourceFile, offset: usize) -> Cancellable<Option<ide::Target>> {
        self.with(|db| ide::definition(db, file, offset))
    }

    pub fn references(&self, file: SourceFile, offset: usize) -> Cancellable<Vec<ide::Target>> {
        self.with(|db| ide::references(db, file, offset))
    }

    pub fn rename(
        &self,
        file: SourceFile,
        offset: usize,
        new_name: &str,
    ) -> Cancellable<Result<Vec<ide::Target>, String>> {
        self.with(|db| ide::rename(db, file, offset, new_name))
    }

    pub fn prepare_rename(
        &self,
        file: SourceFile,
        offset: usize,
    ) -> Cancellable<Result<Span, String>> {
        self.with(|db| ide::prepare_rename(db, file, offset))
    }

    pub fn inlay_hints(&self, file: SourceFile) -> Cancellable<Vec<ide::InlayHint>> {
        self.with(|db| ide::inlay_hints(db, file))
    }

    pub fn semantic_tokens(&self, file: SourceFile) -> Cancellable<Vec<ide::Token>> {
        self.with(|db| ide::semantic_tokens(db, file))
    }

    pub fn symbols(&self, file: SourceFile) -> Cancellable<Vec<ide::Symbol>> {
        self.with(|db| ide::symbols(db, file))
    }

    pub fn code_actions(&self, file: SourceFile, span: Span) -> Cancellable<Vec<ide::Fix>> {
        self.with(|db| ide::code_actions(db, file, span))
    }

    /// The deployments of a file (name, name span, whether it has holes): what the
    /// `explain` and `solve` lenses stand on.
    pub fn code_lenses(&self, file: SourceFile) -> Cancellable<Vec<(String, Span, bool)>> {
        self.with(|db| ide::deployments(db, file))
    }

    pub fn explain_markdown(
        &self,
        file: SourceFile,
        deployment: &str,
    ) -> Cancellable<Option<String>> {
        self.with(|db| ide::explain_markdown(db, file, deployment))
    }

    pub fn solve_summary(&self, file: SourceFile, deployment: &str) -> Cancellable<Option<String>> {
        self.with(|db| ide::solve_summary(db, file, deployment))
    }

    /// The formatted text of a file (`None` when it does not parse).
    pub fn format(&self, file: SourceFile) -> Cancellable<Option<String>> {
        self.with(|db| crate::fmt::format(file.text(db)).ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snapshot_is_send_and_answers() {
        fn is_send<T: Send>() {}
        is_send::<Analysis>();
        let mut host = AnalysisHost::new();
        let file = host.set_file(
            Path::new("/a.deploy"),
            "gpu g extends h100_sxm5 {}\n".into(),
        );
        let analysis = host.analysis();
        let symbols = analysis.symbols(file).unwrap();
        assert_eq!(symbols.len(), 1);
        assert_eq!(symbols[0].name, "g");
    }

    #[test]
    fn a_change_cancels_a_snapshot_on_another_thread() {
        let mut host = AnalysisHost::new();
        let file = host.set_file(
            Path::new("/a.deploy"),
            "gpu g extends h100_sxm5 {}\n".into(),
        );
        let analysis = host.analysis();
        let (started_tx, started_rx) = std::sync::mpsc::channel();
        let worker = std::thread::spawn(move || {
            // Keeps querying until the host's change cancels it.
            analysis.with(|db| {
                started_tx.send(()).unwrap();
                loop {
                    let _ = ide::symbols(db, file);
                    salsa::Database::unwind_if_revision_cancelled(db);
                    std::thread::yield_now();
                }
            })
        });
        started_rx.recv().unwrap();
        host.set_file(
            Path::new("/a.deploy"),
            "gpu h extends h100_sxm5 {}\n".into(),
        );
        let outcome: Cancellable<()> = worker.join().unwrap();
        assert!(outcome.is_err(), "the change cancels the snapshot");
        let symbols = host.analysis().symbols(file).unwrap();
        assert_eq!(symbols[0].name, "h");
    }
}
