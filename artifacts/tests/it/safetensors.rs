//! safetensors headers, index files and folders, written here in test code.

use std::path::PathBuf;

use deployfit_artifacts::{
    Artifact, detect, from_config_json, from_safetensors_header, from_safetensors_index, read,
};

/// (name, dtype, shape, bytes per element ×8 i.e. bits)
type Spec<'a> = (&'a str, &'a str, &'a [u64], u64);

/// A safetensors file: header with contiguous offsets, then zeroed data.
fn write_safetensors(tensors: &[Spec]) -> (Vec<u8>, u64) {
    let mut entries = Vec::new();
    let mut offset = 0u64;
    for (name, dtype, shape, bits) in tensors {
        let elements: u64 = shape.iter().product();
        let bytes = elements * bits / 8;
        entries.push(format!(
            r#""{name}":{{"dtype":"{dtype}","shape":{shape:?},"data_offsets":[{offset},{}]}}"#,
            offset + bytes
        ));
        offset += bytes;
    }
    let json = format!(
        r#"{{"__metadata__":{{"format":"pt"}},{}}}"#,
        entries.join(",")
    );
    let mut out = (json.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(json.as_bytes());
    out.resize(out.len() + offset as usize, 0);
    (out, offset)
}

fn with_header(json: &str) -> Vec<u8> {
    let mut out = (json.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(json.as_bytes());
    out
}

struct TempDir(PathBuf);
impl TempDir {
    fn new(tag: &str) -> TempDir {
        let p = std::env::temp_dir().join(format!(
            "deployfit-artifacts-st-{tag}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
}
impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const SHARD_A: &[Spec] = &[
    ("model.embed_tokens.weight", "BF16", &[100, 16], 16),
    (
        "model.layers.0.self_attn.q_proj.weight",
        "BF16",
        &[16, 16],
        16,
    ),
    ("model.layers.0.input_layernorm.weight", "F32", &[16], 32),
];
const SHARD_B: &[Spec] = &[
    (
        "model.layers.1.mlp.experts.gate_up_proj_blocks",
        "U8",
        &[4, 32, 16],
        8,
    ),
    (
        "model.layers.1.mlp.experts.gate_up_proj_scales",
        "F8_E8M0",
        &[4, 32],
        8,
    ),
    ("lm_head.weight", "F16", &[100, 16], 16),
    ("model.norm.weight", "F4", &[16], 4),
];

#[test]
fn header_bytes_and_params_are_exact() {
    let (file, data) = write_safetensors(SHARD_A);
    // independently: 100*16*2 + 16*16*2 + 16*4
    assert_eq!(data, 3200 + 512 + 64);
    let a = from_safetensors_header(&file).unwrap();
    let w = a.weights.as_ref().unwrap();
    assert_eq!(w.total_bytes, 3776);
    assert_eq!(w.elements, Some(1600 + 256 + 16));
    assert_eq!(a.params, Some(1872));
    let bf16 = w.by_dtype.iter().find(|d| d.dtype == "BF16").unwrap();
    assert_eq!((bf16.bytes, bf16.elements), (3712, 1856));
    let f32_ = w.by_dtype.iter().find(|d| d.dtype == "F32").unwrap();
    assert_eq!((f32_.bytes, f32_.elements), (64, 16));
    assert_eq!(a.layers, Some(1));
    assert_eq!(a.vocab, Some(100));
    assert_eq!(a.hidden, Some(16));
    // the prefix without the data is enough
    let n = u64::from_le_bytes(file[..8].try_into().unwrap()) as usize;
    assert_eq!(from_safetensors_header(&file[..8 + n]).unwrap(), a);
}

#[test]
fn sub_byte_and_packed_dtypes() {
    let (file, data) = write_safetensors(SHARD_B);
    // 4*32*16 U8 + 4*32 E8M0 + 100*16*2 F16 + 16 F4 / 2
    assert_eq!(data, 2048 + 128 + 3200 + 8);
    let a = from_safetensors_header(&file).unwrap();
    assert_eq!(a.weights.as_ref().unwrap().total_bytes, data);
    assert!(a.notes.iter().any(|n| n.contains("packed")));
}

#[test]
fn malformed_headers_are_errors() {
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (vec![1, 2, 3], "malformed"),
        (((200u64) << 20).to_le_bytes().to_vec(), "too-large"),
        (with_header("{\"a\":")[..12].to_vec(), "malformed"),
        (with_header("[1]"), "malformed"),
        (with_header("not json"), "malformed"),
        (
            with_header(r#"{"t":{"dtype":"Q9","shape":[2],"data_offsets":[0,2]}}"#),
            "unsupported",
        ),
        (
            with_header(r#"{"t":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}"#),
            "malformed",
        ),
        (
            with_header(r#"{"t":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}}"#),
            "malformed",
        ),
        (
            with_header(
                r#"{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},
                    "b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}"#,
            ),
            "malformed",
        ),
        (
            with_header(r#"{"t":{"dtype":"F4","shape":[3],"data_offsets":[0,1]}}"#),
            "malformed",
        ),
        (
            with_header(
                r#"{"t":{"dtype":"F32","shape":[1099511627776,1099511627776],"data_offsets":[0,1]}}"#,
            ),
            "overflow",
        ),
        (
            with_header(r#"{"t":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}}"#),
            "malformed",
        ),
    ];
    for (bytes, kind) in cases {
        let e = from_safetensors_header(&bytes).expect_err(&format!("{bytes:?}"));
        assert_eq!(e.kind(), kind, "{e}");
    }
}

#[test]
fn truncated_file_is_an_error() {
    let dir = TempDir::new("trunc");
    let (file, _) = write_safetensors(SHARD_A);
    let p = dir.0.join("model.safetensors");
    std::fs::write(&p, &file[..file.len() - 10]).unwrap();
    let e = read(&p).unwrap_err();
    assert_eq!(e.kind(), "malformed");
    assert!(e.message().contains("model.safetensors"), "{e}");
    std::fs::write(&p, &file).unwrap();
    assert_eq!(read(&p).unwrap().weights.unwrap().total_bytes, 3776);
}

fn index_json(total: u64) -> String {
    let mut map = Vec::new();
    for (n, ..) in SHARD_A {
        map.push(format!(r#""{n}":"model-00001-of-00002.safetensors""#));
    }
    for (n, ..) in SHARD_B {
        map.push(format!(r#""{n}":"model-00002-of-00002.safetensors""#));
    }
    format!(
        r#"{{"metadata":{{"total_size":{total}}},"weight_map":{{{}}}}}"#,
        map.join(",")
    )
}

#[test]
fn index_with_and_without_shards() {
    let (a, da) = write_safetensors(SHARD_A);
    let (b, db) = write_safetensors(SHARD_B);
    let total = da + db;
    // shards absent: total_size with a note
    let arch = from_safetensors_index(&index_json(total), None).unwrap();
    let w = arch.weights.unwrap();
    assert_eq!(w.total_bytes, total);
    assert!(w.by_dtype.is_empty());
    assert_eq!(arch.params, None);
    assert!(arch.notes.iter().any(|n| n.contains("total_size")));

    // shards present: per-dtype figures from their headers
    let dir = TempDir::new("index");
    std::fs::write(dir.0.join("model-00001-of-00002.safetensors"), &a).unwrap();
    std::fs::write(dir.0.join("model-00002-of-00002.safetensors"), &b).unwrap();
    let p = dir.0.join("model.safetensors.index.json");
    std::fs::write(&p, index_json(total)).unwrap();
    assert_eq!(detect(&p).unwrap(), Artifact::SafetensorsIndex);
    let arch = read(&p).unwrap();
    let w = arch.weights.unwrap();
    assert_eq!(w.total_bytes, total);
    let names: Vec<&str> = w.by_dtype.iter().map(|d| d.dtype.as_str()).collect();
    assert_eq!(names, ["BF16", "F16", "F32", "F4", "F8_E8M0", "U8"]);
    assert_eq!(w.by_dtype.iter().map(|d| d.bytes).sum::<u64>(), total);
    assert_eq!(arch.params, Some(1872 + 2048 + 128 + 1600 + 16));

    // a wrong total_size is reported
    std::fs::write(&p, index_json(total + 1)).unwrap();
    let arch = read(&p).unwrap();
    assert!(
        arch.notes.iter().any(|n| n.contains("differs")),
        "{:?}",
        arch.notes
    );
}

#[test]
fn malformed_index_is_an_error() {
    for (text, kind) in [
        ("{", "malformed"),
        (r#"{"metadata":{}}"#, "malformed"),
        (r#"{"weight_map":{"a":"../x.safetensors"}}"#, "malformed"),
        (r#"{"weight_map":{"a":"/etc/passwd"}}"#, "malformed"),
        (r#"{"weight_map":{"a":3}}"#, "malformed"),
        (r#"{"weight_map":{"a":"m.safetensors"}}"#, "missing"),
    ] {
        let e = from_safetensors_index(text, None).expect_err(text);
        assert_eq!(e.kind(), kind, "{text}: {e}");
    }
}

#[test]
fn folder_combines_config_and_weights() {
    let dir = TempDir::new("folder");
    let config = r#"{"architectures":["LlamaForCausalLM"],"model_type":"llama",
      "hidden_size":16,"intermediate_size":32,"num_hidden_layers":2,"num_attention_heads":4,
      "num_key_value_heads":2,"vocab_size":100,"max_position_embeddings":4096,
      "tie_word_embeddings":false}"#;
    std::fs::write(dir.0.join("config.json"), config).unwrap();
    let (a, da) = write_safetensors(SHARD_A);
    std::fs::write(dir.0.join("model.safetensors"), &a).unwrap();
    assert_eq!(detect(&dir.0).unwrap(), Artifact::Folder);
    // the config counts 2*100*16 + 16 + 2*(3*16*16 + 3*16*32 + 2*16) = 7_888 (q, o: 16x16;
    // k+v: 16x16 together) and uses all of them per token; the file holds 1_872 elements:
    // fewer weights than one token uses, so the two do not belong together (once read as
    // "1872 total parameters, 7888 active").
    let e = read(&dir.0).unwrap_err();
    assert_eq!(e.kind(), "malformed", "{e}");
    assert!(
        e.message()
            .contains("invariant: active parameters <= total parameters"),
        "{e}"
    );
    // A smaller config (1 layer, FFN size 8, tied embeddings, vocab 10): 10*16 + 16 +
    // (768 + 3*16*8 + 32) = 1_360 parameters; the file's 1_872 elements are more (extra
    // modules): the files' figure wins, with a note.
    let small = r#"{"architectures":["LlamaForCausalLM"],"model_type":"llama",
      "hidden_size":16,"intermediate_size":8,"num_hidden_layers":1,"num_attention_heads":4,
      "num_key_value_heads":2,"vocab_size":10,"max_position_embeddings":4096,
      "tie_word_embeddings":true}"#;
    assert_eq!(from_config_json(small).unwrap().params, Some(1360));
    std::fs::write(dir.0.join("config.json"), small).unwrap();
    let arch = read(&dir.0).unwrap();
    assert_eq!(arch.model_type.as_deref(), Some("llama"));
    assert_eq!(arch.kv_heads, Some(2));
    assert_eq!(arch.max_context, Some(4096));
    assert_eq!(arch.weights.as_ref().unwrap().total_bytes, da);
    assert_eq!(arch.params, Some(1872));
    assert!(arch.active_params <= arch.params);
    assert!(
        arch.notes.iter().any(|n| n.contains("1360")),
        "{:?}",
        arch.notes
    );
    assert!(arch.source.starts_with("config.json (LlamaForCausalLM"));

    // no config: weights only, with a note
    std::fs::remove_file(dir.0.join("config.json")).unwrap();
    let arch = read(&dir.0).unwrap();
    assert_eq!(arch.heads, None);
    assert!(arch.notes.iter().any(|n| n.contains("no config.json")));

    // empty folder
    std::fs::remove_file(dir.0.join("model.safetensors")).unwrap();
    assert_eq!(read(&dir.0).unwrap_err().kind(), "missing");
}

#[test]
fn mutated_headers_never_panic() {
    let (base, _) = write_safetensors(SHARD_B);
    let mut state = 7u64;
    let mut next = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        state >> 33
    };
    // mutate the 8-byte length and the JSON header, not the data
    let header = 8 + u64::from_le_bytes(base[..8].try_into().unwrap()) as usize;
    let mut errors = 0;
    for _ in 0..3000 {
        let mut f = base.clone();
        let i = (next() as usize) % header;
        f[i] = next() as u8;
        if next().is_multiple_of(4) {
            f.truncate((next() as usize) % header);
        }
        if from_safetensors_header(&f).is_err() {
            errors += 1;
        }
    }
    assert!(
        errors > 500,
        "only {errors} of 3000 mutations were rejected"
    );
}

#[test]
fn folder_prefers_the_index_and_detects_kinds() {
    let dir = TempDir::new("folder-index");
    let (a, da) = write_safetensors(SHARD_A);
    let (b, db) = write_safetensors(SHARD_B);
    std::fs::write(dir.0.join("model-00001-of-00002.safetensors"), &a).unwrap();
    std::fs::write(dir.0.join("model-00002-of-00002.safetensors"), &b).unwrap();
    std::fs::write(
        dir.0.join("model.safetensors.index.json"),
        index_json(da + db),
    )
    .unwrap();
    // a stray extra file that the index does not name is not counted
    std::fs::write(dir.0.join("consolidated.safetensors"), &a).unwrap();
    let arch = read(&dir.0).unwrap();
    assert_eq!(arch.weights.unwrap().total_bytes, da + db);
    assert!(arch.source.contains("index"), "{}", arch.source);

    let other = dir.0.join("weights.bin");
    std::fs::write(&other, b"x").unwrap();
    assert_eq!(detect(&other).unwrap_err().kind(), "unsupported");
    let g = dir.0.join("m.GGUF");
    std::fs::write(&g, b"x").unwrap();
    assert_eq!(detect(&g).unwrap(), Artifact::Gguf);
}

#[test]
fn attention_symbols_are_the_stdlib_ones() {
    use deployfit_artifacts::Attention;
    // model/src/schema.rs ATTENTION = ["mha", "gqa", "mla", "hybrid"]
    let all = [
        Attention::Mha,
        Attention::Gqa,
        Attention::Mla,
        Attention::Hybrid,
    ];
    let symbols: Vec<&str> = all.iter().map(|a| a.symbol()).collect();
    assert_eq!(symbols, ["mha", "gqa", "mla", "hybrid"]);
}

/// A folder of packed weights (AWQ-style `I32` tensors: 8 weights per element) holds fewer
/// elements than its config's parameters: the config's count is kept, with a note, and
/// the invariant active <= total holds.
#[test]
fn packed_weights_keep_the_configs_parameter_count() {
    let dir = TempDir::new("packed");
    let config = r#"{"architectures":["LlamaForCausalLM"],"model_type":"llama",
      "hidden_size":16,"intermediate_size":32,"num_hidden_layers":2,"num_attention_heads":4,
      "num_key_value_heads":2,"vocab_size":100,"max_position_embeddings":4096,
      "tie_word_embeddings":false,"quantization_config":{"quant_method":"awq"}}"#;
    std::fs::write(dir.0.join("config.json"), config).unwrap();
    let packed: &[Spec] = &[
        ("model.embed_tokens.weight", "F16", &[100, 16], 16),
        ("model.layers.0.mlp.qweight", "I32", &[16, 4], 32),
        ("scales", "F16", &[4, 32], 16),
    ];
    let (bytes, _) = write_safetensors(packed);
    std::fs::write(dir.0.join("model.safetensors"), bytes).unwrap();
    let arch = read(&dir.0).unwrap();
    assert_eq!(arch.params, Some(7888));
    assert!(arch.active_params <= arch.params);
    assert!(
        arch.notes.iter().any(|n| n.contains("packed tensors")),
        "{:?}",
        arch.notes
    );
}
