//! Incrementality, shown through salsa's event log: which deployment evaluations
//! re-execute after an edit.

use std::path::Path;

use deployfit_host::Workspace;
use deployfit_host::db::{DeclKey, STDLIB, SourceFile};
use deployfit_host::syntax::ast::DeclKind;
use salsa::plumbing::AsId;

const TWO_DEPLOYMENTS: &str = "\
deployment alpha {
    model   = glm4_9b
    quant   = Q4_K_M
    context = 8k
    engine  = llamacpp
    gpu     = rtx_3090
}

deployment beta {
    model   = glm4_9b
    quant   = Q4_K_M
    context = 8k
    engine  = llamacpp
    gpu     = rtx_4090
}
";

/// The names of the deployments whose evaluation executed, according to the log.
fn evaluated(workspace: &Workspace, file: SourceFile, log: &[String]) -> Vec<&'static str> {
    ["alpha", "beta"]
        .into_iter()
        .filter(|name| {
            let key = DeclKey::new(
                workspace.db(),
                file,
                DeclKind::Deployment,
                name.to_string(),
                0,
            );
            let entry = format!("deployment({:?})", key.as_id());
            log.contains(&entry)
        })
        .collect()
}

fn setup() -> (Workspace, SourceFile) {
    let mut workspace = Workspace::new();
    let file = workspace.set_file(Path::new("two.deploy"), TWO_DEPLOYMENTS.to_string());
    workspace.db().start_log();
    assert!(workspace.check(file).is_empty());
    let first = workspace.db().take_log();
    assert_eq!(evaluated(&workspace, file, &first), ["alpha", "beta"]);
    (workspace, file)
}

#[test]
fn editing_one_deployment_re_evaluates_only_that_deployment() {
    let (mut workspace, file) = setup();
    // The edit changes alpha's length, so every byte offset of beta moves too.
    let edited = TWO_DEPLOYMENTS.replacen("context = 8k", "context = 16_384", 1);
    workspace.set_file(Path::new("two.deploy"), edited);
    let diagnostics = workspace.check(file);
    let log = workspace.db().take_log();
    assert_eq!(
        evaluated(&workspace, file, &log),
        ["alpha"],
        "log: {log:#?}"
    );
    assert!(
        log.iter().any(|e| e.starts_with("parse(")),
        "the file was re-parsed"
    );
    // Beta's cached diagnostics are still placed correctly after the shift.
    assert!(diagnostics.is_empty());
    let summaries = workspace.summaries(file);
    assert_eq!(summaries[1].name, "beta");
    assert_eq!(summaries[1].line, 9);
}

#[test]
fn editing_a_stdlib_gpu_re_evaluates_only_the_deployments_that_use_it() {
    let (mut workspace, file) = setup();
    let gpus = STDLIB
        .iter()
        .find(|(path, _)| path.ends_with("gpus.deploy"))
        .unwrap()
        .1;
    let start = gpus
        .find("gpu rtx_4090 {")
        .expect("the stdlib has rtx_4090");
    let memory = start + gpus[start..].find("24 GiB").expect("rtx_4090 has 24 GiB");
    let edited = format!(
        "{}48 GiB{}",
        &gpus[..memory],
        &gpus[memory + "24 GiB".len()..]
    );
    workspace.set_stdlib_text("gpus.deploy", edited).unwrap();
    workspace.check(file);
    let log = workspace.db().take_log();
    assert_eq!(evaluated(&workspace, file, &log), ["beta"], "log: {log:#?}");
    let beta = &workspace.summaries(file)[1];
    assert_eq!(beta.figures["usable_memory"], "45.60 GiB");
}

#[test]
fn editing_nothing_re_evaluates_nothing() {
    let (mut workspace, file) = setup();
    workspace.set_file(Path::new("two.deploy"), TWO_DEPLOYMENTS.to_string());
    workspace.check(file);
    assert!(workspace.db().take_log().is_empty());
}
