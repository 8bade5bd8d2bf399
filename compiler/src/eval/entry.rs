//! Catalog entries: `extends` applied, fields checked against the schema and evaluated.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::schema::{
    FieldSpec, FieldTy, Interconnect, MemoryKind, Valid, field_spec, quote_list, schema,
};
use super::views::{self, View};
use super::{Checker, EvalError, Ty, Value, eval_const};
use crate::db::{self, Db, DeclKey};
use crate::diagnostics::codes::Code;
use crate::diagnostics::{Diag, Loc, Severity};
use crate::names::{Scope, closest};
use crate::syntax::ast::{Block, Decl, DeclKind, Entry as AstEntry, Expr, ExprKind, Field};
use crate::units::Dim;

/// A catalog entry with `extends` applied.
#[derive(Clone, Debug, PartialEq, salsa::SalsaValue)]
pub struct Entry<'db> {
    pub key: DeclKey<'db>,
    pub fields: BTreeMap<String, Value>,
    /// Exact artifact sizes per quant (models' `files { }`).
    pub files: BTreeMap<String, i128>,
    /// Unevaluated fields (rules' `when`, `message`, `help`).
    pub exprs: BTreeMap<String, Expr>,
    /// The declaration that writes each field (itself or an ancestor).
    pub owners: BTreeMap<String, DeclKey<'db>>,
    /// Where each field is written, relative to its owner.
    pub spans: BTreeMap<String, crate::span::Span>,
    /// The entries this one extends, nearest first.
    pub ancestors: Vec<DeclKey<'db>>,
    /// The names of [`Entry::ancestors`], nearest first: a model's `files { }` size for a
    /// quant applies to an `extends` copy of that quant.
    pub ancestor_names: Vec<String>,
    /// Problems in this declaration's own text.
    pub diags: Vec<Diag<'db>>,
    /// The typed view of [`Entry::fields`] (`model::views`), built once here: the estimate
    /// reads fields through it, never by name.
    pub view: View,
}

impl<'db> Entry<'db> {
    /// An entry with no fields, files or ancestors of its own: `view` is all it says.
    pub fn bare(key: DeclKey<'db>, view: View) -> Self {
        Entry {
            key,
            fields: BTreeMap::new(),
            files: BTreeMap::new(),
            exprs: BTreeMap::new(),
            owners: BTreeMap::new(),
            spans: BTreeMap::new(),
            ancestors: Vec::new(),
            ancestor_names: Vec::new(),
            diags: Vec::new(),
            view,
        }
    }
}

impl Entry<'_> {
    /// The typed view of an arch entry (an empty view for another kind).
    pub fn as_arch(&self) -> &views::Arch {
        match &self.view {
            View::Arch(view) => view,
            _ => views::Arch::empty(),
        }
    }

    /// The typed view of a gpu entry (an empty view for another kind).
    pub fn as_gpu(&self) -> &views::Gpu {
        match &self.view {
            View::Gpu(view) => view,
            _ => views::Gpu::empty(),
        }
    }

    /// The typed view of a model entry (an empty view for another kind).
    pub fn as_model(&self) -> &views::Model {
        match &self.view {
            View::Model(view) => view,
            _ => views::Model::empty(),
        }
    }

    /// The typed view of a quant entry (an empty view for another kind).
    pub fn as_quant(&self) -> &views::Quant {
        match &self.view {
            View::Quant(view) => view,
            _ => views::Quant::empty(),
        }
    }

    /// The typed view of a kv entry (an empty view for another kind).
    pub fn as_kv(&self) -> &views::Kv {
        match &self.view {
            View::Kv(view) => view,
            _ => views::Kv::empty(),
        }
    }

    /// The typed view of an engine entry (an empty view for another kind).
    pub fn as_engine(&self) -> &views::Engine {
        match &self.view {
            View::Engine(view) => view,
            _ => views::Engine::empty(),
        }
    }

    /// The typed view of a host entry (an empty view for another kind).
    pub fn as_host(&self) -> &views::Host {
        match &self.view {
            View::Host(view) => view,
            _ => views::Host::empty(),
        }
    }

    /// The typed view of an offer entry (an empty view for another kind).
    pub fn as_offer(&self) -> &views::Offer {
        match &self.view {
            View::Offer(view) => view,
            _ => views::Offer::empty(),
        }
    }

    /// The figures (numbers, words) this entry or an ancestor writes whose value was
    /// rejected (out of range, wrong type or unit, overflow): an estimate must not use the
    /// entry, neither without the field nor with an ancestor's value.
    pub fn rejected_figures(&self) -> impl Iterator<Item = &str> {
        self.owners.keys().map(String::as_str).filter(|name| {
            !self.fields.contains_key(*name) && !self.exprs.contains_key(*name) && is_figure(name)
        })
    }

    /// For a weight format: whether engine entry `engine` (declared as `engine_name`) runs
    /// it: its `engines` list the entry itself or the engine's `dialect`, so an `extends`
    /// copy of an engine runs what the original runs. A format that lists none runs
    /// anywhere.
    pub fn runs_on_engine(&self, engine_name: &str, engine: &Entry<'_>) -> bool {
        let dialect = engine.as_engine().dialect.map(|s| s.name());
        self.lists_engine(|listed| listed == engine_name || Some(listed) == dialect)
    }

    /// For a weight format: whether an engine of `dialect` (or the engine entry of that
    /// name: prefer [`Entry::runs_on_engine`], which also knows `extends` copies) runs it.
    pub fn runs_on(&self, dialect: &str) -> bool {
        self.lists_engine(|listed| listed == dialect)
    }

    fn lists_engine(&self, matches: impl Fn(&str) -> bool) -> bool {
        let engines = match &self.view {
            View::Quant(quant) => quant.engines.as_deref(),
            View::Kv(kv) => kv.engines.as_deref(),
            _ => None,
        };
        engines.is_none_or(|engines| engines.iter().any(|name| matches(name)))
    }

    /// For a GPU: whether its memory is unified with the host's (`interconnect = unified` or
    /// `memory_kind = unified`): the GPU may wire only part of it (Apple).
    pub fn unified_memory(&self) -> bool {
        self.as_gpu().interconnect == Some(Interconnect::Unified)
            || self.as_gpu().memory_kind == Some(MemoryKind::Unified)
    }
}

/// Whether a catalog field feeds the estimate: a quantity, number, ratio or word.
fn is_figure(name: &str) -> bool {
    [
        DeclKind::Arch,
        DeclKind::Gpu,
        DeclKind::Model,
        DeclKind::Quant,
        DeclKind::Kv,
        DeclKind::Engine,
        DeclKind::Host,
        DeclKind::Offer,
    ]
    .into_iter()
    .filter_map(|kind| field_spec(kind, name))
    .any(|spec| {
        matches!(
            spec.ty,
            FieldTy::Q(_) | FieldTy::Number | FieldTy::Ratio | FieldTy::Symbol(_)
        )
    })
}

/// Walks the `extends` chain from `key` (nearest first), reporting unknown parents and
/// cycles on `key`'s own declaration.
fn ancestors<'db>(
    db: &'db dyn Db,
    key: DeclKey<'db>,
    scope: &Scope<'db>,
    diags: &mut Vec<Diag<'db>>,
) -> Vec<(DeclKey<'db>, Arc<Decl>)> {
    let mut chain = Vec::new();
    // A chain over the depth limit, or a cycle longer than it, is not followed (see
    // names::extends_stop); every other walk ends within the limit.
    if let Some(problem) = crate::names::extends_stop(db, key) {
        diags.extend(problem);
        return chain;
    }
    let mut seen = vec![key];
    let mut current = key;
    while let Some(decl) = db::decl(db, current)
        && chain.len() < crate::names::MAX_EXTENDS_DEPTH
    {
        let Some((parent_name, parent_span)) = crate::names::parent_ref(db, current, &decl) else {
            break;
        };
        let parent = crate::syntax::ast::Ident {
            name: parent_name,
            span: parent_span,
        };
        let kind = key.kind(db);
        match scope.lookup(kind, &parent.name) {
            None if current == key && decl.from.is_some() => {
                diags.push(from_problem(db, key, &decl, parent.span));
                break;
            }
            None => {
                if current == key {
                    let suggestion = scope.suggest(kind, &parent.name);
                    let help = match &suggestion {
                        Some(s) => format!("did you mean `{s}`?"),
                        None => format!("`extends` names another {} entry", kind.keyword()),
                    };
                    diags.push(
                        Diag::error(
                            Code::NameUnknown,
                            format!("unknown {} `{}`", kind.keyword(), parent.name),
                            Loc::Decl(key, parent.span),
                        )
                        .label(format!("not {} in scope", kind.describe()))
                        .help(help)
                        .suggest(suggestion),
                    );
                }
                break;
            }
            Some(next) => {
                if seen.contains(&next) {
                    if current == key || next == key {
                        diags.push(
                            Diag::error(
                                Code::NameExtendsCycle,
                                format!("`{}` extends itself through a cycle", key.name(db)),
                                Loc::Decl(key, parent.span),
                            )
                            .label("the chain loops back here")
                            .help("break the cycle: one entry of the chain must extend a catalog entry or nothing"),
                        );
                    }
                    break;
                }
                seen.push(next);
                if let Some(parent_decl) = db::decl(db, next) {
                    chain.push((next, parent_decl));
                }
                current = next;
            }
        }
    }
    chain
}

/// The models the catalog and the user's files declare (not the generated ones).
fn declared_models<'a, 'db: 'a>(
    db: &'db dyn Db,
    scope: &'a Scope<'db>,
) -> impl Iterator<Item = DeclKey<'db>> + 'a {
    scope
        .names(DeclKind::Model)
        .map(|(_, key)| key)
        .filter(move |key| {
            key.file(db).path(db) != std::path::Path::new(crate::db::RESOLVED_MODELS_PATH)
        })
}

/// The catalog model (not a generated one) that owns the id `text`.
pub fn curated_model<'db>(db: &'db dyn Db, scope: &Scope<'db>, text: &str) -> Option<DeclKey<'db>> {
    let spellings = spellings(text);
    declared_models(db, scope).find(|key| owns_id(db, *key, &spellings))
}

/// The catalog model a quantized re-upload by anyone converts (`unsloth/gemma-3-27b-it-GGUF`,
/// `mlx-community/Qwen3-8B-4bit`): the one whose own ids have the re-upload's unquantized
/// model name under any organisation. Re-uploaders keep the original's name and add a
/// format suffix (docs/registry.md, rule 3), so the name without the suffix is the model.
pub fn curated_reupload<'db>(
    db: &'db dyn Db,
    scope: &Scope<'db>,
    id: &str,
) -> Option<DeclKey<'db>> {
    let base = deployfit_registry::unquantized_id(id)?;
    let (_, name) = base.split_once('/')?;
    let same_name = |s: &String| {
        s.split_once('/')
            .is_some_and(|(_, n)| n.eq_ignore_ascii_case(name))
    };
    declared_models(db, scope).find(|key| {
        let model = entry_of(db, *key).as_model();
        model.hf.iter().any(same_name) || model.aliases.iter().flatten().any(same_name)
    })
}

/// The id as written and under a renamed organisation's other name (THUDM → zai-org).
fn spellings(text: &str) -> Vec<String> {
    let mut spellings = vec![text.to_string()];
    if let Some((org, name)) = text.split_once('/') {
        for (old, new, _) in deployfit_registry::ORG_RENAMES {
            if org.eq_ignore_ascii_case(old) {
                spellings.push(format!("{new}/{name}"));
            } else if org.eq_ignore_ascii_case(new) {
                spellings.push(format!("{old}/{name}"));
            }
        }
    }
    spellings
}

/// Whether a model's `hf`, `ollama` or `aliases` is one of `spellings` (any case).
fn owns_id(db: &dyn Db, key: DeclKey<'_>, spellings: &[String]) -> bool {
    let model = entry_of(db, key).as_model();
    let is = |s: &String| spellings.iter().any(|t| s.eq_ignore_ascii_case(t));
    model.hf.iter().any(is) || model.ollama.iter().any(is) || model.aliases.iter().flatten().any(is)
}

/// Why `KIND NAME from "…"` has no parent: `from` on a kind other than `model`, a file
/// that cannot be read as a model, or an id neither the registry nor the Hugging Face
/// cache knows.
fn from_problem<'db>(
    db: &'db dyn Db,
    key: DeclKey<'db>,
    decl: &Decl,
    span: crate::span::Span,
) -> Diag<'db> {
    let loc = Loc::Decl(key, span);
    let text = decl
        .from
        .as_ref()
        .and_then(|f| f.plain())
        .unwrap_or_default();
    if key.kind(db) != DeclKind::Model {
        return Diag::error(
            Code::SyntaxUnexpected,
            format!(
                "`from` reads a model; a {} cannot be read from a file",
                key.kind(db).keyword()
            ),
            loc,
        )
        .label("only for `model`")
        .help(format!(
            "write `{} {} extends OTHER {{ ... }}`",
            key.kind(db).keyword(),
            key.name(db)
        ));
    }
    let name = crate::external::decl_name(&text, key.file(db).path(db));
    if let Some(problem) = db.project().external(db).get(&name) {
        return Diag::error(
            Code::ModelUnreadable,
            format!("cannot read a model from \"{text}\": {problem}"),
            loc,
        )
        .label("not a readable model")
        .help("point `from` at a config.json, a model folder, a .safetensors or model.safetensors.index.json file, or a .gguf file");
    }
    // The catalog's own aliases, read from the declarations (not the evaluated entries:
    // an entry that is `from` something must not evaluate the others).
    let scope = crate::names::scope(db, key.file(db));
    let alias = scope.names(DeclKind::Model).find(|(name, other)| {
        *other != key
            && (name.eq_ignore_ascii_case(&text)
                || db::decl(db, *other).is_some_and(|d| {
                    ["hf", "ollama"].iter().any(|f| {
                        d.field(f).is_some_and(|field| {
                            matches!(&field.value.kind, ExprKind::Str(lit)
                                if lit.plain().is_some_and(|v| v.eq_ignore_ascii_case(&text)))
                        })
                    })
                }))
    });
    if let Some((model, _)) = alias {
        let model = model.to_string();
        return Diag::error(
            Code::NameUnknown,
            format!("\"{text}\" is the catalog model `{model}`, not a file or registry model"),
            loc,
        )
        .label("a catalog model")
        .help(format!(
            "write `model {} extends {model} {{ ... }}`",
            key.name(db)
        ));
    }
    let closest = deployfit_registry::closest(&text);
    Diag::error(
        Code::NameUnknown,
        format!("no registry model or model file is named \"{text}\""),
        loc,
    )
    .label("unknown model")
    .help(crate::external::with_hub_note(
        db,
        &text,
        key.file(db).path(db),
        match closest {
            Some(id) => format!("did you mean `\"{id}\"`?"),
            None => {
                "name a Hugging Face id, an Ollama tag, or a file (`./models/NAME/config.json`)"
                    .to_string()
            }
        },
    ))
    .suggest(closest.map(|id| format!("\"{id}\"")))
}

/// A catalog entry (gpu, model, quant, kv, engine, rule) with `extends` applied and its
/// fields evaluated.
#[salsa::tracked(returns(ref))]
pub fn entry_of<'db>(db: &'db dyn Db, key: DeclKey<'db>) -> Entry<'db> {
    let scope = crate::names::scope(db, key.file(db));
    let mut diags = Vec::new();
    let mut entry = Entry::bare(key, View::None);
    let Some(own) = db::decl(db, key) else {
        return entry;
    };
    let kind = key.kind(db);
    let chain = ancestors(db, key, scope, &mut diags);
    entry.ancestors = chain.iter().map(|(k, _)| *k).collect();
    entry.ancestor_names = chain.iter().map(|(k, _)| k.name(db).clone()).collect();
    check_block_fields(key, kind, &own.body, &mut diags);
    // Apply the farthest ancestor first, so nearer declarations override it.
    let layers = chain
        .iter()
        .rev()
        .cloned()
        .chain(std::iter::once((key, own.clone())));
    for (owner, decl) in layers {
        let is_own = owner == key;
        let mut local = Vec::new();
        for field in decl.fields() {
            let Some(spec) = field_spec(kind, &field.name.name) else {
                continue;
            };
            entry.owners.insert(field.name.name.clone(), owner);
            entry.spans.insert(field.name.name.clone(), field.span);
            match spec.ty {
                FieldTy::Predicate | FieldTy::Message => {
                    entry
                        .exprs
                        .insert(field.name.name.clone(), field.value.clone());
                }
                _ => match const_field(db, scope, owner, field, spec) {
                    Ok(value) => {
                        entry.fields.insert(field.name.name.clone(), value);
                    }
                    Err(diag) => {
                        // An invalid value hides what an ancestor wrote: the entry is
                        // not evaluated with either.
                        entry.fields.remove(&field.name.name);
                        local.push(*diag)
                    }
                },
            }
        }
        // A rule's `fix { FIELD = EXPR }`: expressions over the deployment, kept unevaluated
        // as `fix.FIELD`; a nearer declaration's block replaces the whole block.
        if kind == DeclKind::Rule
            && let Some(fix) = decl.nested("fix")
        {
            entry.exprs.retain(|name, _| !name.starts_with("fix."));
            entry.owners.insert("fix".to_string(), owner);
            for field in fix.body.entries.iter().filter_map(|e| match e {
                AstEntry::Field(f) => Some(f),
                _ => None,
            }) {
                entry
                    .exprs
                    .insert(format!("fix.{}", field.name.name), field.value.clone());
                entry
                    .owners
                    .insert(format!("fix.{}", field.name.name), owner);
            }
        }
        if let Some(files) = decl.nested("files") {
            for file_field in files.body.entries.iter().filter_map(|e| match e {
                AstEntry::Field(f) => Some(f),
                _ => None,
            }) {
                match artifact_size(db, scope, owner, file_field) {
                    Ok(bytes) => {
                        entry.files.insert(file_field.name.name.clone(), bytes);
                    }
                    Err(diag) => {
                        entry.files.remove(&file_field.name.name);
                        local.push(*diag)
                    }
                }
            }
        }
        if is_own {
            diags.extend(local);
        }
    }
    if kind == DeclKind::Rule {
        check_rule(scope, key, &own, &entry, &mut diags);
    }
    entry.diags = diags;
    entry.view = View::build(kind, &entry.fields);
    entry
}

/// Unknown, duplicated and misplaced fields of a block, against the kind's schema.
pub fn check_block_fields<'db>(
    key: DeclKey<'db>,
    kind: DeclKind,
    block: &Block,
    diags: &mut Vec<Diag<'db>>,
) {
    check_entries(key, kind.keyword(), schema(kind), block, diags);
    for entry in &block.entries {
        if let AstEntry::Nested(nested) = entry {
            match (kind, nested.name.name.as_str()) {
                (DeclKind::Deployment, "workload") => check_workload(key, &nested.body, diags),
                (DeclKind::Deployment, "owned") => {
                    check_entries(key, "owned", super::schema::OWNED, &nested.body, diags)
                }
                (DeclKind::Deployment, "speculative") => check_entries(
                    key,
                    "speculative",
                    super::schema::SPECULATIVE,
                    &nested.body,
                    diags,
                ),
                (DeclKind::Model, "files") => {}
                _ => {}
            }
        }
        if let AstEntry::Require(require) = entry
            && kind != DeclKind::Deployment
        {
            diags.push(
                Diag::error(
                    Code::FieldUnknown,
                    format!("a {} cannot have `require`", kind.keyword()),
                    Loc::Decl(key, require.span),
                )
                .label("not allowed here")
                .help("put requires in a deployment, or write a `rule` that applies to every deployment"),
            );
        }
        if let AstEntry::Objective(objective) = entry
            && kind == DeclKind::Deployment
            && block
                .entries
                .iter()
                .take_while(|e| !std::ptr::eq(*e, entry))
                .any(|e| matches!(e, AstEntry::Objective(_)))
        {
            diags.push(
                Diag::error(
                    Code::FieldDuplicate,
                    "a deployment has one objective; this second `minimize`/`maximize` would be ignored",
                    Loc::Decl(key, objective.span),
                )
                .label("second objective")
                .help("keep one objective; combine figures in one expression if you need both"),
            );
        }
        if let AstEntry::Objective(objective) = entry
            && kind != DeclKind::Deployment
        {
            diags.push(
                Diag::error(
                    Code::FieldUnknown,
                    format!("a {} cannot have `minimize`/`maximize`", kind.keyword()),
                    Loc::Decl(key, objective.span),
                )
                .label("not allowed here")
                .help("objectives belong in a deployment"),
            );
        }
    }
}

/// `workload { ... }`: its fields, and its request classes (`chat { rate prompt output
/// require ... }`, a nested block under any name that is not a workload field), each
/// checked against [`super::schema::CLASS`].
fn check_workload<'db>(key: DeclKey<'db>, body: &Block, diags: &mut Vec<Diag<'db>>) {
    let is_class = |entry: &AstEntry| {
        matches!(entry, AstEntry::Nested(nested)
            if !super::schema::WORKLOAD.iter().any(|spec| spec.name == nested.name.name))
    };
    let own = Block {
        entries: body
            .entries
            .iter()
            .filter(|entry| !is_class(entry))
            .cloned()
            .collect(),
        span: body.span,
    };
    check_entries(key, "workload", super::schema::WORKLOAD, &own, diags);
    let mut seen: BTreeMap<&str, crate::span::Span> = BTreeMap::new();
    for entry in &body.entries {
        if let AstEntry::Nested(class) = entry
            && is_class(entry)
        {
            check_entries(
                key,
                "request class",
                super::schema::CLASS,
                &class.body,
                diags,
            );
            for inner in &class.body.entries {
                if let AstEntry::Nested(nested) = inner {
                    diags.push(
                        Diag::error(
                            Code::FieldUnknown,
                            format!("a request class has no block `{}`", nested.name.name),
                            Loc::Decl(key, nested.name.span),
                        )
                        .label("not allowed here")
                        .help("a request class has the fields `rate`, `prompt`, `output` and its `require`s"),
                    );
                }
            }
            if let Some(first) = seen.get(class.name.name.as_str()) {
                diags.push(
                    Diag::error(
                        Code::FieldDuplicate,
                        format!("request class `{}` is given twice", class.name.name),
                        Loc::Decl(key, class.name.span),
                    )
                    .label("given again here")
                    .with_label(Loc::Decl(key, *first), "first given here")
                    .help("rename one of the two classes, or merge them"),
                );
            } else {
                seen.insert(&class.name.name, class.name.span);
            }
        }
    }
}

fn check_entries<'db>(
    key: DeclKey<'db>,
    what: &str,
    specs: &'static [FieldSpec],
    block: &Block,
    diags: &mut Vec<Diag<'db>>,
) {
    let mut seen: BTreeMap<&str, crate::span::Span> = BTreeMap::new();
    for entry in &block.entries {
        let (name, is_block) = match entry {
            AstEntry::Field(field) => (&field.name, false),
            AstEntry::Nested(nested) => (&nested.name, true),
            _ => continue,
        };
        match specs.iter().find(|spec| spec.name == name.name) {
            None => {
                let names: Vec<&str> = specs.iter().map(|s| s.name).collect();
                let suggestion = closest(&name.name, names.iter().copied());
                let help = match &suggestion {
                    Some(s) => format!("did you mean `{s}`?"),
                    None => format!("a {what} has the fields {}", quote_list(&names)),
                };
                diags.push(
                    Diag::error(
                        Code::FieldUnknown,
                        format!("a {what} has no field `{}`", name.name),
                        Loc::Decl(key, name.span),
                    )
                    .label("unknown field")
                    .help(help)
                    .suggest(suggestion),
                );
            }
            Some(spec) if (spec.ty == FieldTy::Block) != is_block => {
                let help = if is_block {
                    format!("write `{} = value`", spec.name)
                } else {
                    format!("write `{} {{ ... }}`", spec.name)
                };
                diags.push(
                    Diag::error(
                        Code::FieldType,
                        format!("`{}` expects {}", spec.name, spec.ty.describe()),
                        Loc::Decl(key, name.span),
                    )
                    .label("wrong form")
                    .help(help),
                );
            }
            Some(_) => {}
        }
        if let Some(first) = seen.get(name.name.as_str()) {
            diags.push(
                Diag::error(
                    Code::FieldDuplicate,
                    format!("`{}` is given twice", name.name),
                    Loc::Decl(key, name.span),
                )
                .label("given again here")
                .with_label(Loc::Decl(key, *first), "first given here")
                .help(format!("remove one of the two `{}` lines", name.name)),
            );
        } else {
            seen.insert(&name.name, name.span);
        }
    }
}

/// Evaluates a constant catalog field against its schema type.
pub fn const_field<'db>(
    db: &'db dyn Db,
    scope: &Scope<'db>,
    owner: DeclKey<'db>,
    field: &Field,
    spec: &FieldSpec,
) -> Result<Value, Box<Diag<'db>>> {
    let loc = Loc::Decl(owner, field.value.span);
    let wrong = |found: &str| wrong_type(loc, spec, found);
    if matches!(field.value.kind, ExprKind::Hole | ExprKind::OneOf(_)) {
        return Err(Box::new(
            Diag::error(
                Code::FieldType,
                "holes (`?`, `one_of`) are only allowed in deployments",
                loc,
            )
            .label("hole in a catalog entry")
            .help(format!("give `{}` a concrete value", spec.name)),
        ));
    }
    match spec.ty {
        FieldTy::Q(_) | FieldTy::Number | FieldTy::Ratio => const_quantity(owner, field, spec),
        FieldTy::Str => match &field.value.kind {
            ExprKind::Str(lit) => {
                let text = lit.plain().ok_or_else(|| wrong("an interpolated string"))?;
                if let Err(problem) = spec.valid.check_str(&text) {
                    return Err(Box::new(invalid_id(loc, spec, &text, &problem)));
                }
                Ok(Value::Str(text))
            }
            _ => Err(wrong("something that is not a string")),
        },
        FieldTy::Symbol(words) => match &field.value.kind {
            ExprKind::Name(name) if words.contains(&name.as_str()) => {
                Ok(Value::Symbol(name.clone()))
            }
            ExprKind::Name(name) => Err(Box::new(unknown_word(loc, name, words))),
            _ => Err(wrong("something else")),
        },
        FieldTy::Ref(kind) => match &field.value.kind {
            ExprKind::Name(name) => lookup(db, scope, owner, kind, name, field.value.span),
            // A quoted name: `gpu = "RTX 4090"`.
            ExprKind::Str(lit) => match lit.plain() {
                Some(text) => lookup(db, scope, owner, kind, &text, field.value.span),
                None => Err(wrong("an interpolated string")),
            },
            _ => Err(wrong("something else")),
        },
        FieldTy::RefList(kind) => match &field.value.kind {
            ExprKind::List(items) => const_ref_list(db, scope, owner, kind, items, spec),
            _ => Err(wrong("something that is not a list")),
        },
        FieldTy::StrList => match &field.value.kind {
            ExprKind::List(items) => const_str_list(owner, items, spec),
            _ => Err(wrong("something that is not a list")),
        },
        FieldTy::Predicate | FieldTy::Message | FieldTy::Block => Err(wrong("a plain value")),
    }
}

/// The most strings a string list (`aliases`) holds.
pub const MAX_STR_LIST: usize = 64;

/// A constant list of strings (`aliases = ["RTX 4090", "NVIDIA GeForce RTX 4090"]`).
fn const_str_list<'db>(
    owner: DeclKey<'db>,
    items: &[Expr],
    spec: &FieldSpec,
) -> Result<Value, Box<Diag<'db>>> {
    if items.len() > MAX_STR_LIST {
        return Err(Box::new(
            Diag::error(
                Code::FieldType,
                format!(
                    "`{}` lists {} strings; at most {MAX_STR_LIST}",
                    spec.name,
                    items.len()
                ),
                Loc::Decl(owner, items[MAX_STR_LIST].span),
            )
            .label("one too many")
            .help(format!("keep the {MAX_STR_LIST} names users write most")),
        ));
    }
    let mut values = Vec::new();
    for item in items {
        match &item.kind {
            ExprKind::Str(lit) if lit.plain().is_some() => {
                values.push(Value::Str(lit.plain().unwrap_or_default()));
            }
            _ => {
                return Err(Box::new(
                    Diag::error(
                        Code::FieldType,
                        format!("`{}` lists strings", spec.name),
                        Loc::Decl(owner, item.span),
                    )
                    .label("not a plain string")
                    .help(format!(
                        "write quoted names: `{} = [\"RTX 4090\"]`",
                        spec.name
                    )),
                ));
            }
        }
    }
    Ok(Value::List(values))
}

/// The error for a field whose value is not of its schema type: `found` instead.
fn wrong_type<'db>(loc: Loc<'db>, spec: &FieldSpec, found: &str) -> Box<Diag<'db>> {
    Box::new(
        Diag::error(
            Code::FieldType,
            format!(
                "`{}` expects {}, found {found}",
                spec.name,
                spec.ty.describe()
            ),
            loc,
        )
        .label(format!("expected {}", spec.ty.describe()))
        .help(format!(
            "write `{} = ...` with {}",
            spec.name,
            spec.ty.describe()
        )),
    )
}

/// A constant quantity field (`Q`, `Number` or `Ratio`): evaluated, its unit checked
/// against the schema's and its range against the field's.
fn const_quantity<'db>(
    owner: DeclKey<'db>,
    field: &Field,
    spec: &FieldSpec,
) -> Result<Value, Box<Diag<'db>>> {
    let loc = Loc::Decl(owner, field.value.span);
    let wrong = |found: &str| wrong_type(loc, spec, found);
    let expected = match spec.ty {
        FieldTy::Q(dim) => dim,
        _ => Dim::NONE,
    };
    let value = match eval_const(&field.value) {
        Ok(value) => value,
        Err(EvalError::DivisionByZero(span)) => {
            return Err(Box::new(
                Diag::error(
                    Code::EvalDivisionByZero,
                    "division by zero",
                    Loc::Decl(owner, span),
                )
                .label("this is zero")
                .help("divide by a non-zero value"),
            ));
        }
        Err(EvalError::NotFinite { span, nan, .. }) => {
            let span = span.unwrap_or(field.value.span);
            let inner = find_expr(&field.value, span).unwrap_or(&field.value);
            return Err(Box::new(not_finite(
                Loc::Decl(owner, span),
                nan,
                &crate::fmt::expression(inner),
                &format!("`{}`", spec.name),
            )));
        }
        Err(_) => {
            return Err(wrong(
                "an expression with names (catalog figures are constants)",
            ));
        }
    };
    let Some(q) = value.quantity() else {
        return Err(wrong("something else"));
    };
    if !q.dim.compatible(expected) {
        return Err(Box::new(unit_mismatch(loc, field, spec, q, expected)));
    }
    // A bare count where tokens are expected is a token count.
    let dim = if q.dim.is_none() { expected } else { q.dim };
    let q = crate::units::Quantity { dim, ..q };
    check_range(owner, field, spec, q)?;
    Ok(Value::Q(q))
}

/// `deploy::unit::expected` on a constant `q` whose unit is not the field's `expected`
/// one, with the literal rewritten in that unit where it is a bare number.
fn unit_mismatch<'db>(
    loc: Loc<'db>,
    field: &Field,
    spec: &FieldSpec,
    q: crate::units::Quantity,
    expected: Dim,
) -> Diag<'db> {
    let literal = match &field.value.kind {
        ExprKind::Literal { text, .. } if q.dim.is_none() => Some(text.clone()),
        _ => None,
    };
    let found = if q.dim.is_none() {
        "a number".to_string()
    } else {
        q.dim.describe()
    };
    let help = literal
        .and_then(|text| expected.suggest(&text))
        .map(|s| format!("write {s}"))
        .unwrap_or_else(|| format!("give `{}` a value in {}", spec.name, expected.describe()));
    Diag::error(
        Code::UnitExpected,
        format!("expected {}, found {found}", expected.describe()),
        loc,
    )
    .label(format!("`{}` is {}", spec.name, expected.describe()))
    .help(help)
}

/// The error for a word that is not one of a symbol field's `words`, with the closest.
fn unknown_word<'db>(loc: Loc<'db>, name: &str, words: &[&str]) -> Diag<'db> {
    let suggestion = closest(name, words.iter().copied());
    let help = match &suggestion {
        Some(s) => format!("did you mean `{s}`?"),
        None => format!("write one of {}", quote_list(words)),
    };
    Diag::error(
        Code::NameUnknown,
        format!("`{name}` is not one of {}", quote_list(words)),
        loc,
    )
    .label("unknown word")
    .help(help)
    .suggest(suggestion)
}

/// A constant list of `kind` entries: each item must name one.
fn const_ref_list<'db>(
    db: &'db dyn Db,
    scope: &Scope<'db>,
    owner: DeclKey<'db>,
    kind: DeclKind,
    items: &[Expr],
    spec: &FieldSpec,
) -> Result<Value, Box<Diag<'db>>> {
    let mut values = Vec::new();
    for item in items {
        match &item.kind {
            ExprKind::Name(name) => values.push(lookup(db, scope, owner, kind, name, item.span)?),
            ExprKind::Str(lit) if lit.plain().is_some() => {
                let text = lit.plain().unwrap_or_default();
                values.push(lookup(db, scope, owner, kind, &text, item.span)?)
            }
            _ => {
                return Err(Box::new(
                    Diag::error(
                        Code::FieldType,
                        format!("`{}` lists {} names", spec.name, kind.keyword()),
                        Loc::Decl(owner, item.span),
                    )
                    .label("not a name")
                    .help(format!("write {} names: `[a, b]`", kind.keyword())),
                ));
            }
        }
    }
    Ok(Value::List(values))
}

/// `deploy::eval::overflow` on an expression whose value is not a finite number: too
/// large, infinite, or (defensively: every infinite intermediate and every 0/0 is
/// reported before one can arise) undefined.
pub fn not_finite<'db>(loc: Loc<'db>, nan: bool, text: &str, context: &str) -> Diag<'db> {
    let shown = shorten(text);
    if nan {
        Diag::error(
            Code::EvalOverflow,
            format!("{shown} is not a number (undefined, like 0/0 or ∞ − ∞) in {context}"),
            loc,
        )
        .label("undefined")
        .help("rewrite the expression so that it has a value: no 0/0, no infinite figures")
    } else {
        Diag::error(
            Code::EvalOverflow,
            format!(
                "{shown} overflows in {context}: its size is beyond {:e}",
                crate::units::MAX_MAGNITUDE
            ),
            loc,
        )
        .label("too large to compute with")
        .help("use a realistic value: every number and result must stay within ±1e300")
    }
}

/// The sub-expression of `root` at `span`.
pub fn find_expr(root: &Expr, span: crate::span::Span) -> Option<&Expr> {
    let mut stack = vec![root];
    while let Some(expr) = stack.pop() {
        if expr.span == span {
            return Some(expr);
        }
        use crate::syntax::ast::{ExprKind, StrPart};
        match &expr.kind {
            ExprKind::List(items) | ExprKind::OneOf(items) | ExprKind::Call(_, items) => {
                stack.extend(items)
            }
            ExprKind::Paren(inner) | ExprKind::Unary(_, inner) | ExprKind::Access(inner, _) => {
                stack.push(inner)
            }
            ExprKind::Binary(_, lhs, rhs) => {
                stack.push(lhs);
                stack.push(rhs);
            }
            ExprKind::Str(lit) => stack.extend(lit.parts.iter().filter_map(|p| match p {
                StrPart::Interp(e) => Some(e),
                _ => None,
            })),
            ExprKind::Literal { .. } | ExprKind::Name(_) | ExprKind::Hole => {}
        }
    }
    None
}

/// An expression's text for a message, cut to a readable length (on a char boundary).
fn shorten(text: &str) -> String {
    const MAX: usize = 60;
    match text.char_indices().nth(MAX) {
        Some((end, _)) => format!("`{}…`", &text[..end]),
        None => format!("`{text}`"),
    }
}

/// `deploy::field::out_of_range` (or `deploy::field::type` for a fractional count) when
/// a numeric field's value is outside the range its schema allows.
fn check_range<'db>(
    owner: DeclKey<'db>,
    field: &Field,
    spec: &FieldSpec,
    q: crate::units::Quantity,
) -> Result<(), Box<Diag<'db>>> {
    let loc = Loc::Decl(owner, field.value.span);
    let value = q.value();
    let shown = || Value::Q(q).display();
    if let Valid::Whole { min, .. } = spec.valid {
        let whole = match q.num {
            crate::units::Num::Int(_) => true,
            crate::units::Num::Real(v) => v.fract() == 0.0,
        };
        if !whole {
            let what = if min >= 1 {
                "a positive whole number"
            } else {
                "a whole number"
            };
            return Err(Box::new(
                Diag::error(
                    Code::FieldType,
                    format!("`{}` must be {what}", spec.name),
                    loc,
                )
                .label(format!("`{}` is {}", spec.name, shown()))
                .help(format!("write `{} = {min}` or more", spec.name)),
            ));
        }
    }
    spec.valid.check_number(value).map_err(|range| {
        Box::new(
            Diag::error(
                Code::FieldOutOfRange,
                format!("`{}` must be {range}, but is {}", spec.name, shown()),
                loc,
            )
            .label("out of range")
            .help(format!(
                "give `{}` a value {}{range} ({})",
                spec.name,
                if matches!(spec.valid, Valid::Whole { .. }) {
                    "that is "
                } else {
                    ""
                },
                spec.doc
            )),
        )
    })
}

/// `deploy::field::invalid_id`: an `hf` or `ollama` string that is not a valid id (it
/// would reach the shell commands `export` writes).
fn invalid_id<'db>(loc: Loc<'db>, spec: &FieldSpec, text: &str, problem: &str) -> Diag<'db> {
    let example = match spec.valid {
        Valid::OllamaTag => "`ollama = \"glm4:9b\"` (`[host/][namespace/]name[:tag]`)",
        Valid::DiagCode => "`code = \"acme::slow_decode\"` (`area::name`)",
        Valid::Flag => "`vllm_name = \"fp8\"` (lowercase letters, digits, `_`, `-`)",
        Valid::Release => "`version = \"0.6.3\"` (numbers separated by `.`)",
        _ => "`hf = \"THUDM/GLM-4-9B-0414\"` (`org/name`)",
    };
    Diag::error(
        Code::FieldInvalidId,
        format!(
            "`{}` is not {}: {problem}",
            spec.name,
            spec.valid.describe()
        ),
        loc,
    )
    .label(match spec.valid {
        Valid::Release => "not a release number".to_string(),
        _ => format!("{} characters, not a valid id", text.chars().count()),
    })
    .help(match spec.valid {
        Valid::DiagCode => format!("write `_`-separated words between `::`, e.g. {example}"),
        Valid::Release => {
            format!("write the release as the engine's `--version` prints it, e.g. {example}")
        }
        _ => format!("write the id exactly as the hub shows it, e.g. {example}"),
    })
}

/// A catalog reference by name, with a suggestion of the same kind when unknown.
pub fn lookup<'db>(
    db: &'db dyn Db,
    scope: &Scope<'db>,
    owner: DeclKey<'db>,
    kind: DeclKind,
    name: &str,
    span: crate::span::Span,
) -> Result<Value, Box<Diag<'db>>> {
    use crate::names::resolve::{self, Resolution};
    match resolve::resolve(db, scope, kind, name) {
        Resolution::Found(found) => Ok(Value::Ref(kind, found)),
        Resolution::Ambiguous(choices) => Err(Box::new(ambiguous(
            Loc::Decl(owner, span),
            kind,
            name,
            &choices,
        ))),
        Resolution::Unknown(choices) => Err(Box::new(unknown_name(
            Loc::Decl(owner, span),
            kind,
            name,
            &choices,
        ))),
    }
}

/// `deploy::name::ambiguous`: `name` fits several entries of `kind`; a fix for each.
pub fn ambiguous<'db>(
    loc: Loc<'db>,
    kind: DeclKind,
    name: &str,
    choices: &[crate::names::resolve::Choice],
) -> Diag<'db> {
    use crate::names::resolve::MAX_CHOICES;
    let shown: Vec<String> = choices
        .iter()
        .take(MAX_CHOICES)
        .map(|c| c.describe())
        .collect();
    let more = match choices.len().saturating_sub(MAX_CHOICES) {
        0 => String::new(),
        n => format!(" and {n} more (`deployfit gpus`, `deployfit models` list them)"),
    };
    let mut diag = Diag::error(
        Code::NameAmbiguous,
        format!(
            "`{}` could be any of {} {}s",
            crate::names::resolve::shown(name),
            choices.len(),
            kind.keyword()
        ),
        loc,
    )
    .label(format!("which {}?", kind.keyword()))
    .help(format!(
        "write one of them by name: {}{more}",
        shown.join(", ")
    ));
    for choice in choices.iter().take(MAX_CHOICES) {
        diag.suggestions.push((
            format!("use {}", choice.describe()),
            loc,
            choice.name.clone(),
        ));
    }
    diag
}

/// `deploy::name::unknown` for a name of `kind`, with the closest names.
/// `did you mean `rtx_3090`? (or `rtx_3090_ti`)`: the closest name first, then the
/// others nearly as close.
pub(crate) fn did_you_mean(choices: &[crate::names::resolve::Choice]) -> String {
    match choices {
        [] => String::new(),
        [first] => format!("did you mean `{}`?", first.name),
        [first, rest @ ..] => format!(
            "did you mean `{}`? (or {})",
            first.name,
            rest.iter()
                .map(|c| format!("`{}`", c.name))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn unknown_name<'db>(
    loc: Loc<'db>,
    kind: DeclKind,
    name: &str,
    choices: &[crate::names::resolve::Choice],
) -> Diag<'db> {
    let help = match choices {
        [] => format!(
            "no {} is called `{}`; the catalog's are in stdlib/{}.deploy",
            kind.keyword(),
            crate::names::resolve::shown(name),
            match kind {
                DeclKind::Arch => "archs",
                DeclKind::Gpu => "gpus",
                DeclKind::Model => "models",
                DeclKind::Quant => "quants",
                DeclKind::Kv => "kv",
                DeclKind::Engine => "engines",
                DeclKind::Host => "hosts",
                DeclKind::Offer => "offers",
                DeclKind::Rule => "rules",
                DeclKind::Deployment => "deployments",
            }
        ),
        choices => did_you_mean(choices),
    };
    Diag::error(
        Code::NameUnknown,
        format!(
            "unknown {} `{}`",
            kind.keyword(),
            crate::names::resolve::shown(name)
        ),
        loc,
    )
    .label(format!("not {} in scope", kind.describe()))
    .help(help)
    .suggest(choices.first().map(|c| c.name.clone()))
}

/// `files { Q4_K_M = 6_166_574_944 B }`: a quant name and an exact byte count.
fn artifact_size<'db>(
    db: &'db dyn Db,
    scope: &Scope<'db>,
    owner: DeclKey<'db>,
    field: &Field,
) -> Result<i128, Box<Diag<'db>>> {
    lookup(
        db,
        scope,
        owner,
        DeclKind::Quant,
        &field.name.name,
        field.name.span,
    )?;
    let spec = FieldSpec {
        name: "files",
        ty: FieldTy::Q(Dim::BYTES),
        doc: "exact artifact size",
        valid: Valid::Positive,
        default: None,
    };
    let value = const_field(db, scope, owner, field, &spec)?;
    value
        .quantity()
        .and_then(|q| q.num.round_to_int())
        .ok_or_else(|| {
            Box::new(
                Diag::error(
                    Code::UnitExpected,
                    "expected a byte count",
                    Loc::Decl(owner, field.value.span),
                )
                .label("not a size")
                .help("write the exact size: `Q4_K_M = 6_166_574_944 B`"),
            )
        })
}

/// A rule's own checks: it has a level, a condition and a message, and they make sense
/// for every deployment.
fn check_rule<'db>(
    scope: &Scope<'db>,
    key: DeclKey<'db>,
    decl: &Decl,
    entry: &Entry<'db>,
    diags: &mut Vec<Diag<'db>>,
) {
    for required in ["level", "when", "message"] {
        if !entry.owners.contains_key(required) {
            diags.push(
                Diag::error(
                    Code::FieldMissing,
                    format!("rule `{}` has no `{required}`", decl.name.name),
                    Loc::Decl(key, decl.name.span),
                )
                .label("incomplete rule")
                .help(match required {
                    "level" => "add `level = warn` (or `error`, `info`)",
                    "when" => "add `when = <condition over the deployment>`",
                    _ => "add `message = \"what is wrong, with {figures}\"`",
                }),
            );
        }
    }
    for (name, expr) in &entry.exprs {
        if entry.owners.get(name) != Some(&key) {
            continue;
        }
        let mut checker = Checker {
            scope,
            anchor: key,
            diags: Vec::new(),
        };
        if name == "when" {
            checker.condition(expr);
        } else if let Some(field) = name.strip_prefix("fix.") {
            // A fix sets a deployment field to a value of the field's type.
            match field_spec(DeclKind::Deployment, field) {
                Some(spec) if spec.ty != FieldTy::Block => {
                    let want = Ty::of_field(spec.ty);
                    // A bare count is accepted where tokens are expected (`8k`).
                    let fits_field = |ty: Ty| {
                        ty == want || (want == Ty::Q(Dim::TOKENS) && ty == Ty::Q(Dim::NONE))
                    };
                    if let Some(ty) = checker.expr(expr)
                        && !fits_field(ty)
                    {
                        checker.diags.push(
                            Diag::error(
                                Code::TypeMismatch,
                                format!("`fix` sets `{field}`, but this is {}", ty.describe()),
                                Loc::Decl(key, expr.span),
                            )
                            .label(format!("not a value for `{field}`"))
                            .help(format!("write `{field} = ` a value of the field's type (docs/language.md, `deployment`)")),
                        );
                    }
                }
                _ => checker.diags.push(
                    Diag::error(
                        Code::FieldUnknown,
                        format!("`fix` sets `{field}`, which is not a deployment field"),
                        Loc::Decl(key, expr.span),
                    )
                    .label("not a deployment field")
                    .help("a fix sets deployment fields: `context`, `quant`, `gpu`, `count`, `seqs`, …"),
                ),
            }
        } else {
            match &expr.kind {
                ExprKind::Str(lit) => {
                    checker.string(lit);
                }
                _ => checker.diags.push(
                    Diag::new(
                        Code::FieldType,
                        Severity::Error,
                        format!("`{name}` expects a message string"),
                        Loc::Decl(key, expr.span),
                    )
                    .label("not a string")
                    .help(format!(
                        "write `{name} = \"...\"`; figures go in `{{braces}}`"
                    )),
                ),
            }
        }
        diags.extend(checker.diags);
    }
}

/// A catalog entry by name for the commands that take names on the command line, or a
/// sentence with the closest name of the kind.
pub fn catalog_entry<'db>(
    db: &'db dyn Db,
    scope: &Scope<'db>,
    kind: DeclKind,
    name: &str,
) -> Result<&'db Entry<'db>, String> {
    let name = resolve_name(db, scope, kind, name)?;
    scope
        .lookup(kind, &name)
        .map(|k| super::entry_of(db, k))
        .ok_or_else(|| format!("unknown {} `{name}`", kind.keyword()))
}

/// The entry name a command-line argument (`--gpu "RTX 4090"`) means, through the name
/// resolver ([`crate::names::resolve`]), or the sentence that says why none: the choices
/// of an ambiguous name, the closest names of an unknown one.
pub fn resolve_name(
    db: &dyn Db,
    scope: &Scope<'_>,
    kind: DeclKind,
    text: &str,
) -> Result<String, String> {
    use crate::names::resolve::{self, MAX_CHOICES, Resolution, shown};
    let list = |choices: &[resolve::Choice]| {
        choices
            .iter()
            .take(MAX_CHOICES)
            .map(|c| c.describe())
            .collect::<Vec<_>>()
            .join(", ")
    };
    match resolve::resolve(db, scope, kind, text) {
        Resolution::Found(name) => Ok(name),
        Resolution::Ambiguous(choices) => Err(format!(
            "`{}` could be any of {} {}s: {}{}; write one of them by name",
            shown(text),
            choices.len(),
            kind.keyword(),
            list(&choices),
            match choices.len().saturating_sub(MAX_CHOICES) {
                0 => String::new(),
                n => format!(" and {n} more"),
            }
        )),
        Resolution::Unknown(choices) if choices.is_empty() => {
            Err(format!("unknown {} `{}`", kind.keyword(), shown(text)))
        }
        Resolution::Unknown(choices) => Err(format!(
            "unknown {} `{}`; {}",
            kind.keyword(),
            shown(text),
            did_you_mean(&choices)
        )),
    }
}
