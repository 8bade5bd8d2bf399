//! deployfit-lsp: the language server. It converts between LSP and the compiler's
//! IDE-shaped API ([`deployfit_compiler::ide`]) and owns no analysis of its own.
//!
//! Edits update the salsa database under a lock; diagnostics are computed on a blocking
//! thread over a snapshot of the database, and a newer edit cancels them (salsa raises
//! `Cancelled`, which is caught). Diagnostics are published only for the version they
//! were computed for.

mod convert;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use deployfit_compiler::db::{self, SourceFile};
use deployfit_compiler::{Severity, Workspace, ide};
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, LanguageServer, LspService, Server};

/// An open document.
struct Document {
    text: String,
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
    /// Where stdlib files are written so that a client can open them (go-to-definition).
    stdlib_dir: PathBuf,
}

/// The path a document is known by: its file path, or its URI for unsaved buffers.
fn path_of(uri: &Uri) -> PathBuf {
    uri.to_file_path()
        .map(|p| p.into_owned())
        .unwrap_or_else(|| PathBuf::from(uri.as_str()))
}

impl Backend {
    pub fn new(client: Client) -> Backend {
        let stdlib_dir =
            std::env::temp_dir().join(format!("deployfit-stdlib-{}", env!("CARGO_PKG_VERSION")));
        Backend {
            client,
            state: Arc::new(Mutex::new(State {
                workspace: Workspace::new(),
                documents: HashMap::new(),
            })),
            stdlib_dir,
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
            diagnostics
                .into_iter()
                .filter(|d| d.location.file == path)
                .map(|d| self.to_lsp(&state, &document.text, d))
                .collect::<Vec<_>>()
        };
        self.client
            .publish_diagnostics(uri, converted, Some(version))
            .await;
    }

    fn to_lsp(&self, state: &State, text: &str, d: deployfit_compiler::Diagnostic) -> Diagnostic {
        let range = convert::range(
            text,
            d.location.span.start as usize,
            d.location.span.end as usize,
        );
        let related = d
            .labels
            .iter()
            .filter_map(|label| {
                let uri = self.uri_of(state, &label.location.file)?;
                let source = state.workspace.source(&label.location.file)?;
                Some(DiagnosticRelatedInformation {
                    location: Location {
                        uri,
                        range: convert::range(
                            &source,
                            label.location.span.start as usize,
                            label.location.span.end as usize,
                        ),
                    },
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

    /// The URI of a path the compiler names: an open document, a file on disk, or a stdlib
    /// file written out for the client to open read-only.
    fn uri_of(&self, state: &State, path: &Path) -> Option<Uri> {
        if let Some((uri, _)) = state.documents.iter().find(|(uri, _)| path_of(uri) == path) {
            return Some(uri.clone());
        }
        let is_stdlib = db::STDLIB.iter().any(|(p, _)| Path::new(p) == path);
        if is_stdlib {
            let name = path.file_name()?;
            let target = self.stdlib_dir.join(name);
            if !target.exists() {
                let text = state.workspace.source(path)?;
                std::fs::create_dir_all(&self.stdlib_dir).ok()?;
                std::fs::write(&target, text.as_bytes()).ok()?;
            }
            return Uri::from_file_path(target);
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
        f: impl FnOnce(&State, SourceFile, &str) -> Option<T>,
    ) -> Option<T> {
        let state = self.lock();
        let document = state.documents.get(uri)?;
        let (file, text) = (document.file, document.text.clone());
        f(&state, file, &text)
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
        let work: Vec<(Uri, i32, db::Database, SourceFile)> = {
            let state = self.lock();
            let Some(changed) = state.documents.get(uri).map(|d| d.file) else {
                return;
            };
            let snapshot = state.workspace.db();
            state
                .documents
                .iter()
                .filter(|(other, document)| {
                    *other != uri && db::reachable(snapshot, document.file).contains(&changed)
                })
                .map(|(other, document)| {
                    (
                        other.clone(),
                        document.version,
                        snapshot.clone(),
                        document.file,
                    )
                })
                .collect()
        };
        for (other, version, snapshot, file) in work {
            self.publish(other, version, snapshot, file).await;
        }
    }
}

fn apply_change(text: &mut String, change: TextDocumentContentChangeEvent) {
    match change.range {
        Some(range) => {
            let start = convert::offset(text, range.start);
            let end = convert::offset(text, range.end).max(start);
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
                rename_provider: Some(OneOf::Left(true)),
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
        self.lock().documents.remove(&params.text_document.uri);
        self.client
            .publish_diagnostics(params.text_document.uri, Vec::new(), None)
            .await;
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        let position = params.text_document_position_params;
        Ok(
            self.with_document(&position.text_document.uri, |state, file, text| {
                let offset = convert::offset(text, position.position);
                let hover = ide::hover(state.workspace.db(), file, offset)?;
                Some(Hover {
                    contents: HoverContents::Markup(MarkupContent {
                        kind: MarkupKind::Markdown,
                        value: hover.markdown,
                    }),
                    range: Some(convert::range(
                        text,
                        hover.span.start as usize,
                        hover.span.end as usize,
                    )),
                })
            }),
        )
    }

    async fn completion(&self, params: CompletionParams) -> Result<Option<CompletionResponse>> {
        let position = params.text_document_position;
        Ok(
            self.with_document(&position.text_document.uri, |state, file, text| {
                let offset = convert::offset(text, position.position);
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
            self.with_document(&position.text_document.uri, |state, file, text| {
                let offset = convert::offset(text, position.position);
                let target = ide::definition(state.workspace.db(), file, offset)?;
                let uri = self.uri_of(state, &target.path)?;
                let source = state.workspace.source(&target.path)?;
                Some(GotoDefinitionResponse::Scalar(Location {
                    uri,
                    range: convert::range(
                        &source,
                        target.span.start as usize,
                        target.span.end as usize,
                    ),
                }))
            }),
        )
    }

    async fn inlay_hint(&self, params: InlayHintParams) -> Result<Option<Vec<InlayHint>>> {
        Ok(
            self.with_document(&params.text_document.uri, |state, file, text| {
                Some(
                    ide::inlay_hints(state.workspace.db(), file)
                        .into_iter()
                        .map(|hint| InlayHint {
                            position: convert::position(text, hint.offset as usize),
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
            self.with_document(&params.text_document.uri, |state, file, text| {
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
                        range: convert::range(text, s.span.start as usize, s.span.end as usize),
                        selection_range: convert::range(
                            text,
                            s.name_span.start as usize,
                            s.name_span.end as usize,
                        ),
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
            self.with_document(&position.text_document.uri, |state, file, text| {
                let offset = convert::offset(text, position.position);
                let targets = ide::references(state.workspace.db(), file, offset);
                Some(
                    targets
                        .into_iter()
                        .filter_map(|t| {
                            let uri = self.uri_of(state, &t.path)?;
                            let source = state.workspace.source(&t.path)?;
                            Some(Location {
                                uri,
                                range: convert::range(
                                    &source,
                                    t.span.start as usize,
                                    t.span.end as usize,
                                ),
                            })
                        })
                        .collect(),
                )
            }),
        )
    }

    async fn rename(&self, params: RenameParams) -> Result<Option<WorkspaceEdit>> {
        let position = params.text_document_position;
        let outcome = self.with_document(&position.text_document.uri, |state, file, text| {
            let offset = convert::offset(text, position.position);
            Some(
                ide::rename(state.workspace.db(), file, offset, &params.new_name).map(|targets| {
                    let mut changes: HashMap<Uri, Vec<TextEdit>> = HashMap::new();
                    for t in targets {
                        let (Some(uri), Some(source)) =
                            (self.uri_of(state, &t.path), state.workspace.source(&t.path))
                        else {
                            continue;
                        };
                        changes.entry(uri).or_default().push(TextEdit {
                            range: convert::range(
                                &source,
                                t.span.start as usize,
                                t.span.end as usize,
                            ),
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

    async fn semantic_tokens_full(
        &self,
        params: SemanticTokensParams,
    ) -> Result<Option<SemanticTokensResult>> {
        Ok(
            self.with_document(&params.text_document.uri, |state, file, text| {
                let mut data = Vec::new();
                let (mut line, mut character) = (0u32, 0u32);
                for token in ide::semantic_tokens(state.workspace.db(), file) {
                    let start = convert::position(text, token.start as usize);
                    let end = convert::position(text, (token.start + token.len) as usize);
                    if end.line != start.line {
                        continue;
                    }
                    let delta_line = start.line - line;
                    let delta_start = if delta_line == 0 {
                        start.character - character
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
        Ok(self.with_document(&uri, |state, file, text| {
            let start = convert::offset(text, params.range.start);
            let end = convert::offset(text, params.range.end);
            let span = deployfit_compiler::span::Span::new(start, end);
            let actions = ide::code_actions(state.workspace.db(), file, span)
                .into_iter()
                .map(|fix| {
                    let edits = fix
                        .edits
                        .into_iter()
                        .map(|(span, new_text)| TextEdit {
                            range: convert::range(text, span.start as usize, span.end as usize),
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
        Ok(self.with_document(&uri, |state, file, text| {
            let mut lenses = Vec::new();
            for (name, span, holes) in ide::deployments(state.workspace.db(), file) {
                let range = convert::range(text, span.start as usize, span.end as usize);
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
        let output = self.with_document(&uri, |state, file, _| match params.command.as_str() {
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
        Ok(self.with_document(&params.text_document.uri, |_, _, text| {
            let formatted = deployfit_compiler::fmt::format(text).ok()?;
            Some(vec![TextEdit {
                range: convert::range(text, 0, text.len()),
                new_text: formatted,
            }])
        }))
    }
}

/// Serves the language server over standard input and output until the client exits.
pub fn run_stdio() -> std::io::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let (service, socket) = LspService::new(Backend::new);
        Server::new(tokio::io::stdin(), tokio::io::stdout(), socket)
            .serve(service)
            .await;
    });
    Ok(())
}
