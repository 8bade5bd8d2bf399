//! `deployfit hardware`: detect this machine's GPUs (nvidia-smi, rocm-smi, system_profiler) and host memory, each GPU mapped to a catalog entry.

use super::*;

// The arguments of `deployfit hardware`.
#[derive(Args)]
pub struct CmdArgs {
    #[arg(long, value_enum, default_value_t = TableFormat::Table)]
    pub format: TableFormat,
}

pub fn run(args: CmdArgs) -> Result<u8, String> {
    hardware(args.format)
}

/// `deployfit hardware`: exit 0 whatever the machine has, a GPU or none.
fn hardware(format: TableFormat) -> Result<u8, String> {
    let mut workspace = Workspace::new();
    let report = workspace.hardware(&deployfit_host::hardware::SystemProbe);
    match format {
        TableFormat::Json => print_json(&report)?,
        TableFormat::Table => print!("{}", render::terminal_text(&tables::hardware(&report))),
    }
    Ok(0)
}
