//! The one way in: files in, diagnostics out. The CLI, the language server and the
//! tests all go through [`Workspace`].

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use salsa::Setter;

use crate::db::{self, Database, Db, SourceFile};
use crate::diagnostics::Diagnostic;
use crate::files::{self, ReadError};

/// A salsa database plus the bookkeeping of which paths are loaded.
#[derive(Default)]
pub struct Workspace {
    db: Database,
    models: ExternalModels,
}

/// The models that deployments name by a string outside the catalog (a Hugging Face id,
/// an Ollama tag, a file), kept in step with the files: each file's strings, and each
/// string's materialized declaration (or why there is none), computed once.
#[derive(Default)]
struct ExternalModels {
    /// Model strings each file names, with the file that names them (paths are relative
    /// to it).
    by_file: BTreeMap<PathBuf, BTreeSet<String>>,
    /// Declaration name → the declaration, or why the string could not be read; `None`
    /// when the catalog or nothing matches.
    resolved: BTreeMap<String, Option<Result<crate::external::ExternalModel, String>>>,
    /// Declaration name → why a Hugging Face id was not fetched from the Hub, and how to
    /// supply the file ([`crate::hub::Unfetched::note`]).
    hub: BTreeMap<String, String>,
}

/// Whether a text may name a model by a string: `model = "…"`, `model = one_of [...]`
/// or `model NAME from "…"` (a superset: comments and strings are not told apart).
fn may_name_model_strings(text: &str) -> bool {
    text.match_indices("model").any(|(at, _)| {
        let rest = text[at + "model".len()..].trim_start_matches([' ', '\t']);
        if let Some(value) = rest.strip_prefix('=') {
            let value = value.trim_start_matches([' ', '\t']);
            return value.starts_with('"') || value.starts_with("one_of");
        }
        // `model NAME from`
        let name_end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        name_end > 0
            && rest[name_end..]
                .trim_start_matches([' ', '\t'])
                .starts_with("from")
    })
}

/// The model strings a file names: a deployment's `model = "…"` and the strings of a
/// `model = one_of [...]`, and `model NAME from "…"`. Bounded by the file's size.
fn model_strings(db: &Database, file: SourceFile) -> BTreeSet<String> {
    use crate::syntax::ast::{DeclKind, ExprKind};
    let mut out = BTreeSet::new();
    // Most files name catalog models by their names: a scan of the text spares them a
    // parse here (a parse now, in a revision of its own, would be verified again when
    // the file is checked after more files are loaded).
    if !may_name_model_strings(file.text(db)) {
        return out;
    }
    for placed in &db::parse(db, file).decls {
        // `model NAME from "…"`.
        if placed.decl.kind == DeclKind::Model
            && let Some(text) = placed.decl.from.as_ref().and_then(|f| f.plain())
            && !text.is_empty()
        {
            out.insert(text);
        }
        if placed.decl.kind != DeclKind::Deployment {
            continue;
        }
        let Some(field) = placed.decl.field("model") else {
            continue;
        };
        let mut push = |kind: &ExprKind| {
            if let ExprKind::Str(lit) = kind
                && let Some(text) = lit.plain()
                && !text.is_empty()
            {
                out.insert(text);
            }
        };
        match &field.value.kind {
            ExprKind::OneOf(items) => items.iter().for_each(|item| push(&item.kind)),
            kind => push(kind),
        }
    }
    out
}

/// What each byte of a file that is not UTF-8 reads as: U+001A SUBSTITUTE, one byte
/// long, so that every offset in the text is the same byte offset in the file.
pub const SUBSTITUTE: char = '\u{1A}';

/// Decodes file bytes: each byte of an invalid UTF-8 sequence is replaced by
/// [`SUBSTITUTE`] (and the first offset remembered, to be reported as a diagnostic)
/// rather than refused. The text has exactly as many bytes as the file.
pub fn decode(bytes: Vec<u8>) -> (String, Option<u32>) {
    match String::from_utf8(bytes) {
        Ok(text) => (text, None),
        Err(error) => {
            let at = error.utf8_error().valid_up_to() as u32;
            let bytes = error.as_bytes();
            let mut text = String::with_capacity(bytes.len());
            for chunk in bytes.utf8_chunks() {
                text.push_str(chunk.valid());
                text.extend(std::iter::repeat_n(SUBSTITUTE, chunk.invalid().len()));
            }
            (text, Some(at))
        }
    }
}

impl Workspace {
    pub fn new() -> Workspace {
        Workspace::default()
    }

    pub fn db(&self) -> &Database {
        &self.db
    }

    pub fn db_mut(&mut self) -> &mut Database {
        &mut self.db
    }

    /// The loaded user file at `path`, if any.
    pub fn file(&self, path: &Path) -> Option<SourceFile> {
        self.db
            .project()
            .files(&self.db)
            .get(&db::normalize(path))
            .copied()
    }

    /// `check --fix` / `--diff` of a loaded file: the fixes that make it better, each
    /// proven by checking the fixed text ([`crate::fixes::apply_checked`]). The workspace
    /// is left with the file's own text.
    pub fn fix(&mut self, file: SourceFile) -> crate::fixes::Fixed {
        let path = file.path(&self.db).clone();
        let original = file.text(&self.db).clone();
        let fixed = crate::fixes::apply_checked(&path, &original, |text| {
            let file = self.set_file(&path, text.to_string());
            self.load_imports(file);
            self.check(file)
        });
        self.set_file(&path, original);
        fixed
    }

    /// The paths of every loaded user file: those given and those they import.
    pub fn user_paths(&self) -> Vec<PathBuf> {
        self.db.project().files(&self.db).keys().cloned().collect()
    }

    /// Sets the text of a user file, creating it when new. Only the changed input is
    /// invalidated; salsa re-runs what depends on it.
    pub fn set_file(&mut self, path: &Path, text: String) -> SourceFile {
        self.set_file_checked(path, text, None)
    }

    fn set_file_checked(
        &mut self,
        path: &Path,
        text: String,
        invalid_utf8_at: Option<u32>,
    ) -> SourceFile {
        let path = db::normalize(path);
        if let Some(file) = self.file(&path) {
            if file.text(&self.db) != &text {
                file.set_text(&mut self.db).to(text);
            }
            if file.invalid_utf8_at(&self.db) != invalid_utf8_at {
                file.set_invalid_utf8_at(&mut self.db).to(invalid_utf8_at);
            }
            self.sync_models(file);
            return file;
        }
        let file = SourceFile::new(&self.db, path.clone(), text, invalid_utf8_at, false);
        let project = self.db.project();
        let mut files: BTreeMap<PathBuf, SourceFile> = project.files(&self.db).clone();
        files.insert(path, file);
        project.set_files(&mut self.db).to(files);
        self.sync_models(file);
        file
    }

    /// Keeps the generated file of resolved models in step with the model strings of
    /// `file` (called after each change of a file): only that file is re-read, each new
    /// string is resolved once, and the generated text changes only when the set of
    /// models does.
    fn sync_models(&mut self, file: SourceFile) {
        let path = file.path(&self.db).clone();
        let strings = model_strings(&self.db, file);
        let unchanged = match self.models.by_file.get(&path) {
            Some(known) => *known == strings,
            None => strings.is_empty(),
        };
        if unchanged {
            return;
        }
        if strings.is_empty() {
            self.models.by_file.remove(&path);
        } else {
            self.models.by_file.insert(path, strings);
        }
        self.regenerate_models();
    }

    /// Resolves a model string for a command (`deployfit model`, `gpus`, `matrix`) as if
    /// a file named it.
    pub fn want_model(&mut self, text: &str) {
        let entry = self
            .models
            .by_file
            .entry(PathBuf::from("<commands>"))
            .or_default();
        if entry.insert(text.to_string()) {
            self.regenerate_models();
        }
    }

    fn regenerate_models(&mut self) {
        use crate::external;
        let generated = self.generated_models_file();
        let mut wanted = BTreeMap::new();
        for (importer, strings) in &self.models.by_file {
            for text in strings {
                wanted.insert(
                    external::decl_name(text, importer),
                    (importer.clone(), text.clone()),
                );
            }
        }
        for (name, (importer, text)) in &wanted {
            if self.models.resolved.contains_key(name) {
                continue;
            }
            // Not asked of the catalog here: a query now, between loads, would be
            // verified again at check time. The catalog still wins where the model is
            // looked up (`model_by_alias`); a declaration nothing uses costs nothing.
            let resolved = if external::is_path(text) {
                Some(external::from_artifact(text, importer))
            } else if let Some(model) = external::from_registry(text, importer)
                .or_else(|| external::from_hub_cache(text, importer))
            {
                Some(Ok(model))
            } else {
                self.fetch_from_hub(name, importer, text)
            };
            self.models.resolved.insert(name.clone(), resolved);
        }
        let mut text = String::new();
        let mut problems = BTreeMap::new();
        for name in wanted.keys() {
            match self.models.resolved.get(name) {
                Some(Some(Ok(model))) => {
                    text.push_str(&model.text);
                    text.push('\n');
                }
                Some(Some(Err(problem))) => {
                    problems.insert(name.clone(), problem.clone());
                }
                _ => {}
            }
        }
        if generated.text(&self.db) != &text {
            generated.set_text(&mut self.db).to(text);
        }
        let project = self.db.project();
        if project.external(&self.db) != &problems {
            project.set_external(&mut self.db).to(problems);
        }
        let notes: BTreeMap<String, String> = wanted
            .keys()
            .filter_map(|name| Some((name.clone(), self.models.hub.get(name)?.clone())))
            .collect();
        if project.hub(&self.db) != &notes {
            project.set_hub(&mut self.db).to(notes);
        }
    }

    /// A Hugging Face id that neither the registry nor the local cache knows, fetched
    /// from the Hub into the cache ([`crate::hub::fetch`]); `None`, with the reason kept
    /// for the diagnostic, when it is not fetched. Not asked for strings that are not
    /// `owner/name`, nor for ids the catalog (or the importing file) declares as a
    /// model's `hf` or `ollama`, which win anyway.
    fn fetch_from_hub(
        &mut self,
        name: &str,
        importer: &Path,
        text: &str,
    ) -> Option<Result<crate::external::ExternalModel, String>> {
        use crate::hub;
        if !text.contains('/') {
            return None;
        }
        // Offline (or not allowed) the catalog is not asked: its answer would change
        // nothing, and a query now, between loads, is verified again at check time.
        let fetched = match hub::may_fetch(text) {
            Ok(()) if self.declared_in_catalog(importer, text) => return None,
            Ok(()) => hub::fetch(text),
            Err(why) => Err(why),
        };
        match fetched {
            Ok(fetched) => {
                self.models.hub.remove(name);
                let origin = format!(
                    "fetched from the Hugging Face Hub ({}, commit {}: {}) into the Hugging Face cache",
                    fetched.endpoint,
                    fetched.commit(),
                    fetched.files.join(", ")
                );
                Some(crate::external::from_snapshot(
                    text,
                    importer,
                    &fetched.snapshot,
                    origin,
                ))
            }
            Err(why) => {
                self.models.hub.insert(name.to_string(), why.note(text));
                None
            }
        }
    }

    /// Whether a catalog model, or one the importing file declares, owns `text` (its `hf`,
    /// `ollama` or one of its `aliases`, or the id of a quantized re-upload of it).
    fn declared_in_catalog(&self, importer: &Path, text: &str) -> bool {
        let file = self
            .file(importer)
            .unwrap_or_else(|| self.generated_models_file());
        let scope = crate::names::scope(&self.db, file);
        crate::eval::entry::curated_model(&self.db, scope, text).is_some()
            || crate::eval::entry::curated_reupload(&self.db, scope, text).is_some()
    }

    /// The generated file of resolved models (last of the stdlib files).
    fn generated_models_file(&self) -> SourceFile {
        let project = self.db.project();
        *project
            .stdlib(&self.db)
            .iter()
            .find(|f| f.path(&self.db) == Path::new(db::RESOLVED_MODELS_PATH))
            .expect("Database::new creates the resolved-models file")
    }

    /// Forgets a user file (a closed editor buffer with nothing on disk): files that
    /// import it see it missing.
    pub fn remove_file(&mut self, path: &Path) {
        let path = db::normalize(path);
        let project = self.db.project();
        if project.files(&self.db).contains_key(&path) {
            let mut files = project.files(&self.db).clone();
            files.remove(&path);
            project.set_files(&mut self.db).to(files);
            if self.models.by_file.remove(&path).is_some() {
                self.regenerate_models();
            }
        }
    }

    /// Edits a stdlib file's text (tests of incrementality; a future `--stdlib` flag).
    pub fn set_stdlib_text(&mut self, name: &str, text: String) -> Option<SourceFile> {
        let file = self
            .db
            .project()
            .stdlib(&self.db)
            .iter()
            .copied()
            .find(|f| f.path(&self.db).file_name().is_some_and(|n| n == name))?;
        if file.text(&self.db) != &text {
            file.set_text(&mut self.db).to(text);
        }
        Some(file)
    }

    /// Reads a `.deploy` file from disk (and, transitively, the files it imports), with
    /// the rules of [`crate::files`]: regular files only, at most
    /// [`crate::files::MAX_FILE_BYTES`]. A file named like a stdlib file in a folder
    /// named `stdlib` replaces the embedded copy, so that checking a catalog checks it
    /// against itself (docs/cli.md, "Checking the catalog itself").
    pub fn load(&mut self, path: &Path) -> Result<SourceFile, ReadError> {
        let bytes = files::read(path)?;
        let (text, invalid) = decode(bytes);
        let in_stdlib_folder = path
            .parent()
            .and_then(Path::file_name)
            .is_some_and(|name| name == "stdlib");
        if in_stdlib_folder
            && invalid.is_none()
            && let Some(name) = path.file_name().and_then(|n| n.to_str())
            && let Some(file) = self.set_stdlib_text(name, text.clone())
        {
            return Ok(file);
        }
        let file = self.set_file_checked(path, text, invalid);
        self.load_imports(file);
        Ok(file)
    }

    /// A `.deploy` text that did not come from a file (`deployfit check -` reads standard
    /// input), under the name `path`: decoded as [`Self::load`] decodes a file (at most
    /// [`crate::files::MAX_FILE_BYTES`]), its imports read from disk.
    pub fn load_bytes(&mut self, path: &Path, bytes: Vec<u8>) -> Result<SourceFile, ReadError> {
        if bytes.len() as u64 > files::MAX_FILE_BYTES {
            return Err(ReadError::TooLarge(bytes.len() as u64));
        }
        let (text, invalid) = decode(bytes);
        let file = self.set_file_checked(path, text, invalid);
        self.load_imports(file);
        Ok(file)
    }

    /// Reads from disk every file reachable through imports that is not loaded yet;
    /// unreadable ones stay absent, with the reason kept for the import's diagnostic.
    /// Paths that are not `.deploy` files are never read.
    pub fn load_imports(&mut self, file: SourceFile) {
        let mut pending = vec![file];
        while let Some(current) = pending.pop() {
            let wanted: Vec<PathBuf> = db::imports(&self.db, current)
                .iter()
                .filter(|import| import.file.is_none())
                .map(|import| import.path.clone())
                .collect();
            for path in wanted {
                if self.file(&path).is_some() || !files::is_deploy_path(&path) {
                    continue;
                }
                match files::read(&path) {
                    Ok(bytes) => {
                        self.set_unreadable(&path, None);
                        let (text, invalid) = decode(bytes);
                        pending.push(self.set_file_checked(&path, text, invalid));
                    }
                    Err(reason) => self.set_unreadable(&path, Some(reason.to_string())),
                }
            }
        }
    }

    /// Records (or clears) why an imported path could not be read.
    fn set_unreadable(&mut self, path: &Path, reason: Option<String>) {
        let project = self.db.project();
        let current = project.unreadable(&self.db).get(path);
        if current == reason.as_ref() {
            return;
        }
        let mut map = project.unreadable(&self.db).clone();
        match reason {
            Some(reason) => map.insert(path.to_path_buf(), reason),
            None => map.remove(path),
        };
        project.set_unreadable(&mut self.db).to(map);
    }

    /// Every diagnostic of one file.
    pub fn check(&self, file: SourceFile) -> Vec<Diagnostic> {
        crate::check::diagnostics(&self.db, file)
    }

    /// The figures of every deployment of a file.
    pub fn summaries(&self, file: SourceFile) -> Vec<crate::diagnostics::DeploymentSummary> {
        crate::check::deployment_summaries(&self.db, file)
    }

    /// The memory breakdown of every deployment of a file.
    pub fn explain(
        &self,
        file: SourceFile,
    ) -> Vec<Result<crate::explain::Explanation, crate::explain::NotEvaluated>> {
        crate::explain::explain(&self.db, file)
    }

    /// The VRAM matrix of a model against the stdlib catalog (and any loaded `file`'s
    /// names, when given).
    pub fn matrix(
        &mut self,
        request: &crate::matrix::MatrixRequest,
        file: Option<SourceFile>,
    ) -> Result<crate::matrix::Matrix, crate::matrix::MatrixError> {
        if request.contexts.is_empty() {
            return Err(crate::matrix::MatrixError(
                "give at least one context".into(),
            ));
        }
        self.want_model(&request.model);
        let file = match file {
            Some(file) => file,
            None => self.set_file(Path::new("<matrix>"), String::new()),
        };
        crate::matrix::matrix(&self.db, file, request)
    }

    /// The launch command of one deployment for an engine.
    pub fn export(
        &self,
        file: SourceFile,
        deployment: &str,
        target: crate::export::Target,
    ) -> Result<String, crate::export::ExportError> {
        crate::export::export(&self.db, file, deployment, target)
    }

    /// A scratch file whose scope is the stdlib, for queries without a file.
    fn catalog_file(&mut self) -> SourceFile {
        self.set_file(Path::new("<catalog>"), String::new())
    }

    /// Which catalog GPUs run a model.
    pub fn gpus(
        &mut self,
        request: &crate::query::GpusRequest,
    ) -> Result<crate::query::GpusReport, String> {
        self.gpus_with(request, None)
    }

    /// `gpus` with the GPUs, models, quants and engines of a loaded file joining the
    /// catalog (`gpus --file`).
    pub fn gpus_with(
        &mut self,
        request: &crate::query::GpusRequest,
        file: Option<SourceFile>,
    ) -> Result<crate::query::GpusReport, String> {
        self.want_model(&request.model);
        let file = match file {
            Some(file) => file,
            None => self.catalog_file(),
        };
        crate::query::gpus(&self.db, file, request)
    }

    /// The architecture card of a model: a catalog name, a Hugging Face id or Ollama tag
    /// (catalog or registry), or a file.
    pub fn model_card(&mut self, text: &str) -> Result<crate::cards::ModelCard, String> {
        self.want_model(text);
        let file = self.catalog_file();
        crate::cards::model_card(&self.db, file, text)
    }

    /// Catalog and registry models matching a search and a family, at most `limit` (0:
    /// all).
    pub fn list_models(
        &mut self,
        search: Option<&str>,
        family: Option<&str>,
        limit: usize,
    ) -> Vec<crate::cards::ModelRow> {
        let file = self.catalog_file();
        crate::cards::list_models(&self.db, file, search, family, limit)
    }

    /// Which catalog models run on a GPU.
    pub fn models(
        &mut self,
        gpu: &str,
        context: u64,
        engine: &str,
    ) -> Result<Vec<crate::query::Fit>, String> {
        let file = self.catalog_file();
        crate::query::models(&self.db, file, gpu, context, engine)
    }

    /// The ranked solutions of the deployments with holes in a file.
    pub fn solve(
        &self,
        file: SourceFile,
        top: usize,
    ) -> Vec<(String, Result<crate::solve::Solution, String>)> {
        crate::solve::solutions(&self.db, file, top)
    }

    /// The text of a loaded file or a stdlib file, for renderers.
    pub fn source(&self, path: &Path) -> Option<Arc<str>> {
        let project = self.db.project();
        project
            .stdlib(&self.db)
            .iter()
            .chain(project.files(&self.db).values())
            .find(|f| f.path(&self.db) == path)
            .map(|f| Arc::from(f.text(&self.db).as_str()))
    }

    /// The catalog's GPUs (stdlib), with what matching a detected GPU needs.
    pub fn catalog_gpus(&mut self) -> Vec<crate::hardware::CatalogGpu> {
        let file = self.catalog_file();
        let scope = crate::names::scope(&self.db, file);
        scope
            .names(crate::syntax::ast::DeclKind::Gpu)
            .map(|(name, key)| {
                let entry = crate::eval::entry_of(&self.db, key);
                crate::hardware::CatalogGpu {
                    entry: name.to_string(),
                    name: entry.as_gpu().name.as_deref().map(str::to_string),
                    // Whole bytes: `memory = 268.6 GiB` is not a whole number of bytes.
                    memory_bytes: entry
                        .as_gpu()
                        .memory
                        .filter(|m| m.is_finite() && *m > 0.0 && *m < u64::MAX as f64)
                        .map(|m| m.round() as u64),
                    vendor: entry.as_gpu().vendor.map(|s| s.name()).map(str::to_string),
                    cores: entry
                        .as_gpu()
                        .sms
                        .filter(|n| n.is_finite() && *n >= 1.0 && *n <= u32::MAX as f64)
                        .map(|n| n.round() as u32),
                }
            })
            .collect()
    }

    /// The GPUs `probe` finds on this machine, each mapped to a catalog entry, and the
    /// host memory (`deployfit hardware`).
    pub fn hardware(
        &mut self,
        probe: &dyn crate::hardware::Probe,
    ) -> crate::hardware::HardwareReport {
        let detection = crate::hardware::detect(probe);
        let catalog = self.catalog_gpus();
        crate::hardware::report(detection, &catalog)
    }

    /// `gpus MODEL --here`: the `gpus` report restricted to the catalog entries of the
    /// GPUs `probe` finds, with the hardware report that says what was found.
    pub fn gpus_here(
        &mut self,
        request: &crate::query::GpusRequest,
        probe: &dyn crate::hardware::Probe,
    ) -> Result<(crate::query::GpusReport, crate::hardware::HardwareReport), String> {
        let hardware = self.hardware(probe);
        let here: BTreeSet<String> = hardware
            .gpus
            .iter()
            .filter_map(|gpu| gpu.catalog.clone())
            .collect();
        let mut report = self.gpus(request)?;
        report.restrict(|gpu| here.contains(gpu));
        Ok((report, hardware))
    }
}
