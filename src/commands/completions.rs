//! `deployfit completions SHELL` and `deployfit man`: generated from the clap definition
//! (clap_complete, clap_mangen), so they never drift from the commands.

use super::*;

// The arguments of `deployfit completions`.
#[derive(Args)]
pub struct CmdArgs {
    /// The shell: bash, zsh, fish, elvish or powershell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

// The arguments of `deployfit man` (none).
#[derive(Args)]
pub struct ManArgs {}

pub fn run(args: CmdArgs) -> Result<u8, String> {
    let mut command = crate::command_definition();
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut command, "deployfit", &mut out);
    write_stdout(&out)
}

pub fn run_man(_args: ManArgs) -> Result<u8, String> {
    let mut out = Vec::new();
    clap_mangen::Man::new(crate::command_definition())
        .render(&mut out)
        .map_err(|e| format!("cannot write the man page: {e}"))?;
    write_stdout(&out)
}

fn write_stdout(bytes: &[u8]) -> Result<u8, String> {
    let mut lock = std::io::stdout().lock();
    lock.write_all(bytes)
        .and_then(|_| lock.flush())
        .map_err(|e| format!("cannot write to standard output: {e}"))?;
    Ok(0)
}
