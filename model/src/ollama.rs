//! Ollama's scheduler: the memory estimate it places a model's layers with before it
//! starts llama.cpp, and the layer split that follows (`ollama ps`: "100% GPU",
//! "18%/82% CPU/GPU", "100% CPU").
//!
//! Ollama does not ask llama.cpp what a context will take: it estimates it, then offloads
//! as many layers as the estimate lets fit (`num_gpu` −1, the default). The estimate has
//! its own terms — a compute graph per architecture that grows with `num_ctx` × heads ×
//! `num_batch`, one layer kept back as a buffer, a fixed minimum per GPU, the KV cache of
//! `num_ctx` × `OLLAMA_NUM_PARALLEL` tokens — so its boundary between "100% GPU" and a
//! split is not where the allocated memory would put it. This module reproduces it.
//!
//! Source (every formula below): ollama/ollama at v0.12.10
//! (`f560bd077^`, 4372d0bfe): `llm/memory.go` (`estimateGPULayers`, `predictServerFit`),
//! `fs/ggml/ggml.go` (`GraphSize`, `kvCacheBytesPerElement`, `FlashAttention`,
//! `OllamaEngineRequired`, `SupportsKVCacheType`), `ml/device.go` (`MinimumMemory`),
//! `llm/server.go` (`NewLlamaServer`: `num_batch` capped at `num_ctx`; the KV type only with
//! flash attention), `VisionGraphSize` for a vision model's encoder.
//! docs/engines.md ("Ollama's scheduler") explains each term.

/// Which of `GraphSize`'s per-architecture formulas a model gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GraphFamily {
    /// `llama`, `llama4` (and Mistral's dense models, which GGUF files call `llama`).
    Llama,
    /// `gemma`, `gemma2`, `gemma3`, `gemma3n`.
    Gemma,
    /// `command-r` (Cohere).
    CommandR,
    /// `qwen2`.
    Qwen2,
    /// `phi2`.
    Phi2,
    /// `stablelm`.
    StableLm,
    /// `deepseek2` (DeepSeek-V2/V3/R1 in GGUF).
    DeepSeek2,
    /// `chatglm`.
    ChatGlm,
    /// `gptoss`.
    GptOss,
    /// Every other architecture: no formula, the graph is `gqa × kv / 6`.
    Other,
}

/// What Ollama knows of an architecture, from its name as config.json (`model_type`) or
/// GGUF (`general.architecture`) writes it: the graph formula, whether the Ollama engine
/// (not llama.cpp) runs it (and then keeps only the window of its sliding-window layers),
/// and whether flash attention is on by default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArchInfo {
    pub family: GraphFamily,
    /// `FlashAttention()`: flash attention on unless `OLLAMA_FLASH_ATTENTION` says otherwise.
    pub flash_attention: bool,
    /// `SupportsFlashAttention`: every architecture here but `gemma2`.
    pub flash_attention_supported: bool,
    /// `GraphSize`'s gemma3 case: sliding-window layers are estimated at the window per
    /// sequence plus a batch (every other architecture at the whole context).
    pub windowed: bool,
}

/// The architecture table, from ollama/ollama v0.12.10 `fs/ggml/ggml.go`. Names are
/// compared lower-case with `-` and `_` ignored, so `gpt_oss` (config.json), `gpt-oss` and
/// `gptoss` (GGUF) are one architecture.
pub fn arch_info(architecture: Option<&str>) -> ArchInfo {
    let key: String = architecture
        .unwrap_or("")
        .chars()
        .filter(|c| *c != '-' && *c != '_')
        .flat_map(char::to_lowercase)
        .collect();
    let family = match key.as_str() {
        // config.json's `mistral` is GGUF's `llama` (convert_hf_to_gguf.py MistralModel)
        "llama" | "llama4" | "mistral" | "mixtral" | "mllama" => GraphFamily::Llama,
        "gemma" | "gemma2" | "gemma3" | "gemma3text" | "gemma3n" => GraphFamily::Gemma,
        "commandr" | "cohere" | "cohere2" => GraphFamily::CommandR,
        "qwen2" => GraphFamily::Qwen2,
        "phi2" | "phi" => GraphFamily::Phi2,
        "stablelm" => GraphFamily::StableLm,
        "deepseek2" | "deepseekv2" | "deepseekv3" => GraphFamily::DeepSeek2,
        "chatglm" => GraphFamily::ChatGlm,
        "gptoss" => GraphFamily::GptOss,
        _ => GraphFamily::Other,
    };
    let flash_attention = matches!(
        key.as_str(),
        "gemma3" | "gemma3text" | "gptoss" | "qwen3" | "qwen3moe" | "qwen3vl" | "qwen3vlmoe"
    );
    ArchInfo {
        family,
        flash_attention,
        flash_attention_supported: key != "gemma2",
        windowed: matches!(key.as_str(), "gemma3" | "gemma3text"),
    }
}

/// A model's shape as `GraphSize` reads it from the GGUF metadata.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub arch: ArchInfo,
    /// `block_count`: repeating layers.
    pub layers: u64,
    /// `embedding_length`.
    pub embedding: u64,
    /// `attention.head_count`.
    pub heads: u64,
    /// `attention.head_count_kv`.
    pub kv_heads: u64,
    /// `attention.key_length` (= `value_length` for the models here).
    pub head_dim: u64,
    /// `tokenizer.ggml.tokens`' length.
    pub vocab: u64,
    /// Layers with a sliding window and the window (`attention.sliding_window`).
    pub local_layers: u64,
    pub window: u64,
    /// Repeating layers that hold a fixed recurrent state instead of a KV cache, and that
    /// state's bytes per sequence.
    pub linear_layers: u64,
    pub linear_state: f64,
}

/// The weights as the estimate groups them (`Tensors().GroupLayers()`).
#[derive(Clone, Copy, Debug)]
pub struct Weights {
    /// One repeating layer (`blk.N`).
    pub layer: f64,
    /// The output layer and its norm (`output`, else the tied `token_embd`), which the
    /// estimate places last, as the "+1" layer.
    pub output: f64,
    /// A vision model's encoder weights and graph (`VisionGraphSize`), placed with the
    /// output layer.
    pub projector: f64,
}

/// The settings the estimate reads.
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    /// `num_ctx` per sequence, after Ollama caps it at the model's trained context.
    pub num_ctx: u64,
    /// `OLLAMA_NUM_PARALLEL`: the KV cache holds `num_ctx` for each.
    pub parallel: u64,
    /// `num_batch` (512 by default), capped at `num_ctx`.
    pub num_batch: u64,
    /// Bytes per KV element (`kvCacheBytesPerElement`): 2 for f16, 1 for q8_0, 0.5 for
    /// q4_0 — the quantized types only with flash attention.
    pub kv_bytes: f64,
    pub flash_attention: bool,
    /// GPUs the model is placed on (all of one library).
    pub gpus: u64,
    /// Free memory per GPU as Ollama's discovery reports it.
    pub free: f64,
    /// `MinimumMemory()`: 457 MiB on CUDA and ROCm, 512 MiB on Metal.
    pub minimum: f64,
    /// Metal: no partial-offload graph surcharge.
    pub metal: bool,
}

/// The estimate and the placement it gives.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    /// KV cache of every layer (`memory.required.kv`).
    pub kv: f64,
    /// The graph with every layer on the GPUs and with some on the CPU.
    pub graph_full: f64,
    pub graph_partial: f64,
    /// Repeating layers on the GPUs, and whether the output layer is too
    /// (`layers.offload` = the two, of `layers.model` = layers + 1).
    pub gpu_layers: u64,
    pub output_on_gpu: bool,
    /// The largest GPU's allocation (`memory.required.allocations`).
    pub per_gpu: f64,
    /// What every GPU needs to hold every layer, as the fit test sees it: the allocation
    /// with the larger of the two graphs, which is what each layer is checked against.
    pub per_gpu_full: f64,
    /// On the GPUs and in all (`memory.required.partial`, `memory.required.full`; the
    /// latter is `ollama ps`'s SIZE).
    pub vram: f64,
    pub total: f64,
    /// The KV cache of one layer (the first), part of the buffer layer.
    pub kv_layer: f64,
    /// Per GPU beside the layers: the minimum, the buffer layer and the graph.
    pub overhead: f64,
}

impl Estimate {
    /// Every layer, the output layer included, is on the GPUs: "100% GPU".
    pub fn full(&self, shape: &Shape) -> bool {
        self.gpu_layers >= shape.layers && self.output_on_gpu
    }
}

/// The KV bytes of each repeating layer, as `GraphSize` sums them.
fn kv_layers(shape: &Shape, s: &Settings, context: u64, batch: u64) -> Vec<f64> {
    let per_token = ((shape.head_dim * 2 * shape.kv_heads) as f64) * s.kv_bytes;
    let layers = shape.layers as usize;
    // Linear-attention layers come first in this list, local (sliding) layers next; only
    // their counts matter to the sums.
    let linear = (shape.linear_layers as usize).min(layers);
    let local = (shape.local_layers as usize).min(layers - linear);
    (0..layers)
        .map(|i| {
            if i < linear {
                // recurrent state, F32 (`GraphSize`: "recurrent always uses F32")
                shape.linear_state
            } else if i < linear + local && shape.arch.windowed {
                // gemma3: "the other layers are the smaller local (sliding) layers"
                per_token * ((s.parallel * shape.window + batch).min(context)) as f64
            } else if shape.arch.family == GraphFamily::GptOss {
                // gpt-oss on llama.cpp: every other layer is a 128-token window, estimated
                // at 4096 per sequence plus the batch
                if i % 2 == 0 {
                    per_token * (s.parallel * 4096 + batch) as f64
                } else {
                    per_token * context as f64
                }
            } else {
                per_token * context as f64
            }
        })
        .collect()
}

/// `GraphSize`: the KV cache per layer and the graph for a partial and a full offload.
pub fn graph_size(shape: &Shape, s: &Settings) -> (Vec<f64>, f64, f64) {
    let context = s.num_ctx * s.parallel.max(1);
    let batch = s.num_batch.min(s.num_ctx).max(1);
    let kv = kv_layers(shape, s, context, batch);
    let kv_total: f64 = kv.iter().sum();
    let (e, h, hkv, v, c, b) = (
        shape.embedding,
        shape.heads,
        shape.kv_heads,
        shape.vocab,
        context,
        batch,
    );
    let eh = shape.head_dim;
    let (mut partial, mut full): (u64, u64) = (0, 0);
    {
        match shape.arch.family {
            GraphFamily::Llama => {
                full = (4 * b * (1 + 4 * e + c * (1 + h))).max(4 * b * (e + v));
                partial = 4 * b * e
                    + (4 * b * (1 + e + c.max(e)) + e * e * 9 / 16 + 4 * c * (b * h + eh * hkv))
                        .max(4 * b * (e + v) + e * v * 105 / 128);
            }
            GraphFamily::Gemma => {
                full = (4 * b * (e + v)).max(4 * b * (2 + c + c * h + 2 * e + 2 * eh * h));
                partial = (4 * e * b + e * v * 105 / 128 + 4 * v * b).max(
                    4 * b * (2 * e + 1 + 2 * eh * h + c + c * h)
                        + 4 * eh * c * 8
                        + e * eh * h * 9 / 16,
                );
            }
            GraphFamily::CommandR => {
                full = (4 * b * (e + v)).max(4 * b * (2 + 4 * e + c * (1 + h)));
                partial = (4 * b * (e + v) + e * v * 105 / 128)
                    .max(4 * b * (1 + 2 * e + c * (1 + h)) + 4 * e * c + e * e * 9 / 16);
            }
            GraphFamily::Qwen2 => {
                full = (4 * b * (e + v)).max(4 * b * (1 + 2 * e + c + c * h));
                partial = (4 * b * (e + v) + e * v * 105 / 128)
                    .max(4 * (b * (1 + 2 * e + c * (1 + h)) + e * (1 + c)));
            }
            GraphFamily::Phi2 => {
                full = (4 * b * (e + v)).max(4 * b * (1 + 4 * e + c + c * h));
                partial =
                    (4 * b * (2 * e + v) + e * v * 105 / 128).max(4 * b * (2 + 3 * e + c + c * h));
            }
            GraphFamily::StableLm => {
                full = 4 * b * (c * (1 + h) + 3 * e + 2);
                partial = (4 * b * (v + 2 * e)).max(full);
            }
            GraphFamily::DeepSeek2 => {
                full =
                    (4 * b * (3 * e + v)).max(4 * b * (3 * e + 2 + c * (1 + hkv) + 2 * eh * hkv));
                partial = (4 * b * (3 * e + v) + e * v * 105 / 128).max(
                    4 * b * (2 * e + 1 + 2 * eh * hkv + c + c * hkv)
                        + 4 * eh * c * hkv
                        + e * eh * hkv * 9 / 16,
                );
            }
            GraphFamily::ChatGlm => {
                full = 4 * b * (e + v);
                partial = 4 * b * (e + v) + e * v * 105 / 128;
            }
            GraphFamily::GptOss => {
                let gqa = h / hkv.max(1);
                partial = if s.flash_attention {
                    (4 * s.parallel.max(1) + (c >> 10) + 110) * (1 << 20)
                } else {
                    (2.0 * gqa as f64 * kv_total / 6.0) as u64
                };
            }
            GraphFamily::Other => {}
        }
    }
    let mut partial = partial as f64;
    let mut full = full as f64;
    if partial == 0.0 {
        let gqa = (shape.heads / shape.kv_heads.max(1)) as f64;
        partial = (gqa * kv_total / 6.0).floor();
    }
    if full == 0.0 {
        full = partial;
    }
    (kv, partial, full)
}

/// `estimateGPULayers` on `gpus` identical GPUs with `free` bytes each: layers are
/// placed from the last to the first, round-robin over the GPUs that still have room,
/// each checked against the larger graph; the output layer goes last.
pub fn estimate(shape: &Shape, weights: &Weights, s: &Settings) -> Estimate {
    let (kv, mut partial, mut full) = graph_size(shape, s);
    let gpus = s.gpus.max(1) as usize;
    if s.metal {
        partial = full;
    } else if gpus > 1 {
        full = partial;
    }
    let graph = partial.max(full);
    let kv_total: f64 = kv.iter().sum();
    let kv_layer = kv.first().copied().unwrap_or(0.0);
    // The first layer (with its cache) is kept back once as a buffer.
    let buffer = weights.layer + kv_layer;
    let mut alloc = vec![0.0; gpus];
    let mut with_space: Vec<usize> = Vec::new();
    for (i, a) in alloc.iter_mut().enumerate() {
        if s.free >= s.minimum + graph + 2.0 * buffer.max(weights.layer) {
            with_space.push(i);
            *a = s.minimum + buffer;
        }
    }
    let mut layer_counts = vec![0u64; gpus];
    let mut gpu_layers = 0u64;
    let mut overflow = 0.0;
    for i in (0..shape.layers as usize).rev() {
        let size = weights.layer + kv[i];
        let mut placed = false;
        let mut j = with_space.len();
        while j > 0 {
            let pick = i % j;
            let g = with_space[pick];
            if s.free > alloc[g] + graph + size {
                alloc[g] += size;
                layer_counts[g] += 1;
                gpu_layers += 1;
                placed = true;
                break;
            }
            with_space.remove(pick);
            j -= 1;
        }
        if !placed {
            overflow += size;
        }
    }
    let last = weights.output + weights.projector;
    let mut output_on_gpu = false;
    if last > 0.0 {
        let mut j = with_space.len();
        while j > 0 {
            let g = with_space[gpu_layers as usize % j];
            if s.free > alloc[g] + graph + last {
                alloc[g] += last;
                layer_counts[g] += 1;
                output_on_gpu = true;
                break;
            }
            j -= 1;
        }
        if !output_on_gpu {
            overflow += last;
        }
    } else {
        output_on_gpu = true;
    }
    let fully = gpu_layers >= shape.layers && output_on_gpu;
    for (i, a) in alloc.iter_mut().enumerate() {
        if layer_counts[i] > 0 {
            *a += if fully { full } else { partial };
        } else {
            *a = 0.0;
        }
    }
    let vram: f64 = alloc.iter().sum();
    let per_gpu = alloc.iter().copied().fold(0.0, f64::max);
    // What each GPU would need for every layer: its share of the layers, the output on
    // one of them, and the larger graph.
    let layers_total: f64 = kv_total + weights.layer * shape.layers as f64;
    let per_gpu_full = s.minimum + buffer + layers_total / gpus as f64 + last + graph;
    Estimate {
        kv: kv_total,
        graph_full: full,
        graph_partial: partial,
        gpu_layers: if gpu_layers == 0 && !output_on_gpu {
            0
        } else {
            gpu_layers
        },
        output_on_gpu: output_on_gpu && gpu_layers > 0,
        per_gpu,
        per_gpu_full,
        vram,
        total: vram + overflow,
        kv_layer,
        overhead: s.minimum + buffer + if fully { full } else { partial },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: f64 = 1024.0 * 1024.0;
    const GIB: f64 = 1024.0 * MIB;

    /// Meta-Llama-3.1-8B at Q4_K_M with OLLAMA_NUM_PARALLEL=4 and num_ctx 2048, from the
    /// log line Ollama printed (a public issue log: memory.graph.full="560.0 MiB"
    /// memory.graph.partial="677.5 MiB" memory.required.kv="1.0 GiB").
    #[test]
    fn llama_graph_matches_a_logged_estimate() {
        let shape = Shape {
            arch: arch_info(Some("llama")),
            layers: 32,
            embedding: 4096,
            heads: 32,
            kv_heads: 8,
            head_dim: 128,
            vocab: 128_256,
            local_layers: 0,
            window: 0,
            linear_layers: 0,
            linear_state: 0.0,
        };
        let s = Settings {
            num_ctx: 2048,
            parallel: 4,
            num_batch: 512,
            kv_bytes: 2.0,
            flash_attention: false,
            gpus: 1,
            free: 23.3 * GIB,
            minimum: 457.0 * MIB,
            metal: false,
        };
        let (kv, partial, full) = graph_size(&shape, &s);
        assert_eq!(kv.iter().sum::<f64>(), GIB);
        assert_eq!((full / MIB * 10.0).round() / 10.0, 560.0);
        assert_eq!((partial / MIB * 10.0).round() / 10.0, 677.5);
    }

    #[test]
    fn architecture_names_of_both_vocabularies_agree() {
        assert_eq!(arch_info(Some("gpt_oss")), arch_info(Some("gptoss")));
        assert_eq!(arch_info(Some("Qwen2")).family, GraphFamily::Qwen2);
        assert!(arch_info(Some("qwen3")).flash_attention);
        assert!(arch_info(Some("gemma3")).windowed);
        assert_eq!(arch_info(None).family, GraphFamily::Other);
    }
}
