//! The IDE-shaped API: hover, completions, definition, inlay hints and symbols as plain
//! data (byte offsets, strings). The language server only converts these to LSP types.

use std::path::PathBuf;

use crate::db::{self, Db, DeclKey, SourceFile};
use crate::eval::Entry;
use crate::eval::figures::{PROPERTIES, property};
use crate::eval::schema::{FieldTy, OWNED, SPECULATIVE, WORKLOAD, field_spec, schema};
use crate::names::Scope;
use crate::span::Span;
use crate::syntax::ast::DeclKind;
use crate::units::{Dim, Quantity};

/// A hover: the span it describes and Markdown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hover {
    pub span: Span,
    pub markdown: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompletionKind {
    Keyword,
    Field,
    Entry,
    Word,
    Unit,
    Property,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Completion {
    pub label: String,
    pub kind: CompletionKind,
    pub detail: String,
    /// For a name being typed in the user's own words (`gpu = "RTX 40`): the span typed so
    /// far, replaced by the label; the client filters on that text, not on the label.
    pub edit: Option<CompletionEdit>,
}

/// What a completion replaces, and the text the client filters on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompletionEdit {
    pub span: Span,
    pub typed: String,
}

/// A place in a file: a user file's path, or a stdlib file's (`stdlib/gpus.deploy`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    pub path: PathBuf,
    pub is_stdlib: bool,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InlayHint {
    pub offset: u32,
    pub label: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symbol {
    pub name: String,
    pub kind: DeclKind,
    pub span: Span,
    pub name_span: Span,
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// `offset` clamped into `text` and moved back to the start of the character it is in:
/// every offset this module slices at goes through here (offsets come from clients).
fn floor_boundary(text: &str, offset: usize) -> usize {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

/// The identifier around `offset` and its span. Identifiers are ASCII (the grammar's
/// `ident`), so a non-ASCII letter ends a word like any other non-identifier character.
fn word_at(text: &str, offset: usize) -> Option<(String, Span)> {
    let offset = floor_boundary(text, offset);
    let start = text[..offset]
        .char_indices()
        .rev()
        .find(|(_, c)| !is_ident(*c))
        .map(|(i, c)| i + c.len_utf8())
        .unwrap_or(0);
    let end = text[offset..]
        .find(|c: char| !is_ident(c))
        .map(|i| offset + i)
        .unwrap_or(text.len());
    (start < end).then(|| (text[start..end].to_string(), Span::new(start, end)))
}

/// Words that a name may not be, besides the declaration kinds (`DeclKind`'s
/// keywords): the grammar's other keywords and the boolean literals (`rename` refuses
/// them: `not`, `and`, `one_of` … would break the file).
pub const RESERVED: &[&str] = &[
    "import", "extends", "require", "else", "minimize", "maximize", "one_of", "and", "or", "not",
    "true", "false",
];

/// Whether `name` is a keyword: a declaration kind or one of [`RESERVED`].
pub fn is_reserved(name: &str) -> bool {
    DeclKind::from_keyword(name).is_some() || RESERVED.contains(&name)
}

/// Whether `name` is a valid new name: the grammar's `ident` and not a reserved word.
pub fn check_name(name: &str) -> Result<(), String> {
    let is_ident_syntax = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(is_ident);
    if !is_ident_syntax {
        let shown: String = name.chars().take(64).collect();
        return Err(format!(
            "`{shown}` is not a name: ASCII letters, digits and `_`, not starting with a digit"
        ));
    }
    if is_reserved(name) {
        return Err(format!(
            "`{name}` is a reserved word of the language; choose another name"
        ));
    }
    Ok(())
}

/// The field whose value the line at `offset` is: `gpu = rtx_3…` → `gpu`.
fn field_of_line(db: &dyn Db, file: SourceFile, offset: usize) -> Option<String> {
    let text = file.text(db);
    let offset = floor_boundary(text, offset);
    // The line's start from the file's line index: `references` asks once per
    // occurrence, and a scan back would cost the line's length each time.
    let line_start = db::line_index(db, file).line_start(offset);
    let line = &text[line_start..offset];
    let (name, _) = line.split_once('=')?;
    let name = name.trim();
    (!name.is_empty() && name.chars().all(is_ident)).then(|| name.to_string())
}

/// The declaration around `offset`: from the parse when it parsed, else the nearest
/// `KIND NAME` line above (so that completion works inside a broken block).
fn enclosing_kind(
    db: &dyn Db,
    file: SourceFile,
    offset: usize,
) -> Option<(DeclKind, Option<DeclKey<'_>>)> {
    let parsed = db::parse(db, file);
    // Declarations are in source order: a binary search, not a scan (`references` asks
    // this once per occurrence of a name).
    let after = parsed
        .decls
        .partition_point(|placed| placed.offset as usize <= offset);
    for index in after.saturating_sub(2)..after {
        let placed = &parsed.decls[index];
        let start = placed.offset as usize;
        let end = start + placed.decl.span.len();
        if (start..=end).contains(&offset) {
            let key = db::decl_keys(db, file).get(index).copied();
            return Some((placed.decl.kind, key));
        }
    }
    // The current line up to `offset`, then the nearest marker line above it, found by
    // a binary search in the file's markers (a scan would cost the gap each time).
    let text = file.text(db);
    let offset = floor_boundary(text, offset);
    let line_start = db::line_index(db, file).line_start(offset);
    if let Some(marker) = block_marker(&text[line_start..offset]) {
        return marker.map(|kind| (kind, None));
    }
    let markers = block_markers(db, file);
    let above = markers.partition_point(|(start, _)| (*start as usize) < line_start);
    let (_, marker) = markers.get(above.checked_sub(1)?)?;
    marker.map(|kind| (kind, None))
}

/// What a line says about the block it is in: `Some(Some(kind))` for a `KIND NAME`
/// line, `Some(None)` for a line that closes a block (`}` in column 0).
fn block_marker(line: &str) -> Option<Option<DeclKind>> {
    let trimmed = line.trim_start();
    let mut words = trimmed.split_whitespace();
    if let Some(kind) = words.next().and_then(DeclKind::from_keyword)
        && words.next().is_some_and(|n| n.chars().all(is_ident))
    {
        return Some(Some(kind));
    }
    line.starts_with('}').then_some(None)
}

/// Every line of a file with a [`block_marker`], by its start offset, in order.
#[salsa::tracked(returns(ref))]
fn block_markers(db: &dyn Db, file: SourceFile) -> Vec<(u32, Option<DeclKind>)> {
    let mut markers = Vec::new();
    let mut start = 0;
    for line in file.text(db).split_inclusive('\n') {
        let content = line.trim_end_matches(['\n', '\r']);
        if let Some(marker) = block_marker(content) {
            markers.push((start as u32, marker));
        }
        start += line.len();
    }
    markers
}

fn gib(bytes: f64) -> String {
    Quantity::bytes(bytes as i128).display()
}

/// A one-line description of a catalog entry, for completion details and hovers.
pub fn describe_entry(kind: DeclKind, entry: &Entry<'_>) -> String {
    match kind {
        DeclKind::Gpu => {
            let gpu = entry.as_gpu();
            let mut parts = Vec::new();
            if let Some(memory) = gpu.memory {
                parts.push(gib(memory));
            }
            if let Some(bandwidth) = gpu.bandwidth {
                parts.push(Quantity::real(bandwidth, Dim::BANDWIDTH).display());
            }
            if let Some(price) = crate::eval::estimate::hourly_price(entry) {
                parts.push(Quantity::real(price, Dim::HOURLY).display());
            }
            parts.join(" · ")
        }
        DeclKind::Model => {
            let model = entry.as_model();
            let mut parts = Vec::new();
            if let Some(params) = model.params {
                parts.push(format!("{:.1}B params", params / 1e9));
            }
            if let Some(attention) = model.attention {
                parts.push(attention.name().to_uppercase());
            }
            if let Some(window) = model.max_context {
                parts.push(format!(
                    "{} context",
                    Quantity::real(window, Dim::TOKENS).display()
                ));
            }
            parts.join(" · ")
        }
        DeclKind::Quant => entry
            .as_quant()
            .bpw
            .map(|b| format!("{b} bits per weight"))
            .unwrap_or_default(),
        DeclKind::Kv => entry
            .as_kv()
            .bytes
            .map(|b| format!("{b} bytes per element"))
            .unwrap_or_default(),
        DeclKind::Engine => entry
            .as_engine()
            .utilization
            .map(|u| format!("uses {:.0} % of GPU memory", u * 100.0))
            .unwrap_or_default(),
        _ => String::new(),
    }
}

fn entry_hover(db: &dyn Db, kind: DeclKind, name: &str, key: DeclKey<'_>) -> String {
    let entry = crate::eval::entry_of(db, key);
    let decl = db::decl(db, key);
    let mut out = format!("**{} `{name}`**", kind.keyword());
    if let Some(doc) = decl.as_ref().and_then(|d| d.doc.clone()) {
        out.push_str(&format!("\n\n{doc}"));
    }
    let line = describe_entry(kind, entry);
    if !line.is_empty() {
        out.push_str(&format!("\n\n{line}"));
    }
    out.push_str(&format!(
        "\n\n_defined in {}_",
        key.file(db).path(db).display()
    ));
    out
}

/// The Markdown breakdown of one deployment: what `explain` prints.
fn deployment_hover(db: &dyn Db, file: SourceFile, name: &str) -> Option<String> {
    let explanation = crate::explain::explain(db, file)
        .into_iter()
        .find_map(|e| e.ok().filter(|e| e.deployment == name))?;
    let b = &explanation.breakdown;
    let s = &explanation.setup;
    let p = &explanation.performance;
    let bytes = |v: i128| Quantity::bytes(v).display();
    let mut out = format!(
        "**deployment `{name}`** — {} · {} · {} · {} × {} · context {} × {}\n\n| | |\n|---|---|\n",
        s.model,
        s.quant,
        s.engine,
        s.count,
        s.gpu,
        Quantity::real(s.context as f64, Dim::TOKENS).display(),
        s.seqs
    );
    out.push_str(&format!(
        "| weights | {} ({}) |\n",
        bytes(b.weights_bytes),
        b.weights_source
    ));
    out.push_str(&format!("| KV cache | {} |\n", bytes(b.kv_bytes)));
    out.push_str(&format!(
        "| overhead | {} per GPU |\n",
        bytes(b.overhead_bytes)
    ));
    out.push_str(&format!("| total | {} |\n", bytes(b.total_bytes)));
    if let (Some(usable), Some(utilization), Some(verdict)) =
        (b.usable_bytes, b.utilization, b.verdict)
    {
        out.push_str(&format!(
            "| per GPU | {} of {} usable ({:.1} %): {} |\n",
            bytes(b.per_gpu_bytes),
            bytes(usable),
            utilization * 100.0,
            verdict.describe()
        ));
    }
    if let Some(max) = b.max_context {
        out.push_str(&format!(
            "| max context | {} |\n",
            Quantity::real(max as f64, Dim::TOKENS).display()
        ));
    }
    if let (Some(decode), Some(low), Some(high)) =
        (p.decode_tps, p.decode_tps_low, p.decode_tps_high)
    {
        out.push_str(&format!(
            "| decode | {decode:.1} tok/s ({low:.1}–{high:.1}) |\n"
        ));
    }
    if let Some(ttft) = p.ttft_s {
        out.push_str(&format!(
            "| time to first token | {} |\n",
            Quantity::real(ttft, Dim::SECONDS).display()
        ));
    }
    if let Some(cost) = p.cost_per_hour {
        out.push_str(&format!("| cost | ${cost:.2}/h |\n"));
    }
    Some(out)
}

/// The catalog kind a field holds, for name lookups.
fn field_kind(decl_kind: DeclKind, field: &str) -> Option<DeclKind> {
    match field_spec(decl_kind, field).map(|s| s.ty) {
        Some(FieldTy::Ref(kind)) | Some(FieldTy::RefList(kind)) => Some(kind),
        _ => None,
    }
}

fn lookup_any<'db>(scope: &Scope<'db>, name: &str) -> Option<(DeclKind, DeclKey<'db>)> {
    DeclKind::ALL
        .into_iter()
        .find_map(|kind| scope.lookup(kind, name).map(|key| (kind, key)))
}

/// The quoted string around `offset` on its line (`gpu = "RTX 4090"`): its text and the
/// span of its content. Bounded by the line.
fn string_at(db: &dyn Db, file: SourceFile, offset: usize) -> Option<(String, Span)> {
    let text = file.text(db);
    let offset = floor_boundary(text, offset);
    let line_start = db::line_index(db, file).line_start(offset);
    let line_end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
    let open = line_start + text[line_start..offset].rfind('"')? + 1;
    // An even number of quotes before the opening one: it opens a string.
    if !text[line_start..open - 1]
        .matches('"')
        .count()
        .is_multiple_of(2)
    {
        return None;
    }
    let close = offset + text[offset..line_end].find('"')?;
    (open <= close).then(|| (text[open..close].to_string(), Span::new(open, close)))
}

/// A quoted name in a reference field (`gpu = "RTX 4090"`, `model = "google/gemma-3-27b-it"`):
/// the entry the name resolver gives it.
fn quoted_reference_at<'db>(
    db: &'db dyn Db,
    file: SourceFile,
    offset: usize,
) -> Option<(String, Span, DeclKind, DeclKey<'db>)> {
    let (quoted, span) = string_at(db, file, offset)?;
    let (context, _) = enclosing_kind(db, file, offset)?;
    let field = field_of_line(db, file, span.start as usize)?;
    let scope = crate::names::scope(db, file);
    let kind = field_kind(context, &field).or_else(|| {
        // `model = "…"` in a deployment: an id, tag or file.
        (context == DeclKind::Deployment && field == "model").then_some(DeclKind::Model)
    })?;
    let name = if kind == DeclKind::Model {
        crate::eval::deployment::model_for_file(db, scope, &quoted, file.path(db))?
    } else {
        match crate::names::resolve::resolve(db, scope, kind, &quoted) {
            crate::names::resolve::Resolution::Found(name) => name,
            _ => return None,
        }
    };
    let key = scope.lookup(kind, &name)?;
    Some((name, span, kind, key))
}

/// What the name at `offset` refers to: its kind and declaration.
fn reference_at<'db>(
    db: &'db dyn Db,
    file: SourceFile,
    offset: usize,
) -> Option<(String, Span, DeclKind, DeclKey<'db>)> {
    if let Some(found) = quoted_reference_at(db, file, offset) {
        return Some(found);
    }
    let text = file.text(db);
    let (word, span) = word_at(text, offset)?;
    let scope = crate::names::scope(db, file);
    // Only the whitespace before the word is looked at (not its whole line): the cost of
    // a lookup stays independent of the line's length (`references` makes many).
    let before = text[..span.start as usize].trim_end();
    let context_kind = enclosing_kind(db, file, offset).map(|(k, _)| k);
    // `extends NAME` names an entry of the declaration's own kind.
    let kind = if before.ends_with("extends") {
        context_kind
    } else {
        field_of_line(db, file, span.start as usize)
            .and_then(|field| context_kind.and_then(|k| field_kind(k, &field)))
    };
    match kind.and_then(|k| scope.lookup(k, &word).map(|key| (k, key))) {
        Some((kind, key)) => Some((word, span, kind, key)),
        None => lookup_any(scope, &word).map(|(kind, key)| (word, span, kind, key)),
    }
}

pub fn hover(db: &dyn Db, file: SourceFile, offset: usize) -> Option<Hover> {
    let text = file.text(db);
    if let Some((word, span, kind, key)) = reference_at(db, file, offset) {
        let markdown = if kind == DeclKind::Deployment {
            deployment_hover(db, file, &word)?
        } else {
            entry_hover(db, kind, &word, key)
        };
        return Some(Hover { span, markdown });
    }
    if let Some((word, span)) = word_at(text, offset)
        && let Some(prop) = property(&word)
    {
        return Some(Hover {
            span,
            markdown: format!("**`{word}`** — {}", prop.doc),
        });
    }
    // Anywhere else inside a deployment: its breakdown.
    let (kind, key) = enclosing_kind(db, file, offset)?;
    let key = key?;
    if kind != DeclKind::Deployment {
        return None;
    }
    let decl = db::decl(db, key)?;
    let start = db::decl_offset(db, key);
    Some(Hover {
        span: decl.name.span.shift(start),
        markdown: deployment_hover(db, file, &decl.name.name)?,
    })
}

pub fn completions(db: &dyn Db, file: SourceFile, offset: usize) -> Vec<Completion> {
    let text = file.text(db);
    let offset = floor_boundary(text, offset);
    let scope = crate::names::scope(db, file);
    let line_start = text[..offset].rfind('\n').map(|i| i + 1).unwrap_or(0);
    let line = &text[line_start..offset];
    let enclosing = enclosing_kind(db, file, offset);
    let Some((kind, _)) = enclosing else {
        return DeclKind::ALL
            .into_iter()
            .map(|k| Completion {
                label: k.keyword().to_string(),
                kind: CompletionKind::Keyword,
                detail: format!("declare {}", k.describe()),
                edit: None,
            })
            .chain(std::iter::once(Completion {
                label: "import".into(),
                kind: CompletionKind::Keyword,
                detail: "import another .deploy file".into(),
                edit: None,
            }))
            .collect();
    };
    // A unit after a number: `memory = 12 ` → GiB, GB …
    let trimmed = line.trim_end();
    let after_number = trimmed.ends_with(|c: char| c.is_ascii_digit()) && line.ends_with(' ');
    if let Some(field) = field_of_line(db, file, offset) {
        let spec = field_spec(kind, &field)
            .or_else(|| WORKLOAD.iter().find(|s| s.name == field))
            .or_else(|| OWNED.iter().find(|s| s.name == field))
            .or_else(|| SPECULATIVE.iter().find(|s| s.name == field));
        match spec.map(|s| s.ty) {
            Some(FieldTy::Ref(target)) | Some(FieldTy::RefList(target)) if !after_number => {
                // `gpu = "RTX 40`, `gpu = H10`: the entries the resolver finds for the words
                // typed so far, each replacing what was typed.
                let typed_start = line
                    .rfind(['=', '[', ','])
                    .map(|i| i + 1)
                    .map(|i| i + (line.len() - i - line[i..].trim_start().len()));
                if let Some(start) = typed_start
                    && start < line.len()
                {
                    let typed = &line[start..];
                    let query = typed.trim_start_matches('"');
                    let span = Span::new(line_start + start, offset);
                    return crate::names::resolve::completions(db, scope, target, query)
                        .into_iter()
                        .filter_map(|choice| {
                            let key = scope.lookup(target, &choice.name)?;
                            Some(Completion {
                                label: choice.name.clone(),
                                kind: CompletionKind::Entry,
                                detail: describe_entry(target, crate::eval::entry_of(db, key)),
                                edit: Some(CompletionEdit {
                                    span,
                                    typed: typed.to_string(),
                                }),
                            })
                        })
                        .collect();
                }
                return scope
                    .names(target)
                    .map(|(name, key)| Completion {
                        label: name.to_string(),
                        kind: CompletionKind::Entry,
                        detail: describe_entry(target, crate::eval::entry_of(db, key)),
                        edit: None,
                    })
                    .collect();
            }
            Some(FieldTy::Symbol(words)) => {
                return words
                    .iter()
                    .map(|w| Completion {
                        label: w.to_string(),
                        kind: CompletionKind::Word,
                        detail: format!("`{field}`"),
                        edit: None,
                    })
                    .collect();
            }
            Some(FieldTy::Q(dim)) if after_number => {
                let units: Vec<&str> = match dim {
                    d if d == Dim::BYTES => vec!["GiB", "GB", "MiB", "TiB", "B"],
                    d if d == Dim::BANDWIDTH => vec!["GB/s", "TB/s", "GiB/s"],
                    d if d == Dim::COMPUTE => vec!["TFLOPS", "PFLOPS"],
                    d if d == Dim::TOKENS => vec!["tokens"],
                    d if d == Dim::TOKEN_RATE => vec!["tok/s"],
                    d if d == Dim::REQUEST_RATE => vec!["req/s"],
                    d if d == Dim::SECONDS => vec!["ms", "s", "h"],
                    d if d == Dim::WATTS => vec!["W"],
                    _ => vec![],
                };
                return units
                    .into_iter()
                    .map(|u| Completion {
                        label: u.to_string(),
                        kind: CompletionKind::Unit,
                        detail: dim.describe(),
                        edit: None,
                    })
                    .collect();
            }
            _ => {}
        }
    }
    let before = line.trim_start();
    if before.starts_with("require")
        || before.starts_with("minimize")
        || before.starts_with("maximize")
        || field_of_line(db, file, offset).is_some()
    {
        return PROPERTIES
            .iter()
            .map(|p| Completion {
                label: p.name.to_string(),
                kind: CompletionKind::Property,
                detail: p.doc.to_string(),
                edit: None,
            })
            .collect();
    }
    // At the start of a line in a block: the fields of the kind.
    let mut out: Vec<Completion> = schema(kind)
        .iter()
        .map(|spec| Completion {
            label: spec.name.to_string(),
            kind: CompletionKind::Field,
            detail: spec.doc.to_string(),
            edit: None,
        })
        .collect();
    if kind == DeclKind::Deployment {
        for keyword in ["require", "minimize", "maximize"] {
            out.push(Completion {
                label: keyword.to_string(),
                kind: CompletionKind::Keyword,
                detail: "statement".into(),
                edit: None,
            });
        }
    }
    out
}

pub fn definition(db: &dyn Db, file: SourceFile, offset: usize) -> Option<Target> {
    let (_, _, _, key) = reference_at(db, file, offset)?;
    let decl = db::decl(db, key)?;
    let target = key.file(db);
    Some(Target {
        path: target.path(db).clone(),
        is_stdlib: target.is_stdlib(db),
        span: decl.name.span.shift(db::decl_offset(db, key)),
    })
}

/// One hint per deployment, after its name: "7.9 GiB / 12 GiB · 66 % · ~32 tok/s · $0.11/h".
pub fn inlay_hints(db: &dyn Db, file: SourceFile) -> Vec<InlayHint> {
    let text = file.text(db);
    db::decl_keys(db, file)
        .iter()
        .filter(|key| key.kind(db) == DeclKind::Deployment)
        .filter_map(|key| {
            let decl = db::decl(db, *key)?;
            let offset = decl.name.span.shift(db::decl_offset(db, *key)).end as usize;
            let result = crate::check::deployment(db, *key);
            let label = match (&result.breakdown, &result.figures) {
                (Some(b), Some(figures)) => {
                    let mut parts = Vec::new();
                    if let (Some(usable), Some(utilization)) = (b.usable_bytes, b.utilization) {
                        parts.push(format!(
                            "{} / {}",
                            Quantity::bytes(b.per_gpu_bytes).display(),
                            Quantity::bytes(usable).display()
                        ));
                        parts.push(format!("{:.0} %", utilization * 100.0));
                    }
                    if b.verdict == Some(crate::eval::estimate::Verdict::FitsWithOffload)
                        && let (Some(gpu_layers), Some(layers)) = (b.gpu_layers, b.layers)
                    {
                        parts.push(format!(
                            "{}: {gpu_layers}/{layers} layers on GPU",
                            crate::eval::estimate::Verdict::FitsWithOffload.describe()
                        ));
                    }
                    if let Ok(decode) = figures.decode_tps {
                        parts.push(format!("~{decode:.0} tok/s"));
                    }
                    if let Ok(cost) = figures.cost_per_hour {
                        parts.push(Quantity::real(cost, Dim::HOURLY).display());
                    }
                    parts.join(" · ")
                }
                _ => "not evaluated".to_string(),
            };
            let _ = text;
            Some(InlayHint {
                offset: offset as u32,
                label,
            })
        })
        .collect()
}

pub fn symbols(db: &dyn Db, file: SourceFile) -> Vec<Symbol> {
    db::parse(db, file)
        .decls
        .iter()
        .map(|placed| Symbol {
            name: placed.decl.name.name.clone(),
            kind: placed.decl.kind,
            span: placed.decl.span.shift(placed.offset),
            name_span: placed.decl.name.span.shift(placed.offset),
        })
        .collect()
}

/// Every place that names the same catalog entry or user declaration as the name at
/// `offset`, in the loaded user files and the stdlib: its definition first.
pub fn references(db: &dyn Db, file: SourceFile, offset: usize) -> Vec<Target> {
    let Some((name, _, kind, key)) = reference_at(db, file, offset) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    // What `out` holds, for a constant-time "already listed?".
    let mut listed = std::collections::HashSet::new();
    if let Some(definition) = definition(db, file, offset) {
        listed.insert((definition.path.clone(), definition.span));
        out.push(definition);
    }
    let project = db.project();
    let files: Vec<SourceFile> = project
        .files(db)
        .values()
        .copied()
        .chain(project.stdlib(db).iter().copied())
        .collect();
    for candidate in files {
        let text = candidate.text(db);
        let mut from = 0;
        while let Some(found) = text[from..].find(name.as_str()) {
            let start = from + found;
            let end = start + name.len();
            from = end;
            let bounded = text[..start]
                .chars()
                .next_back()
                .is_none_or(|c| !is_ident(c))
                && text[end..].chars().next().is_none_or(|c| !is_ident(c));
            if !bounded {
                continue;
            }
            if let Some((_, span, k, other)) = reference_at(db, candidate, start)
                && k == kind
                && other == key
            {
                let target = Target {
                    path: candidate.path(db).clone(),
                    is_stdlib: candidate.is_stdlib(db),
                    span,
                };
                if listed.insert((target.path.clone(), target.span)) {
                    out.push(target);
                }
            }
        }
    }
    out
}

/// The edits that rename a user declaration everywhere it is named; `Err` says why not
/// (stdlib entries, invalid names).
pub fn rename(
    db: &dyn Db,
    file: SourceFile,
    offset: usize,
    new_name: &str,
) -> Result<Vec<Target>, String> {
    check_name(new_name)?;
    let (_, kind, _) = renamable_at(db, file, offset)?;
    if crate::names::scope(db, file)
        .lookup(kind, new_name)
        .is_some()
    {
        return Err(format!("{} `{new_name}` already exists", kind.describe()));
    }
    let edits = references(db, file, offset);
    Ok(edits.into_iter().filter(|t| !t.is_stdlib).collect())
}

/// The name at `offset` if it can be renamed (LSP `prepareRename`): its span, or why not.
pub fn prepare_rename(db: &dyn Db, file: SourceFile, offset: usize) -> Result<Span, String> {
    renamable_at(db, file, offset).map(|(span, _, _)| span)
}

fn renamable_at<'db>(
    db: &'db dyn Db,
    file: SourceFile,
    offset: usize,
) -> Result<(Span, DeclKind, DeclKey<'db>), String> {
    let Some((_, span, kind, key)) = reference_at(db, file, offset) else {
        return Err("there is no name here".into());
    };
    if key.file(db).is_stdlib(db) {
        return Err(format!(
            "`{}` is a stdlib entry; define your own with `{} my_name extends {} {{ ... }}`",
            key.name(db),
            kind.keyword(),
            key.name(db)
        ));
    }
    Ok((span, kind, key))
}

/// Token classes for semantic highlighting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenKind {
    Keyword,
    Kind,
    Field,
    Name,
    Number,
    Unit,
    String,
    Comment,
    Operator,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token {
    pub start: u32,
    pub len: u32,
    pub kind: TokenKind,
}

const KEYWORDS: &[&str] = &[
    "import", "extends", "require", "else", "minimize", "maximize", "one_of", "and", "or", "not",
];

/// A lexical scan for highlighting: it works on broken text too.
pub fn semantic_tokens(db: &dyn Db, file: SourceFile) -> Vec<Token> {
    let text = file.text(db);
    let bytes = text.as_bytes();
    let mut tokens = Vec::new();
    let mut i = 0;
    let push = |tokens: &mut Vec<Token>, start: usize, end: usize, kind| {
        tokens.push(Token {
            start: start as u32,
            len: (end - start) as u32,
            kind,
        });
    };
    while i < bytes.len() {
        let c = bytes[i];
        if c == b'/' && bytes.get(i + 1) == Some(&b'/') {
            let end = text[i..].find('\n').map(|e| i + e).unwrap_or(text.len());
            push(&mut tokens, i, end, TokenKind::Comment);
            i = end;
        } else if c == b'"' {
            let mut end = i + 1;
            while end < bytes.len() && bytes[end] != b'"' && bytes[end] != b'\n' {
                end += if bytes[end] == b'\\' { 2 } else { 1 };
            }
            let end = (end + 1).min(bytes.len());
            push(&mut tokens, i, end, TokenKind::String);
            i = end;
        } else if c.is_ascii_digit()
            || (c == b'$' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit))
        {
            let mut end = i + 1;
            while end < bytes.len()
                && (bytes[end].is_ascii_alphanumeric()
                    || matches!(bytes[end], b'_' | b'.' | b'/' | b'%'))
            {
                end += 1;
            }
            push(&mut tokens, i, end, TokenKind::Number);
            // A unit after a space: `12 GiB`, `864 GB/s`.
            let rest = &text[end..];
            let spaces = rest.len() - rest.trim_start_matches(' ').len();
            let unit_start = end + spaces;
            let unit_len = text[unit_start..]
                .find(|ch: char| !(ch.is_ascii_alphabetic() || ch == '/' || ch == '%'))
                .unwrap_or(text.len() - unit_start);
            let unit = &text[unit_start..unit_start + unit_len];
            if spaces > 0 && unit_len > 0 && crate::units::unit_names().any(|u| u == unit) {
                push(
                    &mut tokens,
                    unit_start,
                    unit_start + unit_len,
                    TokenKind::Unit,
                );
                i = unit_start + unit_len;
            } else {
                i = end;
            }
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let end = text[i..]
                .find(|ch: char| !is_ident(ch))
                .map(|e| i + e)
                .unwrap_or(text.len());
            let word = &text[i..end];
            let after = text[end..].trim_start_matches([' ', '\t']);
            let kind = if KEYWORDS.contains(&word) {
                TokenKind::Keyword
            } else if DeclKind::from_keyword(word).is_some()
                && after.starts_with(|ch: char| ch.is_ascii_alphabetic() || ch == '_')
            {
                TokenKind::Kind
            } else if after.starts_with('=') && !after.starts_with("==") || after.starts_with('{') {
                TokenKind::Field
            } else {
                TokenKind::Name
            };
            push(&mut tokens, i, end, kind);
            i = end;
        } else if c == b'?' {
            push(&mut tokens, i, i + 1, TokenKind::Operator);
            i += 1;
        } else {
            i += text[i..].chars().next().map(char::len_utf8).unwrap_or(1);
        }
    }
    tokens
}

/// A quick fix: a title and the text edits of one file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fix {
    pub title: String,
    pub edits: Vec<(Span, String)>,
}

/// The quick fixes for the diagnostics that overlap `span`: their structured suggestions
/// ("did you mean" replacements, a rule's `fix { ... }`, the solver's choice), never text
/// recovered from a help.
pub fn code_actions(db: &dyn Db, file: SourceFile, span: Span) -> Vec<Fix> {
    let mut fixes: Vec<Fix> = Vec::new();
    for diag in crate::check::diagnostics(db, file) {
        let at = diag.location.span;
        if at.end < span.start || at.start > span.end {
            continue;
        }
        for suggestion in &diag.suggestions {
            if fixes.iter().any(|f| f.title == suggestion.title) {
                continue;
            }
            fixes.push(Fix {
                title: suggestion.title.clone(),
                edits: vec![(suggestion.location.span, suggestion.replacement.clone())],
            });
        }
    }
    fixes
}

/// The breakdown of one deployment as Markdown (the `explain` command lens).
pub fn explain_markdown(db: &dyn Db, file: SourceFile, deployment: &str) -> Option<String> {
    deployment_hover(db, file, deployment)
}

/// The solver's best assignments for one deployment, as text (the `solve` command lens).
pub fn solve_summary(db: &dyn Db, file: SourceFile, deployment: &str) -> Option<String> {
    let (_, result) = crate::solve::solutions(db, file, 3)
        .into_iter()
        .find(|(name, _)| name == deployment)?;
    Some(match result {
        Err(message) => message,
        Ok(solution) if solution.ranked.is_empty() => format!(
            "{deployment}: no candidate satisfies every require ({} tried)",
            solution.evaluated
        ),
        Ok(solution) => {
            let lines: Vec<String> = solution
                .ranked
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let assignment: Vec<String> = c
                        .assignment
                        .iter()
                        .map(|(k, v)| format!("{k} = {v}"))
                        .collect();
                    format!(
                        "{}. {} ({} {})",
                        i + 1,
                        assignment.join(", "),
                        solution.objective,
                        c.objective_display.as_deref().unwrap_or("?")
                    )
                })
                .collect();
            format!("{deployment}: {}", lines.join("; "))
        }
    })
}

/// The deployments of a file with the span of their names and whether they have holes.
pub fn deployments(db: &dyn Db, file: SourceFile) -> Vec<(String, Span, bool)> {
    db::parse(db, file)
        .decls
        .iter()
        .filter(|placed| placed.decl.kind == DeclKind::Deployment)
        .map(|placed| {
            let holes = placed.decl.fields().any(|f| {
                matches!(
                    f.value.kind,
                    crate::syntax::ast::ExprKind::Hole | crate::syntax::ast::ExprKind::OneOf(_)
                )
            });
            (
                placed.decl.name.name.clone(),
                placed.decl.name.span.shift(placed.offset),
                holes,
            )
        })
        .collect()
}

#[cfg(test)]
mod tests;
