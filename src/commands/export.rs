//! `deployfit export`: write the launch command of a deployment for a serving engine.

use super::*;

// The arguments of `deployfit export`.
#[derive(Args)]
pub struct CmdArgs {
    /// The .deploy file.
    pub file: PathBuf,
    /// The deployment to export.
    #[arg(long)]
    pub deployment: String,
    /// The engine to launch it with (default: the deployment's engine).
    #[arg(long, value_enum)]
    pub engine: Option<ExportEngine>,
}

pub fn run(args: CmdArgs) -> Result<u8, String> {
    export(&args.file, &args.deployment, args.engine)
}

fn export(path: &Path, deployment: &str, engine: Option<ExportEngine>) -> Result<u8, String> {
    use deployfit_host::export::Target;
    let mut workspace = Workspace::new();
    let file = workspace
        .load(path)
        .map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
    let target = engine.map(|engine| match engine {
        ExportEngine::Vllm => Target::Vllm,
        ExportEngine::Ollama => Target::Ollama,
        ExportEngine::Llamacpp => Target::Llamacpp,
        ExportEngine::Tgi => Target::Tgi,
        ExportEngine::Lmdeploy => Target::Lmdeploy,
        ExportEngine::Mlx => Target::Mlx,
    });
    match deployfit_host::export::export(workspace.db(), file, deployment, target) {
        Ok(text) => {
            print!("{text}");
            Ok(0)
        }
        Err(error) if error.usage => Err(format!("{} ({})", error.message, error.help)),
        Err(error) => {
            say!("error: {}\n  help: {}", error.message, error.help);
            Ok(EXIT_PROBLEMS)
        }
    }
}
