//! `cargo bench --bench lsp`: the language server's edit loop on a 5,000-line document —
//! a one-character edit to fresh diagnostics, against a cold open of the same document.
//! This is the work the server does per edit (the host's update, then the diagnostics
//! query on an analysis snapshot, as `deployfit lsp` runs it); the JSON-RPC transport adds
//! a copy of the text.

use std::path::Path;
use std::time::{Duration, Instant};

use deployfit_host::AnalysisHost;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn main() {
    let mut text = String::new();
    let mut n = 0;
    while text.lines().count() < 5_000 {
        text.push_str(&format!(
            "deployment d{n} {{\n    model    = glm4_9b\n    quant    = Q4_K_M\n    context  = 8k\n    engine   = llamacpp\n    gpu      = rtx_3090\n\n    require fits\n}}\n\n"
        ));
        n += 1;
    }
    println!(
        "document: {} lines, {} deployments, {} bytes",
        text.lines().count(),
        n,
        text.len()
    );
    let path = Path::new("doc.deploy");

    let mut cold = Vec::new();
    for _ in 0..5 {
        let start = Instant::now();
        let mut host = AnalysisHost::new();
        let file = host.set_file(path, text.clone());
        host.analysis().diagnostics(file).unwrap();
        cold.push(start.elapsed());
    }

    let mut host = AnalysisHost::new();
    let file = host.set_file(path, text.clone());
    host.analysis().diagnostics(file).unwrap();
    let mut edits = Vec::new();
    let target = text.find("context  = 8k").unwrap() + "context  = ".len();
    for i in 0..20 {
        let mut edited = text.clone();
        edited.replace_range(target..target + 1, if i % 2 == 0 { "9" } else { "8" });
        let start = Instant::now();
        host.set_file(path, edited);
        host.analysis().diagnostics(file).unwrap();
        edits.push(start.elapsed());
    }
    let (cold, edit) = (median(cold), median(edits));
    println!("cold open: median {cold:?}");
    println!(
        "one-character edit to fresh diagnostics: median {edit:?} ({:.1}× faster than cold)",
        cold.as_secs_f64() / edit.as_secs_f64()
    );
}
