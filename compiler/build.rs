//! Build script: parses the stdlib (`stdlib/*.deploy`) once, at build time, with the
//! same parser the compiler runs (`deployfit_syntax::syntax::parse`), and encodes each
//! file's syntax tree with postcard into `$OUT_DIR`. `db::parse` decodes a stdlib file's
//! tree instead of parsing its text when the text is the one embedded (docs/architecture.md,
//! "The stdlib, parsed once"), which takes a command's start-up from ~65 ms to a few.
//!
//! Output: `$OUT_DIR/stdlib_trees.rs`, `include!`d by `compiler/src/db.rs`, defining
//! `STDLIB_TREES: &[(&str, &[u8])]` (the path as `db::STDLIB` names it, the encoded tree).
//! A stdlib file with a syntax error fails the build: the stdlib ships without one.

use std::fmt::Write as _;
use std::path::PathBuf;

fn fail(msg: &str) -> ! {
    eprintln!("error: deployfit-compiler build: {msg}");
    std::process::exit(1);
}

fn main() {
    let manifest = PathBuf::from(
        std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| fail("no CARGO_MANIFEST_DIR")),
    );
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap_or_else(|_| fail("no OUT_DIR")));
    let stdlib = manifest.join("stdlib");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed={}", stdlib.display());
    let mut names: Vec<String> = std::fs::read_dir(&stdlib)
        .unwrap_or_else(|e| fail(&format!("cannot read {}: {e}", stdlib.display())))
        .filter_map(|entry| entry.ok())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".deploy"))
        .collect();
    names.sort();
    let mut table = String::from("pub(crate) static STDLIB_TREES: &[(&str, &[u8])] = &[\n");
    for name in &names {
        let path = stdlib.join(name);
        println!("cargo:rerun-if-changed={}", path.display());
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| fail(&format!("cannot read {}: {e}", path.display())));
        let parsed = deployfit_syntax::syntax::parse(&text);
        if let Some(error) = parsed.errors.first() {
            fail(&format!(
                "stdlib/{name} has a syntax error at byte {}: {}",
                error.span.start, error.message
            ));
        }
        let bytes = postcard::to_allocvec(&parsed)
            .unwrap_or_else(|e| fail(&format!("cannot encode stdlib/{name}: {e}")));
        let file = format!("{name}.tree");
        std::fs::write(out.join(&file), bytes)
            .unwrap_or_else(|e| fail(&format!("cannot write {file}: {e}")));
        writeln!(
            table,
            "    (\"stdlib/{name}\", include_bytes!(concat!(env!(\"OUT_DIR\"), \"/{file}\"))),"
        )
        .unwrap();
    }
    table.push_str("];\n");
    std::fs::write(out.join("stdlib_trees.rs"), table)
        .unwrap_or_else(|e| fail(&format!("cannot write stdlib_trees.rs: {e}")));
}
