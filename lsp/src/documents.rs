//! Open, change and close; diagnostics, computed on a snapshot and published only for the
//! version they were computed for.

use std::sync::Arc;

use deployfit_host::Severity;
use deployfit_host::db::SourceFile;
use tower_lsp_server::ls_types::*;

use crate::convert::LineIndex;
use crate::{Backend, Document, Files, State, path_of};

/// Sets a document's text (under the lock, so edits apply in order; this cancels every
/// outstanding snapshot).
fn set_text(state: &mut State, uri: &Uri, text: String, version: i32) {
    let path = path_of(uri);
    let file = state.host.set_file(&path, text.clone());
    state.documents.insert(
        uri.clone(),
        Document {
            index: Arc::new(LineIndex::new(&text)),
            text: Arc::from(text),
            version,
            file,
        },
    );
}

pub(crate) async fn did_open(backend: &Backend, params: DidOpenTextDocumentParams) {
    let doc = params.text_document;
    set_text(&mut backend.lock(), &doc.uri, doc.text, doc.version);
    publish(backend, doc.uri.clone()).await;
    republish_importers(backend, &doc.uri).await;
}

pub(crate) async fn did_change(backend: &Backend, params: DidChangeTextDocumentParams) {
    let uri = params.text_document.uri;
    let version = params.text_document.version;
    {
        let mut state = backend.lock();
        let Some(document) = state.documents.get(&uri) else {
            return;
        };
        if document.version >= version {
            return;
        }
        let mut text = document.text.to_string();
        for change in params.content_changes {
            apply_change(&mut text, change);
        }
        set_text(&mut state, &uri, text, version);
    }
    publish(backend, uri.clone()).await;
    republish_importers(backend, &uri).await;
}

pub(crate) async fn did_close(backend: &Backend, params: DidCloseTextDocumentParams) {
    let uri = params.text_document.uri;
    let importers = {
        let mut state = backend.lock();
        match state.documents.remove(&uri) {
            Some(document) => {
                let importers = importers(&state, document.file, &uri);
                revert_to_disk(&mut state, document.file, &uri);
                importers
            }
            None => Vec::new(),
        }
    };
    backend
        .client
        .publish_diagnostics(uri, Vec::new(), None)
        .await;
    for uri in importers {
        publish(backend, uri).await;
    }
}

/// Publishes a document's diagnostics at its current version, computed on a snapshot off
/// the lock; a newer edit cancels the computation, and stale results are dropped.
async fn publish(backend: &Backend, uri: Uri) {
    let version = {
        let state = backend.lock();
        let Some(document) = state.documents.get(&uri) else {
            return;
        };
        document.version
    };
    let Ok(Some((diagnostics, snapshot))) = backend
        .on_snapshot(&uri, |analysis, snapshot| {
            analysis.diagnostics(snapshot.file)
        })
        .await
    else {
        return;
    };
    let converted = {
        let state = backend.lock();
        let Some(document) = state.documents.get(&uri) else {
            return;
        };
        if document.version != version || document.file != snapshot.file {
            return;
        }
        let path = path_of(&uri);
        let mut files = Files::new(backend, &state);
        diagnostics
            .into_iter()
            .filter(|d| d.location.file == path)
            .map(|d| to_lsp(&mut files, &snapshot.index, d))
            .collect::<Vec<_>>()
    };
    backend
        .client
        .publish_diagnostics(uri, converted, Some(version))
        .await;
}

/// Re-publishes the diagnostics of the other open documents that import `uri`.
async fn republish_importers(backend: &Backend, uri: &Uri) {
    let importers = {
        let state = backend.lock();
        let Some(changed) = state.documents.get(uri).map(|d| d.file) else {
            return;
        };
        importers(&state, changed, uri)
    };
    for uri in importers {
        publish(backend, uri).await;
    }
}

/// The open documents other than `except` that import `changed`, directly or not.
fn importers(state: &State, changed: SourceFile, except: &Uri) -> Vec<Uri> {
    state
        .documents
        .iter()
        .filter(|(other, document)| {
            *other != except && state.host.reachable(document.file).contains(&changed)
        })
        .map(|(other, _)| other.clone())
        .collect()
}

/// After a buffer is closed, its file is what is on disk again (read through the
/// workspace, with its checks), or is forgotten when there is none: an unsaved edit
/// must not outlive its buffer in the files that import it.
fn revert_to_disk(state: &mut State, file: SourceFile, uri: &Uri) {
    if let Some(path) = uri.to_file_path()
        && state.host.load(&path).is_ok_and(|loaded| loaded == file)
    {
        return;
    }
    let path = state.host.path(file);
    state.host.remove_file(&path);
}

/// A compiler diagnostic as LSP's: ranges through line indexes built once per file.
fn to_lsp(files: &mut Files<'_>, index: &LineIndex, d: deployfit_host::Diagnostic) -> Diagnostic {
    let range = index.range(d.location.span.start as usize, d.location.span.end as usize);
    let related = d
        .labels
        .iter()
        .filter_map(|label| {
            Some(DiagnosticRelatedInformation {
                location: files.location(&label.location.file, label.location.span)?,
                message: label.message.clone(),
            })
        })
        .collect::<Vec<_>>();
    let mut message = d.message.clone();
    if let Some(help) = &d.help {
        message.push_str("\nhelp: ");
        message.push_str(help);
    }
    Diagnostic {
        range,
        severity: Some(match d.severity {
            Severity::Error => DiagnosticSeverity::ERROR,
            Severity::Warning => DiagnosticSeverity::WARNING,
            Severity::Info => DiagnosticSeverity::INFORMATION,
        }),
        code: Some(NumberOrString::String(d.code.clone())),
        source: Some("deployfit".into()),
        message,
        related_information: (!related.is_empty()).then_some(related),
        ..Diagnostic::default()
    }
}

/// Applies one change; a range from the client is clamped into the text (never a panic,
/// whatever the positions).
fn apply_change(text: &mut String, change: TextDocumentContentChangeEvent) {
    match change.range {
        Some(range) => {
            let index = LineIndex::new(text);
            let start = index.offset(range.start);
            let end = index.offset(range.end).max(start);
            text.replace_range(start..end, &change.text);
        }
        None => *text = change.text,
    }
}
