//! `deployfit fmt`: canonical, idempotent, comments kept, on every example and fixture.

use crate::common;

use common::{deploy_files, deployfit, deployfit_in, scratch, stdout};
use deployfit_host::fmt::format;

#[test]
fn formatting_is_idempotent_on_every_example_and_fixture() {
    let mut files = deploy_files("examples");
    files.extend(deploy_files("tests/fixtures/design"));
    files.extend(deploy_files("tests/fixtures/diagnostics"));
    files.extend(deploy_files("stdlib"));
    let mut formatted_count = 0;
    for path in files {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue; // the invalid UTF-8 fixture
        };
        let Ok(once) = format(&text) else {
            // Files with syntax errors are refused, never rewritten.
            assert!(
                !deployfit_host::syntax::parse(&text).errors.is_empty(),
                "{}",
                path.display()
            );
            continue;
        };
        let twice = format(&once).expect("formatted output parses");
        assert_eq!(once, twice, "{} is not a fixed point", path.display());
        assert_eq!(
            text.matches("//").count(),
            once.matches("//").count(),
            "{}: comments kept",
            path.display()
        );
        formatted_count += 1;
    }
    assert!(formatted_count >= 40, "formatted {formatted_count} files");
}

#[test]
fn examples_and_stdlib_are_already_formatted() {
    let output = deployfit(&["fmt", "--check", "examples/", "stdlib/"]);
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
}

#[test]
fn fmt_rewrites_and_check_reports() {
    let dir = scratch("fmt_rewrite");
    let messy = "deployment x {model=glm4_9b;quant=Q4_K_M // q\n  gpu    =   rtx_3090\n\n\n  require fits\n}";
    std::fs::write(dir.join("messy.deploy"), messy).unwrap();

    let check = deployfit_in(&dir, &["fmt", "--check", "messy.deploy"]);
    assert_eq!(check.status.code(), Some(1));
    assert_eq!(stdout(&check), "would reformat messy.deploy\n");

    let write = deployfit_in(&dir, &["fmt", "messy.deploy"]);
    assert_eq!(write.status.code(), Some(0));
    let text = std::fs::read_to_string(dir.join("messy.deploy")).unwrap();
    assert_eq!(
        text,
        "deployment x {\n    model = glm4_9b\n    quant = Q4_K_M // q\n    gpu   = rtx_3090\n\n    require fits\n}\n"
    );
    assert_eq!(
        deployfit_in(&dir, &["fmt", "--check", "messy.deploy"])
            .status
            .code(),
        Some(0)
    );

    std::fs::write(dir.join("broken.deploy"), "deployment {").unwrap();
    let broken = deployfit_in(&dir, &["fmt", "broken.deploy"]);
    assert_eq!(broken.status.code(), Some(1));
    assert_eq!(
        std::fs::read_to_string(dir.join("broken.deploy")).unwrap(),
        "deployment {"
    );
}

/// What a file means, as far as a check can tell: every diagnostic (code, severity,
/// message, help) and every deployment's figures. Spans and lines are left out: they
/// are what formatting is allowed to change.
fn meaning(
    workspace: &deployfit_host::Workspace,
    files: &[deployfit_host::db::SourceFile],
) -> Vec<String> {
    let mut out = Vec::new();
    for file in files {
        for d in workspace.check(*file) {
            out.push(format!(
                "{} {:?} {} | {:?}",
                d.code, d.severity, d.message, d.help
            ));
        }
        for s in workspace.summaries(*file) {
            out.push(format!("{} {:?}", s.name, s.figures));
        }
    }
    out.sort();
    out
}

#[test]
fn formatting_never_changes_what_a_file_means() {
    use deployfit_host::Workspace;
    let mut files = deploy_files("examples");
    files.extend(deploy_files("examples-failing"));
    files.extend(deploy_files("tests/fixtures/design"));
    files.extend(deploy_files("tests/fixtures/diagnostics"));
    if common::root().join("tests/fixtures/regressions").is_dir() {
        files.extend(deploy_files("tests/fixtures/regressions"));
    }
    let mut compared = 0;
    for path in &files {
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        let Ok(formatted) = format(&text) else {
            continue;
        };
        // Loaded from disk so that imports resolve as they do for `check`.
        let mut workspace = Workspace::new();
        let Ok(file) = workspace.load(path) else {
            continue;
        };
        let before = meaning(&workspace, &[file]);
        workspace.set_file(path, formatted.clone());
        let after = meaning(&workspace, &[file]);
        assert_eq!(
            before,
            after,
            "{}: formatting changed its meaning:\n{formatted}",
            path.display()
        );
        compared += 1;
    }
    assert!(compared >= 40, "compared {compared} files");

    // The stdlib: format each file in place and compare every example's meaning.
    let examples = deploy_files("examples");
    for stdlib in deploy_files("stdlib") {
        let text = std::fs::read_to_string(&stdlib).unwrap();
        let formatted = format(&text).expect("the stdlib parses");
        let mut workspace = Workspace::new();
        let loaded: Vec<_> = examples
            .iter()
            .map(|p| workspace.load(p).unwrap())
            .collect();
        let before = meaning(&workspace, &loaded);
        let name = stdlib.file_name().unwrap().to_str().unwrap();
        workspace.set_stdlib_text(name, formatted).unwrap();
        let after = meaning(&workspace, &loaded);
        assert_eq!(
            before, after,
            "formatting {name} changed the examples' figures"
        );
    }
}

#[test]
fn formatting_keeps_suffixed_quantities_and_long_names() {
    // `1k%` is 1,024 percent: the suffix stays attached to the number.
    let text = "deployment d {\n    require utilization < 1k%\n}\n";
    assert_eq!(format(text).unwrap(), text);
    let spaced = "deployment d {\n    require   utilization<1k %\n}\n";
    assert_eq!(format(spaced).unwrap(), text);
    // A field name longer than `format!`'s width limit (65,535) neither panics nor pads
    // its neighbours; non-ASCII comments stay.
    let long = "x".repeat(70_000);
    let text = format!("deployment d {{ // naïve ünïcödé 中文\n    a = 1\n    {long} = 2\n}}\n");
    let once = format(&text).unwrap();
    assert!(once.contains(&format!("    {long} = 2\n")));
    assert!(once.contains("    a = 1\n"));
    assert_eq!(format(&once).unwrap(), once);
}
