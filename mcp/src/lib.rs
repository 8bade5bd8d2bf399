//! `deployfit mcp`: a Model Context Protocol server over standard input and output (rmcp,
//! the protocol's Rust SDK), for coding agents that edit deployments. Its tools answer
//! as the CLI does: `check`, `explain` and `solve` return what `--format json` prints
//! (the same [`deployfit_host::answers`] builds both), `gpus` and `model` the same reports.
//! It only converts: every answer comes from [`deployfit_host::Workspace`].

use std::path::{Path, PathBuf};
use std::sync::Arc;

use deployfit_host::Workspace;
use deployfit_host::db::SourceFile;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ContentBlock, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerInfo, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Map, Value, json};

/// The name a `text` argument's file has in answers.
pub const TEXT_NAME: &str = "<text>";

/// The longest `text` a tool reads, bytes: the limit on files ([`deployfit_host::files`]).
const MAX_TEXT: usize = deployfit_host::files::MAX_FILE_BYTES as usize;

/// Runs the server until the client closes standard input.
pub fn run_stdio() -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    runtime.block_on(async {
        let service = Server
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| e.to_string())?;
        service.waiting().await.map_err(|e| e.to_string())?;
        Ok(())
    })
}

/// The server: stateless, each call builds its own workspace.
#[derive(Clone, Copy, Debug, Default)]
pub struct Server;

/// The `text` / `path` pair the file tools take.
const FILE_PROPERTIES: &str = r#"{
    "text": { "type": "string", "description": "The contents of a .deploy file, as a user writes it (named <text> in answers; imports resolve from the server's working directory)." },
    "path": { "type": "string", "description": "A .deploy file to read instead, relative to the server's working directory." }
}"#;

fn schema(properties: Value, required: &[&str]) -> Arc<Map<String, Value>> {
    let mut object = Map::new();
    object.insert("type".into(), json!("object"));
    object.insert("properties".into(), properties);
    if !required.is_empty() {
        object.insert("required".into(), json!(required));
    }
    object.insert("additionalProperties".into(), json!(false));
    Arc::new(object)
}

fn file_schema(extra: Value) -> Arc<Map<String, Value>> {
    let mut properties: Map<String, Value> = serde_json::from_str(FILE_PROPERTIES).unwrap();
    if let Value::Object(extra) = extra {
        properties.extend(extra);
    }
    schema(Value::Object(properties), &[])
}

/// The tools, as `tools/list` lists them.
pub fn tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "check",
            "Check a .deploy file (syntax, names, units, requires, rules) and evaluate each deployment: the JSON of `deployfit check --format json` (diagnostics with codes, spans and fixes; each deployment's fit, memory, speed and cost).",
            file_schema(json!({})),
        ),
        Tool::new(
            "explain",
            "Explain each deployment of a .deploy file: weights, KV cache, overhead, fit, speed ranges, cost and the assumptions behind them; the JSON of `deployfit explain --format json`.",
            file_schema(json!({
                "deployment": { "type": "string", "description": "Only this deployment." }
            })),
        ),
        Tool::new(
            "solve",
            "Solve the holes (`?`, `one_of [...]`) of a .deploy file's deployments: the ranked solutions and the better-ranked candidates that failed; the JSON of `deployfit solve --format json`.",
            file_schema(json!({
                "deployment": { "type": "string", "description": "Only this deployment." },
                "top": { "type": "integer", "minimum": 1, "maximum": 1000, "description": "How many solutions (default 10)." }
            })),
        ),
        Tool::new(
            "gpus",
            "Every catalog GPU for a model: the best weight format that fits on one GPU, memory, decode speed with its range, price; the JSON of `deployfit gpus MODEL --format json`.",
            schema(
                json!({
                    "model": { "type": "string", "description": "Catalog name, Hugging Face id or Ollama tag." },
                    "context": { "type": "string", "description": "Tokens per sequence: 8192, 32k, 1M (default 8k)." },
                    "seqs": { "type": "integer", "minimum": 1, "maximum": 4096, "description": "Concurrent sequences (default 1)." },
                    "engine": { "type": "string", "description": "Engine (default llamacpp)." },
                    "quant": { "type": "string", "description": "Only this weight format." },
                    "fits_only": { "type": "boolean", "description": "Only the GPUs where the model fits." }
                }),
                &["model"],
            ),
        ),
        Tool::new(
            "model",
            "The architecture card of one model (a catalog name, a Hugging Face id or an Ollama tag): parameters, layers, attention, context, experts; the JSON of `deployfit model ID --format json`.",
            schema(
                json!({
                    "id": { "type": "string", "description": "Catalog name, Hugging Face id or Ollama tag." }
                }),
                &["id"],
            ),
        ),
    ]
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerInfo {
        ServerInfo::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("deployfit", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "deployfit checks LLM deployments written in its .deploy language: whether a model fits a GPU at a context, how fast it runs, what it costs. Pass a file's text to check, explain or solve; gpus and model query the catalog.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult {
            tools: tools(),
            ..ListToolsResult::default()
        })
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let arguments = request.arguments.unwrap_or_default();
        let name = request.name.to_string();
        if !tools().iter().any(|t| t.name == name) {
            return Err(McpError::invalid_params(
                format!("no tool `{name}`: the tools are check, explain, solve, gpus, model"),
                None,
            ));
        }
        // The compiler is synchronous: run it off the runtime's threads.
        let answer = tokio::task::spawn_blocking(move || call(&name, &arguments))
            .await
            .map_err(|e| McpError::internal_error(e.to_string(), None))?;
        Ok(match answer {
            Ok(text) => {
                let value = serde_json::from_str::<Value>(&text).unwrap_or(Value::Null);
                let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
                result.structured_content = structured(value);
                result
            }
            Err(message) => CallToolResult::error(vec![ContentBlock::text(message)]),
        })
    }
}

/// MCP's structured content is an object: an array answer is wrapped as `{"result": …}`
/// (the text content holds the CLI's JSON as printed).
fn structured(value: Value) -> Option<Value> {
    match value {
        Value::Object(_) => Some(value),
        Value::Null => None,
        other => Some(json!({ "result": other })),
    }
}

/// One tool call: the CLI's JSON text, or why there is none.
pub fn call(name: &str, arguments: &Map<String, Value>) -> Result<String, String> {
    let text_arg = |key: &str| -> Result<Option<String>, String> {
        match arguments.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(format!("`{key}` must be a string, not {other}")),
        }
    };
    let number_arg = |key: &str, min: u64, max: u64| -> Result<Option<u64>, String> {
        match arguments.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v
                .as_u64()
                .filter(|n| (min..=max).contains(n))
                .map(Some)
                .ok_or_else(|| format!("`{key}` must be a whole number from {min} to {max}")),
        }
    };
    match name {
        "check" | "explain" | "solve" => {
            let mut workspace = Workspace::new();
            let (file, shown) = load(&mut workspace, text_arg("text")?, text_arg("path")?)?;
            let only = text_arg("deployment")?;
            match name {
                "check" => Ok(deployfit_host::answers::check_json(&workspace, &[file])),
                "explain" => {
                    let mut results = workspace.explain(file);
                    if let Some(only) = &only {
                        deployfit_host::answers::keep_explained(&mut results, only, &shown)?;
                    }
                    Ok(deployfit_host::answers::explain_json(&results))
                }
                _ => {
                    let top = number_arg("top", 1, 1000)?.unwrap_or(10) as usize;
                    let mut results = workspace.solve(file, top);
                    if let Some(only) = &only {
                        deployfit_host::answers::keep_solved(&mut results, only, &shown)?;
                    }
                    Ok(deployfit_host::answers::solve_json(&results))
                }
            }
        }
        "gpus" => {
            let model = text_arg("model")?.ok_or("`model` is required")?;
            let context = match text_arg("context")? {
                Some(text) => deployfit_host::query::parse_context(&text)?,
                None => 8 * 1024,
            };
            let request = deployfit_host::query::GpusRequest {
                model,
                quant: text_arg("quant")?,
                min_quant: None,
                max_quant: None,
                context,
                seqs: number_arg("seqs", 1, 4096)?.unwrap_or(1),
                engine: text_arg("engine")?.unwrap_or_else(|| "llamacpp".into()),
                kv_cache: "fp16".into(),
                sort: deployfit_host::query::SortBy::Speed,
                min_memory: None,
                max_memory: None,
                vendors: Vec::new(),
                segments: Vec::new(),
                fits_only: matches!(arguments.get("fits_only"), Some(Value::Bool(true))),
                gpus: Vec::new(),
            };
            let report = Workspace::new().gpus_with(&request, None)?;
            pretty(&report)
        }
        "model" => {
            let id = text_arg("id")?.ok_or("`id` is required")?;
            let card = Workspace::new().model_card(&id)?;
            pretty(&card)
        }
        other => Err(format!("no tool `{other}`")),
    }
}

fn pretty<T: serde::Serialize>(value: &T) -> Result<String, String> {
    let mut text = serde_json::to_string_pretty(value).map_err(|e| e.to_string())?;
    text.push('\n');
    Ok(text)
}

/// The file a call names: its `text` (under [`TEXT_NAME`]) or its `path`, and how to
/// name it in messages.
fn load(
    workspace: &mut Workspace,
    text: Option<String>,
    path: Option<String>,
) -> Result<(SourceFile, String), String> {
    match (text, path) {
        (Some(_), Some(_)) => Err("give `text` or `path`, not both".into()),
        (None, None) => Err("give the .deploy file's `text` (or its `path`)".into()),
        (Some(text), None) => {
            if text.len() > MAX_TEXT {
                return Err(format!("`text` is over {MAX_TEXT} bytes"));
            }
            let file = workspace
                .load_bytes(Path::new(TEXT_NAME), text.into_bytes())
                .map_err(|e| e.to_string())?;
            Ok((file, TEXT_NAME.to_string()))
        }
        (None, Some(path)) => {
            let path = PathBuf::from(path);
            let file = workspace
                .load(&path)
                .map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
            Ok((file, path.display().to_string()))
        }
    }
}
