//! `deployfit check`: check .deploy files: syntax, names, units, requires and rules.

use super::*;

// The arguments of `deployfit check`.
#[derive(Args)]
pub struct CmdArgs {
    /// Files or directories (searched recursively for *.deploy), or `-` for standard
    /// input (named `<stdin>` in the report). Default: the current directory.
    pub paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// Treat warnings as errors.
    #[arg(long, value_enum)]
    pub deny: Vec<Deny>,
    /// Apply the unambiguous fixes of errors and warnings to the files, then report what remains.
    #[arg(long, conflicts_with = "diff")]
    pub fix: bool,
    /// Print the fixes `--fix` would apply as a unified diff, and change nothing (exit 1 when there are any).
    #[arg(long)]
    pub diff: bool,
    /// Report only diagnostics of this severity and above (`warning`: no notes, as CI
    /// annotations and code-scanning alerts want); the exit code is unchanged.
    #[arg(long, value_enum, default_value_t = MinSeverity::Info)]
    pub min_severity: MinSeverity,
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, ValueEnum)]
pub enum MinSeverity {
    Info,
    Warning,
    Error,
}

pub fn run(args: CmdArgs) -> Result<u8, String> {
    let CmdArgs {
        paths,
        format,
        deny,
        fix,
        diff,
        min_severity,
    } = args;
    let mode = match (fix, diff) {
        (true, _) => Fixing::Write,
        (_, true) => Fixing::Diff,
        _ => Fixing::No,
    };
    check(
        paths,
        format,
        deny.contains(&Deny::Warnings),
        mode,
        min_severity,
    )
}

/// The name standard input has in reports (`deployfit check -`).
const STDIN_NAME: &str = "<stdin>";

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

fn check(
    paths: Vec<PathBuf>,
    format: Format,
    deny_warnings: bool,
    fixing: Fixing,
    min_severity: MinSeverity,
) -> Result<u8, String> {
    let stdin = paths.iter().any(|p| p.as_os_str() == "-");
    if stdin && paths.len() > 1 {
        return Err("`-` (standard input) is checked on its own: pass no other paths".into());
    }
    if stdin && fixing != Fixing::No {
        return Err(
            "`--fix` and `--diff` rewrite files: save standard input to a `.deploy` file first"
                .into(),
        );
    }
    let files = if stdin {
        vec![PathBuf::from(STDIN_NAME)]
    } else {
        collect(paths)?
    };
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
    if stdin {
        let mut bytes = Vec::new();
        std::io::Read::take(
            std::io::stdin().lock(),
            deployfit_host::files::MAX_FILE_BYTES + 1,
        )
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read standard input: {e}"))?;
        let file = workspace
            .load_bytes(Path::new(STDIN_NAME), bytes)
            .map_err(|e| format!("cannot read standard input: {e}"))?;
        loaded.push(file);
    }
    for path in files.iter().filter(|_| !stdin) {
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
    let failed = diagnostics.iter().any(|d| d.severity == Severity::Error);
    let rank = |s: Severity| match s {
        Severity::Info => MinSeverity::Info,
        Severity::Warning => MinSeverity::Warning,
        Severity::Error => MinSeverity::Error,
    };
    diagnostics.retain(|d| rank(d.severity) >= min_severity);
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
        Format::Markdown => OutputFormat::Markdown,
    };
    let stdout = std::io::stdout();
    let color = use_color(stdout.is_terminal());
    let text = render::render(
        format,
        &report,
        files.len(),
        HumanOptions {
            color,
            width: 100,
            quiet: quiet(),
        },
    );
    let mut lock = stdout.lock();
    lock.write_all(text.as_bytes())
        .and_then(|_| lock.flush())
        .map_err(|e| format!("cannot write the report: {e}"))?;
    Ok(if failed { EXIT_PROBLEMS } else { 0 })
}
