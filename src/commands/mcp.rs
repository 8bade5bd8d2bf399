//! `deployfit mcp`: run the Model Context Protocol server over standard input and output.

use super::*;

// The arguments of `deployfit mcp` (none).
#[derive(Args)]
pub struct CmdArgs {}

pub fn run(_args: CmdArgs) -> Result<u8, String> {
    deployfit_mcp::run_stdio()
        .map(|_| 0)
        .map_err(|e| format!("the MCP server stopped: {e}"))
}
