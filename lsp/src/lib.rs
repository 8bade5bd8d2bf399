//! deployfit-lsp: the language server. It converts between LSP and the compiler's
//! IDE-shaped API ([`deployfit_host::AnalysisHost`] / [`deployfit_host::Analysis`])
//! and owns no analysis of its own.
//!
//! The state lock guards the analysis host and the open documents, and is held only to
//! apply an edit or to take a snapshot. Every request runs on a snapshot, on tokio's
//! blocking pool ([`Backend::on_snapshot`]); a newer edit cancels it, and the request is
//! answered with `ContentModified` (-32801) instead of finishing stale work. Diagnostics
//! are computed the same way and published only for the version they were computed for.
//!
//! One module per request kind: [`hover`], [`completion`], [`navigation`] (definition,
//! references, rename), [`hints`] (inlay hints, semantic tokens, symbols), [`actions`]
//! (code actions, lenses, commands), [`formatting`], [`documents`] (open, change, close,
//! diagnostics). Each is a plain `async fn handle…(backend, params)` that the
//! [`LanguageServer`] impl below dispatches to.
//!
//! Positions go through a `LineIndex` built once per text (UTF-16 columns, clamped),
//! so converting a file's diagnostics, tokens or hints is linear in its size. The stdio
//! transport (`framing`) answers malformed frames with JSON-RPC errors instead of
//! stopping, and stdlib files for go-to-definition live in a private, checked folder
//! (`stdlib_files`).

mod actions;
mod completion;
mod convert;
mod documents;
mod formatting;
mod framing;
mod hints;
mod hover;
mod navigation;
mod stdlib_files;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use convert::LineIndex;
use stdlib_files::StdlibFiles;

use deployfit_host::db::SourceFile;
use deployfit_host::{Analysis, AnalysisHost, Cancellable, Cancelled};
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, LanguageServer, LspService, Server};

/// An open document.
struct Document {
    /// Built once per text: every position conversion is a binary search.
    index: Arc<LineIndex>,
    text: Arc<str>,
    version: i32,
    file: SourceFile,
}

/// What a request knows of its document, taken with the snapshot (so both agree).
pub(crate) struct Snapshot {
    pub(crate) file: SourceFile,
    pub(crate) index: Arc<LineIndex>,
}

struct State {
    host: AnalysisHost,
    documents: HashMap<Uri, Document>,
}

pub struct Backend {
    client: Client,
    state: Arc<Mutex<State>>,
    /// The private folder stdlib files are written to so that a client can open them
    /// (go-to-definition), made on first use; `None` when none can be had.
    stdlib_files: OnceLock<Option<StdlibFiles>>,
}

/// The files one request or publication names, each resolved once: its URI and its
/// text's line index (so that converting many spans stays linear).
struct Files<'a> {
    backend: &'a Backend,
    state: &'a State,
    uris: HashMap<PathBuf, Option<Uri>>,
    indexes: HashMap<PathBuf, Option<Arc<LineIndex>>>,
}

impl<'a> Files<'a> {
    fn new(backend: &'a Backend, state: &'a State) -> Files<'a> {
        Files {
            backend,
            state,
            uris: HashMap::new(),
            indexes: HashMap::new(),
        }
    }

    fn uri(&mut self, path: &Path) -> Option<Uri> {
        if let Some(uri) = self.uris.get(path) {
            return uri.clone();
        }
        let uri = self.backend.uri_of(self.state, path);
        self.uris.insert(path.to_path_buf(), uri.clone());
        uri
    }

    fn range(&mut self, path: &Path, span: deployfit_host::span::Span) -> Option<Range> {
        let index = match self.indexes.get(path) {
            Some(index) => index.clone(),
            None => {
                let index = self
                    .state
                    .documents
                    .values()
                    .find(|d| self.state.host.path(d.file) == path)
                    .map(|d| d.index.clone())
                    .or_else(|| {
                        let text = self.state.host.source(path)?;
                        Some(Arc::new(LineIndex::new(&text)))
                    });
                self.indexes.insert(path.to_path_buf(), index.clone());
                index
            }
        }?;
        Some(index.range(span.start as usize, span.end as usize))
    }

    fn location(&mut self, path: &Path, span: deployfit_host::span::Span) -> Option<Location> {
        Some(Location {
            range: self.range(path, span)?,
            uri: self.uri(path)?,
        })
    }
}

/// The path a document is known by: its file path, or its URI for unsaved buffers.
fn path_of(uri: &Uri) -> PathBuf {
    uri.to_file_path()
        .map(|p| p.into_owned())
        .unwrap_or_else(|| PathBuf::from(uri.as_str()))
}

/// A cancelled computation as the answer LSP expects: the document changed under it.
/// A query the request waited on that another thread's cancellation unwound reads as
/// `PropagatedPanic`; it too means an edit came first. (A real panic is reported by the
/// request that raised it, as an internal error with its message.)
fn cancelled(_: Cancelled) -> Error {
    Error::content_modified()
}

impl Backend {
    pub fn new(client: Client) -> Backend {
        Backend {
            client,
            state: Arc::new(Mutex::new(State {
                host: AnalysisHost::new(),
                documents: HashMap::new(),
            })),
            stdlib_files: OnceLock::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Runs `f` on a snapshot of an open document, off the lock and on the blocking pool.
    /// The snapshot is dropped on that thread, before any caller takes the lock again
    /// (an edit waits for every snapshot to be dropped). `Ok(None)` when the document is
    /// not open; `ContentModified` when an edit cancelled the work.
    async fn on_snapshot<T: Send + 'static>(
        &self,
        uri: &Uri,
        f: impl FnOnce(&Analysis, &Snapshot) -> Cancellable<T> + Send + 'static,
    ) -> Result<Option<(T, Snapshot)>> {
        let taken = {
            let state = self.lock();
            state.documents.get(uri).map(|document| {
                (
                    state.host.analysis(),
                    Snapshot {
                        file: document.file,
                        index: document.index.clone(),
                    },
                )
            })
        };
        let Some((analysis, snapshot)) = taken else {
            return Ok(None);
        };
        let outcome = tokio::task::spawn_blocking(move || {
            let outcome = f(&analysis, &snapshot);
            drop(analysis);
            outcome.map(|value| (value, snapshot))
        })
        .await;
        match outcome {
            Ok(Ok(answer)) => Ok(Some(answer)),
            Ok(Err(c)) => Err(cancelled(c)),
            Err(join) => {
                let mut error = Error::internal_error();
                error.message = match join.try_into_panic() {
                    Ok(payload) => payload
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_else(|| "the request panicked".into())
                        .into(),
                    Err(_) => "the request was aborted".into(),
                };
                Err(error)
            }
        }
    }

    /// The URI of a path the compiler names: an open document, a file on disk, or a stdlib
    /// file written out for the client to open read-only.
    fn uri_of(&self, state: &State, path: &Path) -> Option<Uri> {
        if let Some((uri, _)) = state.documents.iter().find(|(uri, _)| path_of(uri) == path) {
            return Some(uri.clone());
        }
        if AnalysisHost::is_stdlib(path) {
            let name = path.file_name()?.to_str()?;
            let text = state.host.source(path)?;
            let files = self.stdlib_files.get_or_init(StdlibFiles::new).as_ref()?;
            return Uri::from_file_path(files.file(name, &text)?);
        }
        let absolute = if path.is_absolute() {
            path.to_path_buf()
        } else {
            std::env::current_dir().ok()?.join(path)
        };
        Uri::from_file_path(absolute)
    }
}

impl LanguageServer for Backend {
    async fn initialize(&self, _: InitializeParams) -> Result<InitializeResult> {
        Ok(InitializeResult {
            server_info: Some(ServerInfo {
                name: "deployfit".into(),
                version: Some(env!("CARGO_PKG_VERSION").into()),
            }),
            capabilities: ServerCapabilities {
                text_document_sync: Some(TextDocumentSyncCapability::Kind(
                    TextDocumentSyncKind::INCREMENTAL,
                )),
                hover_provider: Some(HoverProviderCapability::Simple(true)),
                completion_provider: Some(CompletionOptions {
                    trigger_characters: Some(vec!["=".into(), " ".into()]),
                    ..CompletionOptions::default()
                }),
                definition_provider: Some(OneOf::Left(true)),
                inlay_hint_provider: Some(OneOf::Left(true)),
                document_symbol_provider: Some(OneOf::Left(true)),
                document_formatting_provider: Some(OneOf::Left(true)),
                references_provider: Some(OneOf::Left(true)),
                rename_provider: Some(OneOf::Right(RenameOptions {
                    prepare_provider: Some(true),
                    work_done_progress_options: WorkDoneProgressOptions::default(),
                })),
                code_action_provider: Some(CodeActionProviderCapability::Simple(true)),
                code_lens_provider: Some(CodeLensOptions {
                    resolve_provider: Some(false),
                }),
                execute_command_provider: Some(ExecuteCommandOptions {
                    commands: vec![actions::EXPLAIN.into(), actions::SOLVE.into()],
                    ..ExecuteCommandOptions::default()
                }),
                semantic_tokens_provider: Some(
                    SemanticTokensServerCapabilities::SemanticTokensOptions(
                        SemanticTokensOptions {
                            legend: SemanticTokensLegend {
                                token_types: hints::TOKEN_TYPES.to_vec(),
                                token_modifiers: Vec::new(),
                            },
                            full: Some(SemanticTokensFullOptions::Bool(true)),
                            ..SemanticTokensOptions::default()
                        },
                    ),
                ),
                ..ServerCapabilities::default()
            },
            ..InitializeResult::default()
        })
    }

    async fn shutdown(&self) -> Result<()> {
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        documents::did_open(self, params).await
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        documents::did_change(self, params).await
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        documents::did_close(self, params).await
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        hover::hover(self, params).await
    }

    async fn completion(&self, params: CompletionParams) -> Result<Option<CompletionResponse>> {
        completion::completion(self, params).await
    }

    async fn goto_definition(
        &self,
        params: GotoDefinitionParams,
    ) -> Result<Option<GotoDefinitionResponse>> {
        navigation::definition(self, params).await
    }

    async fn references(&self, params: ReferenceParams) -> Result<Option<Vec<Location>>> {
        navigation::references(self, params).await
    }

    async fn rename(&self, params: RenameParams) -> Result<Option<WorkspaceEdit>> {
        navigation::rename(self, params).await
    }

    async fn prepare_rename(
        &self,
        params: TextDocumentPositionParams,
    ) -> Result<Option<PrepareRenameResponse>> {
        navigation::prepare_rename(self, params).await
    }

    async fn inlay_hint(&self, params: InlayHintParams) -> Result<Option<Vec<InlayHint>>> {
        hints::inlay_hints(self, params).await
    }

    async fn document_symbol(
        &self,
        params: DocumentSymbolParams,
    ) -> Result<Option<DocumentSymbolResponse>> {
        hints::symbols(self, params).await
    }

    async fn semantic_tokens_full(
        &self,
        params: SemanticTokensParams,
    ) -> Result<Option<SemanticTokensResult>> {
        hints::semantic_tokens(self, params).await
    }

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        actions::code_actions(self, params).await
    }

    async fn code_lens(&self, params: CodeLensParams) -> Result<Option<Vec<CodeLens>>> {
        actions::code_lenses(self, params).await
    }

    async fn execute_command(&self, params: ExecuteCommandParams) -> Result<Option<LSPAny>> {
        actions::execute_command(self, params).await
    }

    async fn formatting(&self, params: DocumentFormattingParams) -> Result<Option<Vec<TextEdit>>> {
        formatting::format(self, params).await
    }
}

/// Serves the language server over standard input and output until the client exits.
pub fn run_stdio() -> std::io::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let (service, socket) = LspService::new(Backend::new);
        framing::serve_stdio(|input, output| Server::new(input, output, socket).serve(service))
            .await;
    });
    // The filter thread may still be blocked on stdin: do not wait for it.
    runtime.shutdown_background();
    Ok(())
}
