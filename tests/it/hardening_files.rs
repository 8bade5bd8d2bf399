//! Issue #10, through the real binary: non-ASCII before a syntax error, what is read
//! from disk (regular `.deploy` files only, bounded, each real file once), what is
//! printed (byte offsets into the file, encoded SARIF URIs), and the stdlib folder rule.

use crate::common;

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
    big.set_len(deployfit_host::files::MAX_FILE_BYTES + 1)
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

/// A config.json of a small Llama-like model, for model folders written by the tests.
#[cfg(unix)]
const CONFIG: &str = r#"{"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256, "max_position_embeddings": 8192}"#;

/// Issue #32: model paths that are FIFOs (directly or inside a folder), a link to
/// /dev/stdin (with standard input an open pipe, and a regular file), and 4 GiB sparse
/// files: every command answers (a hang would be killed and fail the test) with the coded
/// diagnostic `deploy::model::unreadable`, also when the file has a syntax error.
#[cfg(unix)]
#[test]
fn model_paths_that_block_or_leak_are_refused_quickly_in_every_command() {
    let dir = scratch("model_paths");
    let fifo = |path: &Path| {
        let status = Command::new("mkfifo").arg(path).status().unwrap();
        assert!(status.success());
    };
    fifo(&dir.join("pipe.json"));
    fifo(&dir.join("pipe.gguf"));
    fifo(&dir.join("pipe.safetensors"));
    // Folders whose config, shard, index or lone .gguf is a FIFO.
    for (folder, name) in [
        ("fifo_config", "config.json"),
        ("fifo_shard", "model.safetensors"),
        ("fifo_index", "model.safetensors.index.json"),
        ("fifo_gguf", "model.gguf"),
    ] {
        let sub = dir.join(folder);
        std::fs::create_dir_all(&sub).unwrap();
        if name != "config.json" && name != "model.gguf" {
            std::fs::write(sub.join("config.json"), CONFIG).unwrap();
        }
        fifo(&sub.join(name));
    }
    std::os::unix::fs::symlink("/dev/stdin", dir.join("stdin.json")).unwrap();
    std::os::unix::fs::symlink("/dev/fd/0", dir.join("fd0.gguf")).unwrap();
    for sparse in ["big.json", "big.gguf", "big.safetensors"] {
        let file = std::fs::File::create(dir.join(sparse)).unwrap();
        file.set_len(4 << 30).unwrap();
    }
    let models = [
        "./pipe.json",
        "./pipe.gguf",
        "./pipe.safetensors",
        "./fifo_config",
        "./fifo_shard",
        "./fifo_index",
        "./fifo_gguf",
        "./stdin.json",
        "./fd0.gguf",
        "./big.json",
        "./big.gguf",
        "./big.safetensors",
    ];
    let limit = Duration::from_secs(20);
    for (i, model) in models.iter().enumerate() {
        // A deployment naming it, and a `model … from` declaration; the second file also
        // has a syntax error (a file that does not parse still resolves its models).
        let plain = format!("m{i}.deploy");
        std::fs::write(
            dir.join(&plain),
            format!(
                "// ünïcödé\ndeployment d {{\n    model = \"{model}\"\n    quant = Q4_K_M\n    gpu = rtx_4090\n}}\n"
            ),
        )
        .unwrap();
        let from = format!("f{i}.deploy");
        std::fs::write(
            dir.join(&from),
            format!(
                "model mine from \"{model}\" // é\ndeployment d {{\n    model = mine\n    quant = Q4_K_M\n    gpu = rtx_4090\n    = broken\n}}\n"
            ),
        )
        .unwrap();
        for file in [&plain, &from] {
            let (output, _) =
                common::deployfit_timed(&dir, &["check", "--format", "json", file], limit);
            assert_eq!(
                output.status.code(),
                Some(1),
                "{model}: {}",
                stderr(&output)
            );
            let report = json(&output);
            assert!(
                codes(&report).contains(&"deploy::model::unreadable".to_string()),
                "{model} ({file}): {report}"
            );
            for args in [
                vec!["explain", file.as_str()],
                vec!["solve", file.as_str()],
                vec!["report", file.as_str(), "-o", "-"],
            ] {
                let (output, _) = common::deployfit_timed(&dir, &args, limit);
                assert!(
                    matches!(output.status.code(), Some(0..=2)),
                    "{model} {args:?}: {:?} {}",
                    output.status,
                    stderr(&output)
                );
            }
        }
    }
    // Standard input redirected from a regular file: /dev/stdin is still refused, and the
    // file's contents never reach the output.
    std::fs::write(dir.join("input.txt"), "{\"hidden_size\": \"hunter2\"}").unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_deployfit"))
        .args(["check", "--format", "json", "m7.deploy"])
        .current_dir(&dir)
        .env("HF_HUB_OFFLINE", "1")
        .stdin(std::fs::File::open(dir.join("input.txt")).unwrap())
        .output()
        .unwrap();
    let text = format!("{}{}", stdout(&output), stderr(&output));
    assert!(text.contains("deploy::model::unreadable"), "{text}");
    assert!(text.contains("/proc"), "{text}");
    assert!(!text.contains("hunter2"), "{text}");
}

/// Issue #32: a config.json (or any `.json` a model path names) whose field holds a
/// string where a number belongs: the error names the field and the type it expects, and
/// the value appears in no output of any command.
#[cfg(unix)]
#[test]
fn a_value_from_a_file_that_is_not_a_model_is_never_printed() {
    let dir = scratch("model_secret");
    let secret = CONFIG.replace("\"hidden_size\": 4096", "\"hidden_size\": \"hunter2\"");
    std::fs::create_dir_all(dir.join("folder")).unwrap();
    std::fs::write(dir.join("folder/config.json"), &secret).unwrap();
    std::fs::write(dir.join("secrets.json"), r#"{"num_hidden_layers": ["hunter2"], "hidden_size": 1, "vocab_size": 1, "num_attention_heads": 1, "tie_word_embeddings": "hunter2"}"#).unwrap();
    for (name, model) in [("a.deploy", "./folder"), ("b.deploy", "./secrets.json")] {
        std::fs::write(
            dir.join(name),
            format!("deployment d {{\n    model = \"{model}\"\n    quant = Q4_K_M\n    gpu = rtx_4090\n}}\n"),
        )
        .unwrap();
        let mut outputs = Vec::new();
        for format in [
            "human", "json", "github", "sarif", "gitlab", "junit", "rdjson",
        ] {
            outputs.push(deployfit_in(&dir, &["check", "--format", format, name]));
        }
        outputs.push(deployfit_in(&dir, &["explain", name]));
        outputs.push(deployfit_in(&dir, &["report", name, "-o", "-"]));
        outputs.push(deployfit_in(&dir, &["import", model]));
        outputs.push(deployfit_in(&dir, &["model", model]));
        for output in &outputs {
            let text = format!("{}{}", stdout(output), stderr(output));
            assert!(!text.contains("hunter2"), "{model}: {text}");
        }
        let report = json(&deployfit_in(&dir, &["check", "--format", "json", name]));
        let message = common::diagnostic(&report, "deploy::model::unreadable")["message"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(
            message.contains("is a string, expected a non-negative whole number")
                || message.contains("is a list, expected a non-negative whole number"),
            "{message}"
        );
    }
}

/// Issue #32: what artifact readers refuse as inconsistent, through the binary: more
/// key/value heads than query heads, and a folder whose weights hold fewer values than
/// its config uses per token (once shown as "40 total parameters, 8.03 B active").
#[cfg(unix)]
#[test]
fn inconsistent_model_files_name_the_invariant_they_break() {
    let dir = scratch("model_invariants");
    std::fs::create_dir_all(dir.join("heads")).unwrap();
    std::fs::write(
        dir.join("heads/config.json"),
        CONFIG.replace("\"num_key_value_heads\": 8", "\"num_key_value_heads\": 64"),
    )
    .unwrap();
    // A folder with the 8 B config and one safetensors file of 40 BF16 values.
    std::fs::create_dir_all(dir.join("tiny")).unwrap();
    std::fs::write(dir.join("tiny/config.json"), CONFIG).unwrap();
    let header = r#"{"w":{"dtype":"BF16","shape":[40],"data_offsets":[0,80]}}"#;
    let mut shard = (header.len() as u64).to_le_bytes().to_vec();
    shard.extend_from_slice(header.as_bytes());
    shard.extend_from_slice(&[0u8; 80]);
    std::fs::write(dir.join("tiny/model.safetensors"), shard).unwrap();
    for (folder, invariant) in [
        ("./heads", "num_key_value_heads <= num_attention_heads"),
        ("./tiny", "active parameters <= total parameters"),
    ] {
        std::fs::write(
            dir.join("d.deploy"),
            format!("deployment d {{\n    model = \"{folder}\"\n    quant = bf16\n    gpu = rtx_4090\n}}\n"),
        )
        .unwrap();
        let report = json(&deployfit_in(
            &dir,
            &["check", "--format", "json", "d.deploy"],
        ));
        let message = common::diagnostic(&report, "deploy::model::unreadable")["message"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(message.contains(invariant), "{folder}: {message}");
        let import = deployfit_in(&dir, &["import", folder]);
        assert_eq!(import.status.code(), Some(2), "{folder}");
        assert!(stderr(&import).contains(invariant), "{}", stderr(&import));
    }
}

/// Issue #32: `import` writes what the language accepts, whatever the file holds (a
/// right-to-left override in the architecture's name), and `model`'s errors escape it.
#[test]
fn import_output_always_parses_and_errors_escape_hidden_characters() {
    let dir = scratch("import_hidden");
    std::fs::create_dir_all(dir.join("m\u{202e}x")).unwrap();
    std::fs::write(
        dir.join("m\u{202e}x/config.json"),
        CONFIG_ANY.replace(
            "LlamaForCausalLM",
            "Llama\u{202e}\u{200b}For\\u0007CausalLM",
        ),
    )
    .unwrap();
    let import = deployfit_in(&dir, &["import", "m\u{202e}x"]);
    assert_eq!(import.status.code(), Some(0), "{}", stderr(&import));
    let text = stdout(&import);
    assert!(
        !text.contains('\u{202e}') && !text.contains('\u{200b}'),
        "{text}"
    );
    std::fs::write(dir.join("imported.deploy"), &text).unwrap();
    let check = deployfit_in(&dir, &["check", "--format", "json", "imported.deploy"]);
    assert_eq!(check.status.code(), Some(0), "{text}\n{}", stdout(&check));
    let model = deployfit_in(&dir, &["model", "no\u{202e}such"]);
    assert_eq!(model.status.code(), Some(2));
    let err = stderr(&model);
    assert!(!err.contains('\u{202e}'), "{err}");
    assert!(err.contains("\\u{202e}"), "{err}");
}

/// The same config, for tests that run on any platform.
const CONFIG_ANY: &str = r#"{"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256, "max_position_embeddings": 8192}"#;

/// Issue #32: `report -o FILE` never writes over an input reached through a hard link.
#[cfg(unix)]
#[test]
fn report_refuses_an_output_that_is_a_hard_link_to_an_input() {
    let dir = scratch("report_hard_link");
    let input = "deployment d {\n    model = glm4_9b\n    quant = Q4_K_M\n    gpu = rtx_4090\n}\n";
    std::fs::write(dir.join("in.deploy"), input).unwrap();
    std::fs::write(
        dir.join("main.deploy"),
        "import \"lib.deploy\"\ndeployment e {\n    model = glm4_9b\n    quant = Q4_K_M\n    gpu = rtx_4090\n}\n",
    )
    .unwrap();
    std::fs::write(dir.join("lib.deploy"), "rule r {\n    when = fits\n}\n").unwrap();
    std::fs::hard_link(dir.join("in.deploy"), dir.join("page.html")).unwrap();
    std::fs::hard_link(dir.join("lib.deploy"), dir.join("lib.html")).unwrap();
    for (args, untouched) in [
        (["report", "in.deploy", "-o", "page.html"], "in.deploy"),
        (["report", "main.deploy", "-o", "lib.html"], "lib.deploy"),
    ] {
        let before = std::fs::read(dir.join(untouched)).unwrap();
        let output = deployfit_in(&dir, &args);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(stderr(&output).contains("one of the files to report on"));
        assert_eq!(std::fs::read(dir.join(untouched)).unwrap(), before);
    }
}
