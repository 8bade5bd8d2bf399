//! IDE queries on small documents with a cursor marker, `$0`, as rust-analyzer writes
//! them: each test says where the cursor is and what the query answers there.

use std::path::Path;

use super::*;
use crate::db::Database;
use salsa::Setter;

/// The text without its `$0` marker, and the marker's byte offset.
fn cursor(text: &str) -> (String, usize) {
    let at = text.find("$0").expect("a `$0` marker");
    (text.replacen("$0", "", 1), at)
}

/// Runs `query` on `text` (marker removed) at the marker.
fn at_cursor<T>(text: &str, query: impl FnOnce(&dyn Db, SourceFile, usize) -> T) -> T {
    let (text, offset) = cursor(text);
    // The compiler's database alone: these documents name catalog entries only, so
    // nothing needs the host's file or model loading.
    let mut db = Database::new();
    let path = Path::new("/ide/test.deploy").to_path_buf();
    let file = SourceFile::new(&db, path.clone(), text, None, false);
    let project = db.project();
    let mut files = project.files(&db).clone();
    files.insert(path, file);
    project.set_files(&mut db).to(files);
    query(&db, file, offset)
}

/// The text a span covers in the file it belongs to.
fn covered(db: &dyn Db, file: SourceFile, span: Span) -> String {
    file.text(db)[span.start as usize..span.end as usize].to_string()
}

const DEPLOYMENT: &str = "deployment chat {\n    model = glm4_9b\n    quant = Q4_K_M\n    gpu   = GPU\n\n    require decode_tps >= 10 tok/s\n}\n";

fn deployment_with(gpu: &str) -> String {
    DEPLOYMENT.replace("GPU", gpu)
}

#[test]
fn hover_on_a_catalog_reference_describes_the_entry() {
    let hover = at_cursor(&deployment_with("rtx_30$090"), |db, file, offset| {
        let hover = hover(db, file, offset).expect("a hover on the GPU");
        (covered(db, file, hover.span), hover.markdown)
    });
    assert_eq!(hover.0, "rtx_3090");
    assert!(hover.1.contains("RTX 3090"), "{}", hover.1);
    assert!(hover.1.contains("24"), "the memory is shown: {}", hover.1);
}

#[test]
fn hover_on_a_property_documents_it() {
    let text = DEPLOYMENT
        .replace("GPU", "rtx_3090")
        .replace("decode_tps >=", "decode_$0tps >=");
    let markdown = at_cursor(&text, |db, file, offset| {
        hover(db, file, offset).map(|h| h.markdown)
    })
    .expect("a hover on the property");
    assert!(markdown.starts_with("**`decode_tps`**"), "{markdown}");
}

#[test]
fn hover_inside_a_non_ascii_comment_answers_without_panicking() {
    let text = format!("// naï$0ve — 中文\n{}", deployment_with("rtx_3090"));
    let hover = at_cursor(&text, hover);
    // A comment word is not a reference: at most the file-level answer, never a panic.
    assert!(hover.is_none_or(|h| !h.markdown.is_empty()));
}

#[test]
fn completion_after_a_reference_field_lists_entries_of_its_kind() {
    let completions = at_cursor(&deployment_with("$0"), completions);
    let gpu = completions
        .iter()
        .find(|c| c.label == "rtx_3090")
        .expect("rtx_3090 is offered");
    assert_eq!(gpu.kind, CompletionKind::Entry);
    assert!(
        !completions.iter().any(|c| c.label == "glm4_9b"),
        "models are not offered for `gpu`"
    );
}

#[test]
fn completion_at_the_start_of_a_line_lists_fields() {
    let text = "deployment chat {\n    model = glm4_9b\n    $0\n}\n";
    let labels: Vec<String> = at_cursor(text, completions)
        .into_iter()
        .filter(|c| c.kind == CompletionKind::Field)
        .map(|c| c.label)
        .collect();
    for field in ["quant", "gpu", "context", "engine"] {
        assert!(labels.iter().any(|l| l == field), "{field} in {labels:?}");
    }
}

#[test]
fn completion_after_a_number_offers_units() {
    let text = "gpu lab extends rtx_3090 {\n    memory = 48 $0\n}\n";
    let completions = at_cursor(text, completions);
    assert!(
        completions
            .iter()
            .any(|c| c.label == "GiB" && c.kind == CompletionKind::Unit),
        "{completions:?}"
    );
}

#[test]
fn definition_of_a_catalog_name_is_in_the_stdlib() {
    let (target, stdlib_text) = at_cursor(&deployment_with("rtx_$03090"), |db, file, offset| {
        let target = definition(db, file, offset).expect("a definition");
        let stdlib = db
            .project()
            .stdlib(db)
            .iter()
            .find(|f| f.path(db) == &target.path)
            .map(|f| f.text(db).clone())
            .expect("a stdlib file");
        (target, stdlib)
    });
    assert!(target.is_stdlib);
    assert!(target.path.ends_with("gpus.deploy"), "{target:?}");
    assert_eq!(
        &stdlib_text[target.span.start as usize..target.span.end as usize],
        "rtx_3090"
    );
}

#[test]
fn definition_of_a_user_name_is_its_declaration() {
    // (Money is written `$1/h` here: `$0` is the cursor.)
    let text = format!(
        "gpu lab extends rtx_3090 {{\n    price = $1/h\n}}\n\n{}",
        deployment_with("l$0ab")
    );
    let (target, name) = at_cursor(&text, |db, file, offset| {
        let target = definition(db, file, offset).expect("a definition");
        let name = covered(db, file, target.span);
        (target, name)
    });
    assert!(!target.is_stdlib);
    assert_eq!(name, "lab");
    assert_eq!(target.span.start, 4, "the name in `gpu lab extends ...`");
}

#[test]
fn the_inlay_hint_of_a_deployment_follows_its_name() {
    let text = deployment_with("rtx_3090").replace("deployment chat {", "deployment chat$0 {");
    let (hints, offset) = at_cursor(&text, |db, file, offset| (inlay_hints(db, file), offset));
    assert_eq!(hints.len(), 1);
    assert_eq!(hints[0].offset as usize, offset);
    let label = &hints[0].label;
    assert!(
        label.contains("GiB") && label.contains("tok/s") && label.contains("$"),
        "{label}"
    );
}
