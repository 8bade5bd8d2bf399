//! The `deployfit` binary as a user runs it: exit codes, formats, flags.

use crate::common;

use common::{deployfit, deployfit_in, json, scratch, stdout};

#[test]
fn examples_check_clean_and_show_their_figures() {
    let output = deployfit(&["check", "examples/"]);
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "{text}");
    assert!(
        text.contains("team_chat (examples/01-glm4-chat.deploy:4): fits"),
        "{text}"
    );
    assert!(text.contains("13 files: 0 errors"), "{text}");
    assert!(
        !text.contains('\u{1b}'),
        "no colour when stdout is not a terminal"
    );
}

#[test]
fn syntax_error_in_one_block_and_unknown_gpu_in_another_are_both_reported() {
    let dir = scratch("two_problems");
    std::fs::write(
        dir.join("two.deploy"),
        "gpu broken {\n    memory 12 GiB\n}\n\ndeployment chat {\n    model = glm4_9b\n    quant = Q4_K_M\n    gpu   = rtx_3060_12g\n}\n",
    )
    .unwrap();
    let output = deployfit_in(&dir, &["check", "--format", "json", "two.deploy"]);
    assert_eq!(output.status.code(), Some(1));
    let report = json(&output);
    let diags = report["diagnostics"].as_array().unwrap();
    let syntax = diags
        .iter()
        .find(|d| d["code"] == "deploy::syntax::unexpected")
        .expect("the syntax error is reported");
    assert_eq!(
        (syntax["line"].as_u64(), syntax["column"].as_u64()),
        (Some(2), Some(12))
    );
    assert_eq!(
        syntax["message"],
        "expected `{` or `=` after `memory`, found `12`"
    );
    let unknown = diags
        .iter()
        .find(|d| d["code"] == "deploy::name::unknown")
        .expect("the unknown GPU is reported");
    assert_eq!(
        (unknown["line"].as_u64(), unknown["column"].as_u64()),
        (Some(8), Some(13))
    );
    assert_eq!(unknown["end_column"].as_u64(), Some(25));
    assert_eq!(
        unknown["help"],
        "did you mean `rtx_3060_12gb`? (or `rtx_3060_12gb_ga104`)"
    );
    assert_eq!(unknown["file"], "two.deploy");
}

#[test]
fn exit_codes() {
    let missing = deployfit(&["check", "no/such/dir"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("cannot read `no/such/dir`"));

    let bad_flag = deployfit(&["check", "--format", "xml", "examples/"]);
    assert_eq!(bad_flag.status.code(), Some(2));

    let error = deployfit(&["check", "tests/fixtures/diagnostics/name.unknown.deploy"]);
    assert_eq!(error.status.code(), Some(1));

    let warning = "tests/fixtures/diagnostics/fit.tight_fit.deploy";
    assert_eq!(deployfit(&["check", warning]).status.code(), Some(0));
    let denied = deployfit(&["check", "--deny", "warnings", "--format", "json", warning]);
    assert_eq!(denied.status.code(), Some(1));
    assert_eq!(json(&denied)["diagnostics"][0]["severity"], "error");
}

#[test]
fn directories_are_searched_recursively_and_default_to_the_current_one() {
    let dir = scratch("recursive");
    std::fs::create_dir_all(dir.join("a/b")).unwrap();
    std::fs::write(
        dir.join("a/b/deep.deploy"),
        "deployment d {\n    model = glm4_9b\n}\n",
    )
    .unwrap();
    std::fs::write(dir.join("a/notes.txt"), "not a deploy file").unwrap();
    let output = deployfit_in(&dir, &["check", "--format", "json"]);
    let report = json(&output);
    assert_eq!(report["summary"]["files"], 1);
    assert_eq!(report["diagnostics"][0]["file"], "a/b/deep.deploy");
    assert_eq!(output.status.code(), Some(1));
}

#[test]
fn github_annotations() {
    let output = deployfit(&[
        "check",
        "--format",
        "github",
        "tests/fixtures/diagnostics/name.unknown.deploy",
    ]);
    let text = stdout(&output);
    assert_eq!(
        text.lines().next().unwrap(),
        "::error file=tests/fixtures/diagnostics/name.unknown.deploy,line=4,col=13,endLine=4,endColumn=22,title=deploy%3A%3Aname%3A%3Aunknown::unknown gpu `rtx_3090x`%0Ahelp: did you mean `rtx_3090`? (or `rtx_3090_ti`)"
    );
}

#[test]
fn sarif_is_valid_2_1_0() {
    let output = deployfit(&["check", "--format", "sarif", "tests/fixtures/diagnostics/"]);
    let value: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(value["version"], "2.1.0");
    assert_eq!(
        value["$schema"],
        "https://json.schemastore.org/sarif-2.1.0.json"
    );
    let sarif: serde_sarif::sarif::Sarif =
        serde_json::from_value(value.clone()).expect("the SARIF model reads it back");
    let run = &sarif.runs[0];
    assert_eq!(run.tool.driver.name, "deployfit");
    let results = run.results.as_ref().unwrap();
    let rules = run.tool.driver.rules.as_ref().unwrap();
    for result in results {
        let id = result.rule_id.as_ref().unwrap();
        assert!(
            rules.iter().any(|r| &r.id == id),
            "every result's rule is declared: {id}"
        );
        let region = result.locations.as_ref().unwrap()[0]
            .physical_location
            .as_ref()
            .unwrap()
            .region
            .as_ref()
            .unwrap();
        assert!(region.start_line.unwrap() >= 1 && region.start_column.unwrap() >= 1);
    }
    assert!(results.len() >= 28);
}

#[test]
fn json_lists_deployment_figures() {
    let output = deployfit(&["check", "--format", "json", "examples/01-glm4-chat.deploy"]);
    let report = json(&output);
    let deployment = &report["deployments"][0];
    assert_eq!(deployment["name"], "team_chat");
    assert_eq!(deployment["display"]["fits"], "true");
    assert_eq!(deployment["display"]["weights_memory"], "5.74 GiB");
}

/// The README's examples and their printed output stay true.
#[test]
fn readme_examples_are_real() {
    let readme = std::fs::read_to_string(common::root().join("README.md")).unwrap();
    let section = readme
        .split("## An example")
        .nth(1)
        .expect("README has an example");
    let blocks: Vec<&str> = section.split("```").collect();
    let trim = |text: &str| {
        text.trim_start_matches('\n')
            .lines()
            .map(str::trim_end)
            .collect::<Vec<_>>()
            .join("\n")
    };
    let source =
        std::fs::read_to_string(common::root().join("examples-failing/too-big.deploy")).unwrap();
    assert_eq!(trim(blocks[1]), trim(&source));
    let output = deployfit(&["check", "examples-failing/too-big.deploy"]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(trim(blocks[3]), trim(&stdout(&output)));
    let explain = deployfit(&["explain", "examples/03-llama-70b-tensor-parallel.deploy"]);
    assert_eq!(trim(blocks[5]), trim(&stdout(&explain)));
}

/// Every command that writes to standard output, run with that pipe's reading end
/// already closed (as `deployfit gpus M | head -1` closes it once it has its line): the
/// command ends quietly, with exit 0 or the SIGPIPE status, and nothing on stderr.
#[test]
fn a_closed_pipe_ends_every_command_quietly() {
    use std::process::{Command, Stdio};
    let dir = scratch("closed_pipe");
    let stdin_model = dir.join("config.json");
    std::fs::write(
        &stdin_model,
        r#"{"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256, "max_position_embeddings": 8192}"#,
    )
    .unwrap();
    let config = stdin_model.to_str().unwrap();
    let commands: [&[&str]; 13] = [
        &["gpus", "qwen3_8b"],
        &["models"],
        &["models", "--gpu", "rtx_4090"],
        &["model", "qwen3_8b"],
        &["check", "examples/"],
        &["check", "examples/", "--format", "json"],
        &["explain", "examples/02-glm4-32b-at-the-limit.deploy"],
        &["solve", "examples/12-cheapest-gpu.deploy"],
        &["matrix", "qwen3_8b"],
        &[
            "export",
            "examples/01-glm4-chat.deploy",
            "--deployment",
            "team_chat",
        ],
        &[
            "report",
            "examples/02-glm4-32b-at-the-limit.deploy",
            "-o",
            "-",
        ],
        &["import", config],
        &["hardware"],
    ];
    for args in commands {
        let mut child = Command::new(env!("CARGO_BIN_EXE_deployfit"))
            .args(args)
            .current_dir(common::root())
            .env("NO_COLOR", "1")
            .env("HF_HUB_OFFLINE", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the deployfit binary runs");
        // The reader goes away before the command has written anything.
        drop(child.stdout.take());
        let output = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        let quiet_exit = output.status.code() == Some(0) || {
            #[cfg(unix)]
            {
                use std::os::unix::process::ExitStatusExt;
                output.status.signal() == Some(libc_sigpipe())
            }
            #[cfg(not(unix))]
            false
        };
        assert!(
            quiet_exit,
            "deployfit {args:?}: {:?}, stderr: {stderr}",
            output.status
        );
        assert!(
            stderr.is_empty(),
            "deployfit {args:?} wrote to stderr: {stderr}"
        );
    }
}

/// SIGPIPE's number (13 on Linux and the BSDs).
#[cfg(unix)]
fn libc_sigpipe() -> i32 {
    13
}
