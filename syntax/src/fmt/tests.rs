use super::*;
use crate::syntax::ast::Item;

/// Formats `input`, checks that formatting the result changes nothing, and returns it.
fn fmt(input: &str) -> String {
    let once = format(input).unwrap_or_else(|e| panic!("format failed: {e:?}\n{input}"));
    let twice = format(&once).unwrap_or_else(|e| panic!("reformat failed: {e:?}\n{once}"));
    assert_eq!(once, twice, "not idempotent for input:\n{input}");
    once
}

#[test]
fn aligns_runs_of_fields() {
    let input = "deployment a {\nmodel = glm4_9b\n  kv_cache=fp8\ncontext =   32k\n\nmemory_utilization = 95 %\n}\n";
    assert_eq!(
        fmt(input),
        "deployment a {\n    model    = glm4_9b\n    kv_cache = fp8\n    context  = 32k\n\n    memory_utilization = 95%\n}\n"
    );
}

#[test]
fn comment_lines_and_other_entries_break_runs() {
    let input = "gpu g {\n  a = 1\n  // about bb\n  bb = 2\n  require fits\n  ccc = 3\n  d = 4\n}";
    assert_eq!(
        fmt(input),
        "gpu g {\n    a = 1\n    // about bb\n    bb = 2\n    require fits\n    ccc = 3\n    d   = 4\n}\n"
    );
}

#[test]
fn keeps_leading_trailing_and_doc_comments() {
    let input = "// header\n\n/// The doc.\n// more\ndeployment d { // opens\n  model = x   // trailing  \n  // before require\n  require fits // why\n  // at the end\n} // after\n// file end\n";
    assert_eq!(
        fmt(input),
        "// header\n\n/// The doc.\n// more\ndeployment d { // opens\n    model = x // trailing\n    // before require\n    require fits // why\n    // at the end\n} // after\n// file end\n"
    );
}

#[test]
fn comments_inside_expressions_move_before_their_entry_and_header_ones_into_the_block() {
    let input = "deployment d\n// in header\n{\n  allow = [a, // first\n    b]\n  files // named\n  { x = 1 }\n}\n";
    assert_eq!(
        fmt(input),
        "deployment d {\n    // in header\n    // first\n    allow = [a, b]\n    files {\n        // named\n        x = 1\n    }\n}\n"
    );
}

#[test]
fn header_comments_do_not_detach_docs() {
    let out = fmt("/// The doc.\ngpu // note\n  a {\nx = 1 }");
    assert_eq!(out, "/// The doc.\ngpu a {\n    // note\n    x = 1\n}\n");
    let parsed = syntax::parse(&out);
    assert_eq!(parsed.decls[0].decl.doc.as_deref(), Some("The doc."));
}

#[test]
fn collapses_blank_lines() {
    let input = "\n\n\ngpu a {\n\n\n  x = 1\n\n\n\n  y = 2\n\n\n}\n\n\n\ngpu b {\n}\n\n\n";
    assert_eq!(
        fmt(input),
        "gpu a {\n    x = 1\n\n    y = 2\n}\n\ngpu b {}\n"
    );
}

#[test]
fn items_are_one_blank_line_apart_but_imports_stay_together() {
    let input = "import \"a.deploy\"\n\nimport \"b.deploy\"\ngpu a {}\ngpu b {}";
    assert_eq!(
        fmt(input),
        "import \"a.deploy\"\nimport \"b.deploy\"\n\ngpu a {}\n\ngpu b {}\n"
    );
}

#[test]
fn semicolons_become_newlines() {
    let input = "gpu a { memory = 12GiB; bandwidth = 864   GB/s; price = $1.20/h }";
    assert_eq!(
        fmt(input),
        "gpu a {\n    memory    = 12 GiB\n    bandwidth = 864 GB/s\n    price     = $1.20/h\n}\n"
    );
}

#[test]
fn nested_blocks_indent_further() {
    let input =
        "model m extends base {\nhf = \"x\"\nfiles {\nQ4_K_M = 1 B\nQ8_0=2 B\n}\nworkload {}\n}";
    assert_eq!(
        fmt(input),
        "model m extends base {\n    hf = \"x\"\n    files {\n        Q4_K_M = 1 B\n        Q8_0   = 2 B\n    }\n    workload {}\n}\n"
    );
}

#[test]
fn strings_are_re_escaped_with_interpolations() {
    let input = r#"rule r { message = "{ quant } is {quant.bpw*2} \"bits\" \\ \{x\} }\n" }"#;
    assert_eq!(
        fmt(input),
        "rule r {\n    message = \"{quant} is {quant.bpw * 2} \\\"bits\\\" \\\\ \\{x\\} \\}\\n\"\n}\n"
    );
}

#[test]
fn expressions_print_with_canonical_spacing() {
    let input = "deployment d {\n quant = one_of [ Q4_K_M,Q8_0, ]\n gpu = ?\n allow = []\n require not(a)and-b.c<=max( ttft,1 s ) else \"slow\"\n minimize cost*(1+x)/2\n maximize decode_tps\n}";
    assert_eq!(
        fmt(input),
        "deployment d {\n    quant = one_of [Q4_K_M, Q8_0]\n    gpu   = ?\n    allow = []\n    require not (a) and -b.c <= max(ttft, 1 s) else \"slow\"\n    minimize cost * (1 + x) / 2\n    maximize decode_tps\n}\n"
    );
}

#[test]
fn empty_and_comment_only_files() {
    assert_eq!(fmt(""), "\n");
    assert_eq!(fmt("  \n\n"), "\n");
    assert_eq!(fmt("// a\n\n\n// b"), "// a\n\n// b\n");
}

#[test]
fn comment_only_block_and_trailing_doc_at_end_of_file() {
    assert_eq!(
        fmt("gpu a {\n// nothing yet\n}"),
        "gpu a {\n    // nothing yet\n}\n"
    );
    assert_eq!(fmt("gpu a { // soon\n}"), "gpu a { // soon\n}\n");
    assert_eq!(fmt("gpu a {}\n/// orphan"), "gpu a {}\n/// orphan\n");
}

#[test]
fn syntax_errors_are_reported() {
    let error = format("gpu a { memory = }").unwrap_err();
    assert!(!error.message.is_empty());
    assert!(format("deployment d { x = \"unterminated }").is_err());
}

#[test]
fn odd_inputs_do_not_panic() {
    for input in [
        "\u{feff}gpu a {}",
        "gpu a { x = \"é{y // z}\" }",
        "import \"a{b}\"",
        "gpu a {}}}}",
        "//",
        "///",
        "gpu a { x = 1 } // é\r\n",
        "gpu a { x = ((((1)))) }",
    ] {
        if let Ok(once) = format(input) {
            assert_eq!(format(&once).as_ref(), Ok(&once), "input: {input:?}");
        }
    }
}

#[test]
fn comment_inside_interpolation_is_kept() {
    let out = fmt("rule r { message = \"x {a // note} y\" }");
    assert_eq!(out, "rule r {\n    // note\n    message = \"x {a} y\"\n}\n");
}

/// Every example and catalog file formats, re-parses cleanly, is a fixed point, and
/// keeps all of its comments.
#[test]
fn repository_files_format_stably() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut seen = 0;
    for dir in ["tests/fixtures/design", "stdlib"] {
        let mut paths: Vec<_> = std::fs::read_dir(root.join(dir))
            .unwrap_or_else(|e| panic!("{dir}: {e}"))
            .map(|entry| entry.expect("directory entry").path())
            .filter(|path| path.extension().is_some_and(|ext| ext == "deploy"))
            .collect();
        paths.sort();
        for path in paths {
            let source = std::fs::read_to_string(&path).expect("readable file");
            let out = format(&source).unwrap_or_else(|e| panic!("{}: {e:?}", path.display()));
            let reparsed = syntax::parse(&out);
            assert!(
                reparsed.errors.is_empty(),
                "{}: {:?}",
                path.display(),
                reparsed.errors
            );
            assert_eq!(format(&out).as_ref(), Ok(&out), "{}", path.display());
            assert_eq!(
                source.matches("//").count(),
                out.matches("//").count(),
                "{}",
                path.display()
            );
            assert_eq!(
                comments::scan(&source).len(),
                comments::scan(&out).len(),
                "{}",
                path.display()
            );
            assert_eq!(
                reparsed.decls.len(),
                syntax::parse(&source).decls.len(),
                "{}",
                path.display()
            );
            seen += 1;
        }
    }
    assert!(seen >= 8, "only {seen} files found");
}

/// The parsed items without spans or whitespace, to compare two layouts of one file.
fn shape(text: &str) -> String {
    // Docs are left out: the splitter attaches `///` lines to a declaration only when
    // each starts its own line, and a mutation like `;/// doc` defeats that in the input.
    let items: Vec<_> = syntax::parse(text)
        .items()
        .into_iter()
        .map(|item| match item {
            Item::Decl(decl) => Item::Decl(Decl { doc: None, ..decl }),
            import => import,
        })
        .collect();
    let mut debug = format!("{items:?}");
    while let Some(at) = debug.find("Span {") {
        let end = debug[at..].find('}').map_or(debug.len(), |i| at + i + 1);
        debug.replace_range(at..end, "");
    }
    // Literal spellings may differ in whitespace (`800 \t ms`), which Debug escapes.
    debug.replace("\\t", "").replace(char::is_whitespace, "")
}

/// Random edits of the examples (comments and line breaks in odd places, `;` for
/// newlines, extra whitespace): whenever the result parses, formatting it must be a
/// fixed point, keep every comment and keep every declaration.
#[test]
fn mutated_examples_format_stably() {
    const ROUNDS: usize = 600;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/design");
    let mut sources: Vec<String> = std::fs::read_dir(root)
        .expect("fixture directory")
        .map(|entry| std::fs::read_to_string(entry.expect("entry").path()).expect("file"))
        .collect();
    sources.sort();
    // A fixed linear congruential generator keeps the test deterministic.
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut random = move |bound: usize| {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((state >> 33) as usize) % bound.max(1)
    };
    let mut formatted = 0;
    for round in 0..ROUNDS {
        let mut text = sources[round % sources.len()].clone();
        for _ in 0..1 + random(4) {
            let boundaries: Vec<usize> = (0..=text.len())
                .filter(|&i| text.is_char_boundary(i))
                .collect();
            let at = boundaries[random(boundaries.len())];
            let insert = [
                " // inserted\n",
                "\n// own line\n",
                "\n\n\n",
                "  \t ",
                ";",
                "/// doc\n",
                "\n",
                "/",
                "//",
                "\"",
                "{",
                "}",
                "(",
                ")",
                "-",
                "not ",
                "{x // in\n}",
                "\"{a // b}\"",
            ][random(18)];
            text.insert_str(at, insert);
        }
        if random(3) == 0 {
            text = text.replace('\n', ";\n");
        }
        let Ok(once) = format(&text) else { continue };
        formatted += 1;
        assert_eq!(format(&once).as_ref(), Ok(&once), "input:\n{text}");
        assert_eq!(
            comments::scan(&text).len(),
            comments::scan(&once).len(),
            "input:\n{text}\noutput:\n{once}"
        );
        assert_eq!(
            shape(&text),
            shape(&once),
            "input:\n{text}\noutput:\n{once}"
        );
    }
    assert!(formatted > 50, "only {formatted} mutated inputs parsed");
}
