//! One module per command: each has its clap `CmdArgs` and a `run` that parses nothing
//! more and renders the host's answer. What several commands share lives here.

pub mod check;
pub mod completions;
pub mod explain;
pub mod export;
pub mod fmt;
pub mod gpus;
pub mod hardware;
pub mod import;
pub mod lsp;
pub mod matrix;
pub mod mcp;
pub mod model;
pub mod models;
pub mod report;
pub mod solve;

pub(crate) use std::io::{IsTerminal, Read, Write};
pub(crate) use std::path::{Path, PathBuf};

pub(crate) use clap::{Args, ValueEnum};
pub(crate) use deployfit_host::diagnostics::Report;
pub(crate) use deployfit_host::render::{self, HumanOptions, OutputFormat};
pub(crate) use deployfit_host::{Diagnostic, Severity, Workspace, files};

pub(crate) use crate::output::{self, tables};

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum Format {
    Human,
    Json,
    Github,
    Sarif,
    /// GitLab Code Quality report (JSON).
    Gitlab,
    /// JUnit XML: one test case per deployment, a failure per error.
    Junit,
    /// reviewdog Diagnostic Format (rdjson).
    Rdjson,
    /// A Markdown summary: counts, a row per deployment and per problem (for
    /// `$GITHUB_STEP_SUMMARY`).
    Markdown,
}

#[derive(Clone, Copy, PartialEq, ValueEnum)]
pub(crate) enum TableFormat {
    Table,
    Json,
}

#[derive(Clone, Copy, PartialEq, ValueEnum)]
pub(crate) enum Sort {
    Speed,
    Cost,
    Memory,
}

#[derive(Clone, Copy, PartialEq, ValueEnum)]
pub(crate) enum ExportEngine {
    Vllm,
    Ollama,
    Llamacpp,
    Tgi,
    Lmdeploy,
    Mlx,
}

#[derive(Clone, Copy, PartialEq, ValueEnum)]
pub(crate) enum Weights {
    Files,
    Params,
}

#[derive(Clone, Copy, PartialEq, ValueEnum)]
pub(crate) enum Deny {
    Warnings,
}

/// `--color`.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ColorChoice {
    Auto,
    Always,
    Never,
}

static OUTPUT_OPTIONS: std::sync::OnceLock<(ColorChoice, bool)> = std::sync::OnceLock::new();

/// Records the global `--color` and `--quiet` once, at start-up.
pub(crate) fn set_output_options(color: ColorChoice, quiet: bool) {
    let _ = OUTPUT_OPTIONS.set((color, quiet));
}

/// `-q`: only what was asked for.
pub(crate) fn quiet() -> bool {
    OUTPUT_OPTIONS.get().is_some_and(|&(_, quiet)| quiet)
}

/// Whether to colour what goes to a stream: `--color always` / `never`, else a terminal
/// and `NO_COLOR` unset or empty (no-color.org).
pub(crate) fn use_color(is_terminal: bool) -> bool {
    match OUTPUT_OPTIONS
        .get()
        .map_or(ColorChoice::Auto, |&(color, _)| color)
    {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            is_terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        }
    }
}

/// Exit codes: 0 clean, 1 problems found, 2 usage or I/O error.
pub(crate) const EXIT_PROBLEMS: u8 = 1;
pub(crate) const EXIT_USAGE: u8 = 2;

/// Expands files and directories into the sorted list of `.deploy` files (the rules
/// are `deployfit_host::files::collect`'s); what a walk passed over goes to stderr.
pub(crate) fn collect(paths: Vec<PathBuf>) -> Result<Vec<PathBuf>, String> {
    let collected = files::collect(&paths).map_err(|e| e.to_string())?;
    for (path, reason) in &collected.skipped {
        say!("skipped `{}`: {reason}", path.display());
    }
    Ok(collected.files)
}

/// Loads every file into the workspace, each with its path.
pub(crate) fn load_all(
    workspace: &mut Workspace,
    files: &[PathBuf],
) -> Result<Vec<(PathBuf, deployfit_host::db::SourceFile)>, String> {
    files
        .iter()
        .map(|path| {
            workspace
                .load(path)
                .map(|file| (path.clone(), file))
                .map_err(|e| format!("cannot read `{}`: {e}", path.display()))
        })
        .collect()
}

/// Parses a context length: `32768`, `32k`, `1M` (binary suffixes).
pub(crate) fn parse_context(text: &str) -> Result<u64, String> {
    deployfit_host::query::parse_context(text)
}

pub(crate) fn print_json<T: serde::Serialize>(value: &T) -> Result<(), String> {
    let mut text =
        serde_json::to_string_pretty(value).map_err(|e| format!("cannot write JSON: {e}"))?;
    text.push('\n');
    print!("{text}");
    Ok(())
}
