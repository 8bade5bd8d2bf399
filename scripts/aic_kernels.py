#!/usr/bin/env python3
"""Summarises NVIDIA aiconfigurator's measured kernel tables as checks of the serving model.

Source: github.com/ai-dynamo/aiconfigurator, aic-core/src/aiconfigurator_core/systems/data/
<gpu>/<op>/<engine>/<version>/*.parquet: latencies (milliseconds) of GEMMs, attention,
fused MoE and collectives measured by NVIDIA on real GPUs with each engine's own kernels
(their collector/ scripts). Facts, not code, carry over: this script reads the tables and
prints what docs/calibration-serving.md ("Kernel measurements") quotes:

1. dense GEMMs: TFLOPS by token count M (median over N, K in 4096..16384), per dtype;
2. prefill attention (FlashAttention as vLLM runs it): TFLOPS by sequence length, causal;
3. NCCL all-reduce: bus bandwidth by message size (elements of 2 bytes) on 2, 4, 8 GPUs;
4. vLLM's fused MoE: TFLOPS by token count, and the roofline (expert weights touched at 82 %
   of the HBM bandwidth, matmuls at the GPU's measured achievable rate) over the measured time;
5. the fused MoE kernels' share of the GPU's BF16 MAMF by tokens per expert, per engine, dtype
   and GPU.

Usage: scripts/aic_kernels.py MIRROR_GIT_DIR [COMMIT]   (COMMIT defaults to 095f58a51c4c...)
Needs pandas and pyarrow. Run by hand; no test depends on it.
"""

import io
import subprocess
import sys

import pandas as pd

COMMIT = "095f58a51c4ca8e61b66ec108d86f223f8d559ce"
DATA = "aic-core/src/aiconfigurator_core/systems/data"
# The GPUs' HBM bandwidth and measured achievable matmul rates (stdlib/gpus.deploy `bandwidth`,
# `bf16_mamf`, `fp8_mamf`), bytes/s and FLOP/s.
GPUS = {
    "h100_sxm": (3.35e12, {"bfloat16": 794.5e12, "fp8": 1402.6e12, "fp8_block": 1402.6e12}),
    "h200_sxm": (4.8e12, {"bfloat16": 794.5e12, "fp8": 1453.4e12, "fp8_block": 1453.4e12}),
    "a100_sxm": (2.039e12, {"bfloat16": 271.2e12}),
}


def table(git_dir, commit, path):
    blob = subprocess.run(
        ["git", "--git-dir", git_dir, "show", f"{commit}:{DATA}/{path}"],
        check=True,
        capture_output=True,
    ).stdout
    return pd.read_parquet(io.BytesIO(blob))


def gemms(git_dir, commit):
    print("1. Dense GEMMs (vLLM 0.14.0 kernels): TFLOPS by M, median over N, K in 4096..16384")
    for gpu in GPUS:
        d = table(git_dir, commit, f"{gpu}/gemm/vllm/0.14.0/gemm_perf.parquet")
        d = d[d.n.between(4096, 16384) & d.k.between(4096, 16384)]
        d = d.assign(tflops=2 * d.m * d.n * d.k / d.latency / 1e9)
        for dtype, rows in d.groupby("gemm_dtype"):
            by_m = rows.groupby("m").tflops.median()
            cells = [f"M={m}: {by_m[m]:.0f}" for m in (64, 256, 512, 1024, 4096, 8192) if m in by_m]
            print(f"  {gpu:9} {dtype:9} " + ", ".join(cells))


def attention(git_dir, commit):
    print("2. Prefill attention (vLLM 0.14.0, causal, bf16 KV): TFLOPS by sequence length")
    for gpu in ("h100_sxm", "a100_sxm"):
        d = table(git_dir, commit, f"{gpu}/attention/vllm/0.14.0/context_attention_perf.parquet")
        d = d[d.kv_cache_dtype == "bfloat16"]
        flop = 4 * d.batch_size * d.num_heads * d.head_dim * d.isl**2 / 2
        d = d.assign(tflops=flop / (d.latency / 1e3) / 1e12)
        by_isl = d.groupby("isl").tflops.median()
        cells = [f"{n}: {by_isl[n]:.0f}" for n in (512, 1024, 2048, 4096, 8192, 16384) if n in by_isl]
        print(f"  {gpu:9} " + ", ".join(cells))


def all_reduce(git_dir, commit):
    print("3. NCCL 2.27.3 all-reduce on H100 SXM: bus bandwidth GB/s (latency) by message")
    d = table(git_dir, commit, "h100_sxm/comm/nccl/2.27.3/nccl_perf.parquet")
    d = d[(d.op_name == "all_reduce") & (d.nccl_dtype == "half")]
    for n, rows in d.groupby("num_gpus"):
        cells = []
        for elements in (2**16, 2**20, 2**22, 2**25, 2**28):
            r = rows[rows.message_size == elements]
            if len(r):
                seconds = r.latency.median() / 1e3
                busbw = elements * 2 * 2 * (n - 1) / n / seconds / 1e9
                cells.append(f"{elements >> 10}K el: {busbw:.0f} ({seconds * 1e6:.1f} us)")
        print(f"  {n} GPUs: " + ", ".join(cells))


def moe(git_dir, commit):
    print("4. vLLM 0.14.0 fused MoE on H100 SXM (balanced routing): TFLOPS, roofline / measured")
    bandwidth, mamf = GPUS["h100_sxm"]
    d = table(git_dir, commit, "h100_sxm/moe/vllm/0.14.0/moe_perf.parquet")
    d = d[(d.distribution == "balanced") & (d.kernel_source == "vllm_fused_moe") & (d.moe_ep_size == 1)]
    shapes = [(4096, 1536, 128, 8), (6144, 2560, 160, 8), (7168, 2048, 256, 8)]
    for hidden, inter, experts, k in shapes:
        for dtype in ("bfloat16", "fp8_block"):
            for tp in (1, 8):
                rows = d[
                    (d.hidden_size == hidden)
                    & (d.inter_size == inter)
                    & (d.num_experts == experts)
                    & (d.topk == k)
                    & (d.moe_dtype == dtype)
                    & (d.moe_tp_size == tp)
                ]
                if rows.empty:
                    continue
                cells = []
                for tokens in (64, 256, 1024, 4096, 16384):
                    r = rows[rows.num_tokens == tokens]
                    if r.empty:
                        continue
                    seconds = r.latency.median() / 1e3
                    flop = 2 * tokens * k * 3 * hidden * inter / tp
                    touched = experts * (1 - (1 - k / experts) ** tokens)
                    weights = touched * 3 * hidden * inter / tp * (2 if dtype == "bfloat16" else 1)
                    roof = max(weights / (bandwidth * 0.82), flop / mamf[dtype])
                    cells.append(f"T={tokens}: {flop / seconds / 1e12:.0f} TF, {roof / seconds:.2f}")
                print(f"  {hidden}x{inter} E={experts} k={k} {dtype:9} tp{tp}: " + ", ".join(cells))


def moe_by_tokens_per_expert(git_dir, commit):
    print(
        "5. Fused MoE by tokens per expert m = tokens x k / E (tp 1, balanced routing): share of the "
        "GPU's BF16 MAMF, median over the table's shapes"
    )
    tables = [
        ("h100_sxm", "vllm/0.14.0"),
        ("h200_sxm", "vllm/0.14.0"),
        ("h100_sxm", "sglang/0.5.10"),
        ("a100_sxm", "sglang/0.5.10"),
    ]
    for gpu, engine in tables:
        mamf = GPUS[gpu][1]["bfloat16"]
        d = table(git_dir, commit, f"{gpu}/moe/{engine}/moe_perf.parquet")
        d = d[(d.distribution == "balanced") & (d.moe_ep_size == 1) & (d.moe_tp_size == 1)]
        flop = 2 * 3 * d.hidden_size * d.inter_size * d.num_tokens * d.topk
        d = d.assign(m=d.num_tokens * d.topk / d.num_experts, share=flop / (d.latency / 1e3) / mamf)
        for (dtype, kernel), rows in d.groupby(["moe_dtype", "kernel_source"]):
            cells = []
            for m in (4, 16, 64, 256, 1024):
                near = rows[(rows.m >= m * 0.7) & (rows.m <= m * 1.4)]
                if len(near):
                    # The median over shapes of each shape's median.
                    by_shape = near.groupby(["hidden_size", "inter_size", "num_experts", "topk"]).share.median()
                    cells.append(f"m~{m}: {by_shape.median() * 100:.0f} %")
            print(f"  {gpu:9} {engine:13} {dtype:9} {kernel:24} " + ", ".join(cells))


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    git_dir = sys.argv[1]
    commit = sys.argv[2] if len(sys.argv) > 2 else COMMIT
    gemms(git_dir, commit)
    attention(git_dir, commit)
    all_reduce(git_dir, commit)
    moe(git_dir, commit)
    moe_by_tokens_per_expert(git_dir, commit)


if __name__ == "__main__":
    main()
