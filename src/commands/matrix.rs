//! `deployfit matrix`: the VRAM matrix of a model: each weight format at several contexts, and the smallest catalog GPU that holds it.

use super::*;

// The arguments of `deployfit matrix`.
#[derive(Args)]
pub struct CmdArgs {
    /// Catalog name, Hugging Face id or Ollama tag (glm4_9b, "THUDM/GLM-4-9B-0414", glm4:9b).
    pub model: String,
    /// Contexts (tokens per sequence); `k` and `M` are binary (32k = 32,768).
    #[arg(long, value_delimiter = ',', default_value = "8k,32k,128k")]
    pub contexts: Vec<String>,
    /// One engine; without it, totals are ranges over the engines.
    #[arg(long)]
    pub engine: Option<String>,
    /// Concurrent sequences.
    #[arg(long, default_value_t = 1)]
    pub seqs: u64,
    /// KV-cache dtype.
    #[arg(long, default_value = "fp16")]
    pub kv: String,
    /// Where weights come from: the model's artifact sizes when listed, or params × bpw.
    #[arg(long, value_enum, default_value_t = Weights::Files)]
    pub weights: Weights,
    /// A .deploy file whose models, quants, engines and GPUs join the catalog.
    #[arg(long)]
    pub file: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t = TableFormat::Table)]
    pub format: TableFormat,
}

pub fn run(args: CmdArgs) -> Result<u8, String> {
    let contexts = args
        .contexts
        .iter()
        .map(|c| parse_context(c))
        .collect::<Result<Vec<_>, _>>()?;
    if args.seqs == 0 {
        return Err("--seqs must be at least 1".into());
    }
    let request = deployfit_host::matrix::MatrixRequest {
        model: args.model,
        contexts,
        engine: args.engine,
        seqs: args.seqs,
        kv_cache: args.kv,
        theoretical_weights: args.weights == Weights::Params,
    };
    let mut workspace = Workspace::new();
    let file = match &args.file {
        Some(path) => Some(
            workspace
                .load(path)
                .map_err(|e| format!("cannot read `{}`: {e}", path.display()))?,
        ),
        None => None,
    };
    let matrix = workspace.matrix(&request, file).map_err(|e| e.0)?;
    let text = match args.format {
        TableFormat::Table => output::matrix::table(&matrix),
        TableFormat::Json => {
            let mut text = serde_json::to_string_pretty(&matrix)
                .map_err(|e| format!("cannot write JSON: {e}"))?;
            text.push('\n');
            text
        }
    };
    print!("{}", render::terminal_text(&text));
    Ok(0)
}
