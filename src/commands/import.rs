//! `deployfit import`: print the `model` declaration a file describes (config.json, a folder, safetensors, GGUF), with its source, to check into a repository.

use super::*;

// The arguments of `deployfit import`.
#[derive(Args)]
pub struct CmdArgs {
    /// The file or folder.
    pub path: PathBuf,
    /// The declaration's name (default: from the file or folder name).
    #[arg(long)]
    pub name: Option<String>,
}

pub fn run(args: CmdArgs) -> Result<u8, String> {
    import(&args.path, args.name.as_deref())
}

fn import(path: &Path, name: Option<&str>) -> Result<u8, String> {
    let name = match name {
        Some(name) => name.to_string(),
        None => deployfit_host::external::import_name(path),
    };
    let text = deployfit_host::external::import_declaration(path, &name)?;
    print!("{}", render::terminal_text(&text));
    Ok(0)
}
