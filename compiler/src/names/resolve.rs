//! The name resolver: what a user writes for a catalog entry (`rtx_4090`, `"RTX 4090"`,
//! `"NVIDIA GeForce RTX 4090"`, `B200`, `"A100 80GB"`) → the entry, the entries it could
//! mean, or the closest names. One resolver for every kind a user names (GPU, model,
//! quant, KV dtype, engine, host), used by the language (`gpu = "RTX 4090"`), the command
//! line (`--gpu "RTX 4090"`) and the language server (completion, hover, quick fixes).
//!
//! An entry is known by its name, its display `name`, its `aliases` (marketing names,
//! what `nvidia-smi` or `system_profiler` prints) and, for a model, its `hf` id and
//! `ollama` tag. Matching goes from strict to loose (docs/language.md, "Names"):
//!
//! 1. the name itself;
//! 2. the name in any case and spacing (`B200`, `rtx-4090`): its *key*, the words of the
//!    text lowercased and joined, with the makers' brand words (`NVIDIA`, `GeForce`, …)
//!    left out;
//! 3. the key of an alias or display name (`"NVIDIA GeForce RTX 4090"`);
//! 4. for kinds other than models, every word written is a word of the entry
//!    (`"A100 80GB"` is in `a100_sxm4_80gb` and `a100_pcie_80gb`): one such entry is the
//!    answer, several are an ambiguity that lists them.
//!
//! Suggestions for an unknown name are ranked by shared words (a word written that starts
//! an entry's word counts most), then by a shared start, then by edit distance.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use crate::db::{self, Db, DeclKey};
use crate::names::Scope;
use crate::syntax::ast::{Decl, DeclKind, ExprKind};

/// The makers' brand words, left out of keys and words: `NVIDIA GeForce RTX 4090` is
/// `RTX 4090`, `AMD Radeon` is `Radeon`… only where the model number follows.
const BRANDS: &[&str] = &["nvidia", "geforce", "amd", "apple", "intel", "tesla"];

/// The most choices an ambiguity lists by name (the rest are counted).
pub const MAX_CHOICES: usize = 8;

/// How far below the best suggestion's score another is still offered (a score counts
/// shared words twice, a shared start half, Jaro–Winkler similarity once, agreeing
/// numbers half).
const SUGGESTION_MARGIN: f64 = 0.6;

/// The most characters of a name the resolver reads: longer text is no name.
const MAX_NAME: usize = 256;

/// What a written name resolves to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Resolution {
    /// One entry: its name.
    Found(String),
    /// Several entries fit what was written: their names, best first (all of them).
    Ambiguous(Vec<Choice>),
    /// None: the closest names, best first (at most three).
    Unknown(Vec<Choice>),
}

/// An entry a name may mean: its name and display name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Choice {
    pub name: String,
    pub display: Option<String>,
}

impl Choice {
    /// `` `h100_sxm5` (H100 SXM5 80 GB) ``
    pub fn describe(&self) -> String {
        match &self.display {
            Some(display) if display != &self.name => format!("`{}` ({display})", self.name),
            _ => format!("`{}`", self.name),
        }
    }
}

/// The words of a text: runs of letters and runs of digits, lowercased (`RTX4090` and
/// `rtx_4090` are `rtx 4090`; `80GiB` is `80 gb`), brand words left out.
pub fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut digits = false;
    let push = |word: &mut String, out: &mut Vec<String>| {
        if !word.is_empty() {
            let w = std::mem::take(word);
            let w = if w == "gib" { "gb".to_string() } else { w };
            if !BRANDS.contains(&w.as_str()) {
                out.push(w);
            }
        }
    };
    for c in text.chars().take(MAX_NAME) {
        if c.is_alphanumeric() {
            let is_digit = c.is_numeric();
            if !word.is_empty() && is_digit != digits {
                push(&mut word, &mut out);
            }
            digits = is_digit;
            word.extend(c.to_lowercase());
        } else {
            push(&mut word, &mut out);
        }
    }
    push(&mut word, &mut out);
    out
}

/// A text's key: its words joined (`NVIDIA GeForce RTX 4090` → `rtx4090`).
pub fn key(text: &str) -> String {
    words(text).concat()
}

/// How an entry was matched, strongest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Strength {
    /// The entry's name in another case or spacing.
    Name,
    /// An alias, `hf` id or Ollama tag.
    Alias,
    /// The display name.
    Display,
}

/// One entry as the resolver knows it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Known {
    name: Arc<str>,
    display: Option<String>,
    /// Every word of the name, display name and aliases (and the maker).
    words: BTreeSet<String>,
    /// The words of the name and display name (what an ambiguity's extra words are
    /// counted against).
    own_words: usize,
    /// The entry's place: stdlib files in their order (curated catalogs before the bulk
    /// ones), then the user's.
    order: (usize, usize),
}

/// The entries of one kind with their keys.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KindIndex {
    known: Vec<Known>,
    by_key: HashMap<String, Vec<(Strength, usize)>>,
}

impl KindIndex {
    fn add(&mut self, db: &dyn Db, key: DeclKey<'_>, decl: &Decl, order: (usize, usize)) {
        let name = key.name(db);
        let text_of = |field: &str| {
            decl.field(field).and_then(|f| match &f.value.kind {
                ExprKind::Str(lit) => lit.plain(),
                _ => None,
            })
        };
        let display = text_of("name");
        let mut aliases: Vec<String> = ["hf", "ollama"].iter().filter_map(|f| text_of(f)).collect();
        if let Some(field) = decl.field("aliases")
            && let ExprKind::List(items) = &field.value.kind
        {
            aliases.extend(items.iter().filter_map(|item| match &item.kind {
                ExprKind::Str(lit) => lit.plain(),
                _ => None,
            }));
        }
        let maker = decl.field("vendor").and_then(|f| match &f.value.kind {
            ExprKind::Name(word) => Some(word.clone()),
            _ => None,
        });
        let index = self.known.len();
        let mut words: BTreeSet<String> = words(name).into_iter().collect();
        if let Some(display) = &display {
            words.extend(self::words(display));
        }
        let own_words = words.len();
        for alias in &aliases {
            words.extend(self::words(alias));
        }
        if let Some(maker) = maker {
            words.insert(maker);
        }
        let mut keys = vec![(Strength::Name, self::key(name))];
        keys.extend(aliases.iter().map(|a| (Strength::Alias, self::key(a))));
        keys.extend(display.iter().map(|d| (Strength::Display, self::key(d))));
        for (strength, k) in keys {
            if k.is_empty() {
                continue;
            }
            let slot = self.by_key.entry(k).or_default();
            if !slot.iter().any(|(_, i)| *i == index) {
                slot.push((strength, index));
            }
        }
        self.known.push(Known {
            name: Arc::from(name.as_str()),
            display,
            words,
            own_words,
            order,
        });
    }
}

/// The stdlib's entries by kind, for the resolver: built once per revision, only when a
/// name is not found as written (the common path never builds it).
#[derive(Clone, Debug, Default, PartialEq, Eq, salsa::SalsaValue)]
pub struct AliasIndex {
    kinds: BTreeMap<DeclKind, KindIndex>,
}

/// The kinds a user names by hand.
fn resolvable(kind: DeclKind) -> bool {
    matches!(
        kind,
        DeclKind::Gpu
            | DeclKind::Model
            | DeclKind::Quant
            | DeclKind::Kv
            | DeclKind::Engine
            | DeclKind::Host
    )
}

#[salsa::tracked(returns(ref))]
pub fn stdlib_index(db: &dyn Db, project: db::Project) -> AliasIndex {
    let mut index = AliasIndex::default();
    for (file_order, source) in project.stdlib(db).iter().enumerate() {
        for (decl_order, key) in db::decl_keys(db, *source).iter().enumerate() {
            let kind = key.kind(db);
            if !resolvable(kind) {
                continue;
            }
            if let Some(decl) = db::decl(db, *key) {
                index
                    .kinds
                    .entry(kind)
                    .or_default()
                    .add(db, *key, &decl, (file_order, decl_order));
            }
        }
    }
    index
}

/// The index a file sees: the stdlib's, plus the user's entries of `kind` in scope.
fn index_for<'db>(db: &'db dyn Db, scope: &Scope<'db>, kind: DeclKind) -> KindIndex {
    let mut index = stdlib_index(db, db.project())
        .kinds
        .get(&kind)
        .cloned()
        .unwrap_or_default();
    let stdlib_files = db.project().stdlib(db).len();
    for (order, (_, key)) in scope
        .names(kind)
        .filter(|(_, key)| !key.file(db).is_stdlib(db))
        .enumerate()
    {
        if let Some(decl) = db::decl(db, key) {
            index.add(db, key, &decl, (stdlib_files, order));
        }
    }
    index
}

/// What `text` names among the entries of `kind` visible in `scope`.
pub fn resolve(db: &dyn Db, scope: &Scope<'_>, kind: DeclKind, text: &str) -> Resolution {
    if scope.lookup(kind, text).is_some() {
        return Resolution::Found(text.to_string());
    }
    if !resolvable(kind) || text.len() > MAX_NAME * 4 {
        return Resolution::Unknown(
            scope
                .suggest(kind, text)
                .map(|name| Choice {
                    name,
                    display: None,
                })
                .into_iter()
                .collect(),
        );
    }
    let index = index_for(db, scope, kind);
    resolve_in(&index, kind, text)
}

/// The most completions offered for a name being typed.
pub const MAX_COMPLETIONS: usize = 50;

/// Completions for a name being typed in the user's words (`RTX 40`, `h10`, `gemma3`):
/// the entries of which every word typed starts a word (the last one may be partial),
/// best first (fewest words beyond what was typed, then the catalog's order); at most
/// [`MAX_COMPLETIONS`].
pub fn completions(db: &dyn Db, scope: &Scope<'_>, kind: DeclKind, typed: &str) -> Vec<Choice> {
    if !resolvable(kind) || typed.len() > MAX_NAME {
        return Vec::new();
    }
    let wanted = words(typed);
    if wanted.is_empty() {
        return Vec::new();
    }
    let index = index_for(db, scope, kind);
    let mut fits: Vec<&Known> = index
        .known
        .iter()
        .filter(|k| {
            wanted
                .iter()
                .all(|w| k.words.iter().any(|kw| kw.starts_with(w.as_str())))
        })
        .collect();
    fits.sort_by_key(|k| {
        (
            k.order.0,
            k.own_words.saturating_sub(wanted.len()),
            k.order.1,
        )
    });
    fits.into_iter().take(MAX_COMPLETIONS).map(choice).collect()
}

/// User text inside a message: control and bidirectional-formatting characters escaped
/// (`\u{1b}`), at most 64 characters.
pub fn shown(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars().take(64) {
        if invisible(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    if text.chars().nth(64).is_some() {
        out.push('…');
    }
    out
}

/// Control, zero-width and bidirectional-formatting characters.
fn invisible(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{feff}')
}

fn choice(known: &Known) -> Choice {
    Choice {
        name: known.name.to_string(),
        display: known.display.clone(),
    }
}

fn resolve_in(index: &KindIndex, kind: DeclKind, text: &str) -> Resolution {
    let wanted = words(text);
    let key = wanted.concat();
    // A control or bidirectional-formatting character is never part of a name a user
    // means (it hides what the text shows: `rtx\u{202e}4090`): suggestions only.
    if text.chars().any(invisible) {
        return Resolution::Unknown(closest(index, &wanted, &key));
    }
    // Steps 2 and 3: the key of a name, alias or display name; the strongest match wins.
    if let Some(hits) = index.by_key.get(&key) {
        let best = hits.iter().map(|(s, _)| *s).min();
        let mut found: Vec<usize> = hits
            .iter()
            .filter(|(s, _)| Some(*s) == best)
            .map(|(_, i)| *i)
            .collect();
        found.sort_by_key(|i| index.known[*i].order);
        found.dedup();
        if found.len() == 1 {
            return Resolution::Found(index.known[found[0]].name.to_string());
        }
        if !found.is_empty() {
            return Resolution::Ambiguous(found.iter().map(|i| choice(&index.known[*i])).collect());
        }
    }
    // Step 4: every word written is a word of the entry (not for models: a model's words
    // are a family and a size, and a near name is a different model).
    if kind != DeclKind::Model && !wanted.is_empty() {
        let mut fits: Vec<&Known> = index
            .known
            .iter()
            .filter(|k| wanted.iter().all(|w| k.words.contains(w)))
            .collect();
        fits.sort_by_key(|k| {
            (
                k.order.0,
                k.own_words.saturating_sub(wanted.len()),
                k.order.1,
            )
        });
        match fits.len() {
            0 => {}
            1 => return Resolution::Found(fits[0].name.to_string()),
            _ => return Resolution::Ambiguous(fits.into_iter().map(choice).collect()),
        }
    }
    Resolution::Unknown(closest(index, &wanted, &key))
}

/// The closest entries to what was written, best first (at most three): by shared words,
/// then a shared start, then Jaro–Winkler similarity of the keys.
fn closest(index: &KindIndex, wanted: &[String], key: &str) -> Vec<Choice> {
    if key.is_empty() {
        return Vec::new();
    }
    let mut scored: Vec<(f64, (usize, usize), &Known)> = index
        .known
        .iter()
        .filter_map(|known| {
            let own = self::key(&known.name);
            let shared = wanted
                .iter()
                .map(|w| {
                    if known.words.contains(w) {
                        1.0
                    } else if w.len() >= 2 && known.words.iter().any(|k| k.starts_with(w.as_str()))
                    {
                        0.7
                    } else {
                        0.0
                    }
                })
                .sum::<f64>()
                / wanted.len().max(1) as f64;
            let start = if own.starts_with(key) || key.starts_with(&own) {
                1.0
            } else {
                0.0
            };
            let similar = strsim::jaro_winkler(key, &own);
            let digits_agree = wanted
                .iter()
                .filter(|w| w.chars().all(|c| c.is_numeric()))
                .all(|w| known.words.contains(w));
            if shared < 0.5 && similar < 0.8 {
                return None;
            }
            // Words of the entry's own name that were not written count a little against
            // it: `rtx_3060_12g` is nearer `rtx_3060_12gb` than `rtx_3060_ti_ga103`.
            let unwritten = words(&known.name)
                .iter()
                .filter(|w| !wanted.contains(w))
                .count() as f64;
            let score = 2.0 * shared + 0.5 * start + similar - 0.05 * unwritten
                + if digits_agree { 0.5 } else { 0.0 };
            Some((score, known.order, known))
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    // Only names nearly as close as the best: a far third name is noise, not help.
    let best = scored.first().map_or(0.0, |s| s.0);
    scored
        .into_iter()
        .take_while(|(score, _, _)| *score >= best - SUGGESTION_MARGIN)
        .take(3)
        .map(|(_, _, k)| choice(k))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_letters_digits_and_brands() {
        assert_eq!(words("NVIDIA GeForce RTX 4090"), ["rtx", "4090"]);
        assert_eq!(words("rtx_4090"), ["rtx", "4090"]);
        assert_eq!(words("A100 80GiB"), ["a", "100", "80", "gb"]);
        assert_eq!(words("h100_sxm5"), ["h", "100", "sxm", "5"]);
        assert_eq!(key("RTX-4090"), "rtx4090");
        // Non-ASCII letters are letters; nothing is sliced.
        assert_eq!(words("Ünï 4090 ✓"), ["ünï", "4090"]);
        assert_eq!(key(""), "");
    }
}
