//! CSV parsing and row validation for data/hf_models.csv, shared by build.rs (which
//! includes this file with `#[path]`) and the crate's unit tests. No panics: a malformed row is
//! reported, a malformed file is an `Err` with a message.
#![allow(dead_code)] // each includer uses a different part

use std::collections::HashSet;

/// Upper bound on the CSV size (the shipped file is about 1.4 MB).
pub const MAX_CSV_BYTES: u64 = 64 * 1024 * 1024;
/// Upper bound on the number of rows (indices are u32; the shipped file has 9,441).
pub const MAX_ROWS: usize = 1_000_000;
/// Longest accepted field (longest shipped id is 111 bytes, longest licence 65).
pub const MAX_FIELD: usize = 256;
/// More skipped rows than this fails the build: the file is then considered malformed.
pub const MAX_SKIPPED: usize = 16;

/// The header of `data/hf_models.csv` (see ../shared/catalog/README.md).
pub const HEADER: [&str; 19] = [
    "hf_id",
    "architecture",
    "parameters_raw",
    "num_hidden_layers",
    "hidden_size",
    "num_attention_heads",
    "num_key_value_heads",
    "head_dim",
    "vocab_size",
    "context_length",
    "moe_intermediate_size",
    "shared_expert_intermediate_size",
    "format",
    "quantization",
    "pipeline_tag",
    "hf_downloads",
    "hf_likes",
    "release_date",
    "license",
];

/// `model_type` values of mixture-of-experts architectures that do not contain "moe" in their
/// name. Source: the `model_type` of each family's config.json in Hugging Face transformers
/// (`models/<type>/configuration_<type>.py` declares `num_local_experts` / `n_routed_experts`).
pub const MOE_ARCHITECTURES: &[&str] = &[
    "mixtral",
    "deepseek_v2",
    "deepseek_v3",
    "deepseek_v32",
    "deepseek_v4",
    "deepseek_v41",
    "kimi_k2",
    "kimi_k25",
    "gpt_oss",
    "llama4",
    "dbrx",
    "jamba",
    "arctic",
    "qwen3_next",
    "minimax",
    "minimax_m1",
    "minimax_m2",
    "minimax_text_01",
    // StepFun Step-3.7-Flash: 288 routed experts (ai-dynamo/aiconfigurator
    // aic-core/src/aiconfigurator_core/model_configs/stepfun-ai--Step-3.7-Flash_config.json@095f58a5)
    "step3p7",
];

/// Splits one CSV line into fields (RFC 4180 quoting within one line: `"a,b"`, `""` escapes).
/// Returns None when the quoting is malformed.
pub fn split_csv_line(line: &str) -> Option<Vec<String>> {
    let mut fields = Vec::with_capacity(HEADER.len());
    let mut cur = String::new();
    let mut chars = line.chars().peekable();
    let mut in_quotes = false;
    let mut at_field_start = true;
    while let Some(c) = chars.next() {
        if in_quotes {
            if c == '"' {
                if chars.peek() == Some(&'"') {
                    chars.next();
                    cur.push('"');
                } else {
                    in_quotes = false;
                    // After a closing quote only a separator or the end may follow.
                    match chars.peek() {
                        None | Some(',') => {}
                        Some(_) => return None,
                    }
                }
            } else {
                cur.push(c);
            }
        } else if c == ',' {
            fields.push(std::mem::take(&mut cur));
            at_field_start = true;
            if fields.len() > HEADER.len() {
                return None;
            }
            continue;
        } else if c == '"' {
            if !at_field_start {
                return None;
            }
            in_quotes = true;
        } else {
            cur.push(c);
        }
        if cur.len() > MAX_FIELD {
            return None;
        }
        at_field_start = false;
    }
    if in_quotes {
        return None;
    }
    fields.push(cur);
    Some(fields)
}

pub struct Row {
    pub id: String,
    pub architecture: String,
    pub params: Option<u64>,
    pub layers: Option<u32>,
    pub hidden: Option<u32>,
    pub heads: Option<u32>,
    pub kv_heads: Option<u32>,
    pub head_dim: Option<u32>,
    pub vocab: Option<u32>,
    pub context_length: Option<u64>,
    /// `moe_intermediate_size` column as given (dense intermediate for dense rows).
    pub intermediate_col: Option<u32>,
    pub shared_expert_intermediate: Option<u32>,
    pub pipeline: String,
    pub downloads: u64,
    pub release_date: Option<String>,
    pub license: Option<String>,
}

/// Empty cell = unknown; a zero is also treated as unknown (no real model has 0 layers).
fn opt_u64(s: &str) -> Result<Option<u64>, ()> {
    if s.is_empty() {
        return Ok(None);
    }
    let v: u64 = s.parse().map_err(|_| ())?;
    Ok(if v == 0 { None } else { Some(v) })
}

fn opt_u32(s: &str) -> Result<Option<u32>, ()> {
    match opt_u64(s)? {
        None => Ok(None),
        Some(v) => u32::try_from(v).map(Some).map_err(|_| ()),
    }
}

fn valid_text(s: &str) -> bool {
    s.len() <= MAX_FIELD && s.bytes().all(|b| b.is_ascii_graphic() || b == b' ')
}

/// An HF id: `org/name`, ASCII letters, digits and `-_.`, exactly one slash.
fn valid_id(s: &str) -> bool {
    let Some((org, name)) = s.split_once('/') else {
        return false;
    };
    !org.is_empty()
        && !name.is_empty()
        && s.len() <= MAX_FIELD
        && s.bytes()
            .filter(|&b| b != b'/')
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
        && !name.contains('/')
}

fn valid_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
}

pub fn parse_row(f: &[String]) -> Result<Row, ()> {
    if f.len() != HEADER.len() {
        return Err(());
    }
    let id = f[0].clone();
    if !valid_id(&id) {
        return Err(());
    }
    let architecture = f[1].clone();
    if architecture.is_empty() || !valid_text(&architecture) {
        return Err(());
    }
    let pipeline = f[14].clone();
    if !valid_text(&pipeline) {
        return Err(());
    }
    let release_date = if f[17].is_empty() {
        None
    } else if valid_date(&f[17]) {
        Some(f[17].clone())
    } else {
        return Err(());
    };
    let license = if f[18].is_empty() {
        None
    } else if valid_text(&f[18]) {
        Some(f[18].clone())
    } else {
        return Err(());
    };
    Ok(Row {
        id,
        architecture,
        params: opt_u64(&f[2])?,
        layers: opt_u32(&f[3])?,
        hidden: opt_u32(&f[4])?,
        heads: opt_u32(&f[5])?,
        kv_heads: opt_u32(&f[6])?,
        head_dim: opt_u32(&f[7])?,
        vocab: opt_u32(&f[8])?,
        context_length: opt_u64(&f[9])?,
        intermediate_col: opt_u32(&f[10])?,
        shared_expert_intermediate: opt_u32(&f[11])?,
        pipeline,
        downloads: opt_u64(&f[15])?.unwrap_or(0),
        release_date,
        license,
    })
}

/// `-A3B`, `-A22B`, `-A3.5B` in the model name: the active-parameter marker of MoE releases
/// (e.g. Qwen/Qwen3-30B-A3B, google/gemma-4-26B-A4B-it); `8x7B`: Mixtral-style expert count.
fn name_says_moe(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    let b = lower.as_bytes();
    for i in 0..b.len() {
        // "-a<digits>[.digits]b"
        if b[i] == b'-' && b.get(i + 1) == Some(&b'a') {
            let mut j = i + 2;
            let start = j;
            while j < b.len() && (b[j].is_ascii_digit() || b[j] == b'.') {
                j += 1;
            }
            if j > start && b.get(j) == Some(&b'b') && matches!(b.get(j + 1), None | Some(b'-')) {
                return true;
            }
        }
        // "<digits>x<digits>b"
        if b[i] == b'x' && i > 0 && b[i - 1].is_ascii_digit() {
            let mut j = i + 1;
            let start = j;
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            if j > start && b.get(j) == Some(&b'b') {
                return true;
            }
        }
    }
    false
}

pub fn is_moe(row: &Row) -> bool {
    let arch = row.architecture.to_ascii_lowercase();
    let name = row.id.split_once('/').map_or("", |(_, n)| n);
    arch.contains("moe")
        || MOE_ARCHITECTURES.contains(&arch.as_str())
        || row.shared_expert_intermediate.is_some()
        || name_says_moe(name)
        || size_says_moe(row).is_some()
}

/// A row's parameter count over what its own shape holds as a dense transformer, when that
/// is more than [`MOE_SIZE_RATIO`]: its parameters sit in experts the row does not
/// describe (Step-3.5-Flash: 199 B parameters where 45 layers of hidden 4096, 64 heads and
/// an FFN of 1280 hold 7.8 B). The dense shape is `layers × (2·hidden·heads·head_dim +
/// 2·hidden·kv_heads·head_dim + 3·hidden·intermediate) + 2·vocab·hidden` (Q and O, K and
/// V, a gated MLP, untied embeddings); it needs every one of those fields.
pub fn size_says_moe(row: &Row) -> Option<f64> {
    moe_size_ratio(&DenseShape {
        params: row.params,
        layers: row.layers,
        hidden: row.hidden,
        heads: row.heads,
        kv_heads: row.kv_heads,
        head_dim: row.head_dim,
        vocab: row.vocab,
        intermediate: row.intermediate_col,
    })
}

/// The fields [`moe_size_ratio`] reads.
pub struct DenseShape {
    pub params: Option<u64>,
    pub layers: Option<u32>,
    pub hidden: Option<u32>,
    pub heads: Option<u32>,
    pub kv_heads: Option<u32>,
    pub head_dim: Option<u32>,
    pub vocab: Option<u32>,
    pub intermediate: Option<u32>,
}

/// Parameters over the dense shape's (see [`size_says_moe`]) when above [`MOE_SIZE_RATIO`].
pub fn moe_size_ratio(shape: &DenseShape) -> Option<f64> {
    let params = shape.params? as f64;
    let (layers, hidden, heads) = (
        f64::from(shape.layers?),
        f64::from(shape.hidden?),
        f64::from(shape.heads?),
    );
    let kv_heads = f64::from(shape.kv_heads.unwrap_or(shape.heads?));
    let head_dim = match shape.head_dim {
        Some(d) => f64::from(d),
        None => hidden / heads,
    };
    let (vocab, intermediate) = (f64::from(shape.vocab?), f64::from(shape.intermediate?));
    let attention = 2.0 * hidden * heads * head_dim + 2.0 * hidden * kv_heads * head_dim;
    let dense = layers * (attention + 3.0 * hidden * intermediate) + 2.0 * vocab * hidden;
    let ratio = params / dense;
    (dense > 0.0 && ratio > MOE_SIZE_RATIO).then_some(ratio)
}

/// How many times its dense shape's parameters a row must count to be read as a mixture of
/// experts. Over the 7,113 rows of data/hf_models.csv with every shape field that no other
/// sign marks as MoE, the ratio's median is 1.00 and its 90th percentile 1.18; the rows
/// above 3 (366) are MoE releases (Kimi-K3, GLM-5.3-Flash, Mistral-Large-3, Gemma 4
/// 26B-A4B, Step-3.5-Flash, Motif-3, DeepSeek-OCR's decoder, ...). The 159 between 1.5 and
/// 3 are mostly dense models whose count holds more than the text transformer: Gemma 4's
/// per-layer embeddings (E2B at 2.5), vision towers of small vision-language models
/// (PaddleOCR-VL, dots.ocr, Qwen2-VL), a 14 M-parameter Pythia (2.7); they stay dense.
pub const MOE_SIZE_RATIO: f64 = 3.0;

/// The normalized model name used for re-upload matching: the part after the org,
/// ASCII-lowercased, with a leading `meta-` removed (unsloth/Meta-Llama-3.1-8B-Instruct and
/// meta-llama/Llama-3.1-8B-Instruct name the same model). Must match `normalize_name` in lib.rs.
pub fn normalize_name(id: &str) -> String {
    let name = id
        .split_once('/')
        .map_or(id, |(_, n)| n)
        .to_ascii_lowercase();
    match name.strip_prefix("meta-") {
        Some(rest) if !rest.is_empty() => rest.to_string(),
        _ => name,
    }
}

/// The parsed file: valid rows in file order, and the skipped rows (line number, reason).
pub struct Parsed {
    pub rows: Vec<Row>,
    pub skipped: Vec<(usize, &'static str)>,
}

/// Parses the whole CSV text. Err when the header is wrong, the file is too large, or more than
/// `MAX_SKIPPED` rows are malformed (a cost linear in the input; no allocation from a count read
/// from the file).
pub fn parse_csv(text: &str) -> Result<Parsed, String> {
    if text.len() as u64 > MAX_CSV_BYTES {
        return Err(format!(
            "CSV is {} bytes, over the {MAX_CSV_BYTES}-byte limit",
            text.len()
        ));
    }
    let mut lines = text.lines();
    let header = lines.next().ok_or("empty CSV")?;
    let header_fields = split_csv_line(header.trim_end_matches('\r')).unwrap_or_default();
    if header_fields != HEADER {
        return Err(format!(
            "unexpected CSV header: {header:?}; expected {}",
            HEADER.join(",")
        ));
    }
    let mut rows: Vec<Row> = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    let mut skipped: Vec<(usize, &'static str)> = Vec::new();
    for (i, line) in lines.enumerate() {
        let line_no = i + 2;
        let line = line.trim_end_matches('\r');
        if line.is_empty() {
            continue;
        }
        if rows.len() >= MAX_ROWS {
            return Err(format!("more than {MAX_ROWS} rows"));
        }
        let parsed = split_csv_line(line).ok_or("bad quoting or over-long field");
        let row = parsed
            .and_then(|f| parse_row(&f).map_err(|()| "bad field count, id, number, date or text"));
        match row {
            Ok(row) if !seen.insert(row.id.clone()) => skipped.push((line_no, "duplicate id")),
            Ok(row) => rows.push(row),
            Err(why) => skipped.push((line_no, why)),
        }
        if skipped.len() > MAX_SKIPPED {
            let first: Vec<String> = skipped
                .iter()
                .take(5)
                .map(|(l, w)| format!("line {l}: {w}"))
                .collect();
            return Err(format!(
                "more than {MAX_SKIPPED} malformed rows; first: {}",
                first.join("; ")
            ));
        }
    }
    Ok(Parsed { rows, skipped })
}

/// `data/layouts.csv`'s header.
pub const SHAPE_HEADER: [&str; 19] = [
    "architecture",
    "layers",
    "hidden",
    "intermediate",
    "vocab",
    "experts",
    "experts_active",
    "moe_layers",
    "params",
    "active_params",
    "kv_lora_rank",
    "qk_rope_dim",
    "window",
    "local_layers",
    "linear_layers",
    "linear_state",
    "kv_heads",
    "reference",
    "source",
];

/// Most rows `data/layouts.csv` may hold (the shape index of a record is a `u16`).
pub const MAX_SHAPES: usize = 4096;

/// One row of `data/layouts.csv`: what the bulk data lacks of an architecture (the expert
/// layout of a mixture of experts, latent, sliding-window or linear attention), keyed by the
/// shape a registry row carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shape {
    pub architecture: String,
    pub layers: u32,
    pub hidden: u32,
    /// The registry row's FFN column: per expert for a MoE layout, dense otherwise.
    pub intermediate: u32,
    pub vocab: u32,
    pub experts: Option<u32>,
    pub experts_active: Option<u32>,
    pub moe_layers: Option<u32>,
    pub params: u64,
    pub active_params: u64,
    pub kv_lora_rank: Option<u32>,
    pub qk_rope_dim: Option<u32>,
    pub window: Option<u32>,
    pub local_layers: Option<u32>,
    pub linear_layers: Option<u32>,
    pub linear_state: Option<u64>,
    /// Key/value heads from the config.json, where it has them (not MLA).
    pub kv_heads: Option<u32>,
    pub reference: String,
    pub source: String,
}

/// Parses `data/layouts.csv`. Unlike the bulk table, every row is curated: any malformed
/// row, or a layout that cannot be (more active experts than experts, more sparse or local
/// layers than layers), fails the build.
pub fn parse_shapes(text: &str) -> Result<Vec<Shape>, String> {
    let mut lines = text.lines();
    let header = lines.next().ok_or("empty CSV")?;
    if split_csv_line(header.trim_end_matches('\r')).unwrap_or_default() != SHAPE_HEADER {
        return Err(format!(
            "unexpected header {header:?}; expected {}",
            SHAPE_HEADER.join(",")
        ));
    }
    let mut shapes = Vec::new();
    for (i, line) in lines.enumerate() {
        let line = line.trim_end_matches('\r');
        if line.is_empty() {
            continue;
        }
        let bad = |what: &str| format!("line {}: {what}", i + 2);
        if shapes.len() >= MAX_SHAPES {
            return Err(bad("too many rows"));
        }
        let f = split_csv_line(line).ok_or_else(|| bad("bad quoting or over-long field"))?;
        if f.len() != SHAPE_HEADER.len() {
            return Err(bad("wrong number of fields"));
        }
        let need = |k: usize| -> Result<u32, String> {
            match opt_u32(&f[k]) {
                Ok(Some(v)) => Ok(v),
                _ => Err(bad(&format!(
                    "`{}` must be a positive number",
                    SHAPE_HEADER[k]
                ))),
            }
        };
        let maybe = |k: usize| -> Result<Option<u32>, String> {
            opt_u32(&f[k]).map_err(|()| bad(&format!("`{}` is not a number", SHAPE_HEADER[k])))
        };
        let big = |k: usize| -> Result<u64, String> {
            match opt_u64(&f[k]) {
                Ok(Some(v)) => Ok(v),
                _ => Err(bad(&format!(
                    "`{}` must be a positive number",
                    SHAPE_HEADER[k]
                ))),
            }
        };
        let shape = Shape {
            architecture: f[0].clone(),
            layers: need(1)?,
            hidden: need(2)?,
            intermediate: need(3)?,
            vocab: need(4)?,
            experts: maybe(5)?,
            experts_active: maybe(6)?,
            moe_layers: maybe(7)?,
            params: big(8)?,
            active_params: big(9)?,
            kv_lora_rank: maybe(10)?,
            qk_rope_dim: maybe(11)?,
            window: maybe(12)?,
            local_layers: maybe(13)?,
            linear_layers: maybe(14)?,
            linear_state: opt_u64(&f[15]).map_err(|()| bad("`linear_state` is not a number"))?,
            kv_heads: maybe(16)?,
            reference: f[17].clone(),
            source: f[18].clone(),
        };
        let moe_consistent = match (shape.experts, shape.experts_active, shape.moe_layers) {
            (Some(e), Some(k), Some(m)) => k < e && m <= shape.layers,
            (None, None, None) => true,
            _ => false,
        };
        if !moe_consistent
            || shape.active_params > shape.params
            || shape.local_layers.is_some_and(|l| l > shape.layers)
            || shape.window.is_some() != shape.local_layers.is_some()
            || shape.kv_lora_rank.is_some() != shape.qk_rope_dim.is_some()
            || shape.linear_layers.is_some() != shape.linear_state.is_some()
            || shape.linear_layers.is_some_and(|l| l >= shape.layers)
            || shape.kv_heads == Some(0)
            || (shape.kv_heads.is_some() && shape.kv_lora_rank.is_some())
            || shape.architecture.is_empty()
            || !shape.source.starts_with("https://")
        {
            return Err(bad("inconsistent layout or missing source"));
        }
        shapes.push(shape);
    }
    Ok(shapes)
}

/// The index of the layout a row has: same architecture, layers, hidden size, FFN size and
/// vocabulary, and a MoE layout for a MoE row, a dense one for a dense row; among several,
/// the one whose parameter count is nearest the row's.
pub fn shape_of(row: &Row, moe: bool, shapes: &[Shape]) -> Option<u16> {
    let same = |s: &Shape| {
        s.experts.is_some() == moe
            && row.architecture == s.architecture
            && row.layers == Some(s.layers)
            && row.hidden == Some(s.hidden)
            && row.intermediate_col == Some(s.intermediate)
            && row.vocab == Some(s.vocab)
    };
    let distance = |s: &Shape| row.params.map_or(0, |p| p.abs_diff(s.params));
    shapes
        .iter()
        .enumerate()
        .filter(|(_, s)| same(s))
        .min_by_key(|(_, s)| distance(s))
        .and_then(|(i, _)| u16::try_from(i).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: &str = "hf_id,architecture,parameters_raw,num_hidden_layers,hidden_size,num_attention_heads,num_key_value_heads,head_dim,vocab_size,context_length,moe_intermediate_size,shared_expert_intermediate_size,format,quantization,pipeline_tag,hf_downloads,hf_likes,release_date,license";
    const GOOD: &str = "a/M-8B,llama,8030261248,32,4096,32,8,128,128256,131072,14336,,gguf,Q4_K_M,text-generation,10,1,2024-07-18,\"llama3.1,other\"";

    #[test]
    fn good_row_with_quoted_licence() {
        let p = parse_csv(&format!("{H}\n{GOOD}\n")).expect("parses");
        assert!(p.skipped.is_empty());
        let r = &p.rows[0];
        assert_eq!(r.id, "a/M-8B");
        assert_eq!(r.params, Some(8_030_261_248));
        assert_eq!(r.license.as_deref(), Some("llama3.1,other"));
        assert_eq!(r.shared_expert_intermediate, None);
        assert!(!is_moe(r));
    }

    #[test]
    fn bad_rows_are_skipped_and_counted() {
        let bad = [
            "b/x,llama,12x,1,1,1,1,1,1,1,1,,gguf,Q,text-generation,1,1,,mit", // bad number
            "c/x,llama,1,1,1,1,1,1,1,1,1,,gguf,Q,text-generation,1,1,,\"mit", // open quote
            "d/x,llama,1,1",                                                  // too few fields
            "no-slash,llama,1,1,1,1,1,1,1,1,1,,gguf,Q,text-generation,1,1,,mit",
            "e/x,llama,1,1,1,1,1,1,1,1,1,,gguf,Q,text-generation,1,1,2024-13,mit", // bad date
            "f/x,llama,1,99999999999,1,1,1,1,1,1,1,,gguf,Q,text-generation,1,1,,mit", // u32 overflow
            GOOD, // duplicate of the first row
        ];
        let text = format!("{H}\n{GOOD}\n{}\n", bad.join("\n"));
        let p = parse_csv(&text).expect("under the limit");
        assert_eq!(p.rows.len(), 1);
        let lines: Vec<usize> = p.skipped.iter().map(|(l, _)| *l).collect();
        assert_eq!(lines, vec![3, 4, 5, 6, 7, 8, 9]);
        assert_eq!(p.skipped[6].1, "duplicate id");
        assert_eq!(p.skipped[1].1, "bad quoting or over-long field");
    }

    #[test]
    fn too_many_bad_rows_or_bad_header_fail() {
        let bad = "x/y,llama,oops,1,1,1,1,1,1,1,1,,gguf,Q,text-generation,1,1,,mit\n"
            .repeat(MAX_SKIPPED + 1);
        let e = parse_csv(&format!("{H}\n{bad}")).err().expect("fails");
        assert!(e.contains("malformed rows"), "{e}");
        let e = parse_csv("id,arch\n").err().expect("fails");
        assert!(e.contains("unexpected CSV header"), "{e}");
        assert!(parse_csv("").is_err());
    }

    #[test]
    fn zero_is_unknown_and_moe_markers() {
        let row =
            "g/Q-30B-A3B,qwen3,0,48,2048,32,4,128,151936,40960,768,,gguf,Q,text-generation,1,1,,";
        let p = parse_csv(&format!("{H}\n{row}")).expect("parses");
        assert_eq!(p.rows[0].params, None);
        assert_eq!(p.rows[0].license, None);
        assert!(is_moe(&p.rows[0]));
        assert!(name_says_moe("Mixtral-8x7B-Instruct-v0.1"));
        assert!(name_says_moe("gemma-4-26B-A4B-it"));
        assert!(!name_says_moe("Qwen3-8B"));
        assert!(!name_says_moe("Llama-3.2-1B-Instruct"));
        assert!(!name_says_moe("phi-3-mini-4k-instruct"));
        assert_eq!(normalize_name("unsloth/Meta-Llama-3.1-8B"), "llama-3.1-8b");
        assert_eq!(normalize_name("x/meta-"), "meta-");
    }

    #[test]
    fn split_csv_quoting() {
        assert_eq!(
            split_csv_line("a,\"b,\"\"c\"\"\",d"),
            Some(vec!["a".into(), "b,\"c\"".into(), "d".into()])
        );
        assert_eq!(split_csv_line("a,b\"c"), None);
        assert_eq!(split_csv_line("a,\"b\"c"), None);
        assert_eq!(split_csv_line(&"x".repeat(MAX_FIELD + 1)), None);
    }
}
