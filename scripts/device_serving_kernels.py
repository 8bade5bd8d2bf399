#!/usr/bin/env python3
"""Serving-shaped kernel timings for the speed model, prepared for the device machine (an
H200 with PyTorch): one run, a few minutes, one CSV.

What it measures, each timed with CUDA events (median of `--iters` runs after warm-up):

- `gemm`: dense matrix multiplies of the shapes a serving step runs (the qkv, o, gate/up and
  down projections of Llama-3.1-8B, Qwen3-14B and Llama-3.1-70B on two GPUs) at M = 1 to 8192
  tokens, in BF16 and in FP8 (e4m3, per-tensor scales, `torch._scaled_mm`). The question it
  settles (docs/calibration-serving.md, "GPUStack's performance lab"): what share of the
  BF16 and FP8 peaks a Hopper GPU's matmuls reach at serving batch sizes, where
  serving.csv has no BF16 Hopper row and GPUStack's BF16 H100 runs reach 36-43 % of the peak.
- `experts`: a mixture-of-experts layer's expert matmuls as batched GEMMs over E experts with
  m tokens each (uniform routing), for the per-GPU expert widths of gpt-oss-20b/120b,
  Qwen3-235B-A22B and DeepSeek-R1 under tensor parallelism: how the expert matmuls' share of
  the dense rate moves with the tokens per expert and the width (the "Tried and not kept"
  width effect of the session notes).
- `attention`: one decode step's attention (one query token per sequence, grouped KV heads)
  over KV lengths of 1k to 32k at 1 to 256 sequences: the KV bandwidth reached.
- `graphs`: a stack of 32 small layers at batch 1, launched eagerly and replayed as a CUDA
  graph: the launch cost per layer that `cuda_graphs = no` adds.

Usage (device machine):
    python3 scripts/device_serving_kernels.py --out "$OUT/serving_kernels.csv"
A CPU smoke run of the same code paths with tiny shapes (no timing meaning):
    python3 scripts/device_serving_kernels.py --smoke --out /tmp/smoke.csv

Figures from it are cited as "measured here" with this script's commit; no test depends on
them.
"""

import argparse
import csv
import statistics
import sys
import time

import torch

# (model, projection, N, K): the output and input widths of each projection on one GPU.
GEMM_SHAPES = [
    ("llama_3_1_8b", "qkv", 6144, 4096),
    ("llama_3_1_8b", "o", 4096, 4096),
    ("llama_3_1_8b", "gate_up", 28672, 4096),
    ("llama_3_1_8b", "down", 4096, 14336),
    ("qwen3_14b", "qkv", 7168, 5120),
    ("qwen3_14b", "o", 5120, 5120),
    ("qwen3_14b", "gate_up", 34816, 5120),
    ("qwen3_14b", "down", 5120, 17408),
    ("llama_3_1_70b_tp2", "qkv", 5120, 8192),
    ("llama_3_1_70b_tp2", "o", 8192, 4096),
    ("llama_3_1_70b_tp2", "gate_up", 28672, 8192),
    ("llama_3_1_70b_tp2", "down", 8192, 14336),
]
GEMM_TOKENS = [1, 16, 64, 128, 256, 512, 1024, 2048, 4096, 8192]

# (model and split, experts, hidden, per-GPU expert width).
EXPERT_SHAPES = [
    ("gpt_oss_20b_tp1", 32, 2880, 2880),
    ("gpt_oss_120b_tp1", 128, 2880, 2880),
    ("gpt_oss_120b_tp2", 128, 2880, 1440),
    ("qwen3_235b_tp8", 128, 4096, 192),
    ("deepseek_r1_tp8", 256, 7168, 256),
]
EXPERT_TOKENS = [1, 4, 16, 64, 256]

# (sequences, KV length): query heads 32, KV heads 8, head size 128, BF16.
ATTENTION_SHAPES = [(1, 1024), (1, 8192), (1, 32768), (32, 1024), (32, 8192), (256, 1024), (256, 4096)]


class Timer:
    """Median time of a callable, in seconds: CUDA events on a GPU, the wall clock on a CPU."""

    def __init__(self, device, iters, warmup):
        self.device = device
        self.iters = iters
        self.warmup = warmup

    def __call__(self, fn):
        for _ in range(self.warmup):
            fn()
        samples = []
        if self.device.type == "cuda":
            torch.cuda.synchronize()
            for _ in range(self.iters):
                start = torch.cuda.Event(enable_timing=True)
                end = torch.cuda.Event(enable_timing=True)
                start.record()
                fn()
                end.record()
                end.synchronize()
                samples.append(start.elapsed_time(end) / 1e3)
        else:
            for _ in range(self.iters):
                t = time.perf_counter()
                fn()
                samples.append(time.perf_counter() - t)
        return statistics.median(samples)


def fp8_supported(device):
    if device.type != "cuda" or not hasattr(torch, "float8_e4m3fn"):
        return False
    major, minor = torch.cuda.get_device_capability(device)
    return (major, minor) >= (8, 9)


def gemm_rows(device, timer, shapes, tokens, fp8):
    rows = []
    for model, proj, n, k in shapes:
        weight = torch.randn(n, k, device=device, dtype=torch.bfloat16) / k**0.5
        weight_fp8 = weight.to(torch.float8_e4m3fn) if fp8 else None
        one = torch.ones((), device=device, dtype=torch.float32)
        for m in tokens:
            x = torch.randn(m, k, device=device, dtype=torch.bfloat16)
            flops = 2.0 * m * n * k
            t = timer(lambda: torch.nn.functional.linear(x, weight))
            rows.append(dict(section="gemm", name=f"{model}.{proj}", dtype="bf16", m=m, n=n, k=k,
                             seconds=t, tflops=flops / t / 1e12, gbps=n * k * 2 / t / 1e9))
            # FP8 matmuls need both dimensions of the activations divisible by 16.
            if weight_fp8 is not None and m % 16 == 0:
                x8 = x.to(torch.float8_e4m3fn)
                # _scaled_mm wants the second operand column-major: the transposed weight.
                t = timer(lambda: torch._scaled_mm(x8, weight_fp8.t(), scale_a=one, scale_b=one,
                                                   out_dtype=torch.bfloat16))
                rows.append(dict(section="gemm", name=f"{model}.{proj}", dtype="fp8", m=m, n=n, k=k,
                                 seconds=t, tflops=flops / t / 1e12, gbps=n * k / t / 1e9))
        del weight, weight_fp8
    return rows


def expert_rows(device, timer, shapes, tokens):
    rows = []
    for name, experts, hidden, width in shapes:
        # Gate/up (hidden -> 2 x width) then down (width -> hidden) for every expert at once.
        up = torch.randn(experts, hidden, 2 * width, device=device, dtype=torch.bfloat16) / hidden**0.5
        down = torch.randn(experts, width, hidden, device=device, dtype=torch.bfloat16) / width**0.5
        for m in tokens:
            x = torch.randn(experts, m, hidden, device=device, dtype=torch.bfloat16)

            def layer():
                h = torch.bmm(x, up)
                g = torch.nn.functional.silu(h[..., :width]) * h[..., width:]
                return torch.bmm(g, down)

            t = timer(layer)
            flops = 2.0 * experts * m * hidden * 3 * width
            weight_bytes = experts * hidden * 3 * width * 2
            rows.append(dict(section="experts", name=name, dtype="bf16", m=m, n=width, k=hidden,
                             experts=experts, seconds=t, tflops=flops / t / 1e12,
                             gbps=weight_bytes / t / 1e9))
        del up, down
    return rows


def attention_rows(device, timer, shapes, heads=32, kv_heads=8, head_dim=128):
    rows = []
    for seqs, length in shapes:
        q = torch.randn(seqs, heads, 1, head_dim, device=device, dtype=torch.bfloat16)
        k = torch.randn(seqs, kv_heads, length, head_dim, device=device, dtype=torch.bfloat16)
        v = torch.randn_like(k)
        group = heads // kv_heads

        def step():
            return torch.nn.functional.scaled_dot_product_attention(
                q, k.repeat_interleave(group, dim=1) if device.type != "cuda" else k,
                v.repeat_interleave(group, dim=1) if device.type != "cuda" else v,
                enable_gqa=device.type == "cuda")

        t = timer(step)
        kv_bytes = 2 * seqs * kv_heads * length * head_dim * 2
        flops = 4.0 * seqs * heads * length * head_dim
        rows.append(dict(section="attention", name=f"gqa{heads}/{kv_heads}x{head_dim}", dtype="bf16",
                         seqs=seqs, kv_length=length, seconds=t, tflops=flops / t / 1e12,
                         gbps=kv_bytes / t / 1e9))
        del q, k, v
    return rows


def graph_rows(device, timer, layers=32, width=4096):
    weights = [torch.randn(width, width, device=device, dtype=torch.bfloat16) / width**0.5
               for _ in range(layers)]
    x = torch.randn(1, width, device=device, dtype=torch.bfloat16)

    def stack():
        h = x
        for w in weights:
            h = torch.nn.functional.linear(h, w)
        return h

    rows = [dict(section="graphs", name=f"{layers}x{width}", dtype="bf16", mode="eager",
                 seconds=timer(stack))]
    if device.type == "cuda":
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for _ in range(3):
                stack()
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            stack()
        rows.append(dict(section="graphs", name=f"{layers}x{width}", dtype="bf16", mode="graph",
                         seconds=timer(graph.replay)))
    for row in rows:
        row["per_layer_us"] = row["seconds"] / layers * 1e6
    return rows


FIELDS = ["section", "name", "dtype", "m", "n", "k", "experts", "seqs", "kv_length", "mode",
          "seconds", "tflops", "gbps", "per_layer_us"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="CSV file to write")
    parser.add_argument("--smoke", action="store_true",
                        help="tiny shapes on whatever device there is: checks the code paths only")
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    args = parser.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if not args.smoke and device.type != "cuda":
        sys.exit("no CUDA device: run with --smoke to check the code paths on a CPU")
    timer = Timer(device, 2 if args.smoke else args.iters, 1 if args.smoke else args.warmup)
    fp8 = fp8_supported(device)
    if args.smoke:
        gemm = [(m, p, n // 64, k // 64) for m, p, n, k in GEMM_SHAPES[:4]]
        tokens = [1, 8, 64]
        experts = [(n, e // 8, h // 32, max(w // 32, 4)) for n, e, h, w in EXPERT_SHAPES]
        expert_tokens = [1, 4]
        attention = [(1, 64), (4, 256)]
    else:
        gemm, tokens = GEMM_SHAPES, GEMM_TOKENS
        experts, expert_tokens = EXPERT_SHAPES, EXPERT_TOKENS
        attention = ATTENTION_SHAPES

    started = time.time()
    rows = []
    sections = [
        ("gemm", lambda: gemm_rows(device, timer, gemm, tokens, fp8)),
        ("experts", lambda: expert_rows(device, timer, experts, expert_tokens)),
        ("attention", lambda: attention_rows(device, timer, attention)),
        ("graphs", lambda: graph_rows(device, timer, layers=4 if args.smoke else 32,
                                      width=64 if args.smoke else 4096)),
    ]
    # A section that fails leaves an error row and the others still run: device time is
    # scarce, and a partial table is still data.
    for section, run in sections:
        try:
            rows += run()
        except Exception as error:  # noqa: BLE001
            rows.append(dict(section=section, name="error", mode=f"{type(error).__name__}: {error}"[:200]))
            print(f"{section}: {type(error).__name__}: {error}", file=sys.stderr)
        if device.type == "cuda":
            torch.cuda.empty_cache()
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    with open(args.out, "w", newline="") as f:
        f.write(f"# device: {name}; torch {torch.__version__}; fp8: {fp8}; "
                f"{len(rows)} rows in {time.time() - started:.0f} s\n")
        writer = csv.DictWriter(f, FIELDS, extrasaction="raise", lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in row.items()})
    print(f"{len(rows)} rows on {name} in {time.time() - started:.0f} s -> {args.out}")


if __name__ == "__main__":
    main()
