//! GGUF headers, written here by a small writer that follows ggml/docs/gguf.md.

use deployfit_artifacts::{Attention, from_gguf, ggml_type, read};

/// Metadata values the writer knows.
enum V {
    U32(u32),
    U64(u64),
    Str(&'static str),
    F32(f32),
    StrArray(Vec<&'static str>),
    U8Array(usize),
}

struct Writer {
    out: Vec<u8>,
}

impl Writer {
    fn u32(&mut self, v: u32) {
        self.out.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.out.extend_from_slice(&v.to_le_bytes());
    }
    fn string(&mut self, s: &str) {
        self.u64(s.len() as u64);
        self.out.extend_from_slice(s.as_bytes());
    }
    fn value(&mut self, v: &V) {
        match v {
            V::U32(x) => {
                self.u32(4);
                self.u32(*x);
            }
            V::U64(x) => {
                self.u32(10);
                self.u64(*x);
            }
            V::Str(s) => {
                self.u32(8);
                self.string(s);
            }
            V::F32(f) => {
                self.u32(6);
                self.out.extend_from_slice(&f.to_le_bytes());
            }
            V::StrArray(items) => {
                self.u32(9);
                self.u32(8);
                self.u64(items.len() as u64);
                for s in items {
                    self.string(s);
                }
            }
            V::U8Array(n) => {
                self.u32(9);
                self.u32(0);
                self.u64(*n as u64);
                self.out.resize(self.out.len() + n, 7);
            }
        }
    }
}

/// (name, dims, ggml type id)
type T = (&'static str, Vec<u64>, u32);

/// Bytes of a tensor, computed here from the block tables of ggml-common.h independently of the
/// crate: F32 4 bytes/element; Q8_0 34 bytes per 32; Q4_K 144 per 256; Q6_K 210 per 256.
fn tensor_bytes(dims: &[u64], ty: u32) -> u64 {
    let n: u64 = dims.iter().product();
    match ty {
        0 => n * 4,
        8 => n / 32 * 34,
        12 => n / 256 * 144,
        14 => n / 256 * 210,
        _ => panic!("test writer: type {ty}"),
    }
}

/// A GGUF v`version` file: metadata, tensor infos with aligned offsets, zeroed data.
fn gguf(version: u32, kvs: &[(&str, V)], tensors: &[T]) -> Vec<u8> {
    let mut w = Writer { out: Vec::new() };
    w.out.extend_from_slice(b"GGUF");
    w.u32(version);
    w.u64(tensors.len() as u64);
    w.u64(kvs.len() as u64);
    for (k, v) in kvs {
        w.string(k);
        w.value(v);
    }
    let mut offset = 0u64;
    let mut total = 0u64;
    for (name, dims, ty) in tensors {
        w.string(name);
        w.u32(dims.len() as u32);
        for d in dims {
            w.u64(*d);
        }
        w.u32(*ty);
        w.u64(offset);
        let b = tensor_bytes(dims, *ty);
        total = offset + b;
        offset = (offset + b).div_ceil(32) * 32;
    }
    let start = (w.out.len() as u64).div_ceil(32) * 32;
    w.out.resize((start + total) as usize, 0);
    w.out
}

fn llama_kvs() -> Vec<(&'static str, V)> {
    vec![
        ("general.architecture", V::Str("llama")),
        ("general.name", V::Str("Tiny Llama")),
        ("general.file_type", V::U32(15)),
        ("llama.block_count", V::U32(2)),
        ("llama.context_length", V::U32(4096)),
        ("llama.embedding_length", V::U32(256)),
        ("llama.feed_forward_length", V::U32(512)),
        ("llama.attention.head_count", V::U32(8)),
        ("llama.attention.head_count_kv", V::U32(2)),
        ("llama.rope.freq_base", V::F32(10000.0)),
        ("tokenizer.ggml.model", V::Str("llama")),
        (
            "tokenizer.ggml.tokens",
            V::StrArray(vec!["<s>", "</s>", "a", "b", "c"]),
        ),
        ("tokenizer.ggml.token_type", V::U8Array(5)),
    ]
}

fn mixed_tensors() -> Vec<T> {
    vec![
        ("token_embd.weight", vec![256, 5], 14),      // Q6_K
        ("blk.0.attn_q.weight", vec![256, 256], 12),  // Q4_K
        ("blk.0.attn_norm.weight", vec![256], 0),     // F32
        ("blk.0.ffn_down.weight", vec![512, 256], 8), // Q8_0
        ("blk.1.attn_q.weight", vec![256, 256], 12),  // Q4_K
        ("output.weight", vec![256, 5], 14),          // Q6_K
    ]
}

#[test]
fn v3_mixed_types_weights_are_exact() {
    let tensors = mixed_tensors();
    let file = gguf(3, &llama_kvs(), &tensors);
    let a = from_gguf(file.as_slice()).unwrap();
    let expected: u64 = tensors.iter().map(|(_, d, t)| tensor_bytes(d, *t)).sum();
    // 2*1050 (Q6_K) + 2*36864 (Q4_K) + 1024 (F32) + 139264 (Q8_0)
    assert_eq!(expected, 2 * 1050 + 2 * 36864 + 1024 + 139_264);
    let w = a.weights.as_ref().unwrap();
    assert_eq!(w.total_bytes, expected);
    let elements: u64 = tensors
        .iter()
        .map(|(_, d, _)| d.iter().product::<u64>())
        .sum();
    assert_eq!(a.params, Some(elements));
    let q4k = w.by_dtype.iter().find(|d| d.dtype == "Q4_K").unwrap();
    assert_eq!((q4k.bytes, q4k.elements), (2 * 36864, 2 * 65536));
    let q6k = w.by_dtype.iter().find(|d| d.dtype == "Q6_K").unwrap();
    assert_eq!((q6k.bytes, q6k.elements), (2100, 2560));
    let names: Vec<&str> = w.by_dtype.iter().map(|d| d.dtype.as_str()).collect();
    assert_eq!(names, ["F32", "Q4_K", "Q6_K", "Q8_0"]);

    assert_eq!(a.source, "GGUF v3 header (general.architecture = llama)");
    assert_eq!(a.model_type.as_deref(), Some("llama"));
    assert_eq!(a.name.as_deref(), Some("Tiny Llama"));
    assert_eq!(a.layers, Some(2));
    assert_eq!(a.hidden, Some(256));
    assert_eq!(a.intermediate, Some(512));
    assert_eq!(a.heads, Some(8));
    assert_eq!(a.kv_heads, Some(2));
    assert_eq!(a.head_dim, Some(32));
    assert_eq!(a.max_context, Some(4096));
    assert_eq!(a.vocab, Some(5));
    assert_eq!(a.attention, Some(Attention::Gqa));
    assert_eq!(a.tie_embeddings, Some(false));
}

#[test]
fn v2_is_read_and_file_offsets_checked() {
    let file = gguf(2, &llama_kvs(), &mixed_tensors());
    assert!(
        from_gguf(file.as_slice())
            .unwrap()
            .source
            .starts_with("GGUF v2")
    );

    let dir = std::env::temp_dir().join(format!("deployfit-artifacts-gguf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("tiny.gguf");
    std::fs::write(&p, &file).unwrap();
    assert_eq!(
        read(&p).unwrap().params,
        from_gguf(file.as_slice()).unwrap().params
    );
    // tensor data cut short: the header alone parses, the file check fails
    std::fs::write(&p, &file[..file.len() - 100]).unwrap();
    let e = read(&p).unwrap_err();
    assert_eq!(e.kind(), "malformed", "{e}");
    assert!(e.message().contains("tiny.gguf"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn moe_and_mla_metadata() {
    let kvs = vec![
        ("general.architecture", V::Str("deepseek2")),
        ("deepseek2.block_count", V::U32(1)),
        ("deepseek2.embedding_length", V::U32(64)),
        ("deepseek2.attention.head_count", V::U32(4)),
        ("deepseek2.attention.head_count_kv", V::U32(4)),
        ("deepseek2.attention.kv_lora_rank", V::U32(512)),
        ("deepseek2.rope.dimension_count", V::U32(64)),
        ("deepseek2.expert_count", V::U32(4)),
        ("deepseek2.expert_used_count", V::U64(1)),
        ("deepseek2.context_length", V::U32(1024)),
    ];
    let tensors = vec![
        ("token_embd.weight", vec![64, 10], 0),
        ("blk.0.ffn_gate_exps.weight", vec![64, 32, 4], 0),
        ("blk.0.ffn_up_exps.weight", vec![64, 32, 4], 0),
        ("blk.0.ffn_down_exps.weight", vec![32, 64, 4], 0),
    ];
    let a = from_gguf(gguf(3, &kvs, &tensors).as_slice()).unwrap();
    assert_eq!(a.attention, Some(Attention::Mla));
    assert_eq!(a.kv_lora_rank, Some(512));
    assert_eq!(a.qk_rope_dim, Some(64));
    assert_eq!(a.experts, Some(4));
    assert_eq!(a.experts_active, Some(1));
    assert_eq!(a.params, Some(640 + 3 * 8192));
    // 3 of 4 experts idle in each stacked tensor
    assert_eq!(a.active_params, Some(640 + 3 * 8192 / 4));
    assert_eq!(a.tie_embeddings, Some(true), "no output.weight");
}

#[test]
fn ggml_table_has_the_brief_types() {
    for (id, name, block, size) in [
        (0, "F32", 1, 4),
        (1, "F16", 1, 2),
        (2, "Q4_0", 32, 18),
        (8, "Q8_0", 32, 34),
        (10, "Q2_K", 256, 84),
        (12, "Q4_K", 256, 144),
        (14, "Q6_K", 256, 210),
        (15, "Q8_K", 256, 292),
        (23, "IQ4_XS", 256, 136),
        (29, "IQ1_M", 256, 56),
        (30, "BF16", 1, 2),
        (34, "TQ1_0", 256, 54),
        (35, "TQ2_0", 256, 66),
        (39, "MXFP4", 32, 17),
    ] {
        let t = ggml_type(id).unwrap();
        assert_eq!((t.name, t.block, t.type_size), (name, block, size));
    }
    assert!(ggml_type(4).unwrap_err().message().contains("removed"));
    assert!(
        ggml_type(40)
            .unwrap_err()
            .message()
            .contains("unknown ggml type id 40")
    );
}

fn corrupt(f: impl Fn(&mut Vec<u8>)) -> Vec<u8> {
    let mut file = gguf(3, &llama_kvs(), &mixed_tensors());
    f(&mut file);
    file
}

#[test]
fn malformed_gguf_is_an_error() {
    let base = gguf(3, &llama_kvs(), &mixed_tensors());
    // where the first tensor info starts: after the metadata
    let header_len = {
        let mut wr = Writer { out: Vec::new() };
        for (k, v) in llama_kvs() {
            wr.string(k);
            wr.value(&v);
        }
        4 + 4 + 8 + 8 + wr.out.len()
    };
    let type_pos = header_len + 8 + "token_embd.weight".len() + 4 + 16;
    assert_eq!(
        u32::from_le_bytes(base[type_pos..type_pos + 4].try_into().unwrap()),
        14
    );

    let cases: Vec<(Vec<u8>, &str)> = vec![
        (b"GGU".to_vec(), "malformed"),
        (corrupt(|f| f[0] = b'X'), "malformed"),
        (
            corrupt(|f| f[4..8].copy_from_slice(&1u32.to_le_bytes())),
            "unsupported",
        ),
        (
            corrupt(|f| f[4..8].copy_from_slice(&3u32.to_be_bytes())),
            "unsupported",
        ),
        (
            corrupt(|f| f[8..16].copy_from_slice(&u64::MAX.to_le_bytes())),
            "too-large",
        ),
        (
            corrupt(|f| f[16..24].copy_from_slice(&2_000_000u64.to_le_bytes())),
            "too-large",
        ),
        // one more metadata pair announced than written: the tensor infos are read as a
        // key/value pair, and later bytes end up read as a string length over the bound
        (
            corrupt(|f| f[16..24].copy_from_slice(&14u64.to_le_bytes())),
            "too-large",
        ),
        // first key's length huge
        (
            corrupt(|f| f[24..32].copy_from_slice(&(u64::MAX / 2).to_le_bytes())),
            "too-large",
        ),
        (
            corrupt(|f| f[type_pos..type_pos + 4].copy_from_slice(&77u32.to_le_bytes())),
            "unsupported",
        ),
        (
            corrupt(|f| f[type_pos..type_pos + 4].copy_from_slice(&31u32.to_le_bytes())),
            "unsupported",
        ),
        // n_dims = 9
        (
            corrupt(|f| {
                let p = header_len + 8 + "token_embd.weight".len();
                f[p..p + 4].copy_from_slice(&9u32.to_le_bytes());
            }),
            "malformed",
        ),
        // truncated inside the metadata and inside the tensor infos
        (base[..100].to_vec(), "malformed"),
        (base[..header_len + 20].to_vec(), "malformed"),
    ];
    for (i, (bytes, kind)) in cases.into_iter().enumerate() {
        let e = from_gguf(bytes.as_slice()).expect_err(&format!("case {i}"));
        assert_eq!(e.kind(), kind, "case {i}: {e}");
    }
}

#[test]
fn huge_arrays_are_bounded_and_skipped() {
    // a 10M+1 element array is refused before anything is read
    let mut w = Writer { out: Vec::new() };
    w.out.extend_from_slice(b"GGUF");
    w.u32(3);
    w.u64(0);
    w.u64(1);
    w.string("x");
    w.u32(9);
    w.u32(0);
    w.u64(10_000_001);
    assert_eq!(from_gguf(w.out.as_slice()).unwrap_err().kind(), "too-large");

    // an announced-large string array with no bytes behind it ends in a truncation error
    let mut w = Writer { out: Vec::new() };
    w.out.extend_from_slice(b"GGUF");
    w.u32(3);
    w.u64(0);
    w.u64(1);
    w.string("tokenizer.ggml.tokens");
    w.u32(9);
    w.u32(8);
    w.u64(9_000_000);
    assert_eq!(from_gguf(w.out.as_slice()).unwrap_err().kind(), "malformed");

    // nested arrays deeper than the bound
    let mut w = Writer { out: Vec::new() };
    w.out.extend_from_slice(b"GGUF");
    w.u32(3);
    w.u64(0);
    w.u64(1);
    w.string("nest");
    w.u32(9);
    for _ in 0..6 {
        w.u32(9);
        w.u64(1);
    }
    assert_eq!(from_gguf(w.out.as_slice()).unwrap_err().kind(), "too-large");
}

#[test]
fn gemma2_window_and_local_layers() {
    let kvs = vec![
        ("general.architecture", V::Str("gemma2")),
        ("gemma2.block_count", V::U32(42)),
        ("gemma2.embedding_length", V::U32(3584)),
        ("gemma2.attention.head_count", V::U32(16)),
        ("gemma2.attention.head_count_kv", V::U32(8)),
        ("gemma2.attention.key_length", V::U32(256)),
        ("gemma2.attention.sliding_window", V::U32(4096)),
        ("gemma2.context_length", V::U32(8192)),
    ];
    let a = from_gguf(gguf(3, &kvs, &[]).as_slice()).unwrap();
    assert_eq!(a.window, Some(4096));
    assert_eq!(a.local_layers, Some(21));
    assert_eq!(a.attention, Some(Attention::Hybrid));
    assert_eq!(a.head_dim, Some(256));
}

/// Tiny deterministic generator (64-bit LCG, Knuth's MMIX constants) for the mutation test.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

#[test]
fn mutated_files_never_panic() {
    let base = gguf(3, &llama_kvs(), &mixed_tensors());
    let clean = from_gguf(base.as_slice()).unwrap();
    let mut rng = Lcg(42);
    let mut errors = 0;
    for _ in 0..3000 {
        let mut f = base.clone();
        // mutate the header (metadata and tensor infos: the first 700 bytes), not the data
        for _ in 0..1 + rng.next() % 4 {
            let i = (rng.next() as usize) % 700;
            f[i] = rng.next() as u8;
        }
        if rng.next().is_multiple_of(4) {
            f.truncate((rng.next() as usize) % 700);
        }
        match from_gguf(f.as_slice()) {
            Ok(a) => assert!(a.source.starts_with("GGUF")),
            Err(e) => {
                assert!(!e.message().is_empty());
                errors += 1;
            }
        }
    }
    // most mutations land in the header and must be caught
    assert!(
        errors > 500,
        "only {errors} of 3000 mutations were rejected"
    );
    assert_eq!(from_gguf(base.as_slice()).unwrap(), clean);
}
