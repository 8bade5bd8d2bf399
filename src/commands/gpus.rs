//! `deployfit gpus`: every catalog GPU for a model: the best weight format that fits, memory, speed, price.

use super::*;

// The arguments of `deployfit gpus`.
#[derive(Args)]
pub struct CmdArgs {
    /// Catalog name, Hugging Face id or Ollama tag.
    pub model: String,
    /// Only this weight format.
    #[arg(long)]
    pub quant: Option<String>,
    /// No weight format with fewer bits per weight than this one (default: formats of 4
    /// nominal bits and up; name a lower one, `Q2_K`, to allow it).
    #[arg(long)]
    pub min_quant: Option<String>,
    /// No weight format with more bits per weight than this one (a quality cap: Q8_0).
    #[arg(long)]
    pub max_quant: Option<String>,
    /// Tokens per sequence (8192, 32k).
    #[arg(long, default_value = "8k")]
    pub context: String,
    #[arg(long, default_value_t = 1)]
    pub seqs: u64,
    #[arg(long, default_value = "llamacpp")]
    pub engine: String,
    #[arg(long, default_value = "fp16")]
    pub kv: String,
    #[arg(long, value_enum, default_value_t = Sort::Speed)]
    pub sort: Sort,
    /// Only GPUs with at least this much memory, unit required: 24GiB, 24 GB.
    #[arg(long)]
    pub min_memory: Option<String>,
    /// Only GPUs with at most this much memory: 48GiB, 80 GB.
    #[arg(long)]
    pub max_memory: Option<String>,
    /// Only these vendors: nvidia, amd, intel, apple (comma-separated).
    #[arg(long, value_delimiter = ',')]
    pub vendor: Vec<String>,
    /// Only these segments: datacenter, workstation, consumer, laptop, apple, mining,
    /// embedded (comma-separated). Mining and embedded cards are only named in the
    /// summaries when asked for here.
    #[arg(long, value_delimiter = ',')]
    pub segment: Vec<String>,
    /// Only the GPUs where the model fits.
    #[arg(long)]
    pub fits_only: bool,
    /// Exactly these catalog GPUs, in this order (comma-separated: rtx_4090,h100_sxm5).
    #[arg(long, value_delimiter = ',', conflicts_with = "here")]
    pub gpu: Vec<String>,
    /// A .deploy file whose GPUs, models, quants and engines join the catalog.
    #[arg(long, conflicts_with = "here")]
    pub file: Option<PathBuf>,
    /// Only the GPUs of this machine (`deployfit hardware`).
    #[arg(long)]
    pub here: bool,
    #[arg(long, value_enum, default_value_t = TableFormat::Table)]
    pub format: TableFormat,
    /// List every GPU in the table (default: the first 20 in the `--sort` order, the rest
    /// counted; `--format json` always has every one).
    #[arg(long)]
    pub all: bool,
}

/// Rows the `gpus` table shows without `--all`.
const TOP_ROWS: usize = 20;

pub fn run(args: CmdArgs) -> Result<u8, String> {
    let CmdArgs {
        model,
        quant,
        min_quant,
        max_quant,
        context,
        seqs,
        engine,
        kv,
        sort,
        min_memory,
        max_memory,
        vendor,
        segment,
        fits_only,
        gpu,
        file,
        here,
        format,
        all,
    } = args;
    gpus(
        deployfit_host::query::GpusRequest {
            model,
            quant,
            min_quant,
            max_quant,
            context: 0,
            seqs,
            engine,
            kv_cache: kv,
            sort: match sort {
                Sort::Speed => deployfit_host::query::SortBy::Speed,
                Sort::Cost => deployfit_host::query::SortBy::Cost,
                Sort::Memory => deployfit_host::query::SortBy::Memory,
            },
            min_memory: None,
            max_memory: None,
            vendors: vendor,
            segments: segment,
            fits_only,
            gpus: gpu,
        },
        GpusArgs {
            context,
            min_memory,
            max_memory,
            file,
            here,
            limit: (!all).then_some(TOP_ROWS),
        },
        format,
    )
}

/// The `gpus` arguments that need parsing or loading before the request is complete.
struct GpusArgs {
    context: String,
    min_memory: Option<String>,
    max_memory: Option<String>,
    file: Option<PathBuf>,
    here: bool,
    /// Table rows shown (`None`: all).
    limit: Option<usize>,
}

fn gpus(
    mut request: deployfit_host::query::GpusRequest,
    args: GpusArgs,
    format: TableFormat,
) -> Result<u8, String> {
    use deployfit_host::query::parse_memory;
    request.context = parse_context(&args.context)?;
    if request.seqs == 0 {
        return Err("--seqs must be at least 1".into());
    }
    let memory = |flag: &str, text: &Option<String>| {
        text.as_deref()
            .map(parse_memory)
            .transpose()
            .map_err(|e| format!("--{flag}: {e}"))
    };
    request.min_memory = memory("min-memory", &args.min_memory)?;
    request.max_memory = memory("max-memory", &args.max_memory)?;
    let here = args.here;
    let mut workspace = Workspace::new();
    let file = match &args.file {
        Some(path) => Some(
            workspace
                .load(path)
                .map_err(|e| format!("cannot read `{}`: {e}", path.display()))?,
        ),
        None => None,
    };
    let report = if here {
        let (report, hardware) =
            workspace.gpus_here(&request, &deployfit_host::hardware::SystemProbe)?;
        if report.rows.is_empty() && format == TableFormat::Table {
            // Nothing of this machine is in the catalog: say what was found instead.
            print!("{}", render::terminal_text(&tables::hardware(&hardware)));
            return Ok(0);
        }
        report
    } else {
        workspace.gpus_with(&request, file)?
    };
    match format {
        TableFormat::Json => print_json(&report)?,
        TableFormat::Table => print!(
            "{}",
            render::terminal_text(&tables::gpus(&report, args.limit))
        ),
    }
    Ok(0)
}
