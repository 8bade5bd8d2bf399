//! `deployfit fmt`: format .deploy files in place (or only check that they are formatted).

use super::*;

// The arguments of `deployfit fmt`.
#[derive(Args)]
pub struct CmdArgs {
    /// Files or directories. Default: the current directory.
    pub paths: Vec<PathBuf>,
    /// Do not write; exit 1 when a file is not formatted.
    #[arg(long)]
    pub check: bool,
}

pub fn run(args: CmdArgs) -> Result<u8, String> {
    format_files(args.paths, args.check)
}

fn format_files(paths: Vec<PathBuf>, check_only: bool) -> Result<u8, String> {
    let files = collect(paths)?;
    let mut code = 0;
    for path in files {
        let bytes =
            files::read(&path).map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
        let Ok(text) = String::from_utf8(bytes) else {
            say!("{}: not valid UTF-8; not formatted", path.display());
            code = EXIT_PROBLEMS;
            continue;
        };
        match deployfit_host::fmt::format(&text) {
            Ok(formatted) if formatted == text => {}
            Ok(formatted) => {
                if check_only {
                    println!("would reformat {}", path.display());
                    code = EXIT_PROBLEMS;
                } else {
                    std::fs::write(&path, formatted)
                        .map_err(|e| format!("cannot write `{}`: {e}", path.display()))?;
                    println!("formatted {}", path.display());
                }
            }
            Err(error) => {
                let (line, column) = deployfit_host::span::line_col(&text, error.span.start);
                say!(
                    "{}:{line}:{column}: not formatted: {} (run `deployfit check` for details)",
                    path.display(),
                    error.message
                );
                code = EXIT_PROBLEMS;
            }
        }
    }
    Ok(code)
}
