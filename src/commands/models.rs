//! `deployfit models`: list models: catalog models and registry models matching `--search` / `--family`; with `--gpu X`, every catalog model and every registry model that fits on that GPU, with the best weight format that fits (4 bits and up) and its speed.

use super::*;

// The arguments of `deployfit models`.
#[derive(Args)]
pub struct CmdArgs {
    /// A catalog GPU name (rtx_4090, h100_sxm5): what runs on it (same as `--gpu`).
    pub gpu_positional: Option<String>,
    /// What runs on this catalog GPU.
    #[arg(long)]
    pub gpu: Option<String>,
    /// Only models whose id or name contains this text (any case).
    #[arg(long)]
    pub search: Option<String>,
    /// Only this architecture family (config.json `model_type`: llama, qwen3, qwen3_moe, …).
    #[arg(long)]
    pub family: Option<String>,
    /// At most this many rows (0: all); with `--gpu`, of the table (JSON gives every row).
    #[arg(long, default_value_t = 50)]
    pub limit: usize,
    /// With `--gpu`: tokens per sequence.
    #[arg(long, default_value = "8k")]
    pub context: String,
    /// With `--gpu`: the engine.
    #[arg(long, default_value = "llamacpp")]
    pub engine: String,
    /// What runs on this machine's GPU (`deployfit hardware`), as with `--gpu`.
    #[arg(long, conflicts_with_all = ["gpu", "gpu_positional"])]
    pub here: bool,
    #[arg(long, value_enum, default_value_t = TableFormat::Table)]
    pub format: TableFormat,
}

pub fn run(args: CmdArgs) -> Result<u8, String> {
    let CmdArgs {
        gpu_positional,
        gpu,
        search,
        family,
        limit,
        context,
        engine,
        here,
        format,
    } = args;
    match gpu.or(gpu_positional) {
        Some(gpu) => models(&gpu, &context, &engine, format, limit),
        None if here => models_here(&context, &engine, format, limit),
        None => list_models(search.as_deref(), family.as_deref(), limit, format),
    }
}

fn models(
    gpu: &str,
    context: &str,
    engine: &str,
    format: TableFormat,
    limit: usize,
) -> Result<u8, String> {
    let context = parse_context(context)?;
    let mut workspace = Workspace::new();
    let fits = workspace.models(gpu, context, engine)?;
    match format {
        TableFormat::Json => print_json(&fits)?,
        TableFormat::Table => print!(
            "{}",
            render::terminal_text(&tables::models(gpu, &fits, limit))
        ),
    }
    Ok(0)
}

/// `models --here`: what runs on each kind of GPU this machine has; with none, what
/// `deployfit hardware` found (exit 0).
fn models_here(
    context: &str,
    engine: &str,
    format: TableFormat,
    limit: usize,
) -> Result<u8, String> {
    let context = parse_context(context)?;
    let mut workspace = Workspace::new();
    let hardware = workspace.hardware(&deployfit_host::hardware::SystemProbe);
    let mut kinds: Vec<String> = hardware
        .gpus
        .iter()
        .filter_map(|g| g.catalog.clone())
        .collect();
    kinds.sort();
    kinds.dedup();
    let mut answers = Vec::new();
    for gpu in &kinds {
        answers.push((gpu.clone(), workspace.models(gpu, context, engine)?));
    }
    match format {
        TableFormat::Json => {
            let object: serde_json::Map<String, serde_json::Value> = answers
                .iter()
                .map(|(gpu, fits)| {
                    Ok((
                        gpu.clone(),
                        serde_json::to_value(fits).map_err(|e| e.to_string())?,
                    ))
                })
                .collect::<Result<_, String>>()?;
            print_json(&serde_json::json!({ "gpus": object, "hardware": hardware }))?
        }
        TableFormat::Table if answers.is_empty() => {
            print!("{}", render::terminal_text(&tables::hardware(&hardware)))
        }
        TableFormat::Table => {
            for (gpu, fits) in &answers {
                print!(
                    "{}",
                    render::terminal_text(&tables::models(gpu, fits, limit))
                );
            }
        }
    }
    Ok(0)
}

fn list_models(
    search: Option<&str>,
    family: Option<&str>,
    limit: usize,
    format: TableFormat,
) -> Result<u8, String> {
    let mut workspace = Workspace::new();
    let rows = workspace.list_models(search, family, limit);
    match format {
        TableFormat::Json => print_json(&rows)?,
        TableFormat::Table => print!("{}", render::terminal_text(&tables::model_list(&rows))),
    }
    Ok(0)
}
