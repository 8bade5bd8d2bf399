#!/usr/bin/env python3
"""Fits the host-memory efficiency of llama.cpp decode (docs/calibration-offload.md).

Each row: a published llama.cpp decode speed with some or all layers in system RAM.
Per token, time = gpu_bytes / (gpu_bw * eta_gpu) + host_bytes / (host_bw * eta_host)
+ step overhead (GPU rows only); eta_host is solved per row, the fit is the median, the
range the 10th and 90th percentiles of measured / predicted at the fitted value.
"""
import statistics

GIB = 2**30
STEP_32 = 2.89e-3  # CUDA step overhead per 32 layers (docs/calibration-speed.md)
ETA_GEFORCE = 0.975

def split(total, layers, vocab, hidden, out_bpw, emb_bpw):
    """(per-layer bytes, embedding bytes, output bytes) of a GGUF file."""
    emb = vocab * hidden * emb_bpw / 8
    out = vocab * hidden * out_bpw / 8
    return (total - emb - out) / layers, emb, out

rows = []
# name, tok/s, gpu_bytes, gpu_bw, host_bytes, host_bw, layers(for overhead; 0 = CPU only)
# 1. ggml-org/llama.cpp#34 (neuhaus): Ryzen 7 3700X, LLaMA-65B q4_0 (5.0 bpw in 2023-03),
#    CPU only, 1089.36 ms per token; dual-channel DDR4-3200 assumed (the 3700X's rated speed).
rows.append(("llama.cpp#34 3700X 65B q4_0 CPU", 1 / 1.08936, 0, 1, 65.2e9 * 5.0 / 8, 51.2e9, 0))
# 2. brand-o/normiebench#52: Threadripper 3970X, Llama 3.1 8B Q4_K_M (4.58 GiB), CPU backend,
#    tg128 16.78; quad-channel DDR4-3200 assumed (102.4 GB/s).
rows.append(("normiebench#52 3970X 8B Q4_K_M CPU", 16.78, 0, 1, 4.58 * GIB, 102.4e9, 0))
# 3. evshiron/rocm_lab#13: Ryzen 7 7800X3D, Llama-2-70B-chat Q5_K_M (48.75 GB file), without
#    -ngl: 1.41 tok/s; dual-channel DDR5-5200 assumed (the 7800X3D's rated speed).
rows.append(("rocm_lab#13 7800X3D 70B Q5_K_M CPU", 1.41, 0, 1, 48.75e9, 83.2e9, 0))
# 4. ggml-org/llama.cpp#2237: 2 x Xeon Platinum 8336C, LLaMA-7B F16 (13.48 GB), --numa,
#    4.43 tok/s; 8 channels DDR4-3200 per socket (204.8 GB/s), one socket's worth counted.
rows.append(("llama.cpp#2237 Xeon 8336C 7B F16 CPU", 4.43, 0, 1, 6.74e9 * 2, 204.8e9, 0))
# 5-7. AlexsJones/llmfit#774: RTX 2080 (448 GB/s) + i9-10900X (quad-channel DDR4-2933,
#    93.9 GB/s), Q4_K_M, ctx 4096, single slot. -ngl N of L layers (N <= L): N repeating
#    layers on the GPU; the others, the output layer and the embeddings on the CPU
#    (llama.cpp llama_model::load_tensors: the output is offloaded only when N > L).
for name, tps, total, layers, vocab, hidden, ngl in [
    ("llmfit#774 RTX 2080 Qwen3-14B -ngl 32", 16.9, 9.00e9, 40, 151936, 5120, 32),
    ("llmfit#774 RTX 2080 phi-4 -ngl 32", 16.7, 9.05e9, 40, 100352, 5120, 32),
    ("llmfit#774 RTX 2080 Gemma-3-12B -ngl 44", 26.1, 7.30e9, 48, 262144, 3840, 44),
]:
    per_layer, emb, out = split(total, layers, vocab, hidden, 6.5625, 4.5)
    on_gpu = min(ngl, layers)
    gpu = on_gpu * per_layer
    host = (layers - on_gpu) * per_layer + out
    rows.append((name, tps, gpu, 448e9, host, 93.9e9, layers))

def eta_of(row):
    _, tps, gpu, gpu_bw, host, host_bw, layers = row
    t = 1 / tps - gpu / (gpu_bw * ETA_GEFORCE) - (STEP_32 * layers / 32 if layers else 0)
    return host / (host_bw * t)

etas = [eta_of(r) for r in rows]
for r, e in zip(rows, etas):
    print(f"{r[0]:45s} eta_host = {e:.3f}")
# Two populations: CPU-only rows (every core decodes, nothing waits) and partial-offload
# rows (the GPU waits for the CPU's layers and back, activations cross PCIe each token):
# each gets its own median.
groups = {
    "cpu_only": [i for i, r in enumerate(rows) if r[6] == 0],
    "offload": [i for i, r in enumerate(rows) if r[6] != 0],
}
def predict(row, eta):
    _, tps, gpu, gpu_bw, host, host_bw, layers = row
    t = gpu / (gpu_bw * ETA_GEFORCE) + host / (host_bw * eta) + (STEP_32 * layers / 32 if layers else 0)
    return 1 / t

ratios = []
for group, idx in groups.items():
    fit = statistics.median(etas[i] for i in idx)
    print(f"{group}: median eta_host = {fit:.3f}")
    for i in idx:
        r = rows[i]
        ratio = r[1] / predict(r, fit)
        ratios.append(ratio)
        print(f"  {r[0]:45s} measured {r[1]:6.2f}  predicted {predict(r, fit):6.2f}  ratio {ratio:.2f}")
ratios.sort()
q = statistics.quantiles(ratios, n=10, method="inclusive")
print(f"measured / predicted, pooled: min {ratios[0]:.2f}, p10 {q[0]:.2f}, p90 {q[-1]:.2f}, max {ratios[-1]:.2f}")
