//! deployfit-lsp: the language server. It converts between LSP and the compiler's
//! IDE-shaped API ([`deployfit_compiler::ide`]) and owns no analysis of its own.
//!
//! Edits update the salsa database under a lock; diagnostics are computed on a blocking
//! thread over a snapshot of the database, and a newer edit cancels them (salsa raises
//! `Cancelled`, which is caught). Diagnostics are published only for the version they
//! were computed for.
//!
//! Positions go through a `LineIndex` built once per text (UTF-16 columns, clamped),
//! so converting a file's diagnostics, tokens or hints is linear in its size. The stdio
//! transport (`framing`) answers malformed frames with JSON-RPC errors instead of
//! stopping, and stdlib files for go-to-definition live in a private, checked folder
//! (`stdlib_files`).

mod convert;
mod framing;
mod stdlib_files;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use convert::LineIndex;
use stdlib_files::StdlibFiles;

use deployfit_compiler::db::{self, SourceFile};
use deployfit_compiler::{Severity, Workspace, ide};
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, LanguageServer, LspService, Server};

/// An open document.
struct Document {
    text: String,
    /// Built once per text: every position conversion is a binary search.
    index: Arc<LineIndex>,
    version: i32,
    file: SourceFile,
}

/// The commands the code lenses run.
const EXPLAIN: &str = "deployfit.explain";
const SOLVE: &str = "deployfit.solve";

/// The semantic token types, in the order of [`token_index`].
const TOKEN_TYPES: [SemanticTokenType; 9] = [
    SemanticTokenType::KEYWORD,
    SemanticTokenType::TYPE,
    SemanticTokenType::PROPERTY,
    SemanticTokenType::VARIABLE,
    SemanticTokenType::NUMBER,
    SemanticTokenType::MACRO,
    SemanticTokenType::STRING,
    SemanticTokenType::COMMENT,
    SemanticTokenType::OPERATOR,
];

fn token_index(kind: ide::TokenKind) -> u32 {
    match kind {
        ide::TokenKind::Keyword => 0,
        ide::TokenKind::Kind => 1,
        ide::TokenKind::Field => 2,
        ide::TokenKind::Name => 3,
        ide::TokenKind::Number => 4,
        ide::TokenKind::Unit => 5,
        ide::TokenKind::String => 6,
        ide::TokenKind::Comment => 7,
        ide::TokenKind::Operator => 8,
    }
}

struct State {
    workspace: Workspace,
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

    fn range(&mut self, path: &Path, span: deployfit_compiler::span::Span) -> Option<Range> {
        let index = match self.indexes.get(path) {
            Some(index) => index.clone(),
            None => {
                let index = self
                    .state
                    .documents
                    .values()
                    .find(|d| d.file.path(self.state.workspace.db()) == path)
                    .map(|d| d.index.clone())
                    .or_else(|| {
                        let text = self.state.workspace.source(path)?;
                        Some(Arc::new(LineIndex::new(&text)))
                    });
                self.indexes.insert(path.to_path_buf(), index.clone());
                index
            }
        }?;
        Some(index.range(span.start as usize, span.end as usize))
    }

    fn location(&mut self, path: &Path, span: deployfit_compiler::span::Span) -> Option<Location> {
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

impl Backend {
    pub fn new(client: Client) -> Backend {
        Backend {
            client,
            state: Arc::new(Mutex::new(State {
                workspace: Workspace::new(),
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

    /// Sets a document's text (under the lock, so edits apply in order) and returns a
    /// snapshot of the database to compute diagnostics on.
    fn set_text(
        state: &mut State,
        uri: &Uri,
        text: String,
        version: i32,
    ) -> (db::Database, SourceFile) {
        let path = path_of(uri);
        let file = state.workspace.set_file(&path, text.clone());
        state.workspace.load_imports(file);
        state.documents.insert(
            uri.clone(),
            Document {
                index: Arc::new(LineIndex::new(&text)),
                text,
                version,
                file,
            },
        );
        (state.workspace.db().clone(), file)
    }

    /// Publishes a document's diagnostics, computed off the I/O thread; a newer edit
    /// cancels the computation, and stale results are dropped.
    async fn publish(&self, uri: Uri, version: i32, snapshot: db::Database, file: SourceFile) {
        let computed = tokio::task::spawn_blocking(move || {
            salsa::Cancelled::catch(|| db::diagnostics(&snapshot, file)).ok()
        })
        .await
        .ok()
        .flatten();
        let Some(diagnostics) = computed else {
            return;
        };
        let converted = {
            let state = self.lock();
            let Some(document) = state.documents.get(&uri) else {
                return;
            };
            if document.version != version {
                return;
            }
            let path = path_of(&uri);
            let index = document.index.clone();
            let mut files = Files::new(self, &state);
            diagnostics
                .into_iter()
                .filter(|d| d.location.file == path)
                .map(|d| to_lsp(&mut files, &index, d))
                .collect::<Vec<_>>()
        };
        self.client
            .publish_diagnostics(uri, converted, Some(version))
            .await;
    }

    /// The URI of a path the compiler names: an open document, a file on disk, or a stdlib
    /// file written out for the client to open read-only.
    fn uri_of(&self, state: &State, path: &Path) -> Option<Uri> {
        if let Some((uri, _)) = state.documents.iter().find(|(uri, _)| path_of(uri) == path) {
            return Some(uri.clone());
        }
        let is_stdlib = db::STDLIB.iter().any(|(p, _)| Path::new(p) == path);
        if is_stdlib {
            let name = path.file_name()?.to_str()?;
            let text = state.workspace.source(path)?;
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

    /// Runs `f` with the state and an open document's file and text.
    fn with_document<T>(
        &self,
        uri: &Uri,
        f: impl FnOnce(&State, SourceFile, &str, &LineIndex) -> Option<T>,
    ) -> Option<T> {
        let state = self.lock();
        let document = state.documents.get(uri)?;
        f(&state, document.file, &document.text, &document.index)
    }
    /// Applies incremental changes in order and publishes the document's diagnostics.
    async fn change(&self, params: DidChangeTextDocumentParams) {
        let uri = params.text_document.uri;
        let version = params.text_document.version;
        let (snapshot, file) = {
            let mut state = self.lock();
            let Some(document) = state.documents.get(&uri) else {
                return;
            };
            if document.version >= version {
                return;
            }
            let mut text = document.text.clone();
            for change in params.content_changes {
                apply_change(&mut text, change);
            }
            Self::set_text(&mut state, &uri, text, version)
        };
        self.publish(uri, version, snapshot, file).await;
    }

    /// Re-publishes the diagnostics of the other open documents that import `uri`.
    async fn republish_importers(&self, uri: &Uri) {
        let importers = {
            let state = self.lock();
            let Some(changed) = state.documents.get(uri).map(|d| d.file) else {
                return;
            };
            importers(&state, changed, uri)
        };
        self.republish(importers).await;
    }

    /// Re-publishes the diagnostics of open documents, at their current versions.
    async fn republish(&self, uris: Vec<Uri>) {
        let work: Vec<(Uri, i32, db::Database, SourceFile)> = {
            let state = self.lock();
            let snapshot = state.workspace.db();
            uris.into_iter()
                .filter_map(|uri| {
                    let document = state.documents.get(&uri)?;
                    Some((uri, document.version, snapshot.clone(), document.file))
                })
                .collect()
        };
        for (uri, version, snapshot, file) in work {
            self.publish(uri, version, snapshot, file).await;
        }
    }
}

/// The open documents other than `except` that import `changed`, directly or not.
fn importers(state: &State, changed: SourceFile, except: &Uri) -> Vec<Uri> {
    let snapshot = state.workspace.db();
    state
        .documents
        .iter()
        .filter(|(other, document)| {
            *other != except && db::reachable(snapshot, document.file).contains(&changed)
        })
        .map(|(other, _)| other.clone())
        .collect()
}

/// After a buffer is closed, its file is what is on disk again (read through the
/// workspace, with its checks), or is forgotten when there is none: an unsaved edit
/// must not outlive its buffer in the files that import it.
fn revert_to_disk(workspace: &mut Workspace, file: SourceFile, uri: &Uri) {
    if let Some(path) = uri.to_file_path()
        && workspace.load(&path).is_ok_and(|loaded| loaded == file)
    {
        return;
    }
    let path = file.path(workspace.db()).clone();
    workspace.remove_file(&path);
}

/// A compiler diagnostic as LSP's: ranges through line indexes built once per file.
fn to_lsp(
    files: &mut Files<'_>,
    index: &LineIndex,
    d: deployfit_compiler::Diagnostic,
) -> Diagnostic {
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
                    commands: vec![EXPLAIN.into(), SOLVE.into()],
                    ..ExecuteCommandOptions::default()
                }),
                semantic_tokens_provider: Some(
                    SemanticTokensServerCapabilities::SemanticTokensOptions(
                        SemanticTokensOptions {
                            legend: SemanticTokensLegend {
                                token_types: TOKEN_TYPES.to_vec(),
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
        let doc = params.text_document;
        let (snapshot, file) = Self::set_text(&mut self.lock(), &doc.uri, doc.text, doc.version);
        self.publish(doc.uri.clone(), doc.version, snapshot, file)
            .await;
        self.republish_importers(&doc.uri).await;
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        let uri = params.text_document.uri.clone();
        self.change(params).await;
        self.republish_importers(&uri).await;
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        let uri = params.text_document.uri;
        let importers = {
            let mut state = self.lock();
            match state.documents.remove(&uri) {
                Some(document) => {
                    let importers = importers(&state, document.file, &uri);
                    revert_to_disk(&mut state.workspace, document.file, &uri);
                    importers
                }
                None => Vec::new(),
            }
        };
        self.client.publish_diagnostics(uri, Vec::new(), None).await;
        self.republish(importers).await;
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        let position = params.text_document_position_params;
        Ok(
            self.with_document(&position.text_document.uri, |state, file, _, index| {
                let offset = index.offset(position.position);
                let hover = ide::hover(state.workspace.db(), file, offset)?;
                Some(Hover {
                    contents: HoverContents::Markup(MarkupContent {
                        kind: MarkupKind::Markdown,
                        value: hover.markdown,
                    }),
                    range: Some(index.range(hover.span.start as usize, hover.span.end as usize)),
                })
            }),
        )
    }

    async fn completion(&self, params: CompletionParams) -> Result<Option<CompletionResponse>> {
        let position = params.text_document_position;
        Ok(
            self.with_document(&position.text_document.uri, |state, file, _, index| {
                let offset = index.offset(position.position);
                let items = ide::completions(state.workspace.db(), file, offset)
                    .into_iter()
                    .map(|c| CompletionItem {
                        label: c.label,
                        kind: Some(match c.kind {
                            ide::CompletionKind::Keyword => CompletionItemKind::KEYWORD,
                            ide::CompletionKind::Field => CompletionItemKind::FIELD,
                            ide::CompletionKind::Entry => CompletionItemKind::VALUE,
                            ide::CompletionKind::Word => CompletionItemKind::ENUM_MEMBER,
                            ide::CompletionKind::Unit => CompletionItemKind::UNIT,
                            ide::CompletionKind::Property => CompletionItemKind::PROPERTY,
                        }),
                        detail: (!c.detail.is_empty()).then_some(c.detail),
                        ..CompletionItem::default()
                    })
                    .collect();
                Some(CompletionResponse::Array(items))
            }),
        )
    }

    async fn goto_definition(
        &self,
        params: GotoDefinitionParams,
    ) -> Result<Option<GotoDefinitionResponse>> {
        let position = params.text_document_position_params;
        Ok(
            self.with_document(&position.text_document.uri, |state, file, _, index| {
                let offset = index.offset(position.position);
                let target = ide::definition(state.workspace.db(), file, offset)?;
                let location = Files::new(self, state).location(&target.path, target.span)?;
                Some(GotoDefinitionResponse::Scalar(location))
            }),
        )
    }

    async fn inlay_hint(&self, params: InlayHintParams) -> Result<Option<Vec<InlayHint>>> {
        Ok(
            self.with_document(&params.text_document.uri, |state, file, _, index| {
                Some(
                    ide::inlay_hints(state.workspace.db(), file)
                        .into_iter()
                        .map(|hint| InlayHint {
                            position: index.position(hint.offset as usize),
                            label: InlayHintLabel::String(format!(" {}", hint.label)),
                            kind: None,
                            text_edits: None,
                            tooltip: None,
                            padding_left: Some(true),
                            padding_right: None,
                            data: None,
                        })
                        .collect(),
                )
            }),
        )
    }

    async fn document_symbol(
        &self,
        params: DocumentSymbolParams,
    ) -> Result<Option<DocumentSymbolResponse>> {
        Ok(
            self.with_document(&params.text_document.uri, |state, file, _, index| {
                #[allow(deprecated)]
                let symbols = ide::symbols(state.workspace.db(), file)
                    .into_iter()
                    .map(|s| DocumentSymbol {
                        name: s.name,
                        detail: Some(s.kind.keyword().to_string()),
                        kind: match s.kind {
                            deployfit_compiler::syntax::ast::DeclKind::Deployment => {
                                SymbolKind::OBJECT
                            }
                            deployfit_compiler::syntax::ast::DeclKind::Rule => SymbolKind::FUNCTION,
                            _ => SymbolKind::STRUCT,
                        },
                        tags: None,
                        deprecated: None,
                        range: index.range(s.span.start as usize, s.span.end as usize),
                        selection_range: index
                            .range(s.name_span.start as usize, s.name_span.end as usize),
                        children: None,
                    })
                    .collect();
                Some(DocumentSymbolResponse::Nested(symbols))
            }),
        )
    }

    async fn references(&self, params: ReferenceParams) -> Result<Option<Vec<Location>>> {
        let position = params.text_document_position;
        Ok(
            self.with_document(&position.text_document.uri, |state, file, _, index| {
                let offset = index.offset(position.position);
                let targets = ide::references(state.workspace.db(), file, offset);
                let mut files = Files::new(self, state);
                Some(
                    targets
                        .into_iter()
                        .filter_map(|t| files.location(&t.path, t.span))
                        .collect(),
                )
            }),
        )
    }

    async fn rename(&self, params: RenameParams) -> Result<Option<WorkspaceEdit>> {
        let position = params.text_document_position;
        let outcome = self.with_document(&position.text_document.uri, |state, file, _, index| {
            let offset = index.offset(position.position);
            Some(
                ide::rename(state.workspace.db(), file, offset, &params.new_name).map(|targets| {
                    let mut changes: HashMap<Uri, Vec<TextEdit>> = HashMap::new();
                    let mut files = Files::new(self, state);
                    for t in targets {
                        let Some(Location { uri, range }) = files.location(&t.path, t.span) else {
                            continue;
                        };
                        changes.entry(uri).or_default().push(TextEdit {
                            range,
                            new_text: params.new_name.clone(),
                        });
                    }
                    WorkspaceEdit {
                        changes: Some(changes),
                        ..WorkspaceEdit::default()
                    }
                }),
            )
        });
        match outcome {
            Some(Ok(edit)) => Ok(Some(edit)),
            Some(Err(message)) => Err(tower_lsp_server::jsonrpc::Error::invalid_params(message)),
            None => Ok(None),
        }
    }

    async fn prepare_rename(
        &self,
        params: TextDocumentPositionParams,
    ) -> Result<Option<PrepareRenameResponse>> {
        let outcome = self.with_document(&params.text_document.uri, |state, file, _, index| {
            let offset = index.offset(params.position);
            Some(
                ide::prepare_rename(state.workspace.db(), file, offset).map(|span| {
                    PrepareRenameResponse::Range(
                        index.range(span.start as usize, span.end as usize),
                    )
                }),
            )
        });
        match outcome {
            Some(Ok(range)) => Ok(Some(range)),
            Some(Err(message)) => Err(tower_lsp_server::jsonrpc::Error::invalid_params(message)),
            None => Ok(None),
        }
    }

    async fn semantic_tokens_full(
        &self,
        params: SemanticTokensParams,
    ) -> Result<Option<SemanticTokensResult>> {
        Ok(
            self.with_document(&params.text_document.uri, |state, file, _, index| {
                let mut data = Vec::new();
                let (mut line, mut character) = (0u32, 0u32);
                // Tokens come in source order; each conversion is a binary search.
                for token in ide::semantic_tokens(state.workspace.db(), file) {
                    let start = index.position(token.start as usize);
                    let end = index.position(token.start as usize + token.len as usize);
                    if end.line != start.line {
                        continue;
                    }
                    let Some(delta_line) = start.line.checked_sub(line) else {
                        continue;
                    };
                    let delta_start = if delta_line == 0 {
                        match start.character.checked_sub(character) {
                            Some(delta) => delta,
                            None => continue,
                        }
                    } else {
                        start.character
                    };
                    data.push(SemanticToken {
                        delta_line,
                        delta_start,
                        length: end.character - start.character,
                        token_type: token_index(token.kind),
                        token_modifiers_bitset: 0,
                    });
                    (line, character) = (start.line, start.character);
                }
                Some(SemanticTokensResult::Tokens(SemanticTokens {
                    result_id: None,
                    data,
                }))
            }),
        )
    }

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        let uri = params.text_document.uri;
        Ok(self.with_document(&uri, |state, file, _, index| {
            let start = index.offset(params.range.start);
            let end = index.offset(params.range.end);
            let span = deployfit_compiler::span::Span::new(start, end);
            let actions = ide::code_actions(state.workspace.db(), file, span)
                .into_iter()
                .map(|fix| {
                    let edits = fix
                        .edits
                        .into_iter()
                        .map(|(span, new_text)| TextEdit {
                            range: index.range(span.start as usize, span.end as usize),
                            new_text,
                        })
                        .collect();
                    CodeActionOrCommand::CodeAction(CodeAction {
                        title: fix.title,
                        kind: Some(CodeActionKind::QUICKFIX),
                        edit: Some(WorkspaceEdit {
                            changes: Some(HashMap::from([(uri.clone(), edits)])),
                            ..WorkspaceEdit::default()
                        }),
                        ..CodeAction::default()
                    })
                })
                .collect();
            Some(actions)
        }))
    }

    async fn code_lens(&self, params: CodeLensParams) -> Result<Option<Vec<CodeLens>>> {
        let uri = params.text_document.uri;
        Ok(self.with_document(&uri, |state, file, _, index| {
            let mut lenses = Vec::new();
            for (name, span, holes) in ide::deployments(state.workspace.db(), file) {
                let range = index.range(span.start as usize, span.end as usize);
                let arguments = Some(vec![
                    LSPAny::String(uri.as_str().to_string()),
                    LSPAny::String(name.clone()),
                ]);
                lenses.push(CodeLens {
                    range,
                    command: Some(Command {
                        title: "explain".into(),
                        command: EXPLAIN.into(),
                        arguments: arguments.clone(),
                    }),
                    data: None,
                });
                if holes {
                    lenses.push(CodeLens {
                        range,
                        command: Some(Command {
                            title: "solve".into(),
                            command: SOLVE.into(),
                            arguments,
                        }),
                        data: None,
                    });
                }
            }
            Some(lenses)
        }))
    }

    async fn execute_command(&self, params: ExecuteCommandParams) -> Result<Option<LSPAny>> {
        let text_argument = |i: usize| {
            params
                .arguments
                .get(i)
                .and_then(|a| a.as_str())
                .map(str::to_string)
        };
        let (Some(uri), Some(name)) = (text_argument(0), text_argument(1)) else {
            return Err(tower_lsp_server::jsonrpc::Error::invalid_params(
                "expected [uri, deployment]",
            ));
        };
        let Ok(uri) = uri.parse::<Uri>() else {
            return Err(tower_lsp_server::jsonrpc::Error::invalid_params(
                "not a URI",
            ));
        };
        let output = self.with_document(&uri, |state, file, _, _| match params.command.as_str() {
            EXPLAIN => ide::explain_markdown(state.workspace.db(), file, &name),
            SOLVE => ide::solve_summary(state.workspace.db(), file, &name),
            _ => None,
        });
        let Some(output) = output else {
            return Err(tower_lsp_server::jsonrpc::Error::invalid_params(format!(
                "`{}` cannot run for `{name}`",
                params.command
            )));
        };
        self.client
            .show_message(MessageType::INFO, output.clone())
            .await;
        Ok(Some(LSPAny::String(output)))
    }

    async fn formatting(&self, params: DocumentFormattingParams) -> Result<Option<Vec<TextEdit>>> {
        Ok(
            self.with_document(&params.text_document.uri, |_, _, text, index| {
                let formatted = deployfit_compiler::fmt::format(text).ok()?;
                Some(vec![TextEdit {
                    range: index.range(0, text.len()),
                    new_text: formatted,
                }])
            }),
        )
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
