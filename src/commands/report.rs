//! `deployfit report`: write one self-contained HTML report of the deployments in files and directories: memory bars, speed and cost, diagnostics, the solver's candidates, model matrices.

use super::*;

// The arguments of `deployfit report`.
#[derive(Args)]
pub struct CmdArgs {
    /// Files or directories (searched recursively for *.deploy, as `check` does).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// The HTML file to write; `-` writes to standard output.
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// How many of the solver's candidates to show for a deployment with holes.
    #[arg(long, default_value_t = 20)]
    pub top: usize,
}

pub fn run(args: CmdArgs) -> Result<u8, String> {
    report(args.paths, &args.output, args.top)
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
    // The engines each model runs on in the report's deployments.
    let mut engines: BTreeMap<String, Vec<String>> = BTreeMap::new();
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
                let on = engines.entry(e.setup.model.clone()).or_default();
                if !on.contains(&e.setup.engine) {
                    on.push(e.setup.engine.clone());
                }
            }
            let solution = solutions
                .iter()
                .position(|(name, _)| *name == summary.name)
                .map(|at| solutions.remove(at).1);
            deployments.push(output::report::DeploymentReport {
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
        reports.push(output::report::FileReport {
            path: path.clone(),
            deployments,
            other,
        });
    }
    // The matrix of each model, as `deployfit matrix MODEL --file FILE --engine E` computes
    // it for the one engine the report's deployments run it on (the formats that engine
    // runs), else over every engine; computed in the scope of each file that uses the
    // model, and shown once when they agree.
    let mut matrices = Vec::new();
    for (model, users) in &models {
        let engine = match engines.get(model).map(Vec::as_slice) {
            Some([one]) => Some(one.clone()),
            _ => None,
        };
        let request = deployfit_host::matrix::MatrixRequest {
            model: model.clone(),
            contexts: vec![8 * 1024, 32 * 1024, 128 * 1024],
            engine,
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
            matrices.push(output::report::ModelMatrix {
                model: model.clone(),
                file: several.then_some(path),
                matrix,
                used_quants: quants.get(model).cloned().unwrap_or_default(),
            });
        }
    }
    let deployments: usize = reports.iter().map(|f| f.deployments.len()).sum();
    let html = output::report::html(&output::report::Input {
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
