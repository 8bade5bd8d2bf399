//! The GitHub Action (action.yml) and the pre-commit hooks: the action's steps are
//! scripts/action.sh, run here as the runner would, against the real binary.

use crate::common;

use std::process::{Command, Output};

use common::{root, scratch, stdout};

fn action(step: &str, env: &[(&str, &str)]) -> Output {
    let mut command = Command::new("bash");
    command
        .arg(root().join("scripts/action.sh"))
        .arg(step)
        .current_dir(root())
        .env("DEPLOYFIT", env!("CARGO_BIN_EXE_deployfit"))
        .env("NO_COLOR", "1")
        .env("HF_HUB_OFFLINE", "1")
        .env_remove("INPUT_PATHS")
        .env_remove("INPUT_DENY_WARNINGS")
        .env_remove("INPUT_SARIF")
        .env_remove("INPUT_SARIF_FILE")
        .env_remove("INPUT_VERSION")
        .env_remove("INPUT_ARGS")
        .env_remove("INPUT_NOTICES")
        .env_remove("INPUT_WORKING_DIRECTORY")
        .env_remove("ACTION_REF")
        .env_remove("GITHUB_OUTPUT")
        .env_remove("GITHUB_STEP_SUMMARY");
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().expect("bash runs")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn the_action_annotates_and_fails_on_errors() {
    let failing = action("check", &[("INPUT_PATHS", "examples-failing")]);
    assert_eq!(failing.status.code(), Some(1), "{}", stderr(&failing));
    let text = stdout(&failing);
    assert!(
        text.starts_with("::error file=examples-failing/too-big.deploy,line=4"),
        "{text}"
    );
    // Several paths, one per line or space-separated; no error: exit 0.
    let clean = action(
        "check",
        &[(
            "INPUT_PATHS",
            "examples/01-glm4-chat.deploy\nexamples/03-llama-70b-tensor-parallel.deploy examples/09-units-and-math.deploy",
        )],
    );
    assert_eq!(clean.status.code(), Some(0), "{}", stdout(&clean));
    assert!(!stdout(&clean).contains("::error"));
}

#[test]
fn the_action_writes_sarif_when_asked() {
    let dir = scratch("action_sarif");
    let file = dir.join("out.sarif");
    let output = action(
        "check",
        &[
            ("INPUT_PATHS", "examples-failing"),
            ("INPUT_SARIF", "true"),
            ("INPUT_SARIF_FILE", file.to_str().unwrap()),
        ],
    );
    assert_eq!(output.status.code(), Some(1));
    let sarif: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&file).expect("the SARIF file")).unwrap();
    assert_eq!(sarif["version"], "2.1.0");
    assert_eq!(
        sarif["runs"][0]["results"][0]["ruleId"],
        "deploy::fit::does_not_fit"
    );
    // Annotations are still printed.
    assert!(stdout(&output).contains("::error"));
}

#[test]
fn the_action_validates_its_inputs() {
    let bad = action(
        "check",
        &[("INPUT_PATHS", "examples"), ("INPUT_DENY_WARNINGS", "yes")],
    );
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("deny-warnings must be true or false"));
    // A path is never an option, and is never globbed or evaluated.
    let option = action("check", &[("INPUT_PATHS", "--format json")]);
    assert_eq!(option.status.code(), Some(2));
    assert!(stderr(&option).contains("starts with '-'"));
    let glob = action(
        "check",
        &[("INPUT_PATHS", "examples/*.deploy $(touch pwned)")],
    );
    assert_ne!(glob.status.code(), Some(0));
    assert!(!root().join("pwned").exists());
    let all = format!("{}{}", stdout(&glob), stderr(&glob));
    assert!(all.contains("examples/*.deploy"), "the literal path: {all}");
    // With warnings denied, a warning fails the job.
    let warned = action(
        "check",
        &[
            ("INPUT_PATHS", "examples/10-night-batch.deploy"),
            ("INPUT_DENY_WARNINGS", "true"),
        ],
    );
    let plain = action(
        "check",
        &[("INPUT_PATHS", "examples/10-night-batch.deploy")],
    );
    assert!(stdout(&plain).contains("::warning"), "{}", stdout(&plain));
    assert_eq!(plain.status.code(), Some(0));
    assert_eq!(warned.status.code(), Some(1));
}

#[test]
fn the_install_step_uses_the_cache() {
    let dir = scratch("action_cache");
    std::fs::create_dir_all(dir.join("bin")).unwrap();
    let cached = dir.join("bin/deployfit");
    std::fs::copy(env!("CARGO_BIN_EXE_deployfit"), &cached).unwrap();
    let output = install(&dir, &[]);
    assert_eq!(output.status.code(), Some(0));
    assert!(
        stdout(&output).contains("deployfit is cached"),
        "{}",
        stdout(&output)
    );
}

#[test]
fn action_and_hooks_are_declared_at_the_root() {
    let action = std::fs::read_to_string(root().join("action.yml")).unwrap();
    for needle in [
        "runs:",
        "using: composite",
        "scripts/action.sh\" install",
        "scripts/action.sh\" check",
        "  paths:",
        "  deny-warnings:",
        "  sarif:",
        "github/codeql-action/upload-sarif@v4",
        "actions/cache",
        "  version:",
        "  args:",
        "  working-directory:",
        "outputs:",
        "  errors:",
        "  warnings:",
        "steps.key.outputs.hash",
    ] {
        assert!(action.contains(needle), "action.yml lacks {needle}");
    }
    let hooks = std::fs::read_to_string(root().join(".pre-commit-hooks.yaml")).unwrap();
    for needle in [
        "- id: deployfit-check",
        "entry: deployfit check",
        "- id: deployfit-fmt",
        "entry: deployfit fmt",
        "language: python",
        "files: \\.deploy$",
        "rev: v",
    ] {
        assert!(
            hooks.contains(needle),
            ".pre-commit-hooks.yaml lacks {needle}"
        );
    }
    // Installing the hooks compiles no Rust: the root pyproject.toml is a shim that
    // depends on the prebuilt wheel of the workspace's own version.
    assert!(!hooks.contains("language: rust"));
    let cargo = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let version = cargo
        .split("[workspace.package]")
        .nth(1)
        .and_then(|s| s.lines().find(|l| l.starts_with("version = ")))
        .map(|l| {
            l.trim_start_matches("version = ")
                .trim_matches('"')
                .to_string()
        })
        .expect("the workspace version");
    let shim = std::fs::read_to_string(root().join("pyproject.toml")).unwrap();
    assert!(
        shim.contains("build-backend = \"setuptools.build_meta\""),
        "{shim}"
    );
    assert!(!shim.contains("maturin"), "{shim}");
    assert!(shim.contains(&format!("version = \"{version}\"")), "{shim}");
    assert!(
        shim.contains(&format!("dependencies = [\"deployfit=={version}\"]")),
        "{shim}"
    );
    let wheel = std::fs::read_to_string(root().join("packaging/pypi/pyproject.toml")).unwrap();
    for needle in [
        "build-backend = \"maturin\"",
        "bindings = \"bin\"",
        "name = \"deployfit\"",
        "manifest-path = \"../../Cargo.toml\"",
    ] {
        assert!(
            wheel.contains(needle),
            "packaging/pypi/pyproject.toml lacks {needle}"
        );
    }
    // The release workflow is cargo-dist's, for the five platforms, with checksums.
    let dist = std::fs::read_to_string(root().join("dist-workspace.toml")).unwrap();
    for target in [
        "x86_64-unknown-linux-gnu",
        "aarch64-unknown-linux-gnu",
        "aarch64-apple-darwin",
        "x86_64-apple-darwin",
        "x86_64-pc-windows-msvc",
    ] {
        assert!(dist.contains(target), "dist-workspace.toml lacks {target}");
    }
    let release = std::fs::read_to_string(root().join(".github/workflows/release.yml")).unwrap();
    assert!(release.contains("dist"), "{release}");
    let wheels = std::fs::read_to_string(root().join(".github/workflows/wheels.yml")).unwrap();
    assert!(wheels.contains("PyO3/maturin-action"), "{wheels}");
}

/// A release as cargo-dist publishes it, in a folder the install step downloads from:
/// `v{version}/deployfit-{target}.tar.xz` holding `deployfit-{target}/deployfit`, and its
/// `.sha256`.
fn fake_release(dir: &std::path::Path, version: &str, corrupt: bool) -> String {
    let target = "x86_64-unknown-linux-gnu";
    let stage = dir.join("stage").join(format!("deployfit-{target}"));
    std::fs::create_dir_all(&stage).unwrap();
    std::fs::copy(env!("CARGO_BIN_EXE_deployfit"), stage.join("deployfit")).unwrap();
    let release = dir.join("releases").join(format!("v{version}"));
    std::fs::create_dir_all(&release).unwrap();
    let archive = release.join(format!("deployfit-{target}.tar.xz"));
    // The fastest xz preset: the debug binary is large.
    let tar = Command::new("tar")
        .env("XZ_OPT", "-0 -T0")
        .arg("-cJf")
        .arg(&archive)
        .arg("-C")
        .arg(dir.join("stage"))
        .arg(format!("deployfit-{target}"))
        .status()
        .unwrap();
    assert!(tar.success());
    let sum = Command::new("sha256sum").arg(&archive).output().unwrap();
    let mut line = String::from_utf8(sum.stdout).unwrap();
    if corrupt {
        line.replace_range(0..1, if line.starts_with('0') { "1" } else { "0" });
    }
    std::fs::write(
        release.join(format!("deployfit-{target}.tar.xz.sha256")),
        line,
    )
    .unwrap();
    format!("file://{}", dir.join("releases").display())
}

fn install(root: &std::path::Path, env: &[(&str, &str)]) -> Output {
    let mut command = Command::new("bash");
    command
        .arg(common::root().join("scripts/action.sh"))
        .arg("install")
        .env("DEPLOYFIT_ROOT", root)
        .env("HF_HUB_OFFLINE", "1")
        .env_remove("DEPLOYFIT")
        .env_remove("INPUT_VERSION")
        .env_remove("ACTION_REF");
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().unwrap()
}

#[test]
fn the_install_step_downloads_the_release_and_checks_its_checksum() {
    if !cfg!(all(target_os = "linux", target_arch = "x86_64")) {
        return;
    }
    let dir = scratch("action_release");
    let releases = fake_release(&dir, "0.1.0", false);
    // The version from the action's own tag.
    let out = install(
        &dir.join("root"),
        &[("DEPLOYFIT_RELEASES", &releases), ("ACTION_REF", "v0.1.0")],
    );
    let said = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{said}{}", stderr(&out));
    assert!(
        said.contains("deployfit 0.1.0 installed from the release"),
        "{said}"
    );
    assert!(
        said.contains("deployfit 0.1.0\n") || said.contains("deployfit "),
        "{said}"
    );
    assert!(dir.join("root/bin/deployfit").exists());

    // A checksum that does not match stops the job.
    let bad = scratch("action_release_bad");
    let releases = fake_release(&bad, "0.1.0", true);
    let out = install(
        &bad.join("root"),
        &[
            ("DEPLOYFIT_RELEASES", &releases),
            ("INPUT_VERSION", "0.1.0"),
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("::error title=deployfit action::the SHA-256"),
        "{}",
        stdout(&out)
    );
    assert!(!bad.join("root/bin/deployfit").exists());

    // No such release: a warning, then the source build (here a stand-in for cargo).
    let fallback = scratch("action_release_missing");
    let cargo = fallback.join("fake-cargo");
    std::fs::write(
        &cargo,
        format!(
            "#!/bin/sh\n# stands in for `cargo install --root ROOT`: the last argument\nfor a; do root=$a; done\nmkdir -p \"$root/bin\" && cp '{}' \"$root/bin/deployfit\"\n",
            env!("CARGO_BIN_EXE_deployfit")
        ),
    )
    .unwrap();
    Command::new("chmod")
        .arg("+x")
        .arg(&cargo)
        .status()
        .unwrap();
    let out = install(
        &fallback.join("root"),
        &[
            ("DEPLOYFIT_RELEASES", &releases),
            ("INPUT_VERSION", "v9.9.9"),
            ("DEPLOYFIT_CARGO", cargo.to_str().unwrap()),
        ],
    );
    let said = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{said}{}", stderr(&out));
    assert!(
        said.contains("::warning title=deployfit action::no release v9.9.9"),
        "{said}"
    );
    assert!(said.contains("building deployfit from"), "{said}");
    // A version that is neither a release nor `source` is refused.
    let out = install(
        &fallback.join("other"),
        &[("INPUT_VERSION", "latest; rm -rf /")],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("input version must be"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn the_check_step_writes_outputs_a_summary_and_no_notes_by_default() {
    let dir = scratch("action_outputs");
    let outputs = dir.join("outputs");
    let summary = dir.join("summary.md");
    let run = |paths: &str, more: &[(&str, &str)]| {
        let _ = std::fs::remove_file(&outputs);
        let _ = std::fs::remove_file(&summary);
        let mut env = vec![
            ("INPUT_PATHS", paths),
            ("GITHUB_OUTPUT", outputs.to_str().unwrap()),
            ("GITHUB_STEP_SUMMARY", summary.to_str().unwrap()),
        ];
        env.extend_from_slice(more);
        action("check", &env)
    };
    let out = run("examples-failing", &[]);
    assert_eq!(out.status.code(), Some(1));
    let written = std::fs::read_to_string(&outputs).unwrap();
    assert_eq!(written, "errors=1\nwarnings=0\n");
    let table = std::fs::read_to_string(&summary).unwrap();
    assert!(table.starts_with("## deployfit check"), "{table}");
    assert!(
        table.contains("| too\\_big | examples-failing/too-big.deploy:"),
        "{table}"
    );
    assert!(
        table.contains("| error | deploy::fit::does\\_not\\_fit |"),
        "{table}"
    );

    // The solver's choice is a note: no annotation unless notices are asked for.
    let quiet = run("examples/12-cheapest-gpu.deploy", &[]);
    assert_eq!(quiet.status.code(), Some(0));
    assert!(!stdout(&quiet).contains("::notice"), "{}", stdout(&quiet));
    let loud = run(
        "examples/12-cheapest-gpu.deploy",
        &[("INPUT_NOTICES", "true")],
    );
    assert!(stdout(&loud).contains("::notice"), "{}", stdout(&loud));

    // args pass options through; a working directory moves the paths.
    let denied = run(
        "10-night-batch.deploy",
        &[
            ("INPUT_ARGS", "--deny warnings"),
            ("INPUT_WORKING_DIRECTORY", "examples"),
        ],
    );
    assert_eq!(denied.status.code(), Some(1), "{}", stdout(&denied));
    assert!(
        stdout(&denied).contains("::error file=10-night-batch.deploy"),
        "{}",
        stdout(&denied)
    );
    assert_eq!(
        std::fs::read_to_string(&outputs).unwrap(),
        "errors=1\nwarnings=0\n"
    );
    for (args, says) in [
        ("--format json", "args cannot set --format"),
        ("--fix", "args cannot set --fix"),
    ] {
        let out = run("examples", &[("INPUT_ARGS", args)]);
        assert_eq!(out.status.code(), Some(2), "{args}");
        assert!(stderr(&out).contains(says), "{args}: {}", stderr(&out));
    }
}
