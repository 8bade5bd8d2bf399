//! The `deployfit` command line: argument parsing and rendering only; every analysis
//! goes through `deployfit_host::Workspace`.

mod explain;
mod matrix;
mod report;
mod tables;

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use deployfit_host::diagnostics::Report;
use deployfit_host::diagnostics::render::{self, HumanOptions, OutputFormat};
use deployfit_host::{Diagnostic, Severity, Workspace, files, fmt};

#[derive(Parser)]
#[command(
    name = "deployfit",
    version,
    about = "Deployments as code: check LLM serving configurations for fit, speed and cost"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check .deploy files: syntax, names, units, requires and rules.
    Check {
        /// Files or directories (searched recursively for *.deploy). Default: the current directory.
        paths: Vec<PathBuf>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
        /// Treat warnings as errors.
        #[arg(long, value_enum)]
        deny: Vec<Deny>,
        /// Apply the unambiguous fixes of errors and warnings to the files, then report what remains.
        #[arg(long, conflicts_with = "diff")]
        fix: bool,
        /// Print the fixes `--fix` would apply as a unified diff, and change nothing (exit 1 when there are any).
        #[arg(long)]
        diff: bool,
    },
    /// Write one self-contained HTML report of the deployments in files and directories:
    /// memory bars, speed and cost, diagnostics, the solver's candidates, model matrices.
    Report {
        /// Files or directories (searched recursively for *.deploy, as `check` does).
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// The HTML file to write; `-` writes to standard output.
        #[arg(short, long, value_name = "FILE")]
        output: PathBuf,
        /// How many of the solver's candidates to show for a deployment with holes.
        #[arg(long, default_value_t = 20)]
        top: usize,
    },
    /// Explain the memory of each deployment in a file: weights, KV cache, overhead, fit.
    Explain {
        /// The .deploy file.
        file: PathBuf,
        /// Only this deployment.
        #[arg(long)]
        deployment: Option<String>,
        #[arg(long, value_enum, default_value_t = TableFormat::Table)]
        format: TableFormat,
    },
    /// The VRAM matrix of a model: each weight format at several contexts, and the
    /// smallest catalog GPU that holds it.
    Matrix {
        /// Catalog name, Hugging Face id or Ollama tag (glm4_9b, "THUDM/GLM-4-9B-0414", glm4:9b).
        model: String,
        /// Contexts (tokens per sequence); `k` and `M` are binary (32k = 32,768).
        #[arg(long, value_delimiter = ',', default_value = "8k,32k,128k")]
        contexts: Vec<String>,
        /// One engine; without it, totals are ranges over the engines.
        #[arg(long)]
        engine: Option<String>,
        /// Concurrent sequences.
        #[arg(long, default_value_t = 1)]
        seqs: u64,
        /// KV-cache dtype.
        #[arg(long, default_value = "fp16")]
        kv: String,
        /// Where weights come from: the model's artifact sizes when listed, or params × bpw.
        #[arg(long, value_enum, default_value_t = Weights::Files)]
        weights: Weights,
        /// A .deploy file whose models, quants, engines and GPUs join the catalog.
        #[arg(long)]
        file: Option<PathBuf>,
        #[arg(long, value_enum, default_value_t = TableFormat::Table)]
        format: TableFormat,
    },
    /// Solve the holes (`?`, `one_of [...]`) of the deployments in a file: the ranked
    /// solutions and the better-ranked candidates that failed.
    Solve {
        /// The .deploy file.
        file: PathBuf,
        /// Only this deployment.
        #[arg(long)]
        deployment: Option<String>,
        /// How many solutions to list.
        #[arg(long, default_value_t = 5)]
        top: usize,
        #[arg(long, value_enum, default_value_t = TableFormat::Table)]
        format: TableFormat,
    },
    /// Every catalog GPU for a model: the best weight format that fits, memory, speed, price.
    Gpus {
        /// Catalog name, Hugging Face id or Ollama tag.
        model: String,
        /// Only this weight format.
        #[arg(long)]
        quant: Option<String>,
        /// No weight format with fewer bits per weight than this one.
        #[arg(long)]
        min_quant: Option<String>,
        /// No weight format with more bits per weight than this one (a quality cap: Q8_0).
        #[arg(long)]
        max_quant: Option<String>,
        /// Tokens per sequence (8192, 32k).
        #[arg(long, default_value = "8k")]
        context: String,
        #[arg(long, default_value_t = 1)]
        seqs: u64,
        #[arg(long, default_value = "llamacpp")]
        engine: String,
        #[arg(long, default_value = "fp16")]
        kv: String,
        #[arg(long, value_enum, default_value_t = Sort::Speed)]
        sort: Sort,
        /// Only GPUs with at least this much memory, unit required: 24GiB, 24 GB.
        #[arg(long)]
        min_memory: Option<String>,
        /// Only GPUs with at most this much memory: 48GiB, 80 GB.
        #[arg(long)]
        max_memory: Option<String>,
        /// Only these vendors: nvidia, amd, intel, apple (comma-separated).
        #[arg(long, value_delimiter = ',')]
        vendor: Vec<String>,
        /// Only these segments: datacenter, workstation, consumer, laptop, apple, mining,
        /// embedded (comma-separated). Mining and embedded cards are only named in the
        /// summaries when asked for here.
        #[arg(long, value_delimiter = ',')]
        segment: Vec<String>,
        /// Only the GPUs where the model fits.
        #[arg(long)]
        fits_only: bool,
        /// Exactly these catalog GPUs, in this order (comma-separated: rtx_4090,h100_sxm5).
        #[arg(long, value_delimiter = ',', conflicts_with = "here")]
        gpu: Vec<String>,
        /// A .deploy file whose GPUs, models, quants and engines join the catalog.
        #[arg(long, conflicts_with = "here")]
        file: Option<PathBuf>,
        /// Only the GPUs of this machine (`deployfit hardware`).
        #[arg(long)]
        here: bool,
        #[arg(long, value_enum, default_value_t = TableFormat::Table)]
        format: TableFormat,
    },
    /// List models: catalog models and registry models matching `--search` / `--family`;
    /// with `--gpu X`, every catalog model on that GPU with the best weight format that
    /// fits and its speed.
    Models {
        /// A catalog GPU name (rtx_4090, h100_sxm5): what runs on it (same as `--gpu`).
        gpu_positional: Option<String>,
        /// What runs on this catalog GPU.
        #[arg(long)]
        gpu: Option<String>,
        /// Only models whose id or name contains this text (any case).
        #[arg(long)]
        search: Option<String>,
        /// Only this architecture family (config.json `model_type`: llama, qwen3, qwen3_moe, …).
        #[arg(long)]
        family: Option<String>,
        /// At most this many rows (0: all).
        #[arg(long, default_value_t = 50)]
        limit: usize,
        /// With `--gpu`: tokens per sequence.
        #[arg(long, default_value = "8k")]
        context: String,
        /// With `--gpu`: the engine.
        #[arg(long, default_value = "llamacpp")]
        engine: String,
        /// What runs on this machine's GPU (`deployfit hardware`), as with `--gpu`.
        #[arg(long, conflicts_with_all = ["gpu", "gpu_positional"])]
        here: bool,
        #[arg(long, value_enum, default_value_t = TableFormat::Table)]
        format: TableFormat,
    },
    /// The architecture card of one model: a catalog name, a Hugging Face id, an Ollama
    /// tag, or a file (config.json, safetensors, GGUF, a folder).
    Model {
        /// Catalog name, Hugging Face id, Ollama tag or path.
        id: String,
        #[arg(long, value_enum, default_value_t = TableFormat::Table)]
        format: TableFormat,
    },
    /// Print the `model` declaration a file describes (config.json, a folder, safetensors,
    /// GGUF), with its source, to check into a repository.
    Import {
        /// The file or folder.
        path: PathBuf,
        /// The declaration's name (default: from the file or folder name).
        #[arg(long)]
        name: Option<String>,
    },
    /// Write the launch command of a deployment for a serving engine.
    Export {
        /// The .deploy file.
        file: PathBuf,
        /// The deployment to export.
        #[arg(long)]
        deployment: String,
        /// The engine to launch it with (default: the deployment's engine).
        #[arg(long, value_enum)]
        engine: Option<ExportEngine>,
    },
    /// Detect this machine's GPUs (nvidia-smi, rocm-smi, system_profiler) and host memory,
    /// each GPU mapped to a catalog entry.
    Hardware {
        #[arg(long, value_enum, default_value_t = TableFormat::Table)]
        format: TableFormat,
    },
    /// Run the language server over standard input and output.
    Lsp,
    /// Format .deploy files in place (or only check that they are formatted).
    Fmt {
        /// Files or directories. Default: the current directory.
        paths: Vec<PathBuf>,
        /// Do not write; exit 1 when a file is not formatted.
        #[arg(long)]
        check: bool,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
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
}

#[derive(Clone, Copy, PartialEq, ValueEnum)]
enum TableFormat {
    Table,
    Json,
}

#[derive(Clone, Copy, PartialEq, ValueEnum)]
enum Sort {
    Speed,
    Cost,
    Memory,
}

#[derive(Clone, Copy, PartialEq, ValueEnum)]
enum ExportEngine {
    Vllm,
    Ollama,
    Llamacpp,
    Tgi,
    Lmdeploy,
    Mlx,
}

#[derive(Clone, Copy, PartialEq, ValueEnum)]
enum Weights {
    Files,
    Params,
}

#[derive(Clone, Copy, PartialEq, ValueEnum)]
enum Deny {
    Warnings,
}

/// Exit codes: 0 clean, 1 problems found, 2 usage or I/O error.
const EXIT_PROBLEMS: u8 = 1;
const EXIT_USAGE: u8 = 2;

/// `eprintln!` for what deployfit tells the user on stderr: the text quotes paths, names
/// and file contents, so hidden characters (controls, bidirectional formatting) are shown
/// escaped ([`render::terminal_text`]), never sent raw to the terminal.
macro_rules! say {
    ($($arg:tt)*) => {
        eprintln!("{}", render::terminal_text(&format!($($arg)*)))
    };
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            let code = if error.use_stderr() { EXIT_USAGE } else { 0 };
            let _ = error.print();
            return ExitCode::from(code);
        }
    };
    if !matches!(cli.command, Command::Lsp) {
        quiet_on_closed_pipe();
    }
    let result = match cli.command {
        Command::Check {
            paths,
            format,
            deny,
            fix,
            diff,
        } => {
            let mode = match (fix, diff) {
                (true, _) => Fixing::Write,
                (_, true) => Fixing::Diff,
                _ => Fixing::No,
            };
            check(paths, format, deny.contains(&Deny::Warnings), mode)
        }
        Command::Fmt { paths, check } => format_files(paths, check),
        Command::Report { paths, output, top } => report(paths, &output, top),
        Command::Lsp => deployfit_lsp::run_stdio()
            .map(|_| 0)
            .map_err(|e| format!("the language server stopped: {e}")),
        Command::Matrix {
            model,
            contexts,
            engine,
            seqs,
            kv,
            weights,
            file,
            format,
        } => matrix_table(
            MatrixArgs {
                model,
                contexts,
                engine,
                seqs,
                kv,
                weights,
                file,
            },
            format,
        ),
        Command::Explain {
            file,
            deployment,
            format,
        } => explain_file(&file, deployment.as_deref(), format),
        Command::Export {
            file,
            deployment,
            engine,
        } => export(&file, &deployment, engine),
        Command::Solve {
            file,
            deployment,
            top,
            format,
        } => solve(&file, deployment.as_deref(), top, format),
        Command::Gpus {
            model,
            quant,
            min_quant,
            max_quant,
            context,
            seqs,
            engine,
            kv,
            sort,
            min_memory,
            max_memory,
            vendor,
            segment,
            fits_only,
            gpu,
            file,
            here,
            format,
        } => gpus(
            deployfit_host::query::GpusRequest {
                model,
                quant,
                min_quant,
                max_quant,
                context: 0,
                seqs,
                engine,
                kv_cache: kv,
                sort: match sort {
                    Sort::Speed => deployfit_host::query::SortBy::Speed,
                    Sort::Cost => deployfit_host::query::SortBy::Cost,
                    Sort::Memory => deployfit_host::query::SortBy::Memory,
                },
                min_memory: None,
                max_memory: None,
                vendors: vendor,
                segments: segment,
                fits_only,
                gpus: gpu,
            },
            GpusArgs {
                context,
                min_memory,
                max_memory,
                file,
                here,
            },
            format,
        ),
        Command::Models {
            gpu_positional,
            gpu,
            search,
            family,
            limit,
            context,
            engine,
            here,
            format,
        } => match gpu.or(gpu_positional) {
            Some(gpu) => models(&gpu, &context, &engine, format),
            None if here => models_here(&context, &engine, format),
            None => list_models(search.as_deref(), family.as_deref(), limit, format),
        },
        Command::Model { id, format } => model_card(&id, format),
        Command::Import { path, name } => import(&path, name.as_deref()),
        Command::Hardware { format } => hardware(format),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(message) => {
            // Messages quote what the user typed and what files hold: hidden characters
            // are shown escaped, never sent raw to the terminal.
            say!("error: {message}");
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

/// Expands files and directories into the sorted list of `.deploy` files (the rules
/// are `deployfit_host::files::collect`'s); what a walk passed over goes to stderr.
fn collect(paths: Vec<PathBuf>) -> Result<Vec<PathBuf>, String> {
    let collected = files::collect(&paths).map_err(|e| e.to_string())?;
    for (path, reason) in &collected.skipped {
        say!("skipped `{}`: {reason}", path.display());
    }
    Ok(collected.files)
}

/// What `check` does with the structured fixes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Fixing {
    No,
    /// `--fix`: write them, then report what remains.
    Write,
    /// `--diff`: print them as a diff.
    Diff,
}

/// `--fix` / `--diff`: the fixed text of each checked file that changes. A file whose
/// bytes are not UTF-8 is not rewritten (its text was read with replacements).
fn fixed_files(
    workspace: &mut Workspace,
    loaded: &[(PathBuf, deployfit_host::db::SourceFile)],
) -> Vec<(PathBuf, String, String, usize)> {
    let mut out = Vec::new();
    for (path, file) in loaded {
        let Some(text) = workspace.source(path) else {
            continue;
        };
        let fixed = workspace.fix(*file);
        if fixed.applied.is_empty() || fixed.text == *text {
            continue;
        }
        let unchanged_on_disk = std::fs::read(path).is_ok_and(|bytes| bytes == text.as_bytes());
        if !unchanged_on_disk {
            say!(
                "not fixing `{}`: it is not valid UTF-8, or it changed while being checked",
                path.display()
            );
            continue;
        }
        out.push((
            path.clone(),
            text.to_string(),
            fixed.text,
            fixed.applied.len(),
        ));
    }
    out
}

/// Loads every file into the workspace, each with its path.
fn load_all(
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

fn check(
    paths: Vec<PathBuf>,
    format: Format,
    deny_warnings: bool,
    fixing: Fixing,
) -> Result<u8, String> {
    let files = collect(paths)?;
    if fixing != Fixing::No {
        let mut workspace = Workspace::new();
        let loaded = load_all(&mut workspace, &files)?;
        let changes = fixed_files(&mut workspace, &loaded);
        if fixing == Fixing::Diff {
            let mut out = String::new();
            for (path, old, new, _) in &changes {
                out.push_str(&deployfit_host::fixes::unified_diff(path, old, new));
            }
            print!("{}", render::terminal_text(&out));
            return Ok(if changes.is_empty() { 0 } else { EXIT_PROBLEMS });
        }
        let mut count = 0;
        for (path, _, new, applied) in &changes {
            std::fs::write(path, new)
                .map_err(|e| format!("cannot write `{}`: {e}", path.display()))?;
            count += applied;
        }
        say!(
            "fixed {count} issue{} in {} file{}",
            if count == 1 { "" } else { "s" },
            changes.len(),
            if changes.len() == 1 { "" } else { "s" }
        );
    }
    let mut workspace = Workspace::new();
    let mut loaded = Vec::new();
    for path in &files {
        let file = workspace
            .load(path)
            .map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
        loaded.push(file);
    }
    let mut diagnostics: Vec<Diagnostic> = loaded
        .iter()
        .flat_map(|file| workspace.check(*file))
        .collect();
    if deny_warnings {
        for diag in &mut diagnostics {
            if diag.severity == Severity::Warning {
                diag.severity = Severity::Error;
            }
        }
    }
    let summaries: Vec<_> = loaded
        .iter()
        .flat_map(|file| workspace.summaries(*file))
        .collect();
    let source = |path: &Path| workspace.source(path);
    let report = Report {
        diagnostics: &diagnostics,
        summaries: &summaries,
        source: &source,
    };
    let format = match format {
        Format::Human => OutputFormat::Human,
        Format::Json => OutputFormat::Json,
        Format::Github => OutputFormat::Github,
        Format::Sarif => OutputFormat::Sarif,
        Format::Gitlab => OutputFormat::Gitlab,
        Format::Junit => OutputFormat::Junit,
        Format::Rdjson => OutputFormat::Rdjson,
    };
    let stdout = std::io::stdout();
    let color = stdout.is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let text = render::render(
        format,
        &report,
        files.len(),
        HumanOptions { color, width: 100 },
    );
    let mut lock = stdout.lock();
    lock.write_all(text.as_bytes())
        .and_then(|_| lock.flush())
        .map_err(|e| format!("cannot write the report: {e}"))?;
    let failed = diagnostics.iter().any(|d| d.severity == Severity::Error);
    Ok(if failed { EXIT_PROBLEMS } else { 0 })
}

/// Whether two paths name one file: the same device and inode (so a hard link is caught),
/// else the same canonical path.
fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(x), Ok(y)) = (std::fs::metadata(a), std::fs::metadata(b)) {
            return x.dev() == y.dev() && x.ino() == y.ino();
        }
    }
    matches!(
        (std::fs::canonicalize(a), std::fs::canonicalize(b)),
        (Ok(x), Ok(y)) if x == y
    )
}

/// `deployfit report`: every deployment of the files explained, solved and checked (the
/// same calls as `explain`, `solve` and `check`), the matrix of each model (as `matrix`
/// computes it), rendered as one HTML page. Exit 0 once written, whatever the
/// deployments' diagnostics; 2 on a usage or I/O error.
fn report(paths: Vec<PathBuf>, output: &Path, top: usize) -> Result<u8, String> {
    use std::collections::BTreeMap;
    let top = top.max(1);
    let files = collect(paths)?;
    let mut workspace = Workspace::new();
    let loaded = load_all(&mut workspace, &files)?;
    // Never write the page over a file being reported on, or one it imports, whatever
    // the name it is reached by (a symbolic or a hard link).
    if output != Path::new("-")
        && workspace
            .user_paths()
            .iter()
            .chain(&files)
            .any(|input| same_file(output, input))
    {
        return Err(format!(
            "`{}` is one of the files to report on (or one they import); write the report to an .html file",
            output.display()
        ));
    }
    let mut reports = Vec::new();
    // Each model a deployment runs, with the files that use it and the formats.
    let mut models: BTreeMap<String, Vec<(deployfit_host::db::SourceFile, PathBuf)>> =
        BTreeMap::new();
    let mut quants: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (path, file) in &loaded {
        let diagnostics = workspace.check(*file);
        let summaries = workspace.summaries(*file);
        let mut explained: Vec<Option<deployfit_host::explain::Explanation>> = workspace
            .explain(*file)
            .into_iter()
            .map(Result::ok)
            .collect();
        let mut solutions = workspace.solve(*file, top);
        let mut deployments = Vec::new();
        for (i, summary) in summaries.into_iter().enumerate() {
            let explanation = explained.get_mut(i).and_then(Option::take);
            if let Some(e) = &explanation {
                let users = models.entry(e.setup.model.clone()).or_default();
                if !users.iter().any(|(_, p)| p == path) {
                    users.push((*file, path.clone()));
                }
                let used = quants.entry(e.setup.model.clone()).or_default();
                if !used.contains(&e.setup.quant) {
                    used.push(e.setup.quant.clone());
                }
            }
            let solution = solutions
                .iter()
                .position(|(name, _)| *name == summary.name)
                .map(|at| solutions.remove(at).1);
            deployments.push(report::DeploymentReport {
                summary,
                explanation,
                solution,
                diagnostics: Vec::new(),
            });
        }
        // A diagnostic belongs to the deployment whose lines hold its first line.
        let mut other = Vec::new();
        for diag in diagnostics {
            let owner = deployments.iter_mut().find(|d| {
                d.summary.file == diag.location.file
                    && (d.summary.line..=d.summary.end_line.max(d.summary.line))
                        .contains(&diag.location.line)
            });
            match owner {
                Some(owner) => owner.diagnostics.push(diag),
                None => other.push(diag),
            }
        }
        reports.push(report::FileReport {
            path: path.clone(),
            deployments,
            other,
        });
    }
    // The matrix of each model, as `deployfit matrix MODEL --file FILE` with the default
    // options computes it; computed in the scope of each file that uses the model, and
    // shown once when they agree.
    let mut matrices = Vec::new();
    for (model, users) in &models {
        let request = deployfit_host::matrix::MatrixRequest {
            model: model.clone(),
            contexts: vec![8 * 1024, 32 * 1024, 128 * 1024],
            engine: None,
            seqs: 1,
            kv_cache: "fp16".into(),
            theoretical_weights: false,
        };
        let mut distinct: Vec<(PathBuf, Result<deployfit_host::matrix::Matrix, String>)> =
            Vec::new();
        for (file, path) in users {
            let matrix = workspace.matrix(&request, Some(*file)).map_err(|e| e.0);
            if !distinct.iter().any(|(_, m)| *m == matrix) {
                distinct.push((path.clone(), matrix));
            }
        }
        let several = distinct.len() > 1;
        for (path, matrix) in distinct {
            matrices.push(report::ModelMatrix {
                model: model.clone(),
                file: several.then_some(path),
                matrix,
                used_quants: quants.get(model).cloned().unwrap_or_default(),
            });
        }
    }
    let deployments: usize = reports.iter().map(|f| f.deployments.len()).sum();
    let html = report::html(&report::Input {
        files: reports,
        models: matrices,
        top,
    });
    if output == Path::new("-") {
        let mut stdout = std::io::stdout().lock();
        stdout
            .write_all(html.as_bytes())
            .and_then(|_| stdout.flush())
            .map_err(|e| format!("cannot write the report: {e}"))?;
    } else {
        std::fs::write(output, html.as_bytes())
            .map_err(|e| format!("cannot write `{}`: {e}", output.display()))?;
        say!(
            "wrote {}: {deployments} deployment{} from {} file{}",
            render::terminal_text(&output.display().to_string()),
            if deployments == 1 { "" } else { "s" },
            files.len(),
            if files.len() == 1 { "" } else { "s" }
        );
    }
    Ok(0)
}

/// Parses a context length: `32768`, `32k`, `1M` (binary suffixes).
fn parse_context(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let (digits, factor) = match text.strip_suffix('k') {
        Some(rest) => (rest, 1024),
        None => match text.strip_suffix('M') {
            Some(rest) => (rest, 1024 * 1024),
            None => (text, 1),
        },
    };
    digits
        .replace('_', "")
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(factor))
        .filter(|n| *n > 0)
        .ok_or_else(|| format!("`{text}` is not a context length; write 8192, 8k or 1M"))
}

struct MatrixArgs {
    model: String,
    contexts: Vec<String>,
    engine: Option<String>,
    seqs: u64,
    kv: String,
    weights: Weights,
    file: Option<PathBuf>,
}

fn matrix_table(args: MatrixArgs, format: TableFormat) -> Result<u8, String> {
    let contexts = args
        .contexts
        .iter()
        .map(|c| parse_context(c))
        .collect::<Result<Vec<_>, _>>()?;
    if args.seqs == 0 {
        return Err("--seqs must be at least 1".into());
    }
    let request = deployfit_host::matrix::MatrixRequest {
        model: args.model,
        contexts,
        engine: args.engine,
        seqs: args.seqs,
        kv_cache: args.kv,
        theoretical_weights: args.weights == Weights::Params,
    };
    let mut workspace = Workspace::new();
    let file = match &args.file {
        Some(path) => Some(
            workspace
                .load(path)
                .map_err(|e| format!("cannot read `{}`: {e}", path.display()))?,
        ),
        None => None,
    };
    let matrix = workspace.matrix(&request, file).map_err(|e| e.0)?;
    let text = match format {
        TableFormat::Table => matrix::table(&matrix),
        TableFormat::Json => {
            let mut text = serde_json::to_string_pretty(&matrix)
                .map_err(|e| format!("cannot write JSON: {e}"))?;
            text.push('\n');
            text
        }
    };
    print!("{}", render::terminal_text(&text));
    Ok(0)
}

fn print_json<T: serde::Serialize>(value: &T) -> Result<(), String> {
    let mut text =
        serde_json::to_string_pretty(value).map_err(|e| format!("cannot write JSON: {e}"))?;
    text.push('\n');
    print!("{text}");
    Ok(())
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
        TableFormat::Json => {
            let entries: Vec<serde_json::Value> = results
                .iter()
                .map(|(deployment, r)| match r {
                    Ok(solution) => serde_json::to_value(solution).unwrap_or_default(),
                    Err(message) => {
                        serde_json::json!({ "deployment": deployment, "error": message })
                    }
                })
                .collect();
            print_json(&entries)?;
        }
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

/// The `gpus` arguments that need parsing or loading before the request is complete.
struct GpusArgs {
    context: String,
    min_memory: Option<String>,
    max_memory: Option<String>,
    file: Option<PathBuf>,
    here: bool,
}

fn gpus(
    mut request: deployfit_host::query::GpusRequest,
    args: GpusArgs,
    format: TableFormat,
) -> Result<u8, String> {
    use deployfit_host::query::parse_memory;
    request.context = parse_context(&args.context)?;
    if request.seqs == 0 {
        return Err("--seqs must be at least 1".into());
    }
    let memory = |flag: &str, text: &Option<String>| {
        text.as_deref()
            .map(parse_memory)
            .transpose()
            .map_err(|e| format!("--{flag}: {e}"))
    };
    request.min_memory = memory("min-memory", &args.min_memory)?;
    request.max_memory = memory("max-memory", &args.max_memory)?;
    let here = args.here;
    let mut workspace = Workspace::new();
    let file = match &args.file {
        Some(path) => Some(
            workspace
                .load(path)
                .map_err(|e| format!("cannot read `{}`: {e}", path.display()))?,
        ),
        None => None,
    };
    let report = if here {
        let (report, hardware) =
            workspace.gpus_here(&request, &deployfit_host::hardware::SystemProbe)?;
        if report.rows.is_empty() && format == TableFormat::Table {
            // Nothing of this machine is in the catalog: say what was found instead.
            print!("{}", render::terminal_text(&tables::hardware(&hardware)));
            return Ok(0);
        }
        report
    } else {
        workspace.gpus_with(&request, file)?
    };
    match format {
        TableFormat::Json => print_json(&report)?,
        TableFormat::Table => print!("{}", render::terminal_text(&tables::gpus(&report))),
    }
    Ok(0)
}

fn models(gpu: &str, context: &str, engine: &str, format: TableFormat) -> Result<u8, String> {
    let context = parse_context(context)?;
    let mut workspace = Workspace::new();
    let fits = workspace.models(gpu, context, engine)?;
    match format {
        TableFormat::Json => print_json(&fits)?,
        TableFormat::Table => print!("{}", render::terminal_text(&tables::models(gpu, &fits))),
    }
    Ok(0)
}

/// `models --here`: what runs on each kind of GPU this machine has; with none, what
/// `deployfit hardware` found (exit 0).
fn models_here(context: &str, engine: &str, format: TableFormat) -> Result<u8, String> {
    let context = parse_context(context)?;
    let mut workspace = Workspace::new();
    let hardware = workspace.hardware(&deployfit_host::hardware::SystemProbe);
    let mut kinds: Vec<String> = hardware
        .gpus
        .iter()
        .filter_map(|g| g.catalog.clone())
        .collect();
    kinds.sort();
    kinds.dedup();
    let mut answers = Vec::new();
    for gpu in &kinds {
        answers.push((gpu.clone(), workspace.models(gpu, context, engine)?));
    }
    match format {
        TableFormat::Json => {
            let object: serde_json::Map<String, serde_json::Value> = answers
                .iter()
                .map(|(gpu, fits)| {
                    Ok((
                        gpu.clone(),
                        serde_json::to_value(fits).map_err(|e| e.to_string())?,
                    ))
                })
                .collect::<Result<_, String>>()?;
            print_json(&serde_json::json!({ "gpus": object, "hardware": hardware }))?
        }
        TableFormat::Table if answers.is_empty() => {
            print!("{}", render::terminal_text(&tables::hardware(&hardware)))
        }
        TableFormat::Table => {
            for (gpu, fits) in &answers {
                print!("{}", render::terminal_text(&tables::models(gpu, fits)));
            }
        }
    }
    Ok(0)
}

fn list_models(
    search: Option<&str>,
    family: Option<&str>,
    limit: usize,
    format: TableFormat,
) -> Result<u8, String> {
    let mut workspace = Workspace::new();
    let rows = workspace.list_models(search, family, limit);
    match format {
        TableFormat::Json => print_json(&rows)?,
        TableFormat::Table => print!("{}", render::terminal_text(&tables::model_list(&rows))),
    }
    Ok(0)
}

fn model_card(id: &str, format: TableFormat) -> Result<u8, String> {
    let mut workspace = Workspace::new();
    let card = workspace.model_card(id)?;
    match format {
        TableFormat::Json => print_json(&card)?,
        TableFormat::Table => print!("{}", render::terminal_text(&tables::model_card(&card))),
    }
    Ok(0)
}

fn import(path: &Path, name: Option<&str>) -> Result<u8, String> {
    let name = match name {
        Some(name) => name.to_string(),
        None => deployfit_host::external::import_name(path),
    };
    let text = deployfit_host::external::import_declaration(path, &name)?;
    print!("{}", render::terminal_text(&text));
    Ok(0)
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

fn explain_file(path: &Path, only: Option<&str>, format: TableFormat) -> Result<u8, String> {
    let mut workspace = Workspace::new();
    let file = workspace
        .load(path)
        .map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
    let mut results = workspace.explain(file);
    if let Some(name) = only {
        let names: Vec<String> = results
            .iter()
            .map(|r| match r {
                Ok(e) => e.deployment.clone(),
                Err(n) => n.deployment.clone(),
            })
            .collect();
        if !names.iter().any(|n| n == name) {
            let hint = deployfit_host::names::closest(name, names.iter().map(String::as_str))
                .map(|s| format!("; did you mean `{s}`?"))
                .unwrap_or_default();
            return Err(format!(
                "`{}` has no deployment `{name}`{hint}",
                path.display()
            ));
        }
        results.retain(|r| match r {
            Ok(e) => e.deployment == name,
            Err(n) => n.deployment == name,
        });
    }
    // A mixed fleet has no single deployment's figures: it is explained by its fleet.
    let failed = results
        .iter()
        .any(|r| r.as_ref().is_err_and(|n| n.fleet.is_none()));
    let text = match format {
        TableFormat::Json => {
            // Explanations serialize as they are (their fields in declaration order); a
            // mixed fleet's object gains its deployment's name.
            #[derive(serde::Serialize)]
            #[serde(untagged)]
            enum Item<'a, T: serde::Serialize> {
                Explained(&'a T),
                Fleet(serde_json::Value),
            }
            let explained: Vec<Item<'_, _>> = results
                .iter()
                .filter_map(|r| match r {
                    Ok(e) => Some(Item::Explained(e)),
                    Err(n) => n.fleet.as_ref().and_then(|fleet| {
                        let mut value = serde_json::to_value(fleet).ok()?;
                        value.as_object_mut()?.insert(
                            "deployment".into(),
                            serde_json::Value::String(n.deployment.clone()),
                        );
                        Some(Item::Fleet(value))
                    }),
                })
                .collect();
            let mut text = serde_json::to_string_pretty(&explained)
                .map_err(|e| format!("cannot write JSON: {e}"))?;
            text.push('\n');
            text
        }
        TableFormat::Table => results
            .iter()
            .map(|r| match r {
                Ok(e) => explain::table(e),
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
        match fmt::format(&text) {
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
