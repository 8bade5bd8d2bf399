//! Issue #10, through the real binary: non-ASCII before a syntax error, what is read
//! from disk (regular `.deploy` files only, bounded, each real file once), what is
//! printed (byte offsets into the file, encoded SARIF URIs), and the stdlib folder rule.

mod common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::{codes, deployfit_in, json, scratch, stdout};

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Runs the binary in `dir`, killing it after `limit` (a hang is a failure, not a
/// stuck test run).
fn run_bounded(dir: &Path, args: &[&str], limit: Duration) -> std::process::Output {
    common::deployfit_timed(dir, args, limit).0
}

const NAIVE: &str = "// naïve: a comment in another language — 中文 ünïcödé\nx\ndeployment d {\n    model = glm4_9b\n    quant = Q4_K_M\n    gpu   = rtx_3090\n}\n";

#[test]
fn a_syntax_error_after_a_non_ascii_word_is_a_diagnostic_in_every_command() {
    let dir = scratch("naive_word");
    std::fs::write(dir.join("naive.deploy"), NAIVE).unwrap();
    // The word right before the error is non-ASCII too.
    std::fs::write(
        dir.join("word.deploy"),
        "deployment d {\n    model = glm4_9b // señor\n    naïve\n}\n",
    )
    .unwrap();
    for file in ["naive.deploy", "word.deploy"] {
        let check = deployfit_in(&dir, &["check", "--format", "json", file]);
        assert_eq!(check.status.code(), Some(1), "{file}: {}", stderr(&check));
        let report = json(&check);
        assert!(
            codes(&report).contains(&"deploy::syntax::unexpected".to_string()),
            "{file}: {report}"
        );
        for format in ["human", "github", "sarif"] {
            let output = deployfit_in(&dir, &["check", "--format", format, file]);
            assert_eq!(
                output.status.code(),
                Some(1),
                "{file} {format}: {}",
                stderr(&output)
            );
        }
        for args in [
            vec!["fmt", "--check", file],
            vec!["fmt", file],
            vec!["explain", file],
            vec!["solve", file],
            vec!["export", file, "--deployment", "d", "--engine", "vllm"],
        ] {
            let output = deployfit_in(&dir, &args);
            let code = output.status.code();
            assert!(
                matches!(code, Some(0..=2)),
                "{args:?}: exit {code:?}, {}",
                stderr(&output)
            );
            assert!(!stderr(&output).contains("panicked"), "{args:?}");
        }
    }
    // A non-ASCII name is named whole, with its span on the whole word.
    let report = json(&deployfit_in(
        &dir,
        &["check", "--format", "json", "word.deploy"],
    ));
    let diag = &report["diagnostics"][0];
    assert_eq!(
        diag["message"],
        "`naïve` is not a name: names are ASCII letters, digits and `_`"
    );
    let text = std::fs::read_to_string(dir.join("word.deploy")).unwrap();
    let (start, end) = (
        diag["span"]["start"].as_u64().unwrap(),
        diag["span"]["end"].as_u64().unwrap(),
    );
    assert_eq!(&text[start as usize..end as usize], "naïve");
    assert_eq!(
        (diag["line"].as_u64(), diag["column"].as_u64()),
        (Some(3), Some(5))
    );
    // "after ..." never quotes a comment's last word.
    let report = json(&deployfit_in(
        &dir,
        &["check", "--format", "json", "naive.deploy"],
    ));
    let message = report["diagnostics"][0]["message"].as_str().unwrap();
    assert!(!message.contains("after `é`"), "{message}");
    assert!(message.ends_with("found `x`"), "{message}");
}

#[cfg(unix)]
#[test]
fn imports_of_devices_stdin_fifos_and_other_files_are_refused_quickly() {
    let dir = scratch("import_devices");
    std::fs::write(dir.join("secret.txt"), "password: hunter2\n").unwrap();
    let status = Command::new("mkfifo")
        .arg(dir.join("pipe.deploy"))
        .status()
        .unwrap();
    assert!(status.success());
    let cases = [
        (
            "zero.deploy",
            "/dev/zero",
            "deploy::name::import_not_deploy",
        ),
        (
            "stdin.deploy",
            "/dev/stdin",
            "deploy::name::import_not_deploy",
        ),
        (
            "secret.deploy",
            "secret.txt",
            "deploy::name::import_not_deploy",
        ),
        ("fifo.deploy", "pipe.deploy", "deploy::name::import_missing"),
        ("folder.deploy", ".", "deploy::name::import_not_deploy"),
    ];
    for (name, target, code) in cases {
        std::fs::write(
            dir.join(name),
            format!("import \"{target}\"\n\ndeployment d {{\n    model = glm4_9b\n    quant = Q4_K_M\n    gpu   = rtx_3090\n}}\n"),
        )
        .unwrap();
        for format in ["json", "human"] {
            let output = run_bounded(
                &dir,
                &["check", "--format", format, name],
                Duration::from_secs(20),
            );
            assert_eq!(output.status.code(), Some(1), "{name}: {}", stderr(&output));
            let text = stdout(&output);
            assert!(
                !text.contains("hunter2"),
                "{name} leaked a non-.deploy file: {text}"
            );
            if format == "json" {
                let report: serde_json::Value = serde_json::from_str(&text).unwrap();
                assert!(
                    codes(&report).contains(&code.to_string()),
                    "{name}: {report}"
                );
                if name == "fifo.deploy" {
                    let message = report["diagnostics"][0]["message"].as_str().unwrap();
                    assert!(message.contains("FIFO"), "{message}");
                }
            }
        }
    }
    // The language server reads imports through the same loader: `/dev/stdin` must not
    // swallow its own JSON-RPC input (checked by the server tests); here, explain and
    // solve take the same path.
    let output = run_bounded(&dir, &["explain", "stdin.deploy"], Duration::from_secs(20));
    assert!(
        matches!(output.status.code(), Some(0 | 1)),
        "{}",
        stderr(&output)
    );

    // A FIFO inside a checked folder is skipped, named on stderr; named explicitly it
    // is a usage error. Neither blocks.
    std::fs::remove_file(dir.join("fifo.deploy")).unwrap();
    let walk = run_bounded(
        &dir,
        &["check", "--format", "json", "."],
        Duration::from_secs(20),
    );
    assert!(stderr(&walk).contains("pipe.deploy"), "{}", stderr(&walk));
    assert!(stderr(&walk).contains("FIFO"), "{}", stderr(&walk));
    let explicit = run_bounded(&dir, &["check", "pipe.deploy"], Duration::from_secs(20));
    assert_eq!(explicit.status.code(), Some(2));
    assert!(stderr(&explicit).contains("FIFO"), "{}", stderr(&explicit));
    let fmt = run_bounded(&dir, &["fmt", "--check", "."], Duration::from_secs(20));
    assert!(matches!(fmt.status.code(), Some(0 | 1)), "{}", stderr(&fmt));
}

#[test]
fn a_file_over_the_size_limit_is_refused_with_the_limit_named() {
    let dir = scratch("too_large");
    let big = std::fs::File::create(dir.join("big.deploy")).unwrap();
    // Sparse: no 33 MiB written to disk.
    big.set_len(deployfit_compiler::files::MAX_FILE_BYTES + 1)
        .unwrap();
    std::fs::write(dir.join("imports_big.deploy"), "import \"big.deploy\"\n").unwrap();
    let output = deployfit_in(&dir, &["check", "--format", "json", "imports_big.deploy"]);
    let report = json(&output);
    let message = report["diagnostics"][0]["message"].as_str().unwrap();
    assert_eq!(
        report["diagnostics"][0]["code"],
        "deploy::name::import_missing"
    );
    assert!(message.contains("over the limit"), "{message}");
    let direct = deployfit_in(&dir, &["check", "big.deploy"]);
    assert_eq!(direct.status.code(), Some(2));
    assert!(stderr(&direct).contains("32 MiB"), "{}", stderr(&direct));
}

#[test]
fn explicit_files_must_be_deploy_files() {
    let dir = scratch("explicit_non_deploy");
    std::fs::write(dir.join("notes.txt"), "password: hunter2\n").unwrap();
    let output = deployfit_in(&dir, &["check", "notes.txt"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(!stdout(&output).contains("hunter2"));
    assert!(stderr(&output).contains(".deploy"), "{}", stderr(&output));
}

#[cfg(unix)]
#[test]
fn symlink_loops_and_repeated_paths_check_each_real_file_once() {
    let root = common::root();
    // `examples` and `examples/../examples` are the same files.
    let once = json(&deployfit_in(
        &root,
        &["check", "--format", "json", "examples"],
    ));
    let twice = json(&deployfit_in(
        &root,
        &[
            "check",
            "--format",
            "json",
            "examples",
            "examples/../examples",
        ],
    ));
    assert_eq!(once["summary"]["files"], twice["summary"]["files"]);
    assert_eq!(once["deployments"], twice["deployments"]);

    let dir = scratch("symlink_loops");
    let inner = dir.join("a/b");
    std::fs::create_dir_all(&inner).unwrap();
    std::fs::write(
        inner.join("one.deploy"),
        "deployment d {\n    model = glm4_9b\n    quant = Q4_K_M\n    gpu   = rtx_3090\n}\n",
    )
    .unwrap();
    // Two links back up: without the rule the walk is exponential.
    std::os::unix::fs::symlink("..", inner.join("up")).unwrap();
    std::os::unix::fs::symlink("../..", inner.join("upup")).unwrap();
    std::os::unix::fs::symlink("one.deploy", inner.join("alias.deploy")).unwrap();
    let output = run_bounded(
        &dir,
        &["check", "--format", "json", "."],
        Duration::from_secs(20),
    );
    let report = json(&output);
    assert_eq!(report["summary"]["files"], 1, "{report}");
    assert_eq!(report["deployments"].as_array().unwrap().len(), 1);
}

#[test]
fn json_spans_of_a_file_with_invalid_utf8_are_byte_offsets_into_the_file() {
    let dir = scratch("invalid_utf8_spans");
    // Latin-1 `é` (one invalid byte) twice before an unknown GPU.
    let mut bytes = b"// caf\xe9 cr\xe8me\ndeployment d {\n    model = glm4_9b\n    quant = Q4_K_M\n    gpu   = no_such_gpu\n}\n".to_vec();
    bytes.extend_from_slice(b"// \xff\xfe\n");
    std::fs::write(dir.join("latin1.deploy"), &bytes).unwrap();
    let report = json(&deployfit_in(
        &dir,
        &["check", "--format", "json", "latin1.deploy"],
    ));
    let diagnostics = report["diagnostics"].as_array().unwrap();
    assert!(codes(&report).contains(&"deploy::syntax::invalid_utf8".to_string()));
    let unknown = diagnostics
        .iter()
        .find(|d| d["code"] == "deploy::name::unknown")
        .expect("the unknown GPU is still reported");
    let start = unknown["span"]["start"].as_u64().unwrap() as usize;
    let end = unknown["span"]["end"].as_u64().unwrap() as usize;
    assert_eq!(&bytes[start..end], b"no_such_gpu");
    for d in diagnostics {
        assert!(
            d["span"]["end"].as_u64().unwrap() as usize <= bytes.len(),
            "{d}"
        );
    }
    let invalid = diagnostics
        .iter()
        .find(|d| d["code"] == "deploy::syntax::invalid_utf8")
        .unwrap();
    assert_eq!(
        invalid["span"]["start"], 6,
        "the offset of the first invalid byte"
    );
}

#[test]
fn sarif_uris_are_percent_encoded() {
    let dir = scratch("sarif_uris");
    let sub = dir.join("my configs #1");
    std::fs::create_dir_all(&sub).unwrap();
    std::fs::write(
        sub.join("café 100%.deploy"),
        "deployment d {\n    gpu = nope\n}\n",
    )
    .unwrap();
    let output = deployfit_in(&dir, &["check", "--format", "sarif", "."]);
    let sarif = json(&output);
    let run = &sarif["runs"][0];
    assert_eq!(run["columnKind"], "unicodeCodePoints");
    let uri = run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        .as_str()
        .unwrap();
    assert_eq!(uri, "my%20configs%20%231/caf%C3%A9%20100%25.deploy");
}

#[test]
fn a_stdlib_folder_anywhere_replaces_the_embedded_catalog_file() {
    // docs/cli.md: a file named like a stdlib file in a folder named `stdlib` replaces
    // the embedded copy, wherever that folder is (no `grammar/` needed beside it).
    let dir = scratch("stdlib_elsewhere");
    std::fs::create_dir_all(dir.join("stdlib")).unwrap();
    for name in ["gpus.deploy", "models.deploy", "engines.deploy"] {
        std::fs::copy(
            common::root().join("stdlib").join(name),
            dir.join("stdlib").join(name),
        )
        .unwrap();
    }
    let output = deployfit_in(&dir, &["check", "--format", "json", "stdlib"]);
    let report = json(&output);
    assert_eq!(output.status.code(), Some(0), "{report}");
    assert_eq!(report["summary"]["errors"], 0, "{report}");
}

#[test]
fn human_output_never_prints_control_characters_from_a_file() {
    let dir = scratch("control_characters");
    // An escape sequence (set the window title, clear the screen) and a bidirectional
    // override in comments, next to an unknown GPU.
    let text = "// \u{1b}]0;pwned\u{7}\u{1b}[2J\ndeployment d { // \u{202e}evil\u{202c}\n    gpu = nope \u{1b}[31m\n}\n";
    std::fs::write(dir.join("ctrl.deploy"), text).unwrap();
    let output = deployfit_in(&dir, &["check", "ctrl.deploy"]);
    let shown = stdout(&output);
    assert!(shown.contains("nope"), "{shown}");
    assert!(!shown.contains('\u{1b}'), "{shown:?}");
    assert!(!shown.contains('\u{7}'), "{shown:?}");
    assert!(!shown.contains('\u{202e}'), "{shown:?}");
    // The caret still points at the name: same column as in JSON.
    let report = json(&deployfit_in(
        &dir,
        &["check", "--format", "json", "ctrl.deploy"],
    ));
    let column = report["diagnostics"][0]["column"].as_u64().unwrap();
    assert!(
        shown.contains(&format!("ctrl.deploy:3:{column}]")),
        "{shown}"
    );
}
