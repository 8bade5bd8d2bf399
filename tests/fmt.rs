//! `deployfit fmt`: canonical, idempotent, comments kept, on every example and fixture.

mod common;

use common::{deploy_files, deployfit, deployfit_in, scratch, stdout};
use deployfit_compiler::fmt::format;

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
                !deployfit_compiler::syntax::parse(&text).errors.is_empty(),
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
