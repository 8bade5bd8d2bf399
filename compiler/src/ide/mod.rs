//! The IDE-shaped API: hover, completions, definition, inlay hints and symbols as plain
//! data (byte offsets, strings). The language server only converts these to LSP types.

use std::path::PathBuf;

use crate::db::{self, Db, DeclKey, SourceFile};
use crate::eval::schema::{FieldTy, PROPERTIES, WORKLOAD, field_spec, property, schema};
use crate::eval::{Entry, Value};
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

/// The identifier around `offset` and its span.
fn word_at(text: &str, offset: usize) -> Option<(String, Span)> {
    let offset = offset.min(text.len());
    if !text.is_char_boundary(offset) {
        return None;
    }
    let start = text[..offset]
        .rfind(|c: char| !is_ident(c))
        .map(|i| i + 1)
        .unwrap_or(0);
    let end = text[offset..]
        .find(|c: char| !is_ident(c))
        .map(|i| offset + i)
        .unwrap_or(text.len());
    (start < end).then(|| (text[start..end].to_string(), Span::new(start, end)))
}

/// The field whose value the line at `offset` is: `gpu = rtx_3…` → `gpu`.
fn field_of_line(text: &str, offset: usize) -> Option<String> {
    let offset = offset.min(text.len());
    let line_start = text[..offset].rfind('\n').map(|i| i + 1).unwrap_or(0);
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
    for (index, placed) in parsed.decls.iter().enumerate() {
        let start = placed.offset as usize;
        let end = start + placed.decl.span.len();
        if (start..=end).contains(&offset) {
            let key = db::decl_keys(db, file).get(index).copied();
            return Some((placed.decl.kind, key));
        }
    }
    let text = file.text(db);
    let before = &text[..offset.min(text.len())];
    for line in before.lines().rev() {
        let trimmed = line.trim_start();
        if let Some(word) = trimmed.split_whitespace().next()
            && let Some(kind) = DeclKind::from_keyword(word)
            && trimmed
                .split_whitespace()
                .nth(1)
                .is_some_and(|n| n.chars().all(is_ident))
        {
            return Some((kind, None));
        }
        if line.starts_with('}') {
            return None;
        }
    }
    None
}

fn gib(bytes: f64) -> String {
    Quantity::bytes(bytes as i128).display()
}

/// A one-line description of a catalog entry, for completion details and hovers.
pub fn describe_entry(kind: DeclKind, entry: &Entry<'_>) -> String {
    let number = |name: &str| entry.number(name);
    match kind {
        DeclKind::Gpu => {
            let mut parts = Vec::new();
            if let Some(memory) = number("memory") {
                parts.push(gib(memory));
            }
            if let Some(bandwidth) = number("bandwidth") {
                parts.push(Quantity::real(bandwidth, Dim::BANDWIDTH).display());
            }
            if let Some(price) = crate::eval::memory::hourly_price(entry) {
                parts.push(Quantity::real(price, Dim::HOURLY).display());
            }
            parts.join(" · ")
        }
        DeclKind::Model => {
            let mut parts = Vec::new();
            if let Some(params) = number("params") {
                parts.push(format!("{:.1}B params", params / 1e9));
            }
            if let Some(Value::Symbol(attention)) = entry.fields.get("attention") {
                parts.push(attention.to_uppercase());
            }
            if let Some(window) = number("max_context") {
                parts.push(format!(
                    "{} context",
                    Quantity::real(window, Dim::TOKENS).display()
                ));
            }
            parts.join(" · ")
        }
        DeclKind::Quant => number("bpw")
            .map(|b| format!("{b} bits per weight"))
            .unwrap_or_default(),
        DeclKind::Kv => number("bytes")
            .map(|b| format!("{b} bytes per element"))
            .unwrap_or_default(),
        DeclKind::Engine => number("utilization")
            .map(|u| format!("uses {:.0} % of GPU memory", u * 100.0))
            .unwrap_or_default(),
        _ => String::new(),
    }
}

fn entry_hover(db: &dyn Db, kind: DeclKind, name: &str, key: DeclKey<'_>) -> String {
    let entry = db::entry(db, key);
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

/// What the name at `offset` refers to: its kind and declaration.
fn reference_at<'db>(
    db: &'db dyn Db,
    file: SourceFile,
    offset: usize,
) -> Option<(String, Span, DeclKind, DeclKey<'db>)> {
    let text = file.text(db);
    let (word, span) = word_at(text, offset)?;
    let scope = db::scope(db, file);
    let line_start = text[..span.start as usize]
        .rfind('\n')
        .map(|i| i + 1)
        .unwrap_or(0);
    let before = text[line_start..span.start as usize].trim_end();
    let context_kind = enclosing_kind(db, file, offset).map(|(k, _)| k);
    // `extends NAME` names an entry of the declaration's own kind.
    let kind = if before.ends_with("extends") {
        context_kind
    } else {
        field_of_line(text, span.start as usize)
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
    let offset = offset.min(text.len());
    if !text.is_char_boundary(offset) {
        return Vec::new();
    }
    let scope = db::scope(db, file);
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
            })
            .chain(std::iter::once(Completion {
                label: "import".into(),
                kind: CompletionKind::Keyword,
                detail: "import another .deploy file".into(),
            }))
            .collect();
    };
    // A unit after a number: `memory = 12 ` → GiB, GB …
    let trimmed = line.trim_end();
    let after_number = trimmed.ends_with(|c: char| c.is_ascii_digit()) && line.ends_with(' ');
    if let Some(field) = field_of_line(text, offset) {
        let spec = field_spec(kind, &field).or_else(|| WORKLOAD.iter().find(|s| s.name == field));
        match spec.map(|s| s.ty) {
            Some(FieldTy::Ref(target)) | Some(FieldTy::RefList(target)) if !after_number => {
                return scope
                    .names(target)
                    .map(|(name, key)| Completion {
                        label: name.to_string(),
                        kind: CompletionKind::Entry,
                        detail: describe_entry(target, db::entry(db, key)),
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
        || field_of_line(text, offset).is_some()
    {
        return PROPERTIES
            .iter()
            .map(|p| Completion {
                label: p.name.to_string(),
                kind: CompletionKind::Property,
                detail: p.doc.to_string(),
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
        })
        .collect();
    if kind == DeclKind::Deployment {
        for keyword in ["require", "minimize", "maximize"] {
            out.push(Completion {
                label: keyword.to_string(),
                kind: CompletionKind::Keyword,
                detail: "statement".into(),
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
            let result = db::deployment(db, *key);
            let label = match (&result.breakdown, &result.props) {
                (Some(b), Some(props)) => {
                    let mut parts = Vec::new();
                    if let (Some(usable), Some(utilization)) = (b.usable_bytes, b.utilization) {
                        parts.push(format!(
                            "{} / {}",
                            Quantity::bytes(b.per_gpu_bytes).display(),
                            Quantity::bytes(usable).display()
                        ));
                        parts.push(format!("{:.0} %", utilization * 100.0));
                    }
                    if let Some(Ok(Value::Q(decode))) = props.get("decode_tps") {
                        parts.push(format!("~{:.0} tok/s", decode.value()));
                    }
                    if let Some(Ok(Value::Q(cost))) = props.get("cost_per_hour") {
                        parts.push(cost.display());
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
