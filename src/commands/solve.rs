//! `deployfit solve`: solve the holes (`?`, `one_of [...]`) of the deployments in a file: the ranked solutions and the better-ranked candidates that failed.

use super::*;

// The arguments of `deployfit solve`.
#[derive(Args)]
pub struct CmdArgs {
    /// The .deploy file.
    pub file: PathBuf,
    /// Only this deployment.
    #[arg(long)]
    pub deployment: Option<String>,
    /// How many solutions to list.
    #[arg(long, default_value_t = 5)]
    pub top: usize,
    #[arg(long, value_enum, default_value_t = TableFormat::Table)]
    pub format: TableFormat,
}

pub fn run(args: CmdArgs) -> Result<u8, String> {
    solve(
        &args.file,
        args.deployment.as_deref(),
        args.top,
        args.format,
    )
}

fn solve(path: &Path, only: Option<&str>, top: usize, format: TableFormat) -> Result<u8, String> {
    let mut workspace = Workspace::new();
    let file = workspace
        .load(path)
        .map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
    let mut results = workspace.solve(file, top.max(1));
    if let Some(name) = only {
        results.retain(|(deployment, _)| deployment == name);
        if results.is_empty() {
            return Err(format!(
                "`{}` has no deployment `{name}` with holes",
                path.display()
            ));
        }
    }
    if results.is_empty() {
        return Err(format!(
            "`{}` has no deployment with holes (`gpu = ?`, `quant = one_of [...]`)",
            path.display()
        ));
    }
    let failed = results
        .iter()
        .any(|(_, r)| r.as_ref().map_or(true, |s| !s.found()));
    match format {
        TableFormat::Json => print!("{}", deployfit_host::answers::solve_json(&results)),
        TableFormat::Table => {
            let text: Vec<String> = results
                .iter()
                .map(|(deployment, r)| match r {
                    Ok(s) => tables::solution(s),
                    Err(message) => format!("{deployment}: {message}\n"),
                })
                .collect();
            print!("{}", render::terminal_text(&text.join("\n")));
        }
    }
    Ok(if failed { EXIT_PROBLEMS } else { 0 })
}
