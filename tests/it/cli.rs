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

/// The conventions of issue 36 through the binary: completions, the man page, `check -`,
/// `lsp --stdio`, `--color`, `NO_COLOR`, `-q`, and the `gpus` table's top 20.
mod conventions {
    use super::common;
    use common::{deployfit, json, root, stdout};
    use std::io::Write;
    use std::process::{Command, Stdio};

    fn run_with_stdin(args: &[&str], env: &[(&str, &str)], input: &[u8]) -> std::process::Output {
        let mut command = Command::new(env!("CARGO_BIN_EXE_deployfit"));
        command
            .args(args)
            .current_dir(root())
            .env_remove("NO_COLOR")
            .env("HF_HUB_OFFLINE", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in env {
            command.env(k, v);
        }
        let mut child = command.spawn().expect("the binary runs");
        // A command that refuses its arguments exits without reading: a closed pipe here
        // is its answer, not the test's failure.
        if let Err(e) = child.stdin.take().unwrap().write_all(input) {
            assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
        }
        child.wait_with_output().unwrap()
    }

    #[test]
    fn completions_and_the_man_page_list_every_command() {
        for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
            let out = deployfit(&["completions", shell]);
            assert_eq!(out.status.code(), Some(0), "{shell}");
            let text = stdout(&out);
            for command in ["check", "explain", "solve", "gpus", "completions"] {
                assert!(text.contains(command), "{shell} lacks {command}");
            }
        }
        let bash = stdout(&deployfit(&["completions", "bash"]));
        assert!(
            bash.contains("--deny") && bash.contains("--color"),
            "{bash}"
        );
        let out = deployfit(&["completions", "tcsh"]);
        assert_eq!(out.status.code(), Some(2));
        let man = stdout(&deployfit(&["man"]));
        assert!(
            man.starts_with(".ie") || man.contains(".TH deployfit 1"),
            "{man}"
        );
        assert!(
            man.contains("completions") && man.contains("\\-\\-quiet"),
            "{man}"
        );
    }

    #[test]
    fn check_reads_standard_input_as_a_file() {
        let text = std::fs::read(root().join("examples/01-glm4-chat.deploy")).unwrap();
        let out = run_with_stdin(&["check", "-"], &[], &text);
        let said = stdout(&out);
        assert_eq!(out.status.code(), Some(0), "{said}");
        assert!(said.contains("team_chat (<stdin>:4): fits"), "{said}");
        assert!(said.contains("1 file: 0 errors"), "{said}");
        // Non-ASCII around a diagnostic: the span lands on the name, after «…» and 中文.
        let bad = "// «Grüße» 中文\ndeployment chat {\n    model = glm4_9b\n    quant = Q4_K_M\n    gpu   = rtx_4909 // ü\n}\n";
        let out = run_with_stdin(&["check", "-", "--format", "json"], &[], bad.as_bytes());
        assert_eq!(out.status.code(), Some(1));
        let report = json(&out);
        let unknown = common::diagnostic(&report, "deploy::name::unknown");
        assert_eq!(unknown["file"], "<stdin>");
        let (start, end) = (
            unknown["span"]["start"].as_u64().unwrap() as usize,
            unknown["span"]["end"].as_u64().unwrap() as usize,
        );
        assert_eq!(&bad[start..end], "rtx_4909");
        assert!(
            unknown["help"].as_str().unwrap().contains("rtx_4090"),
            "{unknown}"
        );
        // `-` is read alone, and never rewritten.
        let out = run_with_stdin(&["check", "-", "examples/"], &[], b"");
        assert_eq!(out.status.code(), Some(2));
        let out = run_with_stdin(&["check", "-", "--fix"], &[], &text);
        assert_eq!(out.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&out.stderr).contains("standard input"));
    }

    #[test]
    fn the_language_server_accepts_stdio() {
        use crate::lsp_support::{Options, Session};
        let mut session = Session::start_with(Options {
            args: vec!["--stdio"],
            ..Options::default()
        });
        let published = session.open(
            "file:///tmp/stdio-%C3%BC.deploy",
            "deployment chat {\n    model = glm4_9b\n    quant = Q4_K_M\n    gpu   = rtx_4909\n}\n",
        );
        assert!(
            published
                .iter()
                .any(|d| d["code"] == "deploy::name::unknown"),
            "{published:?}"
        );
        session.finish();
    }

    #[test]
    fn colour_follows_the_flag_and_no_color() {
        let failing = std::fs::read(root().join("examples-failing/too-big.deploy")).unwrap();
        let coloured = |args: &[&str], env: &[(&str, &str)]| {
            let out = run_with_stdin(args, env, &failing);
            String::from_utf8_lossy(&out.stdout).contains('\u{1b}')
        };
        // Piped: none by default, with NO_COLOR, or with `never`; `always` colours.
        assert!(!coloured(&["check", "-"], &[]));
        assert!(coloured(&["check", "-", "--color", "always"], &[]));
        assert!(coloured(
            &["--color=always", "check", "-"],
            &[("NO_COLOR", "1")]
        ));
        assert!(!coloured(&["check", "-", "--color", "never"], &[]));
        assert!(!coloured(
            &["check", "-", "--color", "auto"],
            &[("NO_COLOR", "1")]
        ));
        // Machine formats never carry escapes.
        assert!(!coloured(
            &["check", "-", "--color", "always", "--format", "json"],
            &[]
        ));
    }

    #[test]
    fn quiet_prints_only_the_diagnostics() {
        let out = deployfit(&["-q", "check", "examples/"]);
        let text = stdout(&out);
        assert_eq!(out.status.code(), Some(0));
        assert!(
            !text.contains("team_chat (examples/01-glm4-chat.deploy:4)"),
            "{text}"
        );
        assert!(!text.contains("13 files"), "{text}");
        assert!(text.contains("deploy::fit::tight_fit"), "{text}");
        let loud = stdout(&deployfit(&["check", "examples/"]));
        assert!(loud.contains("13 files: 0 errors"), "{loud}");
        // Errors still reach standard error.
        let out = deployfit(&["-q", "check", "no-such-dir/"]);
        assert_eq!(out.status.code(), Some(2));
        assert!(!out.stderr.is_empty());
    }

    #[test]
    fn gpus_shows_the_top_twenty_unless_all() {
        let top = stdout(&deployfit(&["gpus", "llama_3_1_8b"]));
        let rows = |text: &str| {
            text.lines()
                .filter(|l| l.contains(" GiB ") && l.contains("GB/s"))
                .count()
        };
        assert_eq!(rows(&top), 20, "{top}");
        assert!(top.contains("more; `--all` lists every one"), "{top}");
        let all = stdout(&deployfit(&["gpus", "llama_3_1_8b", "--all"]));
        assert!(rows(&all) > 500, "{}", rows(&all));
        assert!(!all.contains("`--all` lists every one"));
        let report = json(&deployfit(&["gpus", "llama_3_1_8b", "--format", "json"]));
        assert!(report["rows"].as_array().unwrap().len() > 500);
    }
}
