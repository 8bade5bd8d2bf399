//! The language's property table (`eval::figures::PROPERTIES`) and docs/language.md's
//! "Properties" table name the same properties with the same types, and every property
//! has a value (or a reason) in a deployment's figures.

use std::collections::BTreeMap;

use deployfit_host::eval::figures::{Figures, PROPERTIES};
use deployfit_host::eval::schema::FieldTy;
use deployfit_host::eval::{EvalError, Value};
use deployfit_host::units::Dim;

/// The property rows of docs/language.md: name → type column.
fn documented() -> BTreeMap<String, String> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let docs = std::fs::read_to_string(root.join("docs/language.md")).unwrap();
    let section = docs
        .split("\n## Properties\n")
        .nth(1)
        .expect("docs/language.md has a Properties section");
    let section = section.split("\n## ").next().unwrap();
    let mut out = BTreeMap::new();
    for line in section.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        // | `name`, `name2` | type | depends on | meaning |
        if cells.len() < 5 || !cells[1].starts_with('`') {
            continue;
        }
        for name in cells[1].split(',') {
            let name = name.trim().trim_matches('`');
            out.insert(name.to_string(), cells[2].to_string());
        }
    }
    out
}

/// The word docs/language.md uses for a property's type.
fn type_word(ty: FieldTy) -> &'static str {
    match ty {
        FieldTy::Predicate => "condition",
        FieldTy::Ratio => "ratio",
        FieldTy::Number => "number",
        FieldTy::Str => "string",
        FieldTy::Q(d) if d == Dim::BYTES => "bytes",
        FieldTy::Q(d) if d == Dim::TOKENS => "tokens",
        FieldTy::Q(d) if d == Dim::TOKEN_RATE => "token rate",
        FieldTy::Q(d) if d == Dim::SECONDS => "time",
        FieldTy::Q(d) if d == Dim::HOURLY => "hourly price",
        FieldTy::Q(d) if d == Dim::PER_TOKEN => "price per token",
        _ => "unknown",
    }
}

#[test]
fn the_property_table_matches_the_language_reference() {
    let documented = documented();
    assert!(documented.len() >= 28, "{documented:?}");
    let table: BTreeMap<String, String> = PROPERTIES
        .iter()
        .map(|p| (p.name.to_string(), type_word(p.ty).to_string()))
        .collect();
    assert_eq!(
        table.keys().collect::<Vec<_>>(),
        documented.keys().collect::<Vec<_>>(),
        "PROPERTIES and docs/language.md's Properties table differ"
    );
    for (name, ty) in &table {
        assert_eq!(
            &documented[name], ty,
            "`{name}`: docs/language.md says {}, the table {ty}",
            documented[name]
        );
    }
}

#[test]
fn every_property_reads_its_own_field() {
    // Each property's getter reads its own figure: set one figure at a time and only
    // that property changes.
    let why = EvalError::Missing("test".into());
    for prop in PROPERTIES {
        let mut figures = Figures::unavailable(&why);
        let before: Vec<_> = figures.values().collect();
        match prop.ty {
            FieldTy::Predicate => set_bool(&mut figures, prop.name),
            FieldTy::Str => set_string(&mut figures, prop.name),
            _ => set_number(&mut figures, prop.name),
        }
        let after: Vec<_> = figures.values().collect();
        let changed: Vec<&str> = before
            .iter()
            .zip(&after)
            .filter(|(b, a)| b != a)
            .map(|(b, _)| b.0)
            .collect();
        assert_eq!(changed, vec![prop.name], "setting `{}`", prop.name);
        let value = figures.get(prop.name).unwrap().unwrap();
        match (prop.ty, &value) {
            (FieldTy::Predicate, Value::Bool(true)) | (FieldTy::Str, Value::Str(_)) => {}
            (FieldTy::Q(dim), Value::Q(q)) => assert_eq!(q.dim, dim, "`{}`", prop.name),
            (FieldTy::Ratio | FieldTy::Number, Value::Q(q)) => {
                assert_eq!(q.dim, Dim::NONE, "`{}`", prop.name)
            }
            _ => panic!("`{}` gave {value:?}", prop.name),
        }
    }
    assert!(Figures::unavailable(&why).get("not_a_property").is_none());
}

macro_rules! setter {
    ($fn_name:ident, $t:ty, $value:expr, [$($field:ident),*]) => {
        fn $fn_name(figures: &mut Figures, name: &str) {
            match name {
                $(stringify!($field) => figures.$field = Ok($value),)*
                _ => panic!("`{name}` is not a {} figure", stringify!($t)),
            }
        }
    };
}

setter!(
    set_bool,
    bool,
    true,
    [
        fits,
        kv_heads_replicated,
        quant_runs_on_engine,
        kv_runs_on_engine,
        engine_runs_on_gpu,
        quant_runs_on_gpu,
        quant_emulated,
        offloaded,
        engine_holds_share,
        starts,
        no_kv_budget,
        context_exceeds_kv_capacity,
        cuda_graphs_oom,
        kv_bound
    ]
);
setter!(
    set_string,
    String,
    "x".to_string(),
    [
        fit_advice,
        startup_advice,
        bound,
        quant_support,
        quant_support_note,
        quant_support_advice,
        pricing,
        provider,
        offer
    ]
);
setter!(
    set_number,
    f64,
    3.0,
    [
        engine_memory,
        activation_memory,
        cuda_graph_memory,
        kv_budget,
        kv_capacity,
        weights_memory,
        kv_memory,
        overhead_memory,
        total_memory,
        memory_per_gpu,
        usable_memory,
        utilization,
        headroom,
        max_context,
        decode_tps,
        throughput,
        decode_tps_low,
        decode_tps_high,
        prefill_tps_low,
        prefill_tps_high,
        required_throughput,
        replicas_needed,
        load,
        prefill_tps,
        ttft,
        cost_per_hour,
        instances,
        cost_per_mtok,
        comfortable_context,
        gpu_layers,
        gpu_share,
        gpu_max_context,
        host_memory,
        host_usable_memory,
        throughput_low,
        throughput_high,
        tpot,
        tpot_low,
        tpot_high,
        ttft_low,
        ttft_high,
        ttft_p99,
        tpot_p99,
        ttft_p50,
        tpot_p50,
        queue,
        running,
        preempted
    ]
);
