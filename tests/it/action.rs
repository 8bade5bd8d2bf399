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
        .env_remove("INPUT_SARIF_FILE");
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
    let output = Command::new("bash")
        .arg(root().join("scripts/action.sh"))
        .arg("install")
        .env("DEPLOYFIT_ROOT", &dir)
        .env("HF_HUB_OFFLINE", "1")
        .env_remove("DEPLOYFIT")
        .output()
        .unwrap();
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
        "github/codeql-action/upload-sarif",
        "actions/cache",
    ] {
        assert!(action.contains(needle), "action.yml lacks {needle}");
    }
    let hooks = std::fs::read_to_string(root().join(".pre-commit-hooks.yaml")).unwrap();
    for needle in [
        "- id: deployfit-check",
        "entry: deployfit check",
        "- id: deployfit-fmt",
        "entry: deployfit fmt",
        "language: rust",
        "files: \\.deploy$",
    ] {
        assert!(
            hooks.contains(needle),
            ".pre-commit-hooks.yaml lacks {needle}"
        );
    }
}
