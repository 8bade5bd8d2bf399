//! `matrix`: the seed pages' VRAM table for one model — a row per weight format, the
//! weights alone and the total at each context, and the smallest catalog GPU that fits.

use serde::Serialize;

use crate::db::{Db, SourceFile};
use crate::eval::Entry;
use crate::eval::deployment::model_for_query;
use crate::eval::estimate::{self, Inputs};
use crate::names::Scope;
use crate::syntax::ast::DeclKind;

/// What to tabulate.
#[derive(Clone, Debug)]
pub struct MatrixRequest {
    /// Catalog name, Hugging Face id or Ollama tag.
    pub model: String,
    pub contexts: Vec<u64>,
    /// One engine, or `None` for the range over every engine that runs each format.
    pub engine: Option<String>,
    pub seqs: u64,
    pub kv_cache: String,
    /// Weights from params × bpw even where the model lists artifact sizes.
    pub theoretical_weights: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Matrix {
    pub model: String,
    pub contexts: Vec<u64>,
    pub engine: Option<String>,
    pub seqs: u64,
    pub kv_cache: String,
    /// The context at which the smallest fitting GPU is chosen (the middle one).
    pub gpu_context: u64,
    pub rows: Vec<Row>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    pub quant: String,
    pub bpw: f64,
    pub weights_bytes: i128,
    /// `"files"` or `"params × bpw"`.
    pub weights_source: &'static str,
    /// One total per context: the engine's, or the lowest and highest over the engines.
    pub totals: Vec<Total>,
    /// The engines the figures cover.
    pub engines: Vec<String>,
    /// The smallest catalog GPU (by memory, then price) that holds the model at the
    /// middle context with one GPU, if any; mining and embedded parts are skipped
    /// (`candidate::ON_REQUEST_SEGMENTS`).
    pub smallest_gpu: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Total {
    #[serde(rename = "context_tokens")]
    pub context: u64,
    pub low_bytes: i128,
    pub high_bytes: i128,
}

/// Why a matrix cannot be built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatrixError(pub String);

fn lookup<'db>(
    db: &'db dyn Db,
    scope: &Scope<'db>,
    kind: DeclKind,
    name: &str,
) -> Result<&'db Entry<'db>, MatrixError> {
    crate::eval::entry::catalog_entry(db, scope, kind, name).map_err(MatrixError)
}

/// Builds the matrix against the names visible from `file` (the stdlib, at least).
pub fn matrix(
    db: &dyn Db,
    file: SourceFile,
    request: &MatrixRequest,
) -> Result<Matrix, MatrixError> {
    let scope = crate::names::scope(db, file);
    let model_name = model_for_query(db, scope, &request.model).map_err(MatrixError)?;
    let model = lookup(db, scope, DeclKind::Model, &model_name)?;
    let kv = lookup(db, scope, DeclKind::Kv, &request.kv_cache)?;
    let engines: Vec<(&str, &Entry<'_>)> = match &request.engine {
        Some(name) => vec![(name.as_str(), lookup(db, scope, DeclKind::Engine, name)?)],
        None => scope
            .names(DeclKind::Engine)
            .map(|(name, key)| (name, crate::eval::entry_of(db, key)))
            // Other releases of an engine (`release_of`) are not engines of their own.
            .filter(|(_, entry)| entry.as_engine().release_of.is_none())
            .collect(),
    };
    let gpu_context = request.contexts[request.contexts.len() / 2];
    let mut gpus: Vec<(f64, f64, &str, &Entry<'_>)> = scope
        .names(DeclKind::Gpu)
        .map(|(name, key)| (name, crate::eval::entry_of(db, key)))
        // Mining and embedded parts are not suggested unasked.
        .filter(|(_, entry)| crate::candidate::buyable_segment(entry.as_gpu().segment))
        .filter_map(|(name, entry)| {
            let memory = entry.as_gpu().memory?;
            Some((
                memory,
                entry.as_gpu().price.unwrap_or(f64::INFINITY),
                name,
                entry,
            ))
        })
        .collect();
    gpus.sort_by(|a, b| {
        a.0.total_cmp(&b.0)
            .then(a.1.total_cmp(&b.1))
            .then(a.2.cmp(b.2))
    });

    let mut rows = Vec::new();
    for (quant_name, key) in scope.names(DeclKind::Quant) {
        let quant = crate::eval::entry_of(db, key);
        let Some(bpw) = quant.as_quant().bpw else {
            continue;
        };
        let runs: Vec<(&str, &Entry<'_>)> = engines
            .iter()
            .copied()
            .filter(|(name, engine)| quant.runs_on_engine(name, engine))
            .collect();
        let Some((_, first)) = runs.first().copied() else {
            continue;
        };
        // Totals need no GPU: the model entry stands in, and has no `memory`.
        let breakdown = |engine: &Entry<'_>, context: u64| {
            estimate::estimate(&Inputs {
                theoretical_weights: request.theoretical_weights,
                ..Inputs::on_one_gpu(
                    (model, &model_name),
                    (quant, quant_name),
                    kv,
                    (engine, ""),
                    (model, ""),
                    context,
                    request.seqs,
                )
            })
            .breakdown
        };
        let Some(base) = breakdown(first, request.contexts[0]) else {
            continue;
        };
        let totals = request
            .contexts
            .iter()
            .map(|&context| {
                let figures: Vec<i128> = runs
                    .iter()
                    .filter_map(|(_, engine)| breakdown(engine, context).map(|b| b.total_bytes))
                    .collect();
                Total {
                    context,
                    low_bytes: figures.iter().copied().min().unwrap_or(0),
                    high_bytes: figures.iter().copied().max().unwrap_or(0),
                }
            })
            .collect();
        // The smallest GPU is chosen with the engine that needs the least memory, the low
        // end of the range the row prints.
        let (lightest_name, lightest) = runs
            .iter()
            .copied()
            .min_by_key(|(_, engine)| {
                breakdown(engine, gpu_context)
                    .map(|b| b.total_bytes)
                    .unwrap_or(i128::MAX)
            })
            .unwrap_or(runs[0]);
        let smallest_gpu = gpus
            .iter()
            .find(|(_, _, gpu_name, gpu)| {
                let inputs = Inputs {
                    theoretical_weights: request.theoretical_weights,
                    arch: crate::eval::support::arch_of(db, scope, gpu),
                    ..Inputs::on_one_gpu(
                        (model, &model_name),
                        (quant, quant_name),
                        kv,
                        (lightest, lightest_name),
                        (gpu, gpu_name),
                        gpu_context,
                        request.seqs,
                    )
                };
                // A GPU that cannot run the format (FP8 on Turing) is no answer.
                inputs.support() != crate::eval::support::Support::Unsupported
                    && estimate::fits(&inputs) == Some(true)
            })
            .map(|(_, _, name, _)| name.to_string());
        rows.push(Row {
            quant: quant_name.to_string(),
            bpw,
            weights_bytes: base.weights_bytes,
            weights_source: base.weights_source,
            totals,
            engines: runs.iter().map(|(name, _)| name.to_string()).collect(),
            smallest_gpu,
        });
    }
    rows.sort_by(|a, b| b.bpw.total_cmp(&a.bpw).then(a.quant.cmp(&b.quant)));
    Ok(Matrix {
        model: model_name,
        contexts: request.contexts.clone(),
        engine: request.engine.clone(),
        seqs: request.seqs,
        kv_cache: request.kv_cache.clone(),
        gpu_context,
        rows,
    })
}
