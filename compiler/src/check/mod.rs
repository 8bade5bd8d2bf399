//! The top of the pipeline: a deployment checked (fields resolved, figures estimated,
//! requires and rules checked, holes solved), and every diagnostic of a file.
//!
//! Everything below — names, evaluation, rules, the solver — knows nothing of this
//! module; the commands (`explain`, `export`, queries) and the IDE read its results.

use crate::candidate::{Mode, run};
use crate::db::{Db, DeclKey, SourceFile, decl, decl_keys, line_index, parse};
use crate::diagnostics::codes::Code;
use crate::diagnostics::{DeploymentSummary, Diag, Diagnostic, Loc, finish, resolve_loc};
use crate::eval;
use crate::eval::deployment::{Cx, Setup, resolve};
use crate::eval::entry::check_block_fields;
use crate::eval::estimate;
use crate::eval::figures::Figures;
use crate::names;
use crate::rules;
use crate::solve;
use crate::span::Span;
use crate::syntax::ast::{DeclKind, ExprKind};

#[derive(Clone, Debug, PartialEq, salsa::SalsaValue)]
pub struct DeploymentResult<'db> {
    /// The deployment's figures, when its fields resolved.
    pub figures: Option<Figures>,
    /// The memory breakdown in exact bytes, when memory could be estimated.
    pub breakdown: Option<estimate::Breakdown>,
    /// The catalog entries and numbers the figures were computed from.
    pub setup: Option<Setup>,
    /// `fleet = mixed`: the fleet the solver chose (the deployment then has no figures of
    /// its own).
    pub fleet: Option<solve::fleet::Fleet>,
    pub diags: Vec<Diag<'db>>,
}

/// A deployment: fields resolved, figures estimated, requires and rules checked.
#[salsa::tracked(returns(ref))]
pub fn deployment<'db>(db: &'db dyn Db, key: DeclKey<'db>) -> DeploymentResult<'db> {
    evaluate(db, key)
}

/// Every diagnostic of a file, in the pipeline's relative form.
#[salsa::tracked(returns(ref))]
pub fn file_diags<'db>(db: &'db dyn Db, file: SourceFile) -> Vec<Diag<'db>> {
    let mut diags = Vec::new();
    if let Some(at) = file.invalid_utf8_at(db) {
        diags.push(
            Diag::error(
                Code::SyntaxInvalidUtf8,
                "the file is not valid UTF-8",
                Loc::File(file, Span::new(at as usize, at as usize + 1)),
            )
            .label("invalid byte sequence")
            .help("save the file as UTF-8"),
        );
    }
    for error in &parse(db, file).errors {
        diags.push(
            Diag::error(
                error.code,
                error.message.clone(),
                Loc::File(file, error.span),
            )
            .label(error.label.clone())
            .help(error.help.clone()),
        );
    }
    diags.extend(names::scope_diags(db, file));
    for key in decl_keys(db, file) {
        if key.kind(db) == DeclKind::Deployment {
            diags.extend(deployment(db, *key).diags.iter().cloned());
        } else {
            diags.extend(eval::entry_of(db, *key).diags.iter().cloned());
        }
    }
    diags
}

/// The finished diagnostics of a file, sorted by position.
pub fn diagnostics(db: &dyn Db, file: SourceFile) -> Vec<Diagnostic> {
    finish(db, file_diags(db, file))
}

/// One summary per deployment of a file, in source order.
pub fn deployment_summaries(db: &dyn Db, file: SourceFile) -> Vec<DeploymentSummary> {
    decl_keys(db, file)
        .iter()
        .filter(|key| key.kind(db) == DeclKind::Deployment)
        .map(|key| {
            let parsed = decl(db, *key);
            let name_span = parsed.as_ref().map(|d| d.name.span).unwrap_or_default();
            let (_, span) = resolve_loc(db, Loc::Decl(*key, name_span));
            let whole = parsed.as_ref().map(|d| d.span).unwrap_or(name_span);
            let (_, whole) = resolve_loc(db, Loc::Decl(*key, whole));
            let evaluated = deployment(db, *key);
            let mut figures: std::collections::BTreeMap<String, String> = evaluated
                .figures
                .iter()
                .flat_map(Figures::values)
                .filter_map(|(name, value)| value.ok().map(|v| (name.to_string(), v.display())))
                .collect();
            let mut values = evaluated
                .figures
                .as_ref()
                .map(Figures::json)
                .unwrap_or_default();
            if let Some(fleet) = &evaluated.fleet {
                figures.extend(solve::fleet::summary_figures(fleet));
                values.extend(solve::fleet::summary_values(fleet));
            }
            DeploymentSummary {
                name: key.name(db).clone(),
                file: file.path(db).clone(),
                line: line_index(db, file).line_col(file.text(db), span.start).0,
                end_line: line_index(db, file).line_col(file.text(db), whole.end).0,
                doc: parsed.as_ref().and_then(|d| d.doc.clone()),
                figures,
                values,
            }
        })
        .collect()
}

fn evaluate<'db>(db: &'db dyn Db, key: DeclKey<'db>) -> DeploymentResult<'db> {
    let mut result = DeploymentResult {
        figures: None,
        breakdown: None,
        setup: None,
        fleet: None,
        diags: Vec::new(),
    };
    let Some(decl) = decl(db, key) else {
        return result;
    };
    let scope = names::scope(db, key.file(db));
    let cx = Cx {
        db,
        scope,
        key,
        decl: &decl,
    };
    let diags = &mut result.diags;
    check_block_fields(key, DeclKind::Deployment, &decl.body, diags);
    if decl.extends.is_some() {
        diags.push(
            Diag::error(
                Code::FieldType,
                "a deployment cannot `extends` another",
                Loc::Decl(key, decl.extends.as_ref().map(|e| e.span).unwrap_or_default()),
            )
            .label("not supported for deployments")
            .help("copy the fields you share, or put the shared hardware in a `gpu ... extends` entry"),
        );
    }

    let holes: Vec<_> = decl
        .fields()
        .filter(|f| matches!(f.value.kind, ExprKind::Hole | ExprKind::OneOf(_)))
        .collect();
    let Some(resolved) = resolve(cx, diags) else {
        rules::check_statically(cx, diags);
        return result;
    };
    diags.extend(solve::fleet::classes_without_fleet(cx, &resolved));
    if solve::fleet::is_mixed(&resolved) {
        // A mixed fleet is many deployments, one per GPU type: its answer is the fleet
        // (`deploy::fleet::chosen`), not one deployment's figures.
        if rules::statically_sound(cx, diags) {
            match solve::fleet::plan(cx, &resolved) {
                Ok(fleet) => {
                    diags.push(solve::fleet::chosen(cx, &fleet));
                    result.fleet = Some(fleet);
                }
                Err(diag) => diags.push(*diag),
            }
        }
        return result;
    }
    let evaluated = if holes.is_empty() {
        run(cx, resolved, Mode::Check, diags)
    } else if !rules::statically_sound(cx, diags) {
        // A require or objective with an unknown name, unit or type fails the same way
        // for every candidate: report it once, and search nothing.
        return result;
    } else {
        match solve::solve(cx, &resolved, diags) {
            Some(choice) => {
                let mut fields = resolved;
                fields.fields.extend(choice);
                run(cx, fields, Mode::Check, diags)
            }
            None => {
                rules::check_statically(cx, diags);
                return result;
            }
        }
    };
    result.figures = Some(evaluated.figures);
    result.breakdown = evaluated.breakdown;
    result.setup = evaluated.setup;
    result
}
