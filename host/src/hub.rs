//! The Hugging Face Hub: a model id that neither the catalog, the registry nor the local
//! Hugging Face cache knows is fetched — its `config.json` and, when the repository has
//! one, its `model.safetensors.index.json` — through the `hf-hub` client into the standard
//! cache (`$HF_HUB_CACHE`, else `$HF_HOME/hub`, else `~/.cache/huggingface/hub`), where the
//! next run, the language server and the Python tools find it.
//!
//! The network is off unless the program opts in: [`allow_network`], which the command
//! line calls for its commands (not for `lsp`, nor in the crates' tests). It honours
//! `HF_ENDPOINT` (another Hub or a mirror), `HF_TOKEN` (gated and private repositories;
//! else the token file `huggingface-cli login` writes), and `HF_HUB_OFFLINE` (never ask).
//! An id is checked before any request ([`valid_id`]); each fetch is bounded in time
//! ([`FETCH_LIMIT`]), and what it brings is read by `deployfit-artifacts` under that
//! crate's size bounds. Why an id was not fetched ([`Unfetched::note`]) is one sentence
//! that says how to supply the file instead. See docs/hub.md.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use hf_hub::Cache;
use hf_hub::api::sync::{ApiBuilder, ApiError};

static NETWORK: AtomicBool = AtomicBool::new(false);

/// Lets this process fetch from the Hugging Face Hub (the command line calls it; a
/// library user, the language server and the tests stay offline without it).
pub fn allow_network() {
    NETWORK.store(true, Ordering::SeqCst);
}

/// Whether [`allow_network`] was called.
pub fn network_allowed() -> bool {
    NETWORK.load(Ordering::SeqCst)
}

/// The longest a repository part (owner or name) may be: the Hub's own bound.
pub const MAX_ID_PART: usize = 96;

/// The longest one fetch (config.json and the index) may take before the model is
/// reported unfetched; the download goes on, or not, on a thread of its own.
pub const FETCH_LIMIT: Duration = Duration::from_secs(30);

/// The files fetched, in order; only the first is required.
pub const FILES: [&str; 2] = ["config.json", "model.safetensors.index.json"];

/// Whether `id` is a Hugging Face model id as the Hub accepts it: `owner/name`, each part
/// 1 to [`MAX_ID_PART`] ASCII letters, digits, `-`, `_` or `.`, neither starting nor
/// ending with `-` or `.`, without `--` or `..`. Nothing else is ever sent.
pub fn valid_id(id: &str) -> bool {
    let Some((owner, name)) = id.split_once('/') else {
        return false;
    };
    [owner, name].iter().all(|part| {
        !part.is_empty()
            && part.len() <= MAX_ID_PART
            && part
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
            && !part.starts_with(['-', '.'])
            && !part.ends_with(['-', '.'])
            && !part.contains("--")
            && !part.contains("..")
    })
}

/// Whether `HF_HUB_OFFLINE` is set to a true value (`1`, `true`, `yes`, `on`, as
/// `huggingface_hub` reads it).
pub fn offline() -> bool {
    std::env::var("HF_HUB_OFFLINE").is_ok_and(|v| {
        matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "1" | "true" | "yes" | "on"
        )
    })
}

/// The Hub's address: `HF_ENDPOINT` without a trailing `/`, else `https://huggingface.co`.
pub fn endpoint() -> String {
    std::env::var("HF_ENDPOINT")
        .ok()
        .map(|e| e.trim().trim_end_matches('/').to_string())
        .filter(|e| !e.is_empty())
        .unwrap_or_else(|| "https://huggingface.co".to_string())
}

/// The standard cache folder: `$HF_HUB_CACHE`, else `$HF_HOME/hub`, else
/// `~/.cache/huggingface/hub`.
pub fn cache_dir() -> Option<PathBuf> {
    let set = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(dir) = set("HF_HUB_CACHE") {
        return Some(PathBuf::from(dir));
    }
    if let Some(home) = set("HF_HOME") {
        return Some(PathBuf::from(home).join("hub"));
    }
    set("HOME").map(|home| PathBuf::from(home).join(".cache/huggingface/hub"))
}

/// What a fetch brought: the snapshot folder in the cache that holds the files.
#[derive(Clone, Debug, PartialEq)]
pub struct Fetched {
    /// `…/models--owner--name/snapshots/<commit>`.
    pub snapshot: PathBuf,
    /// The Hub asked ([`endpoint`]).
    pub endpoint: String,
    /// The files of [`FILES`] the repository has, in that order.
    pub files: Vec<&'static str>,
}

impl Fetched {
    /// The commit the snapshot is of (its folder's name).
    pub fn commit(&self) -> String {
        self.snapshot
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }
}

/// Why an id was not fetched.
#[derive(Clone, Debug, PartialEq)]
pub enum Unfetched {
    /// Not `owner/name` as the Hub spells ids ([`valid_id`]).
    NotAnId,
    /// `HF_HUB_OFFLINE` is set.
    Offline,
    /// This process did not call [`allow_network`] (the language server, a library).
    NotAllowed,
    /// The Hub has no such repository, or it has no config.json.
    NotFound { endpoint: String },
    /// The Hub refused: a gated or private repository without a token that may read it.
    Refused { endpoint: String, status: u16 },
    /// Anything else: no connection, a timeout, a bad answer, no cache folder.
    Failed { endpoint: String, reason: String },
}

impl Unfetched {
    /// The sentence a diagnostic adds for `id`: why the Hub gave nothing and how to
    /// supply the file instead.
    pub fn note(&self, id: &str) -> String {
        let name = id.rsplit('/').next().unwrap_or(id);
        let supply = format!(
            "download its config.json (`hf download {id} config.json --local-dir models/{name}`) \
             and write `model = \"./models/{name}/config.json\"`"
        );
        match self {
            Unfetched::NotAnId => format!(
                "\"{id}\" is not a Hugging Face id (owner/name: letters, digits, `-`, `_`, `.`, \
                 at most {MAX_ID_PART} characters each), so the Hub was not asked"
            ),
            Unfetched::Offline => format!(
                "HF_HUB_OFFLINE is set, so the Hugging Face Hub was not asked: {supply}, or \
                 unset HF_HUB_OFFLINE to fetch it into the Hugging Face cache"
            ),
            Unfetched::NotAllowed => format!(
                "the language server does not reach the Hugging Face Hub: run `deployfit \
                 check` on this file once to fetch it into the Hugging Face cache, or {supply}"
            ),
            Unfetched::NotFound { endpoint } => format!(
                "the Hugging Face Hub ({endpoint}) has no model \"{id}\" with a config.json: \
                 check the id, or {supply}"
            ),
            Unfetched::Refused { endpoint, status } => format!(
                "the Hugging Face Hub ({endpoint}) refused its config.json (HTTP {status}): \
                 the repository is gated or private; accept its terms on the Hub and set \
                 HF_TOKEN to an access token that may read it, or {supply}"
            ),
            Unfetched::Failed { endpoint, reason } => format!(
                "fetching its config.json from the Hugging Face Hub ({endpoint}) failed \
                 ({reason}): {supply}, or set HF_HUB_OFFLINE=1 to stop trying"
            ),
        }
    }
}

/// The token for gated repositories: `HF_TOKEN`, else the token file of the cache's home
/// (`huggingface-cli login`); one of visible ASCII characters only (it becomes a header).
fn token(cache: &Cache) -> Result<Option<String>, String> {
    let token = std::env::var("HF_TOKEN")
        .ok()
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
        .or_else(|| cache.token());
    match token {
        Some(t) if t.len() > 4096 || !t.bytes().all(|b| b.is_ascii_graphic()) => Err(
            "the token (HF_TOKEN or the token file) is not one: only visible ASCII characters"
                .to_string(),
        ),
        other => Ok(other),
    }
}

/// Whether [`fetch`] would ask the Hub for `id`, without asking: not when the id is not
/// one ([`valid_id`]), `HF_HUB_OFFLINE` is set, or [`allow_network`] was not called.
pub fn may_fetch(id: &str) -> Result<(), Unfetched> {
    if !valid_id(id) {
        Err(Unfetched::NotAnId)
    } else if offline() {
        Err(Unfetched::Offline)
    } else if !network_allowed() {
        Err(Unfetched::NotAllowed)
    } else {
        Ok(())
    }
}

/// Fetches `id`'s config.json (and its safetensors index when there is one) into the
/// standard cache, or says why not. Asks nothing of the network when the id is not one
/// ([`valid_id`]), `HF_HUB_OFFLINE` is set, or [`allow_network`] was not called.
pub fn fetch(id: &str) -> Result<Fetched, Unfetched> {
    may_fetch(id)?;
    let endpoint = endpoint();
    let failed = |reason: String| Unfetched::Failed {
        endpoint: endpoint.clone(),
        reason,
    };
    if !(endpoint.starts_with("http://") || endpoint.starts_with("https://"))
        || !endpoint.is_ascii()
        || endpoint.len() > 2048
    {
        return Err(failed(
            "HF_ENDPOINT is not an http:// or https:// address".to_string(),
        ));
    }
    let Some(cache) = cache_dir() else {
        return Err(failed("no cache folder: set HF_HOME or HOME".to_string()));
    };
    let (sender, receiver) = std::sync::mpsc::channel();
    let owned = (id.to_string(), endpoint.clone());
    std::thread::Builder::new()
        .name("deployfit-hub-fetch".into())
        .spawn(move || {
            let (id, endpoint) = owned;
            let _ = sender.send(fetch_now(&id, &endpoint, cache));
        })
        .map_err(|e| failed(format!("cannot start a thread ({e})")))?;
    match receiver.recv_timeout(FETCH_LIMIT) {
        Ok(result) => result,
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => Err(failed(format!(
            "no answer within {} s",
            FETCH_LIMIT.as_secs()
        ))),
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
            Err(failed("the download stopped".to_string()))
        }
    }
}

/// The fetch itself, on the thread [`fetch`] waits for.
fn fetch_now(id: &str, endpoint: &str, cache_dir: PathBuf) -> Result<Fetched, Unfetched> {
    let failed = |reason: String| Unfetched::Failed {
        endpoint: endpoint.to_string(),
        reason,
    };
    let cache = Cache::new(cache_dir);
    let token = token(&cache).map_err(failed)?;
    let api = ApiBuilder::from_cache(cache)
        .with_endpoint(endpoint.to_string())
        .with_token(token)
        .with_progress(false)
        .with_retries(0)
        .with_user_agent("deployfit", env!("CARGO_PKG_VERSION"))
        .build()
        .map_err(|e| failed(words(&e)))?;
    let repo = api.model(id.to_string());
    let config = repo.get(FILES[0]).map_err(|e| match status(&e) {
        Some(404) => Unfetched::NotFound {
            endpoint: endpoint.to_string(),
        },
        Some(status @ (401 | 403)) => Unfetched::Refused {
            endpoint: endpoint.to_string(),
            status,
        },
        _ => failed(words(&e)),
    })?;
    let snapshot = config
        .parent()
        .map(Path::to_path_buf)
        .ok_or_else(|| failed("the cache gave no folder".to_string()))?;
    let mut files = vec![FILES[0]];
    // The index is optional (a single-file or a GGUF-only repository has none): any
    // failure leaves the model described by its config.json alone.
    if let Ok(index) = repo.get(FILES[1])
        && index.parent() == Some(snapshot.as_path())
    {
        files.push(FILES[1]);
    }
    Ok(Fetched {
        snapshot,
        endpoint: endpoint.to_string(),
        files,
    })
}

/// The HTTP status of a refused request, if that is what the error is.
fn status(error: &ApiError) -> Option<u16> {
    match error {
        ApiError::RequestError(inner) => match inner.as_ref() {
            ureq::Error::Status(code, _) => Some(*code),
            ureq::Error::Transport(_) => None,
        },
        ApiError::TooManyRetries(inner) => status(inner),
        _ => None,
    }
}

/// An error in words, on one line and bounded (it quotes what a server sent).
fn words(error: &ApiError) -> String {
    let text: String = error
        .to_string()
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(300)
        .collect();
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_checked_before_any_request() {
        for ok in [
            "acme/new-7b",
            "meta-llama/Llama-3.1-8B-Instruct",
            "a/b",
            "Qwen/Qwen2.5-7B-Instruct-AWQ",
        ] {
            assert!(valid_id(ok), "{ok}");
        }
        let long = format!("acme/{}", "x".repeat(MAX_ID_PART + 1));
        for bad in [
            "",
            "acme",
            "/x",
            "acme/",
            "a/b/c",
            "../etc",
            "acme/..",
            "acme/a..b",
            "acme/a--b",
            "acme/-a",
            "acme/a.",
            "acme/new 7b",
            "acme/new?x=1",
            "acme/new#x",
            "acme/nëw",
            "acme/new\n",
            "./models/x",
            long.as_str(),
        ] {
            assert!(!valid_id(bad), "{bad:?}");
        }
    }

    #[test]
    fn without_the_opt_in_nothing_is_fetched() {
        // The crate's tests never call `allow_network`.
        assert!(!network_allowed());
        let result = fetch("acme/new-7b");
        assert!(
            matches!(result, Err(Unfetched::NotAllowed) | Err(Unfetched::Offline)),
            "{result:?}"
        );
        assert_eq!(fetch("not an id"), Err(Unfetched::NotAnId));
    }

    #[test]
    fn every_note_says_how_to_supply_the_file() {
        let endpoint = "https://huggingface.co".to_string();
        for why in [
            Unfetched::Offline,
            Unfetched::NotAllowed,
            Unfetched::NotFound {
                endpoint: endpoint.clone(),
            },
            Unfetched::Refused {
                endpoint: endpoint.clone(),
                status: 401,
            },
            Unfetched::Failed {
                endpoint,
                reason: "no route".into(),
            },
        ] {
            let note = why.note("acme/new-7b");
            assert!(
                note.contains("model = \"./models/new-7b/config.json\""),
                "{note}"
            );
        }
        assert!(
            Unfetched::Offline
                .note("a/b")
                .contains("unset HF_HUB_OFFLINE")
        );
        assert!(
            Unfetched::Refused {
                endpoint: "e".into(),
                status: 403
            }
            .note("a/b")
            .contains("HF_TOKEN")
        );
    }
}
