//! Typed views of catalog entries: the one place that reads an entry's fields by name.
//!
//! A [`View`] is built once per catalog entry (with `extends` applied; the compiler's
//! `entry_of` query builds it) from the entry's evaluated fields. Each view struct has one
//! field per scalar field of its declaration kind, named as in the schema and typed:
//! quantities, numbers and ratios as `f64` in base units (bytes, bytes per second, FLOP/s,
//! seconds, $/s, a share), words as their `schema::symbols!` enum, strings as `String`,
//! references by name. Absent, or refused by the schema, is `None`.
//!
//! The field lists are checked against the schema by a test (`views_match_schema`): every
//! view field is a schema field of its kind with the same type, and every scalar schema
//! field has its view field, so a misspelt or mistyped field fails the build's tests
//! instead of reading `None` at run time.

use std::collections::BTreeMap;

use crate::schema::{
    Attention, Device, Dialect, Fallback, GpuFamily, Interconnect, Kernels, MemoryKind,
    OffloadKind, Placement, Provider, QuantKind, Scheduling, Segment, Split, Symbol, TensorType,
    Vendor, WindowKv, YesNo,
};
use crate::syntax::ast::DeclKind;
use crate::value::Value;

/// What a view field holds, for the schema check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// A quantity, number or ratio, as `f64` in base units.
    Number,
    Text,
    /// One of the words of a `symbols!` enum.
    Symbol(&'static [&'static str]),
    /// A catalog entry of a kind, by name.
    Reference(DeclKind),
    /// A list of catalog entries of a kind, by name.
    References(DeclKind),
    /// A list of strings.
    Texts,
}

/// Reads one field: the value's form decides, so a field the schema refused (absent from
/// the map) is `None`.
trait Read: Sized {
    fn read(value: &Value) -> Option<Self>;
}

impl Read for f64 {
    fn read(value: &Value) -> Option<f64> {
        value.quantity().map(|q| q.value())
    }
}

impl Read for String {
    fn read(value: &Value) -> Option<String> {
        match value {
            Value::Str(text) | Value::Ref(_, text) => Some(text.clone()),
            _ => None,
        }
    }
}

impl Read for Vec<String> {
    fn read(value: &Value) -> Option<Vec<String>> {
        match value {
            Value::List(items) => Some(
                items
                    .iter()
                    .filter_map(|item| match item {
                        Value::Ref(_, name) | Value::Str(name) => Some(name.clone()),
                        _ => None,
                    })
                    .collect(),
            ),
            _ => None,
        }
    }
}

/// A word-valued field as its enum.
struct Word<T>(T);

impl<T: Symbol> Read for Word<T> {
    fn read(value: &Value) -> Option<Word<T>> {
        match value {
            Value::Symbol(word) => T::parse(word).map(Word),
            _ => None,
        }
    }
}

fn read<T: Read>(fields: &BTreeMap<String, Value>, name: &str) -> Option<T> {
    fields.get(name).and_then(T::read)
}

macro_rules! field_ty {
    (number) => { Option<f64> };
    (text) => { Option<String> };
    (reference $kind:ident) => { Option<String> };
    (references $kind:ident) => { Option<Vec<String>> };
    (texts) => { Option<Vec<String>> };
    (symbol $ty:ident) => { Option<$ty> };
}

macro_rules! field_shape {
    (number) => {
        Shape::Number
    };
    (text) => {
        Shape::Text
    };
    (reference $kind:ident) => {
        Shape::Reference(DeclKind::$kind)
    };
    (references $kind:ident) => {
        Shape::References(DeclKind::$kind)
    };
    (texts) => {
        Shape::Texts
    };
    (symbol $ty:ident) => {
        Shape::Symbol($ty::NAMES)
    };
}

macro_rules! field_read {
    ($fields:ident, $name:expr, symbol $ty:ident) => {
        read::<Word<$ty>>($fields, $name).map(|word| word.0)
    };
    ($fields:ident, $name:expr, $($shape:tt)+) => {
        read($fields, $name)
    };
}

/// Declares the views: a struct per kind, its field table and its reader.
macro_rules! views {
    ($(
        $(#[$meta:meta])*
        $view:ident ($kind:ident) {
            $( $(#[$fmeta:meta])* $field:ident : $shape:ident $($arg:ident)? ),+ $(,)?
        }
    )+) => {
        $(
            $(#[$meta])*
            #[derive(Clone, Debug, Default, PartialEq)]
            pub struct $view {
                $( $(#[$fmeta])* pub $field: field_ty!($shape $($arg)?), )+
            }

            impl $view {
                /// The declaration kind this view reads.
                pub const KIND: DeclKind = DeclKind::$kind;
                /// Each field's schema name and shape.
                pub const FIELDS: &'static [(&'static str, Shape)] =
                    &[$( (stringify!($field), field_shape!($shape $($arg)?)) ),+];

                /// The view of an entry's evaluated fields.
                pub fn read(fields: &BTreeMap<String, Value>) -> Self {
                    $view {
                        $( $field: field_read!(fields, stringify!($field), $shape $($arg)?), )+
                    }
                }

                /// The view of an entry that writes nothing.
                pub fn empty() -> &'static Self {
                    static EMPTY: $view = $view { $( $field: None, )+ };
                    &EMPTY
                }
            }
        )+

        /// An entry's typed view, by kind; `None` for kinds without one (rules,
        /// deployments).
        #[derive(Clone, Debug, Default, PartialEq)]
        pub enum View {
            #[default]
            None,
            $( $view(Box<$view>), )+
        }

        impl View {
            /// Builds the view of an entry of `kind` from its evaluated fields.
            pub fn build(kind: DeclKind, fields: &BTreeMap<String, Value>) -> View {
                match kind {
                    $( DeclKind::$kind => View::$view(Box::new($view::read(fields))), )+
                    _ => View::None,
                }
            }
        }

        /// Every view's kind and field table (for the schema check).
        pub const TABLES: &[(DeclKind, &[(&str, Shape)])] = &[$( ($view::KIND, $view::FIELDS) ),+];
    };
}

views! {
    /// A GPU architecture (`arch`): tensor rates per clock and fitted shares.
    Arch(Arch) {
        name: text,
        vendor: symbol Vendor,
        compute_capability: number,
        fp16_rate: number,
        bf16_rate: number,
        fp8_rate: number,
        fp4_rate: number,
        int8_rate: number,
        weight_only: symbol YesNo,
        serving_efficiency: number,
        matmul_share: number,
        decode_splits: number,
    }

    /// A GPU (`gpu`), or the host's CPU (`device = cpu`).
    Gpu(Gpu) {
        aliases: texts,
        name: text,
        vendor: symbol Vendor,
        device: symbol Device,
        arch: reference Arch,
        segment: symbol Segment,
        released: text,
        bus: text,
        sms: number,
        boost_clock_mhz: number,
        /// Bytes.
        memory: number,
        /// Bytes per second.
        bandwidth: number,
        /// FLOP/s.
        bf16: number,
        fp8: number,
        int8: number,
        bf16_mamf: number,
        fp8_mamf: number,
        /// Watts.
        tdp: number,
        /// $ per second.
        price: number,
        /// $.
        msrp: number,
        interconnect: symbol Interconnect,
        link_bandwidth: number,
        gpus_per_node: number,
        node_link: number,
        memory_kind: symbol MemoryKind,
        system_reserved: number,
        visible_memory: number,
        family: symbol GpuFamily,
    }

    /// A model (`model`): its architecture's figures.
    Model(Model) {
        aliases: texts,
        name: text,
        hf: text,
        ollama: text,
        architecture: text,
        params: number,
        active_params: number,
        layers: number,
        hidden: number,
        intermediate: number,
        heads: number,
        kv_heads: number,
        head_dim: number,
        vocab: number,
        /// Tokens.
        max_context: number,
        attention: symbol Attention,
        window: number,
        local_layers: number,
        linear_layers: number,
        /// Bytes per sequence.
        linear_state: number,
        kv_lora_rank: number,
        qk_rope_dim: number,
        experts: number,
        experts_active: number,
        tied_embeddings: symbol YesNo,
        vision_params: number,
        vision_graph: number,
        default_quant: reference Quant,
        source: text,
        incomplete: text,
        license: text,
        released: text,
    }

    /// A weight format (`quant`).
    Quant(Quant) {
        aliases: texts,
        bits: number,
        bpw: number,
        kind: symbol QuantKind,
        tensor: symbol TensorType,
        tensor_efficiency: number,
        weight_only_efficiency: number,
        engines: references Engine,
        vllm_quantization: text,
        vllm_expert_align_hidden: number,
        vllm_expert_align_width: number,
        tgi_quantize: text,
        lmdeploy_format: text,
        mlx_mode: text,
        group_size: number,
    }

    /// A KV-cache dtype (`kv`).
    Kv(Kv) {
        aliases: texts,
        bytes: number,
        engines: references Engine,
        vllm_name: text,
        llamacpp_name: text,
        ollama_name: text,
        tgi_name: text,
        lmdeploy_quant_policy: text,
    }

    /// A serving engine (`engine`): its memory accounting and fitted speed constants.
    Engine(Engine) {
        aliases: texts,
        utilization: number,
        overhead: number,
        overhead_ratio: number,
        overhead_per_vocab: number,
        overhead_tensor_parallel: number,
        window_kv: symbol WindowKv,
        dialect: symbol Dialect,
        kernels: symbol Kernels,
        split: symbol Split,
        fallback: symbol Fallback,
        kv_free_share: number,
        offload: symbol OffloadKind,
        placement: symbol Placement,
        release: text,
        release_of: reference Engine,
        releases_from: text,
        releases_before: text,
        minimum_memory: number,
        minimum_memory_unified: number,
        gpu_reserved: number,
        gpu_reserved_ratio: number,
        default_context: number,
        request_latency: number,
        split_kv_decode: symbol YesNo,
        decode_efficiency: number,
        token_overhead: number,
        bandwidth_efficiency: number,
        compute_efficiency: number,
        /// Seconds.
        step_overhead: number,
        sequence_overhead: number,
        cuda_graphs: symbol YesNo,
        moe_efficiency: number,
        moe_bandwidth_efficiency: number,
        archs: references Arch,
        batched_tokens_except: references Arch,
        output_reserve: number,
        preemption: symbol YesNo,
        scheduling: symbol Scheduling,
        context_memory: number,
        activation_per_hidden: number,
        activation_per_intermediate: number,
        batched_tokens: number,
        batched_tokens_small: number,
        batched_tokens_memory: number,
        chunked_prefill: symbol YesNo,
        profile_seqs: number,
        profile_seqs_small: number,
        sampler_per_logit: number,
        graph_memory: number,
        graph_memory_per_layer: number,
        expert_padding: symbol YesNo,
        graphs_in_budget: symbol YesNo,
        startup_check: symbol YesNo,
    }

    /// A host machine (`host`).
    Host(Host) {
        aliases: texts,
        name: text,
        /// Bytes.
        memory: number,
        /// Bytes per second.
        bandwidth: number,
        pcie: number,
        cores: number,
    }

    /// A cloud offer (`offer`).
    Offer(Offer) {
        name: text,
        provider: symbol Provider,
        instance: text,
        gpu: reference Gpu,
        gpus: number,
        /// $ per second, per instance.
        price: number,
        spot: number,
        region: text,
        /// Bytes per second per GPU, each way, between instances.
        network: number,
    }
}

impl Arch {
    /// The dense rate of a tensor type, FLOP per clock per SM/CU/Xe-core (`{type}_rate`).
    pub fn rate(&self, ty: TensorType) -> Option<f64> {
        match ty {
            TensorType::Fp16 => self.fp16_rate,
            TensorType::Bf16 => self.bf16_rate,
            TensorType::Fp8 => self.fp8_rate,
            TensorType::Fp4 => self.fp4_rate,
            TensorType::Int8 => self.int8_rate,
        }
    }
}

impl Gpu {
    /// The GPU's own dense datasheet peak for a tensor type, FLOP/s (`bf16`, `fp8`,
    /// `int8`; none is recorded for FP16 or FP4).
    pub fn peak(&self, ty: TensorType) -> Option<f64> {
        match ty {
            TensorType::Bf16 => self.bf16,
            TensorType::Fp8 => self.fp8,
            TensorType::Int8 => self.int8,
            TensorType::Fp16 | TensorType::Fp4 => None,
        }
    }

    /// The measured Maximum Achievable Matmul FLOPS of a tensor type (`{type}_mamf`).
    pub fn mamf(&self, ty: TensorType) -> Option<f64> {
        match ty {
            TensorType::Bf16 => self.bf16_mamf,
            TensorType::Fp8 => self.fp8_mamf,
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{FieldTy, schema};

    fn shape_of(ty: FieldTy) -> Option<Shape> {
        match ty {
            FieldTy::Q(_) | FieldTy::Number | FieldTy::Ratio => Some(Shape::Number),
            FieldTy::Str => Some(Shape::Text),
            FieldTy::Symbol(words) => Some(Shape::Symbol(words)),
            FieldTy::Ref(kind) => Some(Shape::Reference(kind)),
            FieldTy::RefList(kind) => Some(Shape::References(kind)),
            FieldTy::StrList => Some(Shape::Texts),
            FieldTy::Predicate | FieldTy::Message | FieldTy::Block => None,
        }
    }

    #[test]
    fn views_match_schema() {
        for (kind, fields) in TABLES {
            for (name, shape) in *fields {
                let spec = schema(*kind)
                    .iter()
                    .find(|spec| spec.name == *name)
                    .unwrap_or_else(|| panic!("{kind:?} view reads `{name}`, not in the schema"));
                assert_eq!(
                    shape_of(spec.ty),
                    Some(*shape),
                    "{kind:?}.{name}: the view's type is not the schema's"
                );
            }
            for spec in schema(*kind) {
                if shape_of(spec.ty).is_some() {
                    assert!(
                        fields.iter().any(|(name, _)| *name == spec.name),
                        "{kind:?}.{}: a schema field without its view field",
                        spec.name
                    );
                }
            }
        }
    }

    #[test]
    fn a_view_reads_typed_values_and_skips_wrong_forms() {
        use crate::units::{Dim, Quantity};
        let mut fields = BTreeMap::new();
        fields.insert(
            "memory".to_string(),
            Value::Q(Quantity::real(24.0 * 1e9, Dim::BYTES)),
        );
        fields.insert("vendor".to_string(), Value::Symbol("amd".into()));
        fields.insert("family".to_string(), Value::Symbol("nonsense".into()));
        fields.insert("name".to_string(), Value::Str("Radeon ünï".into()));
        fields.insert(
            "arch".to_string(),
            Value::Ref(DeclKind::Arch, "rdna3".into()),
        );
        let View::Gpu(gpu) = View::build(DeclKind::Gpu, &fields) else {
            panic!("a gpu view")
        };
        assert_eq!(gpu.memory, Some(24e9));
        assert_eq!(gpu.vendor, Some(Vendor::Amd));
        assert_eq!(gpu.family, None);
        assert_eq!(gpu.name.as_deref(), Some("Radeon ünï"));
        assert_eq!(gpu.arch.as_deref(), Some("rdna3"));
        assert_eq!(gpu.bandwidth, None);
        assert_eq!(View::build(DeclKind::Rule, &fields), View::None);
        assert_eq!(Gpu::empty(), &Gpu::default());
    }
}
