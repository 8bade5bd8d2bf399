//! Ad hoc queries without a file, as seed page 004 answers them: which catalog GPUs run
//! a model (`gpus`), and which models run on a GPU (`models`).

use serde::Serialize;

use crate::db::{Db, SourceFile};
use crate::eval::deployment::model_for_query;
use crate::eval::estimate::{self, Inputs, Verdict};
use crate::eval::{Entry, Value};
use crate::names::Scope;
use crate::syntax::ast::DeclKind;
use crate::units::per_hour;

/// How `gpus` orders its rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortBy {
    Speed,
    Cost,
    Memory,
}

#[derive(Clone, Debug)]
pub struct GpusRequest {
    pub model: String,
    /// Only this weight format.
    pub quant: Option<String>,
    /// No format with fewer bits per weight than this one.
    pub min_quant: Option<String>,
    pub context: u64,
    pub seqs: u64,
    pub engine: String,
    pub kv_cache: String,
    pub sort: SortBy,
}

/// One catalog GPU for one model: the best weight format that fits.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Fit {
    pub gpu: String,
    pub name: String,
    pub model: String,
    pub memory_bytes: Option<i128>,
    pub bandwidth_gbs: Option<f64>,
    /// The weight format with the most bits per weight that fits (or the smallest allowed
    /// one, when none fits).
    pub quant: Option<String>,
    pub bpw: Option<f64>,
    pub needed_bytes: Option<i128>,
    pub usable_bytes: Option<i128>,
    pub verdict: Option<Verdict>,
    pub fits: bool,
    pub decode_tps: Option<f64>,
    pub decode_tps_low: Option<f64>,
    pub decode_tps_high: Option<f64>,
    pub cost_per_hour: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GpusReport {
    pub model: String,
    pub context: u64,
    pub seqs: u64,
    pub engine: String,
    pub rows: Vec<Fit>,
    /// How many catalog GPUs run the model at all, of how many.
    pub runs_on: usize,
    pub total: usize,
    /// The card with the least memory that fits, the fastest, and the median speed.
    pub smallest: Option<String>,
    pub fastest: Option<String>,
    pub median_decode_tps: Option<f64>,
}

use crate::eval::entry::catalog_entry as lookup;

struct Setup<'a, 'db> {
    db: &'db dyn Db,
    scope: &'a Scope<'db>,
    kv: &'db Entry<'db>,
    engine: &'db Entry<'db>,
    engine_name: &'a str,
    context: u64,
    seqs: u64,
}

/// The best format of `quants` (most bits first) for one model on one GPU.
fn best_fit<'a, 'db>(
    setup: &Setup<'a, 'db>,
    model_name: &'a str,
    model: &'a Entry<'db>,
    gpu_name: &'a str,
    gpu: &'a Entry<'db>,
    quants: &'a [(&'a str, f64, &'a Entry<'db>)],
) -> Fit {
    let inputs = |quant_name: &'a str, quant: &'a Entry<'db>| {
        Inputs::on_one_gpu(
            (model, model_name),
            (quant, quant_name),
            setup.kv,
            (setup.engine, setup.engine_name),
            (gpu, gpu_name),
            setup.context,
            setup.seqs,
        )
    };
    let chosen = quants
        .iter()
        .find(|(name, _, quant)| estimate::fits(&inputs(name, quant)) == Some(true))
        .or(quants.last());
    let name = match gpu.fields.get("name") {
        Some(Value::Str(name)) => name.clone(),
        _ => gpu_name.to_string(),
    };
    let mut fit = Fit {
        gpu: gpu_name.to_string(),
        name,
        model: model_name.to_string(),
        memory_bytes: gpu.number("memory").map(|m| m as i128),
        bandwidth_gbs: gpu.number("bandwidth").map(|b| b / 1e9),
        quant: None,
        bpw: None,
        needed_bytes: None,
        usable_bytes: None,
        verdict: None,
        fits: false,
        decode_tps: None,
        decode_tps_low: None,
        decode_tps_high: None,
        cost_per_hour: estimate::hourly_price(gpu).map(per_hour),
    };
    let Some((quant_name, bpw, quant)) = chosen else {
        return fit;
    };
    let result = estimate::estimate(&inputs(quant_name, quant));
    let figures = &result.figures;
    fit.quant = Some(quant_name.to_string());
    fit.bpw = Some(*bpw);
    if let Some(b) = &result.breakdown {
        fit.needed_bytes = Some(b.per_gpu_bytes);
        fit.usable_bytes = b.usable_bytes;
        fit.verdict = b.verdict;
        fit.fits = b.verdict.is_some_and(|v| v != Verdict::DoesNotFit);
    }
    // A speed only means something where the model fits.
    if fit.fits {
        fit.decode_tps = figures.decode_tps.clone().ok();
        fit.decode_tps_low = figures.decode_tps_low.clone().ok();
        fit.decode_tps_high = figures.decode_tps_high.clone().ok();
    }
    fit
}

/// The weight formats to try, most bits per weight first.
fn quant_list<'db>(
    db: &'db dyn Db,
    scope: &'db Scope<'db>,
    engine: &str,
    only: Option<&str>,
    min: Option<&str>,
) -> Result<Vec<(&'db str, f64, &'db Entry<'db>)>, String> {
    let floor = match min {
        Some(name) => lookup(db, scope, DeclKind::Quant, name)?
            .number("bpw")
            .unwrap_or(0.0),
        None => 0.0,
    };
    let engine_entry = lookup(db, scope, DeclKind::Engine, engine)?;
    if let Some(name) = only {
        lookup(db, scope, DeclKind::Quant, name)?;
    }
    let mut quants: Vec<(&'db str, f64, &'db Entry<'db>)> = scope
        .names(DeclKind::Quant)
        .filter(|(name, _)| only.is_none_or(|o| o == *name))
        .map(|(name, key)| (name, crate::eval::entry_of(db, key)))
        .filter_map(|(name, entry)| entry.number("bpw").map(|bpw| (name, bpw, entry)))
        .filter(|(_, bpw, entry)| *bpw >= floor && entry.runs_on_engine(engine, engine_entry))
        .collect();
    quants.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
    if quants.is_empty() {
        return Err(format!(
            "no weight format runs on `{engine}` with these limits"
        ));
    }
    Ok(quants)
}

/// Every catalog GPU for one model.
pub fn gpus(db: &dyn Db, file: SourceFile, request: &GpusRequest) -> Result<GpusReport, String> {
    let scope = crate::names::scope(db, file);
    let model_name = model_for_query(db, scope, &request.model)?;
    let model = lookup(db, scope, DeclKind::Model, &model_name)?;
    let setup = Setup {
        db,
        scope,
        kv: lookup(db, scope, DeclKind::Kv, &request.kv_cache)?,
        engine: lookup(db, scope, DeclKind::Engine, &request.engine)?,
        engine_name: &request.engine,
        context: request.context,
        seqs: request.seqs,
    };
    let _ = (setup.db, setup.scope);
    let quants = quant_list(
        db,
        scope,
        &request.engine,
        request.quant.as_deref(),
        request.min_quant.as_deref(),
    )?;
    let mut rows: Vec<Fit> = scope
        .names(DeclKind::Gpu)
        // `gpu = cpu` (`device = cpu`) is not a card to list.
        .filter(|(_, key)| crate::eval::entry_of(db, *key).symbol("device") != Some("cpu"))
        .map(|(name, key)| {
            best_fit(
                &setup,
                &model_name,
                model,
                name,
                crate::eval::entry_of(db, key),
                &quants,
            )
        })
        .collect();
    let key = |f: &Fit| match request.sort {
        SortBy::Speed => -f.decode_tps.unwrap_or(0.0),
        SortBy::Cost => f.cost_per_hour.unwrap_or(f64::INFINITY),
        SortBy::Memory => f.memory_bytes.map(|m| m as f64).unwrap_or(f64::INFINITY),
    };
    rows.sort_by(|a, b| {
        b.fits
            .cmp(&a.fits)
            .then(key(a).total_cmp(&key(b)))
            .then(a.gpu.cmp(&b.gpu))
    });
    let mut report = GpusReport {
        model: model_name,
        context: request.context,
        seqs: request.seqs,
        engine: request.engine.clone(),
        runs_on: 0,
        total: 0,
        rows,
        smallest: None,
        fastest: None,
        median_decode_tps: None,
    };
    report.summarize();
    Ok(report)
}

impl GpusReport {
    /// Keeps the rows of the GPUs `keep` accepts (`gpus --here`: this machine's), and
    /// sums them up again.
    pub fn restrict(&mut self, keep: impl Fn(&str) -> bool) {
        self.rows.retain(|row| keep(&row.gpu));
        self.summarize();
    }

    /// How many GPUs run the model, of how many; the smallest and the fastest that fit;
    /// the median speed.
    fn summarize(&mut self) {
        let fitting: Vec<&Fit> = self.rows.iter().filter(|f| f.fits).collect();
        self.smallest = fitting
            .iter()
            .min_by(|a, b| {
                a.memory_bytes
                    .unwrap_or(i128::MAX)
                    .cmp(&b.memory_bytes.unwrap_or(i128::MAX))
                    .then(a.gpu.cmp(&b.gpu))
            })
            .map(|f| f.gpu.clone());
        self.fastest = fitting
            .iter()
            .max_by(|a, b| {
                a.decode_tps
                    .unwrap_or(0.0)
                    .total_cmp(&b.decode_tps.unwrap_or(0.0))
                    .then(b.gpu.cmp(&a.gpu))
            })
            .map(|f| f.gpu.clone());
        let mut speeds: Vec<f64> = fitting.iter().filter_map(|f| f.decode_tps).collect();
        speeds.sort_by(f64::total_cmp);
        self.median_decode_tps = (!speeds.is_empty()).then(|| speeds[speeds.len() / 2]);
        self.runs_on = fitting.len();
        self.total = self.rows.len();
    }
}

/// Every catalog model on one GPU.
pub fn models(
    db: &dyn Db,
    file: SourceFile,
    gpu_name: &str,
    context: u64,
    engine: &str,
) -> Result<Vec<Fit>, String> {
    let scope = crate::names::scope(db, file);
    let gpu = lookup(db, scope, DeclKind::Gpu, gpu_name)?;
    let setup = Setup {
        db,
        scope,
        kv: lookup(db, scope, DeclKind::Kv, "fp16")?,
        engine: lookup(db, scope, DeclKind::Engine, engine)?,
        engine_name: engine,
        context,
        seqs: 1,
    };
    let quants = quant_list(db, scope, engine, None, None)?;
    let mut rows: Vec<Fit> = scope
        .names(DeclKind::Model)
        .map(|(name, key)| {
            let model = crate::eval::entry_of(db, key);
            // Past the model's window the context is capped to it.
            let window = model
                .number("max_context")
                .map(|w| w as u64)
                .unwrap_or(context);
            let capped = Setup {
                context: context.min(window),
                ..setup_clone(&setup)
            };
            best_fit(&capped, name, model, gpu_name, gpu, &quants)
        })
        .collect();
    rows.sort_by(|a, b| {
        b.fits
            .cmp(&a.fits)
            .then(
                b.decode_tps
                    .unwrap_or(0.0)
                    .total_cmp(&a.decode_tps.unwrap_or(0.0)),
            )
            .then(a.model.cmp(&b.model))
    });
    Ok(rows)
}

fn setup_clone<'a, 'db>(setup: &Setup<'a, 'db>) -> Setup<'a, 'db> {
    Setup {
        db: setup.db,
        scope: setup.scope,
        kv: setup.kv,
        engine: setup.engine,
        engine_name: setup.engine_name,
        context: setup.context,
        seqs: setup.seqs,
    }
}
