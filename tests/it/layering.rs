//! The compiler's modules import downward only: no circle in the module graph.
//!
//! Nodes are the compiler's source files (`eval/entry.rs` is `eval::entry`, a `mod.rs` is
//! its folder). An edge is a path that names another module: `crate::a::b`, `super::x`,
//! `self::x`, a `use super::{a, b}` group, or, in a `mod.rs`, a child named bare
//! (`schema::field_spec`). Declaring a child (`mod x;`) and re-exporting it (`pub use
//! x::Item;`) are not imports; comments and `#[cfg(test)]` modules are skipped. See
//! docs/architecture.md for the layers.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

fn sources(dir: &Path, root: &Path, out: &mut BTreeMap<String, String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, root, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path.strip_prefix(root).unwrap().with_extension("");
            let mut parts: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if parts.last().is_some_and(|p| p == "mod") {
                parts.pop();
            }
            let text = std::fs::read_to_string(&path).unwrap();
            out.insert(parts.join("::"), text);
        }
    }
}

/// The text that can import: no comments, no test modules, no `mod` declarations or
/// re-exports.
fn code(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => &text[..at],
        None => text,
    };
    text.lines()
        .map(|line| match line.find("//") {
            Some(at) => &line[..at],
            None => line,
        })
        .filter(|line| {
            let t = line.trim_start();
            !(t.starts_with("mod ")
                || t.starts_with("pub mod ")
                || t.starts_with("pub(crate) mod ")
                || t.starts_with("pub use ")
                || t.starts_with("pub(crate) use "))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The longest module that a path (`eval::entry::Entry`) names.
fn resolve<'a>(modules: &'a BTreeSet<String>, path: &[&str]) -> Option<&'a String> {
    (1..=path.len())
        .rev()
        .find_map(|n| modules.get(&path[..n].join("::")))
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Every `prefix::a::b` path in `code` (identifiers and `::` only), from each occurrence
/// of `prefix::` not preceded by an identifier character or `::`.
fn paths_after<'a>(code: &'a str, prefix: &str) -> Vec<Vec<&'a str>> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = code[from..].find(prefix) {
        let start = from + at;
        from = start + prefix.len();
        let before = code[..start].chars().next_back();
        if before.is_some_and(|c| is_ident(c) || c == ':') {
            continue;
        }
        let rest = &code[from..];
        let end = rest
            .find(|c: char| !(is_ident(c) || c == ':'))
            .unwrap_or(rest.len());
        let mut path: Vec<&str> = rest[..end].split("::").filter(|s| !s.is_empty()).collect();
        // `use super::{a, b::c}`: each item of the group.
        if rest[end..].starts_with('{') && rest[..end].ends_with("::") {
            let group_end = rest[end..].find('}').map(|e| end + e).unwrap_or(rest.len());
            for item in rest[end + 1..group_end].split(',') {
                let item = item.trim();
                let item_end = item
                    .find(|c: char| !(is_ident(c) || c == ':'))
                    .unwrap_or(item.len());
                let mut full = path.clone();
                full.extend(item[..item_end].split("::").filter(|s| !s.is_empty()));
                out.push(full);
            }
            path.clear();
        }
        if !path.is_empty() {
            out.push(path);
        }
    }
    out
}

/// The module graph of one crate's sources (`compiler/src`, `syntax/src`).
fn graph_of(dir: &str) -> BTreeMap<String, BTreeSet<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut files = BTreeMap::new();
    sources(&root, &root, &mut files);
    files.remove("lib");
    let modules: BTreeSet<String> = files.keys().cloned().collect();
    let mut edges = BTreeMap::new();
    for (module, text) in &files {
        let code = code(text);
        let parent: Vec<&str> = module.split("::").collect();
        let parent = &parent[..parent.len() - 1];
        let mut deps = BTreeSet::new();
        let mut add = |path: Vec<&str>| {
            if let Some(target) = resolve(&modules, &path)
                && target != module
            {
                deps.insert(target.clone());
            }
        };
        for path in paths_after(&code, "crate::") {
            add(path);
        }
        for path in paths_after(&code, "super::") {
            let mut full = parent.to_vec();
            full.extend(path);
            add(full);
        }
        for path in paths_after(&code, "self::") {
            let mut full: Vec<&str> = module.split("::").collect();
            full.extend(path);
            add(full);
        }
        // A `mod.rs` naming its children bare.
        for child in modules.iter().filter(|m| {
            m.strip_prefix(module.as_str())
                .and_then(|rest| rest.strip_prefix("::"))
                .is_some_and(|rest| !rest.contains("::"))
        }) {
            let short = child.rsplit("::").next().unwrap();
            if !paths_after(&code, &format!("{short}::")).is_empty() {
                deps.insert(child.clone());
            }
        }
        edges.insert(module.clone(), deps);
    }
    edges
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    graph_of("compiler/src")
}

/// A circle through the graph, if there is one, by depth-first search.
fn find_cycle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Open,
        Done,
    }
    let mut marks: BTreeMap<&str, Mark> = edges.keys().map(|k| (k.as_str(), Mark::New)).collect();
    fn visit<'a>(
        node: &'a str,
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        marks: &mut BTreeMap<&'a str, Mark>,
        stack: &mut Vec<&'a str>,
    ) -> Option<Vec<String>> {
        marks.insert(node, Mark::Open);
        stack.push(node);
        for next in edges.get(node).into_iter().flatten() {
            match marks.get(next.as_str()).copied().unwrap_or(Mark::Done) {
                Mark::Open => {
                    let at = stack.iter().position(|n| *n == next).unwrap();
                    let mut cycle: Vec<String> =
                        stack[at..].iter().map(|s| s.to_string()).collect();
                    cycle.push(next.clone());
                    return Some(cycle);
                }
                Mark::New => {
                    if let Some(cycle) = visit(next, edges, marks, stack) {
                        return Some(cycle);
                    }
                }
                Mark::Done => {}
            }
        }
        stack.pop();
        marks.insert(node, Mark::Done);
        None
    }
    let nodes: Vec<&str> = edges.keys().map(String::as_str).collect();
    for node in nodes {
        if marks[node] == Mark::New
            && let Some(cycle) = visit(node, edges, &mut marks, &mut Vec::new())
        {
            return Some(cycle);
        }
    }
    None
}

/// The module graph of one crate's sources: the `expected` edges are seen (the graph is
/// real) and no module imports one that imports it back.
fn check_module_graph(dir: &str, expected: &[(&str, &str)]) {
    let edges = graph_of(dir);
    for (from, to) in expected {
        assert!(
            edges.get(*from).is_some_and(|deps| deps.contains(*to)),
            "{dir}: expected {from} → {to}; {from} imports {:?}",
            edges.get(*from)
        );
    }
    if let Some(cycle) = find_cycle(&edges) {
        panic!("{dir}: import circle: {}", cycle.join(" → "));
    }
}

#[test]
fn the_compiler_module_graph_has_no_circle() {
    // The pipeline's known edges.
    check_module_graph(
        "compiler/src",
        &[
            ("check", "solve"),
            ("solve", "candidate"),
            ("candidate", "rules"),
            ("rules", "eval::deployment"),
            ("eval::entry", "names"),
            ("names", "db"),
            ("diagnostics", "db"),
        ],
    );
}

#[test]
fn the_model_ide_and_host_module_graphs_have_no_circle() {
    check_module_graph("model/src", &[("speed", "sim")]);
    check_module_graph("ide/src", &[("ide", "explain")]);
    check_module_graph("host/src", &[("analysis", "workspace")]);
}

#[test]
fn the_syntax_module_graph_has_no_circle() {
    check_module_graph(
        "syntax/src",
        &[
            ("syntax::lower", "syntax::parsed"),
            ("syntax::errors", "codes"),
            ("fmt", "syntax"),
        ],
    );
}

/// The workspace's crates as `cargo metadata` reports them: each package's name and the
/// workspace packages it depends on (normal and build dependencies).
fn crate_graph() -> BTreeMap<String, BTreeSet<String>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let output = std::process::Command::new(cargo)
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--offline",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let packages = metadata["packages"].as_array().unwrap();
    let names: BTreeSet<String> = packages
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_string())
        .collect();
    packages
        .iter()
        .map(|p| {
            let deps = p["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| d["kind"].as_str() != Some("dev"))
                .map(|d| d["name"].as_str().unwrap().to_string())
                .filter(|d| names.contains(d))
                .collect();
            (p["name"].as_str().unwrap().to_string(), deps)
        })
        .collect()
}

/// The stack of docs/architecture.md, bottom first: a crate may depend only on crates
/// of lower levels.
const STACK: &[&[&str]] = &[
    &[
        "deployfit-syntax",
        "deployfit-artifacts",
        "deployfit-registry",
    ],
    &["deployfit-model"],
    &["deployfit-compiler"],
    &["deployfit-ide"],
    &["deployfit-host"],
    &["deployfit-lsp", "deployfit-mcp"],
    &["deployfit"],
];

#[test]
fn the_crates_depend_only_downward() {
    let graph = crate_graph();
    let level = |name: &str| {
        STACK
            .iter()
            .position(|l| l.contains(&name))
            .unwrap_or_else(|| panic!("crate {name} is in no level of the stack (tests/it/layering.rs, docs/architecture.md)"))
    };
    assert_eq!(
        graph.len(),
        STACK.iter().map(|l| l.len()).sum::<usize>(),
        "{graph:?}"
    );
    for (name, deps) in &graph {
        for dep in deps {
            assert!(
                level(dep) < level(name),
                "{name} depends on {dep}, which is not below it"
            );
        }
    }
    // The graph is real: known edges are seen.
    assert!(graph["deployfit-compiler"].contains("deployfit-syntax"));
    assert!(graph["deployfit-compiler"].contains("deployfit-model"));
    assert!(graph["deployfit-host"].contains("deployfit-ide"));
    assert!(graph["deployfit"].contains("deployfit-lsp"));
}

#[test]
fn the_cycle_finder_finds_a_circle() {
    let mut edges = BTreeMap::new();
    edges.insert("a".to_string(), BTreeSet::from(["b".to_string()]));
    edges.insert("b".to_string(), BTreeSet::from(["c".to_string()]));
    edges.insert("c".to_string(), BTreeSet::from(["a".to_string()]));
    assert_eq!(
        find_cycle(&edges),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
    edges.insert("c".to_string(), BTreeSet::new());
    assert_eq!(find_cycle(&edges), None);
}

#[test]
fn the_base_layers_know_nothing_above_them() {
    let edges = graph();
    let below = |module: &str, forbidden: &[&str]| {
        for dep in &edges[module] {
            let top = dep.split("::").next().unwrap();
            assert!(
                !forbidden.contains(&top),
                "{module} imports {dep}, a layer above it"
            );
        }
    };
    // The IDE and host layers are crates of their own above the compiler: cargo keeps
    // the compiler from importing them.
    let upper = ["names", "eval", "rules", "candidate", "solve", "check"];
    below("db", &[&["diagnostics"][..], &upper[..]].concat());
    below("diagnostics", &upper);
    below("names", &upper[1..]);
    for file in ["eval", "eval::entry", "eval::deployment", "eval::estimate"] {
        below(file, &upper[2..]);
    }
}
