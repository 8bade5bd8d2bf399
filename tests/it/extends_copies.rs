//! Catalog data, not names, decides behaviour: an `extends` copy of every stdlib GPU,
//! engine, quant, KV dtype and model, under a new entry name (and, for GPUs, a new display
//! `name`), gives the same figures as the original, through the real binary (`check` and
//! `explain` in JSON, and `export` for KV dtypes and quants). And no decision in
//! compiler/src/eval is keyed on an entry's name or display string.

use crate::common;

use std::collections::BTreeMap;
use std::fmt::Write as _;

use common::{deployfit, json, root, scratch, stdout};
use serde_json::Value;

const KINDS: [&str; 5] = ["gpu", "engine", "quant", "kv", "model"];

/// The stdlib's entries of each kind, and the quants each model lists in `files { }`.
struct Stdlib {
    entries: BTreeMap<&'static str, Vec<String>>,
    files: BTreeMap<String, Vec<String>>,
}

fn stdlib() -> Stdlib {
    let mut entries: BTreeMap<&'static str, Vec<String>> = BTreeMap::new();
    let mut files: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for file in common::deploy_files("stdlib") {
        let text = std::fs::read_to_string(&file).expect("stdlib file");
        let mut model: Option<String> = None;
        let mut in_files = false;
        for line in text.lines() {
            let words: Vec<&str> = line.split_whitespace().collect();
            if let Some(kind) = KINDS
                .iter()
                .find(|k| words.first() == Some(*k) && !line.starts_with(char::is_whitespace))
                && let Some(name) = words.get(1)
            {
                entries.entry(kind).or_default().push(name.to_string());
                model = (*kind == "model").then(|| name.to_string());
                in_files = false;
            } else if words.first() == Some(&"files") && model.is_some() {
                in_files = true;
            } else if words.first() == Some(&"}") {
                in_files = false;
            } else if in_files && words.get(1) == Some(&"=") {
                files
                    .entry(model.clone().unwrap())
                    .or_default()
                    .push(words[0].to_string());
            }
        }
    }
    for kind in KINDS {
        assert!(
            entries.get(kind).is_some_and(|e| !e.is_empty()),
            "the stdlib has {kind} entries"
        );
    }
    Stdlib { entries, files }
}

fn copy_name(kind: &str, name: &str) -> String {
    format!("copy_{kind}_{name}")
}

/// Display name of every GPU copy: new, and not ASCII.
const COPY_DISPLAY: &str = "Lab accelerator — prototype ü";

/// What one `export` run gives: exit code, standard output, standard error.
type Export = (Option<i32>, String, String);

/// One deployment: its original and copy fields, with a label for failures.
struct Pair {
    label: String,
    original: String,
    copy: String,
}

fn deployment(fields: &[(&str, &str)]) -> String {
    fields
        .iter()
        .map(|(k, v)| format!("{k} = {v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The deployments of every entry and its copy, each with partners it works with.
fn pairs(lib: &Stdlib) -> Vec<Pair> {
    let mut pairs = Vec::new();
    let mut add = |kind: &str, name: &str, fields: Vec<(&str, String)>| {
        let original: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let copy_value = copy_name(kind, name);
        let field = if kind == "kv" { "kv_cache" } else { kind };
        let copy: Vec<(&str, &str)> = original
            .iter()
            .map(|(k, v)| (*k, if *k == field { copy_value.as_str() } else { v }))
            .collect();
        assert!(
            original.iter().any(|(k, v)| *k == field && *v == name),
            "{kind} {name} is in its own deployment"
        );
        pairs.push(Pair {
            label: format!("{kind} {name}: {}", deployment(&original)),
            original: deployment(&original),
            copy: deployment(&copy),
        });
    };
    let s = |v: &str| v.to_string();
    for gpu in &lib.entries["gpu"] {
        // llama.cpp kernels with a layer split, and a serving engine with tensor parallelism.
        add(
            "gpu",
            gpu,
            vec![
                ("model", s("llama_3_1_8b")),
                ("quant", s("Q4_K_M")),
                ("engine", s("llamacpp")),
                ("gpu", s(gpu)),
                ("context", s("4096")),
                ("count", s("2")),
            ],
        );
        add(
            "gpu",
            gpu,
            vec![
                ("model", s("qwen3_8b")),
                ("quant", s("bf16")),
                ("engine", s("vllm")),
                ("gpu", s(gpu)),
                ("context", s("8192")),
                ("seqs", s("4")),
                ("count", s("2")),
            ],
        );
    }
    for engine in &lib.entries["engine"] {
        for (gpu, count) in [
            ("h100_sxm5", "2"),
            ("rtx_4090", "2"),
            ("m2_ultra_192gb", "1"),
        ] {
            add(
                "engine",
                engine,
                vec![
                    ("model", s("qwen3_8b")),
                    ("quant", s("fp16")),
                    ("engine", s(engine)),
                    ("gpu", s(gpu)),
                    ("context", s("8192")),
                    ("count", s(count)),
                ],
            );
        }
    }
    // An engine that runs each quant, and one that does not (the mismatch must match too).
    for quant in &lib.entries["quant"] {
        let model = lib
            .files
            .iter()
            .find(|(_, quants)| quants.contains(quant))
            .map(|(model, _)| model.clone())
            .unwrap_or_else(|| s("llama_3_1_8b"));
        for engine in ["llamacpp", "vllm"] {
            add(
                "quant",
                quant,
                vec![
                    ("model", model.clone()),
                    ("quant", s(quant)),
                    ("engine", s(engine)),
                    ("gpu", s("h100_sxm5")),
                    ("context", s("8192")),
                ],
            );
        }
    }
    for kv in &lib.entries["kv"] {
        add(
            "kv",
            kv,
            vec![
                ("model", s("llama_3_1_8b")),
                ("quant", s("Q4_K_M")),
                ("kv_cache", s(kv)),
                ("engine", s("llamacpp")),
                ("gpu", s("rtx_4090")),
                ("context", s("32768")),
                ("seqs", s("2")),
            ],
        );
    }
    for model in &lib.entries["model"] {
        for (quant, engine, gpu, count) in [
            ("Q4_K_M", "llamacpp", "rtx_4090", "2"),
            ("fp8", "vllm", "h100_sxm5", "4"),
        ] {
            add(
                "model",
                model,
                vec![
                    ("model", s(model)),
                    ("quant", s(quant)),
                    ("engine", s(engine)),
                    ("gpu", s(gpu)),
                    ("context", s("4096")),
                    ("count", s(count)),
                ],
            );
        }
    }
    pairs
}

/// The `.deploy` text: a copy of every entry, then each pair's two deployments.
fn source(lib: &Stdlib, pairs: &[Pair]) -> String {
    let mut text = String::new();
    for kind in KINDS {
        for name in &lib.entries[kind] {
            let body = if kind == "gpu" {
                format!(" name = \"{COPY_DISPLAY}\" ")
            } else {
                String::new()
            };
            writeln!(
                text,
                "{kind} {} extends {name} {{{body}}}",
                copy_name(kind, name)
            )
            .unwrap();
        }
    }
    for (i, pair) in pairs.iter().enumerate() {
        writeln!(text, "deployment o{i} {{ {} }}", pair.original).unwrap();
        writeln!(text, "deployment c{i} {{ {} }}", pair.copy).unwrap();
    }
    text
}

/// Every copy name, longest first, with its original: what a copy's output is rewritten
/// with before it is compared.
fn renames(lib: &Stdlib) -> Vec<(String, String)> {
    let mut renames: Vec<(String, String)> = KINDS
        .iter()
        .flat_map(|kind| {
            lib.entries[kind]
                .iter()
                .map(move |name| (copy_name(kind, name), name.clone()))
        })
        .collect();
    // `export` writes some names lowercased (an Ollama model name).
    let lower: Vec<(String, String)> = renames
        .iter()
        .map(|(copy, original)| (copy.to_lowercase(), original.to_lowercase()))
        .collect();
    renames.extend(lower);
    renames.sort_by_key(|(copy, _)| std::cmp::Reverse(copy.len()));
    renames
}

fn rename(text: &str, renames: &[(String, String)]) -> String {
    let mut text = text.to_string();
    for (copy, original) in renames {
        if text.contains(copy.as_str()) {
            text = text.replace(copy.as_str(), original);
        }
    }
    text
}

/// A deployment's JSON without what names or places it.
fn strip(mut value: Value) -> Value {
    if let Value::Object(map) = &mut value {
        for key in ["deployment", "name", "file", "line"] {
            map.remove(key);
        }
    }
    value
}

#[test]
fn an_extends_copy_of_every_stdlib_entry_gives_identical_figures() {
    let lib = stdlib();
    let pairs = pairs(&lib);
    let renames = renames(&lib);
    let dir = scratch("extends_copies");
    let path = dir.join("copies.deploy");
    std::fs::write(&path, source(&lib, &pairs)).unwrap();
    let path = path.to_str().unwrap();

    // `explain`: every figure of the breakdown.
    let explained = json(&deployfit(&["explain", "--format", "json", path]));
    let explained: BTreeMap<String, Value> = explained
        .as_array()
        .expect("explain gives a list")
        .iter()
        .map(|d| (d["deployment"].as_str().unwrap().to_string(), d.clone()))
        .collect();
    // `check`: the summary figures and the diagnostics of each deployment's line.
    let checked = json(&deployfit(&["check", "--format", "json", path]));
    let figures: BTreeMap<String, Value> = checked["deployments"]
        .as_array()
        .expect("check lists the deployments")
        .iter()
        .map(|d| (d["name"].as_str().unwrap().to_string(), d.clone()))
        .collect();
    let mut diags: BTreeMap<u64, Vec<String>> = BTreeMap::new();
    for diag in checked["diagnostics"].as_array().unwrap() {
        let line = diag["line"].as_u64().unwrap();
        diags.entry(line).or_default().push(format!(
            "{} {} {}",
            diag["code"], diag["message"], diag["help"]
        ));
    }
    // The copies themselves are clean: no diagnostic before the first deployment.
    let entries = KINDS
        .iter()
        .map(|k| lib.entries[k].len() as u64)
        .sum::<u64>();
    let early: Vec<_> = diags.range(..=entries).collect();
    assert!(early.is_empty(), "the copies have diagnostics: {early:?}");

    let mut compared = 0;
    for (i, pair) in pairs.iter().enumerate() {
        let (o, c) = (format!("o{i}"), format!("c{i}"));
        // Both sides are renamed: advice on the original may name an equivalent copy.
        let original = rename(
            &strip(explained.get(&o).cloned().expect("explained")).to_string(),
            &renames,
        );
        let copy = rename(&strip(explained[&c].clone()).to_string(), &renames);
        assert_eq!(original, copy, "explain differs for {}", pair.label);
        assert!(
            original.contains("\"decode_tps\":") && original.contains("\"per_gpu_bytes\":"),
            "explain has figures for {}: {original}",
            pair.label
        );
        let original = rename(&strip(figures[&o].clone()).to_string(), &renames);
        let copy = rename(&strip(figures[&c].clone()).to_string(), &renames);
        assert_eq!(original, copy, "check's figures differ for {}", pair.label);
        let line = entries + 1 + 2 * i as u64;
        let original: Vec<String> = diags
            .get(&line)
            .cloned()
            .unwrap_or_default()
            .iter()
            .map(|d| rename(d, &renames))
            .collect();
        let copy: Vec<String> = diags
            .get(&(line + 1))
            .cloned()
            .unwrap_or_default()
            .iter()
            .map(|d| rename(d, &renames))
            .collect();
        assert_eq!(original, copy, "diagnostics differ for {}", pair.label);
        compared += 1;
    }
    assert_eq!(compared, pairs.len());
    // Both sides of the quant pairs: one runs, one is refused (so `runs_on` was compared).
    let mismatches = diags
        .values()
        .flatten()
        .filter(|d| d.contains("deploy::fit::quant_engine_mismatch"))
        .count();
    assert!(
        mismatches >= 2 && mismatches % 2 == 0,
        "{mismatches} mismatches"
    );

    // `export`: the engines' own spellings of KV dtypes and quants come from the catalog.
    // A smaller file: the copies, each KV pair for every engine, and one pair per quant for
    // vLLM (the one export that writes a quant flag; the deployment's engine plays no part).
    let mut seen = std::collections::BTreeSet::new();
    let exported: Vec<(Pair, &[&str])> = pairs
        .into_iter()
        .filter_map(|p| {
            if p.label.starts_with("kv ") {
                Some((p, &["vllm", "ollama", "llamacpp"][..]))
            } else if p.label.starts_with("quant ") {
                let quant = p.label.split(':').next().unwrap().to_string();
                seen.insert(quant).then_some((p, &["vllm"][..]))
            } else {
                None
            }
        })
        .collect();
    let path = dir.join("export.deploy");
    let list: Vec<Pair> = exported
        .iter()
        .map(|(p, _)| Pair {
            label: p.label.clone(),
            original: p.original.clone(),
            copy: p.copy.clone(),
        })
        .collect();
    std::fs::write(&path, source(&lib, &list)).unwrap();
    let path = path.to_str().unwrap();
    let runs: Vec<(usize, &str)> = exported
        .iter()
        .enumerate()
        .flat_map(|(i, (_, engines))| engines.iter().map(move |e| (i, *e)))
        .collect();
    // Two threads: each run of the debug binary loads the stdlib (~0.2 s).
    let results: Vec<(usize, &str, Export, Export)> = std::thread::scope(|scope| {
        let handles: Vec<_> = runs
            .chunks(runs.len().div_ceil(2).max(1))
            .map(|chunk| {
                let renames = &renames;
                scope.spawn(move || {
                    chunk
                        .iter()
                        .map(|&(i, engine)| {
                            let run = |d: &str| {
                                let out = deployfit(&[
                                    "export",
                                    "--deployment",
                                    d,
                                    "--engine",
                                    engine,
                                    path,
                                ]);
                                let err = String::from_utf8_lossy(&out.stderr)
                                    .replace(&format!("c{i}"), &format!("o{i}"));
                                (
                                    out.status.code(),
                                    rename(&stdout(&out), renames),
                                    rename(&err, renames),
                                )
                            };
                            (i, engine, run(&format!("o{i}")), run(&format!("c{i}")))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    assert_eq!(results.len(), runs.len());
    let mut written = 0;
    for (i, engine, original, copy) in results {
        assert_eq!(
            original, copy,
            "export {engine} differs for {}",
            exported[i].0.label
        );
        written += usize::from(original.0 == Some(0));
    }
    assert!(written >= 8, "only {written} exports were written");
}

#[test]
fn the_fp8_kv_copy_exports_its_vllm_spelling() {
    let dir = scratch("extends_copies_export");
    let path = dir.join("kv.deploy");
    std::fs::write(
        &path,
        "kv lab_kv extends fp8 {}\n\
         deployment d { model = llama_3_1_8b quant = fp8 kv_cache = lab_kv engine = vllm gpu = h100_sxm5 }\n",
    )
    .unwrap();
    let out = deployfit(&[
        "export",
        "--deployment",
        "d",
        "--engine",
        "vllm",
        path.to_str().unwrap(),
    ]);
    let text = stdout(&out);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("--kv-cache-dtype fp8"), "{text}");
    assert!(text.contains("--quantization fp8"), "{text}");
}

/// No decision in compiler/src/eval compares an entry's name or display string: the
/// name-carrying variables (`engine_name`, `gpu_name`, `quant_name`, `model_name`,
/// `display_name`) and the display `name` field appear in no comparison, `matches!`,
/// `match` or `contains`.
#[test]
fn eval_keys_no_decision_on_entry_names() {
    let names = [
        "engine_name",
        "gpu_name",
        "quant_name",
        "model_name",
        "display_name",
        "fields.get(\"name\")",
    ];
    let decisions = [
        "==",
        "!=",
        "matches!(",
        "match ",
        ".contains(",
        "starts_with(",
        "ends_with(",
    ];
    let dir = root().join("compiler/src/eval");
    let model = root().join("model/src");
    let mut found = Vec::new();
    let paths: Vec<std::path::PathBuf> = [&dir, &model]
        .iter()
        .flat_map(|d| std::fs::read_dir(d).unwrap())
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "rs"))
        .collect();
    assert!(paths.len() >= 10, "{paths:?}");
    for path in paths {
        let text = std::fs::read_to_string(&path).unwrap();
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            if names.iter().any(|name| code.contains(name))
                && decisions.iter().any(|d| code.contains(d))
            {
                found.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
            }
        }
    }
    // Identity checks between entries, not decisions on what a name says: a suggested
    // alternative GPU is not the deployment's own; a quant's `engines` list this engine;
    // an offer's `gpu` refers to this GPU entry or one of its `extends` ancestors.
    found.retain(|l| {
        !l.contains("name != inputs.gpu_name")
            && !l.contains("listed == engine_name ||")
            && !l.contains("carried == gpu_name ||")
    });
    assert!(
        found.is_empty(),
        "name-keyed decisions:\n{}",
        found.join("\n")
    );
    // The former name lists are gone.
    let speed = std::fs::read_to_string(model.join("speed.rs")).unwrap();
    for gone in ["HBM_NAMES", "\"GeForce\"", "\"RTX 30\"", "\"H100\""] {
        assert!(!speed.contains(gone), "speed.rs still has {gone}");
    }
}

/// The lines of product code (Rust files under `dirs`, before any `#[cfg(test)]`, with
/// `//` comments cut) for which `flagged` holds, as `path:line: text`; and how many files
/// were read.
fn flagged_product_lines(dirs: &[&str], flagged: impl Fn(&str) -> bool) -> (usize, Vec<String>) {
    let mut found = Vec::new();
    let mut stack: Vec<std::path::PathBuf> = dirs.iter().map(|d| root().join(d)).collect();
    let mut files = 0;
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            files += 1;
            let text = std::fs::read_to_string(&path).unwrap();
            let product = text.split("#[cfg(test)]").next().unwrap_or("");
            for (n, line) in product.lines().enumerate() {
                if flagged(line.split("//").next().unwrap_or("")) {
                    found.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
                }
            }
        }
    }
    (files, found)
}

/// No product code decides on an engine's `dialect`: what an engine does is its own field
/// (`expert_padding`, `offload`, `split` …), so an engine written by a user behaves by what
/// it says, not by which engine it claims to be. Only `export` names dialects, to map one
/// to its typed `Target` (the launch command it writes); the schema declares them.
#[test]
fn no_decision_on_an_engine_dialect() {
    let dirs = [
        "syntax/src",
        "model/src",
        "compiler/src",
        "ide/src",
        "host/src",
        "lsp/src",
        "src",
    ];
    let (files, found) = flagged_product_lines(&dirs, |code| {
        code.contains("Dialect::") && !code.contains("Dialect::name")
            || code.contains("\"dialect\"") && code.contains("==")
    });
    assert!(files > 50, "{files} files");
    let outside_export: Vec<&String> = found
        .iter()
        .filter(|line| !line.contains("ide/src/export.rs:"))
        .collect();
    assert!(
        outside_export.is_empty(),
        "dialect-keyed decisions:\n{outside_export:?}"
    );
    // The scan sees export's mapping: it is not looking at nothing.
    assert!(found.len() >= 6, "{found:?}");
}

/// Every spelling of every `symbols!` enum (the words catalog and deployment fields hold).
fn symbol_words() -> Vec<&'static str> {
    use deployfit_host::eval::schema::*;
    [
        VENDORS,
        INTERCONNECTS,
        ATTENTION,
        QUANT_KINDS,
        LEVELS,
        WINDOW_KV,
        MEMORY_KINDS,
        SEGMENTS,
        TENSOR_TYPES,
        FALLBACKS,
        YES_NO,
        OFFLOAD_KINDS,
        OFFLOAD_MODES,
        DEVICES,
        GPU_FAMILIES,
        DIALECTS,
        PROVIDERS,
        PRICINGS,
        FLEETS,
        BOOLEANS,
        KERNELS,
        LENGTHS,
        SCHEDULINGS,
        SPEC_METHODS,
        SPLITS,
    ]
    .concat()
}

/// The symbol words a line of code compares a string with (`== "fp8"`, `!= "auto"`,
/// `Some("geforce")`).
fn compared_words(code: &str, words: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    for (open, close) in [("== \"", "\""), ("!= \"", "\""), ("Some(\"", "\")")] {
        let mut rest = code;
        while let Some(at) = rest.find(open) {
            let after = &rest[at + open.len()..];
            let Some(end) = after.find(close) else { break };
            if words.contains(&&after[..end]) {
                found.push(after[..end].to_string());
            }
            rest = &after[end..];
        }
    }
    found
}

/// No product code compares a catalog or deployment symbol's value as a string: symbol
/// fields are read as the enums `schema::symbols!` makes (`gpu.as_gpu().memory_kind ==
/// Some(MemoryKind::Hbm)`), so a misspelt value does not compile.
#[test]
fn symbol_values_are_compared_as_enums() {
    let words = symbol_words();
    assert!(words.contains(&"geforce") && words.contains(&"prefill_first"));
    assert_eq!(compared_words("if x == \"auto\" {", &words), ["auto"]);
    let dirs = ["model/src", "compiler/src", "ide/src", "host/src", "src"];
    let (_, found) = flagged_product_lines(&dirs, |code| !compared_words(code, &words).is_empty());
    assert!(
        found.is_empty(),
        "symbol values compared as strings:\n{}",
        found.join("\n")
    );
}

/// The deployment fields with a default (`kv_cache`, `engine`, `host`) take it from the
/// schema table, and each default names an entry the stdlib has.
#[test]
fn schema_defaults_name_stdlib_entries() {
    use deployfit_host::eval::schema::{FieldTy, schema};
    use deployfit_host::syntax::ast::DeclKind;
    let mut workspace = deployfit_host::Workspace::new();
    let file = workspace.set_file(std::path::Path::new("/defaults.deploy"), String::new());
    let scope = deployfit_host::names::scope(workspace.db(), file);
    let defaults: Vec<(&str, DeclKind, &str)> = schema(DeclKind::Deployment)
        .iter()
        .filter_map(|spec| match (spec.ty, spec.default) {
            (FieldTy::Ref(kind), Some(entry)) => Some((spec.name, kind, entry)),
            _ => None,
        })
        .collect();
    assert_eq!(
        defaults.iter().map(|d| d.0).collect::<Vec<_>>(),
        ["kv_cache", "engine", "host"]
    );
    for (field, kind, entry) in defaults {
        assert!(scope.lookup(kind, entry).is_some(), "{field} = {entry}");
    }
}

/// An engine's spelling reaches a shell command: one that is not a plain flag value is
/// rejected by `check` and never exported.
#[test]
fn an_engine_spelling_that_is_not_a_flag_value_is_rejected() {
    let dir = scratch("extends_copies_flag");
    let path = dir.join("kv.deploy");
    std::fs::write(
        &path,
        "kv odd extends fp8 { vllm_name = \"fp8; rm -rf ~ é\" }\n\
         deployment d { model = llama_3_1_8b quant = fp8 kv_cache = odd engine = vllm gpu = h100_sxm5 }\n",
    )
    .unwrap();
    let path = path.to_str().unwrap();
    let checked = json(&deployfit(&["check", "--format", "json", path]));
    let codes: Vec<&str> = checked["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d["code"].as_str())
        .collect();
    assert!(codes.contains(&"deploy::field::invalid_id"), "{checked}");
    let out = deployfit(&["export", "--deployment", "d", "--engine", "vllm", path]);
    assert!(!out.status.success());
    assert!(!stdout(&out).contains("rm -rf"), "{}", stdout(&out));
}

/// The solver too: a quant runs on an engine's `extends` copy exactly when it runs on
/// the engine, so the copy has the same candidates and the same best solution.
#[test]
fn the_solver_treats_an_engine_copy_as_its_parent() {
    let dir = scratch("extends_copies_solve");
    let deployment = |name: &str, engine: &str| {
        format!(
            "deployment {name} {{\n    model  = qwen3_8b\n    quant  = one_of [fp8, Q4_K_M, bf16]\n    engine = {engine}\n    gpu    = one_of [h100_sxm5, l4, rtx_4090]\n}}\n\n"
        )
    };
    let text = format!(
        "engine my_vllm extends vllm {{}}\n\n{}{}",
        deployment("original", "vllm"),
        deployment("copy", "my_vllm")
    );
    std::fs::write(dir.join("solve.deploy"), text).unwrap();
    let output = common::deployfit_in(&dir, &["solve", "--format", "json", "solve.deploy"]);
    let solutions = json(&output);
    let ranked = |i: usize| {
        let mut value = solutions[i]["ranked"].clone();
        for row in value.as_array_mut().expect("ranked solutions") {
            row.as_object_mut().unwrap().remove("deployment");
        }
        value.to_string().replace("my_vllm", "vllm")
    };
    assert!(
        !solutions[0]["ranked"].as_array().unwrap().is_empty(),
        "{solutions}"
    );
    assert_eq!(ranked(0), ranked(1), "{}", stdout(&output));
}
