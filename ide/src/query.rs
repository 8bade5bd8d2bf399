//! Ad hoc queries without a file, as seed page 004 answers them: which catalog GPUs run
//! a model (`gpus`), and which models run on a GPU (`models`).

use serde::Serialize;

use crate::db::{Db, SourceFile};
use crate::eval::Entry;
use crate::eval::deployment::model_for_query;
use crate::eval::estimate::{self, Inputs, Verdict};
use crate::eval::schema::Segment;
use crate::names::Scope;
use crate::names::resolve::shown;
use crate::syntax::ast::DeclKind;
use crate::units::per_hour;

/// How `gpus` orders its rows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SortBy {
    #[default]
    Speed,
    Cost,
    Memory,
}

/// What `gpus` is asked. `Default` gives no filter at all (an empty model, context 0):
/// set at least `model`, `context`, `seqs`, `engine` and `kv_cache`.
#[derive(Clone, Debug, Default)]
pub struct GpusRequest {
    pub model: String,
    /// Only this weight format.
    pub quant: Option<String>,
    /// No format with fewer bits per weight than this one.
    pub min_quant: Option<String>,
    /// No format with more bits per weight than this one (a quality cap: `Q8_0` keeps
    /// `bf16` out of every row, the fastest included).
    pub max_quant: Option<String>,
    pub context: u64,
    pub seqs: u64,
    pub engine: String,
    pub kv_cache: String,
    pub sort: SortBy,
    /// Only GPUs with at least this much memory (bytes; `parse_memory`).
    pub min_memory: Option<i128>,
    /// Only GPUs with at most this much memory (bytes).
    pub max_memory: Option<i128>,
    /// Only GPUs of these vendors (`schema::VENDORS`); empty: any.
    pub vendors: Vec<String>,
    /// Only GPUs of these segments (`schema::SEGMENTS`); empty: any, a GPU without a
    /// segment included. Naming `mining` or `embedded` here also lets the summaries name
    /// such cards (`candidate::ON_REQUEST_SEGMENTS`).
    pub segments: Vec<String>,
    /// Only the rows where the model fits.
    pub fits_only: bool,
    /// Exactly these catalog GPUs, in this order (seed 000's hardware table); empty: all.
    pub gpus: Vec<String>,
}

/// The longest list `--vendor`, `--segment` or `--gpu` may give.
pub const MAX_LIST: usize = 1024;

/// The memory classes of the summary (seed 004's FAQ: "can I run it on a GPU holding
/// 8 GB?"): a GPU is in class `c` when its memory is at least `c` GiB and below the next
/// class; the last class has no upper bound.
pub const MEMORY_CLASSES_GIB: &[u64] = &[8, 12, 16, 24, 32, 48, 80];

/// One catalog GPU for one model: the best weight format that fits.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Fit {
    pub gpu: String,
    pub name: String,
    pub model: String,
    pub memory_bytes: Option<i128>,
    pub bandwidth_gbs: Option<f64>,
    /// The GPU's maker, segment and architecture, as the catalog gives them.
    pub vendor: Option<String>,
    pub segment: Option<String>,
    pub arch: Option<String>,
    /// The weight format with the most bits per weight that fits (or the smallest allowed
    /// one, when none fits).
    pub quant: Option<String>,
    pub bpw: Option<f64>,
    pub needed_bytes: Option<i128>,
    pub usable_bytes: Option<i128>,
    /// The percentage of the GPU's memory the deployment needs: `needed_bytes /
    /// memory_bytes × 100` (above 100 where it does not fit).
    #[serde(rename = "memory_percent")]
    pub memory_share: Option<f64>,
    pub verdict: Option<Verdict>,
    pub fits: bool,
    pub decode_tps: Option<f64>,
    pub decode_tps_low: Option<f64>,
    pub decode_tps_high: Option<f64>,
    #[serde(rename = "cost_per_hour_usd")]
    pub cost_per_hour: Option<f64>,
}

/// One memory class of a `gpus` report: the GPUs listed whose memory falls in it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MemoryClass {
    /// The class, in GiB (8, 12, …, 80).
    pub class_gib: u64,
    /// Memory at least this (bytes)…
    pub min_bytes: i128,
    /// …and below this (bytes); none for the last class.
    pub below_bytes: Option<i128>,
    /// Listed GPUs in the class, and how many of them run the model.
    pub gpus: usize,
    pub fitting: usize,
    /// The weight format with the most bits per weight that fits some GPU of the class,
    /// and the least memory it needs there.
    pub best_quant: Option<String>,
    pub best_bpw: Option<f64>,
    pub needed_bytes: Option<i128>,
    /// The median decode speed over the class's fitting GPUs.
    pub median_decode_tps: Option<f64>,
    /// The fastest fitting GPU of the class (a buyable one first, as for `fastest`) and
    /// its speed.
    pub fastest: Option<String>,
    pub best_decode_tps: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GpusReport {
    pub model: String,
    #[serde(rename = "context_tokens")]
    pub context: u64,
    pub seqs: u64,
    pub engine: String,
    pub rows: Vec<Fit>,
    /// How many of the listed GPUs run the model at all, of how many listed.
    pub runs_on: usize,
    pub total: usize,
    /// How many GPUs the catalog has, before any filter.
    pub catalog: usize,
    /// The card with the least memory that fits, the fastest, and the median speed. The
    /// two cards named are buyable ones (`candidate::ON_REQUEST_SEGMENTS` excluded) when
    /// any of those fits, unless the request named segments.
    pub smallest: Option<String>,
    pub fastest: Option<String>,
    pub median_decode_tps: Option<f64>,
    /// The summary per memory class (`MEMORY_CLASSES_GIB`), smallest class first.
    pub memory_classes: Vec<MemoryClass>,
    /// Whether the cards the summaries name prefer buyable segments (no `--segment`).
    #[serde(skip)]
    prefer_buyable: bool,
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
    // The GPU's architecture decides whether a format runs at all (FP8 on a T4 does not)
    // and how (upcast weights take 16-bit memory).
    let arch = crate::eval::support::arch_of(setup.db, setup.scope, gpu);
    let inputs = |quant_name: &'a str, quant: &'a Entry<'db>| Inputs {
        arch,
        ..Inputs::on_one_gpu(
            (model, model_name),
            (quant, quant_name),
            setup.kv,
            (setup.engine, setup.engine_name),
            (gpu, gpu_name),
            setup.context,
            setup.seqs,
        )
    };
    let runs = |name: &'a str, quant: &'a Entry<'db>| {
        inputs(name, quant).support() != crate::eval::support::Support::Unsupported
    };
    let chosen = quants
        .iter()
        .find(|(name, _, quant)| {
            runs(name, quant) && estimate::fits(&inputs(name, quant)) == Some(true)
        })
        .or_else(|| {
            quants
                .iter()
                .rev()
                .find(|(name, _, quant)| runs(name, quant))
        })
        .or(quants.last());
    let name = gpu
        .as_gpu()
        .name
        .clone()
        .unwrap_or_else(|| gpu_name.to_string());
    let mut fit = Fit {
        gpu: gpu_name.to_string(),
        name,
        model: model_name.to_string(),
        memory_bytes: gpu.as_gpu().memory.map(|m| m as i128),
        bandwidth_gbs: gpu.as_gpu().bandwidth.map(|b| b / 1e9),
        vendor: gpu.as_gpu().vendor.map(|v| v.name().to_string()),
        segment: gpu.as_gpu().segment.map(|s| s.name().to_string()),
        arch: gpu.as_gpu().arch.clone(),
        quant: None,
        bpw: None,
        needed_bytes: None,
        usable_bytes: None,
        memory_share: None,
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
        fit.memory_share = fit
            .memory_bytes
            .filter(|m| *m > 0)
            .map(|m| b.per_gpu_bytes as f64 / m as f64 * 100.0);
    }
    // A speed only means something where the model fits.
    if fit.fits {
        fit.decode_tps = figures.decode_tps.clone().ok();
        fit.decode_tps_low = figures.decode_tps_low.clone().ok();
        fit.decode_tps_high = figures.decode_tps_high.clone().ok();
    }
    fit
}

/// The fewest nominal bits (a quant's `bits`) of the formats listings and summaries choose
/// unless the request asks lower (`--min-quant`, `--quant`): below 4 bits quality falls
/// off (issue: summaries chose Q2_K), so answers default to 4-bit formats and up.
pub const DEFAULT_MIN_BITS: f64 = 4.0;

/// The weight formats to try, most bits per weight first: `only` alone, or those
/// between `min` and `max` bits per weight (inclusive), of at least [`DEFAULT_MIN_BITS`]
/// nominal bits unless `only` or `min` is given.
fn quant_list<'db>(
    db: &'db dyn Db,
    scope: &'db Scope<'db>,
    engine: &str,
    only: Option<&str>,
    min: Option<&str>,
    max: Option<&str>,
) -> Result<Vec<(&'db str, f64, &'db Entry<'db>)>, String> {
    let bpw_of = |name: Option<&str>, default: f64| -> Result<f64, String> {
        Ok(match name {
            Some(name) => lookup(db, scope, DeclKind::Quant, name)?
                .as_quant()
                .bpw
                .unwrap_or(default),
            None => default,
        })
    };
    let floor = bpw_of(min, 0.0)?;
    let ceiling = bpw_of(max, f64::INFINITY)?;
    // Unless the request names a format or a floor, formats below 4 bits stay out.
    let bits_floor = if only.is_none() && min.is_none() {
        DEFAULT_MIN_BITS
    } else {
        0.0
    };
    let engine_entry = lookup(db, scope, DeclKind::Engine, engine)?;
    if let Some(name) = only {
        lookup(db, scope, DeclKind::Quant, name)?;
    }
    let mut quants: Vec<(&'db str, f64, &'db Entry<'db>)> = scope
        .names(DeclKind::Quant)
        .filter(|(name, _)| only.is_none_or(|o| o == *name))
        .map(|(name, key)| (name, crate::eval::entry_of(db, key)))
        .filter_map(|(name, entry)| entry.as_quant().bpw.map(|bpw| (name, bpw, entry)))
        .filter(|(_, bpw, entry)| {
            *bpw >= floor
                && *bpw <= ceiling
                && entry.as_quant().bits.is_none_or(|bits| bits >= bits_floor)
                && entry.runs_on_engine(engine, engine_entry)
        })
        .collect();
    quants.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
    if quants.is_empty() {
        return Err(format!(
            "no weight format runs on `{engine}` with these limits (--quant, --min-quant, --max-quant); \
             widen them"
        ));
    }
    Ok(quants)
}

/// Checks each of `given` against `valid`; an unknown one is an error naming the closest
/// valid value and the list.
fn check_words(what: &str, given: &[String], valid: &[&str]) -> Result<(), String> {
    if given.len() > MAX_LIST {
        return Err(format!("at most {MAX_LIST} {what} values"));
    }
    for word in given {
        if !valid.contains(&word.as_str()) {
            let hint = crate::names::closest(word, valid.iter().copied())
                .map(|c| format!("did you mean `{c}`? "))
                .unwrap_or_default();
            return Err(format!(
                "unknown {what} `{}`; {hint}valid: {}",
                shown(word),
                valid.join(", ")
            ));
        }
    }
    Ok(())
}

/// Parses a context length: `32768`, `32k`, `1M` (binary suffixes).
pub fn parse_context(text: &str) -> Result<u64, String> {
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

/// Parses a memory size for `--min-memory`/`--max-memory` with the language's units:
/// `24GiB`, `24 GB`, `1.5 TiB`. The unit is required, so GB (10⁹) and GiB (2³⁰) are named.
pub fn parse_memory(text: &str) -> Result<i128, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_'))
        .unwrap_or(text.len());
    // `split` is the byte offset of a char found by `find`, or the length: a boundary.
    let (number, unit) = (&text[..split], text[split..].trim());
    let digits = number.chars().filter(char::is_ascii_digit).count();
    let well_formed = digits > 0 && number.len() <= 24 && number.matches('.').count() <= 1;
    let bad = || {
        format!(
            "`{}` is not a memory size; write {}",
            shown(text),
            crate::units::Dim::BYTES
                .suggest(if well_formed { number } else { "24" })
                .unwrap_or_default()
        )
    };
    if !well_formed || text.len() > 64 || unit.is_empty() {
        return Err(bad());
    }
    let byte_units = ["B", "KB", "MB", "GB", "TB", "KiB", "MiB", "GiB", "TiB"];
    if !byte_units.contains(&unit) {
        let hint = crate::names::closest(unit, byte_units.iter().copied())
            .map(|c| format!("did you mean `{number} {c}`? "))
            .unwrap_or_default();
        return Err(format!(
            "`{}` is not a memory unit; {hint}use GB (10^9 bytes) or GiB (2^30 bytes)",
            shown(unit)
        ));
    }
    let quantity = crate::units::literal(number, None, Some(unit)).ok_or_else(bad)?;
    let bytes = quantity.value();
    if quantity.dim != crate::units::Dim::BYTES || !bytes.is_finite() || bytes > 1e18 {
        return Err(bad());
    }
    Ok(bytes.round() as i128)
}

/// Every catalog GPU for one model, or the ones the request's filters keep.
pub fn gpus(db: &dyn Db, file: SourceFile, request: &GpusRequest) -> Result<GpusReport, String> {
    use crate::eval::schema::{SEGMENTS, VENDORS};
    check_words("vendor", &request.vendors, VENDORS)?;
    check_words("segment", &request.segments, SEGMENTS)?;
    if let (Some(low), Some(high)) = (request.min_memory, request.max_memory)
        && low > high
    {
        return Err("--min-memory is larger than --max-memory; no GPU is in between".into());
    }
    let scope = crate::names::scope(db, file);
    if request.gpus.len() > MAX_LIST {
        return Err(format!("at most {MAX_LIST} GPUs in --gpu"));
    }
    // Each `--gpu` through the name resolver (`"RTX 4090"`, `H100 PCIe`).
    let wanted_gpus = request
        .gpus
        .iter()
        .map(|gpu| {
            crate::eval::entry::resolve_name(db, scope, DeclKind::Gpu, gpu)
                .map_err(|e| format!("{e} (`deployfit gpus MODEL` lists them)"))
        })
        .collect::<Result<Vec<String>, String>>()?;
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
        request.max_quant.as_deref(),
    )?;
    // The GPUs to consider: the ones named, in their order, or the whole catalog.
    let catalog: Vec<(&str, &Entry<'_>)> = scope
        .names(DeclKind::Gpu)
        // `gpu = cpu` (`device = cpu`) is not a card to list.
        .filter(|(_, key)| {
            crate::eval::entry_of(db, *key).as_gpu().device
                != Some(crate::eval::schema::Device::Cpu)
        })
        .map(|(name, key)| (name, crate::eval::entry_of(db, key)))
        .collect();
    let mut chosen: Vec<(&str, &Entry<'_>)> = if request.gpus.is_empty() {
        catalog.clone()
    } else {
        let mut seen = std::collections::BTreeSet::new();
        wanted_gpus
            .iter()
            .filter(|name| seen.insert(name.as_str()))
            .filter_map(|name| catalog.iter().find(|(n, _)| n == name).copied())
            .collect()
    };
    let in_list = |list: &[String], value: Option<&str>| {
        list.is_empty() || value.is_some_and(|v| list.iter().any(|l| l == v))
    };
    chosen.retain(|(_, gpu)| {
        let memory = gpu.as_gpu().memory;
        let memory_ok = |bound: Option<i128>, keep: fn(f64, f64) -> bool| {
            bound.is_none_or(|b| memory.is_some_and(|m| keep(m, b as f64)))
        };
        memory_ok(request.min_memory, |m, b| m >= b)
            && memory_ok(request.max_memory, |m, b| m <= b)
            && in_list(&request.vendors, gpu.as_gpu().vendor.map(|s| s.name()))
            && in_list(&request.segments, gpu.as_gpu().segment.map(|s| s.name()))
    });
    let mut rows: Vec<Fit> = chosen
        .iter()
        .map(|(name, gpu)| best_fit(&setup, &model_name, model, name, gpu, &quants))
        .collect();
    if request.fits_only {
        rows.retain(|f| f.fits);
    }
    if request.gpus.is_empty() {
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
    }
    let mut report = GpusReport {
        model: model_name,
        context: request.context,
        seqs: request.seqs,
        engine: request.engine.clone(),
        runs_on: 0,
        total: 0,
        catalog: catalog.len(),
        rows,
        smallest: None,
        fastest: None,
        median_decode_tps: None,
        memory_classes: Vec::new(),
        prefer_buyable: request.segments.is_empty(),
    };
    report.summarize();
    Ok(report)
}

/// The rows a summary may name: the buyable fitting ones when any fits (and the report
/// prefers them), else every fitting one.
fn nameable<'r>(rows: &[&'r Fit], prefer_buyable: bool) -> Vec<&'r Fit> {
    let fitting: Vec<&Fit> = rows.iter().copied().filter(|f| f.fits).collect();
    if prefer_buyable {
        let buyable: Vec<&Fit> = fitting
            .iter()
            .copied()
            .filter(|f| {
                crate::candidate::buyable_segment(f.segment.as_deref().and_then(Segment::parse))
            })
            .collect();
        if !buyable.is_empty() {
            return buyable;
        }
    }
    fitting
}

fn fastest<'r>(rows: &[&'r Fit]) -> Option<&'r Fit> {
    rows.iter().copied().max_by(|a, b| {
        a.decode_tps
            .unwrap_or(0.0)
            .total_cmp(&b.decode_tps.unwrap_or(0.0))
            .then(b.gpu.cmp(&a.gpu))
    })
}

fn median(rows: &[&Fit]) -> Option<f64> {
    let mut speeds: Vec<f64> = rows
        .iter()
        .filter(|f| f.fits)
        .filter_map(|f| f.decode_tps)
        .collect();
    speeds.sort_by(f64::total_cmp);
    (!speeds.is_empty()).then(|| speeds[speeds.len() / 2])
}

impl GpusReport {
    /// Keeps the rows of the GPUs `keep` accepts (`gpus --here`: this machine's), and
    /// sums them up again.
    pub fn restrict(&mut self, keep: impl Fn(&str) -> bool) {
        self.rows.retain(|row| keep(&row.gpu));
        self.summarize();
    }

    /// How many GPUs run the model, of how many; the smallest and the fastest that fit;
    /// the median speed; the memory classes.
    fn summarize(&mut self) {
        let all: Vec<&Fit> = self.rows.iter().collect();
        let named = nameable(&all, self.prefer_buyable);
        self.smallest = named
            .iter()
            .min_by(|a, b| {
                a.memory_bytes
                    .unwrap_or(i128::MAX)
                    .cmp(&b.memory_bytes.unwrap_or(i128::MAX))
                    .then(a.gpu.cmp(&b.gpu))
            })
            .map(|f| f.gpu.clone());
        self.fastest = fastest(&named).map(|f| f.gpu.clone());
        self.median_decode_tps = median(&all);
        self.runs_on = all.iter().filter(|f| f.fits).count();
        self.total = self.rows.len();
        self.memory_classes = memory_classes(&all, self.prefer_buyable);
    }
}

/// The summary of each memory class over `rows`.
fn memory_classes(rows: &[&Fit], prefer_buyable: bool) -> Vec<MemoryClass> {
    const GIB: i128 = 1 << 30;
    MEMORY_CLASSES_GIB
        .iter()
        .enumerate()
        .map(|(i, &class)| {
            let min_bytes = class as i128 * GIB;
            let below_bytes = MEMORY_CLASSES_GIB.get(i + 1).map(|&c| c as i128 * GIB);
            let members: Vec<&Fit> = rows
                .iter()
                .copied()
                .filter(|f| {
                    f.memory_bytes
                        .is_some_and(|m| m >= min_bytes && below_bytes.is_none_or(|b| m < b))
                })
                .collect();
            let fitting: Vec<&Fit> = members.iter().copied().filter(|f| f.fits).collect();
            let best = fitting
                .iter()
                .copied()
                .filter(|f| f.bpw.is_some())
                .max_by(|a, b| {
                    a.bpw
                        .unwrap_or(0.0)
                        .total_cmp(&b.bpw.unwrap_or(0.0))
                        .then(b.needed_bytes.cmp(&a.needed_bytes))
                });
            let top = fastest(&nameable(&members, prefer_buyable));
            MemoryClass {
                class_gib: class,
                min_bytes,
                below_bytes,
                gpus: members.len(),
                fitting: fitting.len(),
                best_quant: best.and_then(|f| f.quant.clone()),
                best_bpw: best.and_then(|f| f.bpw),
                needed_bytes: best.and_then(|f| f.needed_bytes),
                median_decode_tps: median(&members),
                fastest: top.map(|f| f.gpu.clone()),
                best_decode_tps: top.and_then(|f| f.decode_tps),
            }
        })
        .collect()
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
    let canonical = crate::eval::entry::resolve_name(db, scope, DeclKind::Gpu, gpu_name)?;
    let gpu_name = canonical.as_str();
    let gpu = lookup(db, scope, DeclKind::Gpu, gpu_name)?;
    let setup = Setup {
        db,
        scope,
        kv: lookup(
            db,
            scope,
            DeclKind::Kv,
            crate::eval::schema::default_of(DeclKind::Deployment, "kv_cache").unwrap_or_default(),
        )?,
        engine: lookup(db, scope, DeclKind::Engine, engine)?,
        engine_name: engine,
        context,
        seqs: 1,
    };
    let quants = quant_list(db, scope, engine, None, None, None)?;
    let mut rows: Vec<Fit> = scope
        .names(DeclKind::Model)
        .map(|(name, key)| {
            let model = crate::eval::entry_of(db, key);
            // Past the model's window the context is capped to it.
            let window = model
                .as_model()
                .max_context
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
    // The catalog's models that fit (fastest first), then every registry model that fits,
    // most downloaded first (the registry's order: what people run, not the toy and test
    // checkpoints a speed order puts on top), then the catalog's that do not fit.
    let misfits = rows.iter().position(|r| !r.fits).unwrap_or(rows.len());
    let tail = rows.split_off(misfits);
    rows.extend(registry_rows(&setup, scope, gpu_name, gpu, &quants));
    rows.extend(tail);
    Ok(rows)
}

/// The registry models that fit on the GPU (`crate::registry_models`), the catalog's own
/// Hugging Face ids (`hf` and `aliases`) left to the catalog rows; the context is capped to each model's window
/// as for the catalog models.
fn registry_rows<'a, 'db>(
    setup: &Setup<'a, 'db>,
    scope: &'a Scope<'db>,
    gpu_name: &'a str,
    gpu: &'a Entry<'db>,
    quants: &'a [(&'a str, f64, &'a Entry<'db>)],
) -> Vec<Fit> {
    let catalog_hf: std::collections::BTreeSet<String> = scope
        .names(DeclKind::Model)
        .flat_map(|(_, key)| {
            let model = crate::eval::entry_of(setup.db, key).as_model();
            model
                .hf
                .iter()
                .chain(model.aliases.iter().flatten())
                .map(|id| id.to_ascii_lowercase())
                .collect::<Vec<_>>()
        })
        .collect();
    crate::registry_models::answer_rows(scope, &catalog_hf, |name, model| {
        let window = model
            .as_model()
            .max_context
            .map_or(setup.context, |w| w as u64);
        let capped = Setup {
            context: setup.context.min(window),
            ..setup_clone(setup)
        };
        Some(best_fit(&capped, name, model, gpu_name, gpu, quants)).filter(|fit| fit.fits)
    })
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
