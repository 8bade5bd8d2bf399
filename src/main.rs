//! The `deployfit` command line: argument parsing and rendering only; every analysis
//! goes through `deployfit_host::Workspace`. Each command is a module of `commands`
//! (its clap arguments and its `run`); the renderers are in `output`.

mod output;

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use deployfit_host::render;

use commands::EXIT_USAGE;

#[derive(Parser)]
#[command(
    name = "deployfit",
    version,
    about = "Deployments as code: check LLM serving configurations for fit, speed and cost"
)]
struct Cli {
    /// When to colour the output: `auto` (a terminal, and NO_COLOR unset or empty),
    /// `always` or `never`.
    #[arg(long, value_enum, global = true, default_value_t = commands::ColorChoice::Auto)]
    color: commands::ColorChoice,
    /// Print only what is asked for: diagnostics without the per-deployment summary and
    /// totals lines, and no notices on standard error.
    #[arg(short, long, global = true)]
    quiet: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check .deploy files: syntax, names, units, requires and rules.
    Check(commands::check::CmdArgs),
    /// Write one self-contained HTML report of the deployments in files and directories:
    /// memory bars, speed and cost, diagnostics, the solver's candidates, model matrices.
    Report(commands::report::CmdArgs),
    /// Explain the memory of each deployment in a file: weights, KV cache, overhead, fit.
    Explain(commands::explain::CmdArgs),
    /// The VRAM matrix of a model: each weight format at several contexts, and the
    /// smallest catalog GPU that holds it.
    Matrix(commands::matrix::CmdArgs),
    /// Solve the holes (`?`, `one_of [...]`) of the deployments in a file: the ranked
    /// solutions and the better-ranked candidates that failed.
    Solve(commands::solve::CmdArgs),
    /// Every catalog GPU for a model: the best weight format that fits, memory, speed, price.
    Gpus(commands::gpus::CmdArgs),
    /// List models: catalog models and registry models matching `--search` / `--family`;
    /// with `--gpu X`, every catalog model on that GPU with the best weight format that
    /// fits and its speed.
    Models(commands::models::CmdArgs),
    /// The architecture card of one model: a catalog name, a Hugging Face id, an Ollama
    /// tag, or a file (config.json, safetensors, GGUF, a folder).
    Model(commands::model::CmdArgs),
    /// Print the `model` declaration a file describes (config.json, a folder, safetensors,
    /// GGUF), with its source, to check into a repository.
    Import(commands::import::CmdArgs),
    /// Write the launch command of a deployment for a serving engine.
    Export(commands::export::CmdArgs),
    /// Detect this machine's GPUs (nvidia-smi, rocm-smi, system_profiler) and host memory,
    /// each GPU mapped to a catalog entry.
    Hardware(commands::hardware::CmdArgs),
    /// Run the language server over standard input and output.
    Lsp(commands::lsp::CmdArgs),
    /// Run the Model Context Protocol server over standard input and output: the tools
    /// check, explain, solve, gpus and model, answering with the CLI's JSON.
    Mcp(commands::mcp::CmdArgs),
    /// Format .deploy files in place (or only check that they are formatted).
    Fmt(commands::fmt::CmdArgs),
    /// Print a shell's completion script for deployfit (bash, zsh, fish, elvish,
    /// powershell) on standard output.
    Completions(commands::completions::CmdArgs),
    /// Print deployfit's man page (roff) on standard output: `deployfit man > deployfit.1`.
    Man(commands::completions::ManArgs),
}

/// The command-line definition, for the completion scripts and the man page.
pub(crate) fn command_definition() -> clap::Command {
    <Cli as clap::CommandFactory>::command()
}

/// `eprintln!` for what deployfit tells the user on stderr: the text quotes paths, names
/// and file contents, so hidden characters (controls, bidirectional formatting) are shown
/// escaped ([`render::terminal_text`]), never sent raw to the terminal.
macro_rules! say {
    ($($arg:tt)*) => {
        if !crate::commands::quiet() {
            eprintln!("{}", render::terminal_text(&format!($($arg)*)))
        }
    };
}

// After `say!`, which the commands use.
mod commands;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            let code = if error.use_stderr() { EXIT_USAGE } else { 0 };
            let _ = error.print();
            return ExitCode::from(code);
        }
    };
    commands::set_output_options(cli.color, cli.quiet);
    if matches!(cli.command, Command::Mcp(_)) {
        // An agent's explicit request may name a Hugging Face id the registry lacks.
        deployfit_host::hub::allow_network();
    }
    if !matches!(cli.command, Command::Lsp(_) | Command::Mcp(_)) {
        quiet_on_closed_pipe();
        // A Hugging Face id that neither the catalog, the registry nor the local cache
        // knows is fetched from the Hub (docs/hub.md); the language server, which sees
        // every keystroke of an id, reads the cache only.
        deployfit_host::hub::allow_network();
    }
    let result = match cli.command {
        Command::Check(args) => commands::check::run(args),
        Command::Report(args) => commands::report::run(args),
        Command::Explain(args) => commands::explain::run(args),
        Command::Matrix(args) => commands::matrix::run(args),
        Command::Solve(args) => commands::solve::run(args),
        Command::Gpus(args) => commands::gpus::run(args),
        Command::Models(args) => commands::models::run(args),
        Command::Model(args) => commands::model::run(args),
        Command::Import(args) => commands::import::run(args),
        Command::Export(args) => commands::export::run(args),
        Command::Hardware(args) => commands::hardware::run(args),
        Command::Lsp(args) => commands::lsp::run(args),
        Command::Mcp(args) => commands::mcp::run(args),
        Command::Fmt(args) => commands::fmt::run(args),
        Command::Completions(args) => commands::completions::run(args),
        Command::Man(args) => commands::completions::run_man(args),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(message) => {
            // Messages quote what the user typed and what files hold: hidden characters
            // are shown escaped, never sent raw to the terminal.
            eprintln!("{}", render::terminal_text(&format!("error: {message}")));
            ExitCode::from(EXIT_USAGE)
        }
    }
}

/// A command whose reader goes away (`deployfit gpus M | head -2`) ends quietly, as `ls`,
/// `rg` and `cargo` do: the default action of SIGPIPE (Rust ignores it, so every print
/// would fail with EPIPE and `print!` would panic). Not for `lsp`, whose writer reports a
/// closed client as an error and stops.
fn quiet_on_closed_pipe() {
    #[cfg(unix)]
    // SAFETY: called once at start-up, before any thread is spawned; SIG_DFL is a valid
    // disposition for SIGPIPE.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
