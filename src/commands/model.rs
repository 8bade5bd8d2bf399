//! `deployfit model`: the architecture card of one model: a catalog name, a Hugging Face id, an Ollama tag, or a file (config.json, safetensors, GGUF, a folder).

use super::*;

// The arguments of `deployfit model`.
#[derive(Args)]
pub struct CmdArgs {
    /// Catalog name, Hugging Face id, Ollama tag or path.
    pub id: String,
    #[arg(long, value_enum, default_value_t = TableFormat::Table)]
    pub format: TableFormat,
}

pub fn run(args: CmdArgs) -> Result<u8, String> {
    model_card(&args.id, args.format)
}

fn model_card(id: &str, format: TableFormat) -> Result<u8, String> {
    let mut workspace = Workspace::new();
    let card = workspace.model_card(id)?;
    match format {
        TableFormat::Json => print_json(&card)?,
        TableFormat::Table => print!("{}", render::terminal_text(&tables::model_card(&card))),
    }
    Ok(0)
}
