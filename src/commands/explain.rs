//! `deployfit explain`: explain the memory of each deployment in a file: weights, KV cache, overhead, fit.

use super::*;

// The arguments of `deployfit explain`.
#[derive(Args)]
pub struct CmdArgs {
    /// The .deploy file.
    pub file: PathBuf,
    /// Only this deployment.
    #[arg(long)]
    pub deployment: Option<String>,
    #[arg(long, value_enum, default_value_t = TableFormat::Table)]
    pub format: TableFormat,
}

pub fn run(args: CmdArgs) -> Result<u8, String> {
    explain_file(&args.file, args.deployment.as_deref(), args.format)
}

fn explain_file(path: &Path, only: Option<&str>, format: TableFormat) -> Result<u8, String> {
    let mut workspace = Workspace::new();
    let file = workspace
        .load(path)
        .map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
    let mut results = workspace.explain(file);
    if let Some(name) = only {
        deployfit_host::answers::keep_explained(&mut results, name, &path.display().to_string())?;
    }
    // A mixed fleet has no single deployment's figures: it is explained by its fleet.
    let failed = results
        .iter()
        .any(|r| r.as_ref().is_err_and(|n| n.fleet.is_none()));
    let text = match format {
        TableFormat::Json => deployfit_host::answers::explain_json(&results),
        TableFormat::Table => results
            .iter()
            .map(|r| match r {
                Ok(e) => output::explain::table(e),
                Err(n) if n.fleet.is_some() => n
                    .fleet
                    .as_ref()
                    .map(|fleet| tables::mixed_fleet(&n.deployment, fleet))
                    .unwrap_or_default(),
                Err(n) => format!(
                    "{} ({}:{}): not evaluated; run `deployfit check {}` for the reasons\n",
                    n.deployment,
                    path.display(),
                    n.line,
                    path.display()
                ),
            })
            .collect::<Vec<_>>()
            .join("\n"),
    };
    print!("{}", render::terminal_text(&text));
    if failed {
        say!("some deployments could not be evaluated; `deployfit check` says why");
    }
    Ok(if failed { EXIT_PROBLEMS } else { 0 })
}
