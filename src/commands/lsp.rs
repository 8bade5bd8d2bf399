//! `deployfit lsp`: run the language server over standard input and output.

use super::*;

// The arguments of `deployfit lsp`.
#[derive(Args)]
pub struct CmdArgs {
    /// Talk over standard input and output, the only transport (accepted because many
    /// clients send it).
    #[arg(long)]
    pub stdio: bool,
}

pub fn run(_args: CmdArgs) -> Result<u8, String> {
    deployfit_lsp::run_stdio()
        .map(|_| 0)
        .map_err(|e| format!("the language server stopped: {e}"))
}
