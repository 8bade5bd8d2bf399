#!/usr/bin/env python3
"""Engine memory beyond weights and KV cache, checked against vLLM startup logs.

Reads ../shared/calibration/vllm_logs.csv (standard library only) and prints the tables of
docs/calibration-vllm.md section 4:

1. the CUDA-graph pool `a + b x layers`, fitted on the Llama and Qwen rows and tested on the
   other families (held out by model family), and fitted on all rows;
2. the profiling forward pass per batched token, 6 B x intermediate + 6 B x hidden (the
   layer's bf16 shapes), against the rows that measure it: the V0 rows that profile a whole
   max_model_len (Llama-3.1-8B: rows 52, 53), the V0 Qwen rows (54, 55) and the V1 rows whose
   sampler pass is small (Mixtral, vocabulary 32k).

The layer and width figures are each model's config.json (the catalog's, stdlib/models.deploy,
where the model is in it).
"""
import argparse
import csv
import re
import statistics

GIB = 2**30

# logged model (lower-case substring) -> (family, layers, hidden, intermediate, vocab)
MODELS = [
    ("llama-3.3-70b", "llama", 80, 8192, 28672, 128256),
    ("llama-3.1-70b", "llama", 80, 8192, 28672, 128256),
    ("llama-3.1-8b", "llama", 32, 4096, 14336, 128256),
    ("meta-llama-3-8b", "llama", 32, 4096, 14336, 128256),
    ("qwen2.5-7b", "qwen", 28, 3584, 18944, 152064),
    ("qwen2.5-0.5b", "qwen", 24, 896, 4864, 151936),
    ("kimi-dev-72b", "qwen", 80, 8192, 29568, 152064),
    ("qwen3-30b-a3b", "qwen", 48, 2048, 6144, 151936),
    ("qwen/qwen3-8b", "qwen", 36, 4096, 12288, 151936),
    ("mixtral-8x7b", "mistral", 32, 4096, 14336, 32000),
    ("mistral-small-3.1", "mistral", 40, 5120, 32768, 131072),
    ("gemma-2-27b", "gemma", 46, 4608, 36864, 256000),
    ("gemma-3-4b", "gemma", 34, 2560, 10240, 262208),
    ("gemma-3-12b", "gemma", 48, 3840, 15360, 262208),
    ("gemma-3-27b", "gemma", 62, 5376, 21504, 262208),
]


def model(row):
    name = row["model"].lower()
    for pattern, *dims in MODELS:
        if pattern in name:
            return dims
    return None


def note(notes, key):
    m = re.search(re.escape(key) + r"\s*([0-9.]+)", notes)
    return float(m.group(1)) if m else None


def fit(points):
    """Least squares y = a + b x."""
    xs, ys = zip(*points)
    mx, my = statistics.mean(xs), statistics.mean(ys)
    b = sum((x - mx) * (y - my) for x, y in points) / sum((x - mx) ** 2 for x in xs)
    return my - b * mx, b


def summary(errors):
    e = sorted(abs(x) for x in errors)
    return statistics.median(e), e[-1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", default="../shared")
    args = ap.parse_args()
    rows = list(csv.DictReader(open(f"{args.shared}/calibration/vllm_logs.csv")))

    print("## 1. CUDA-graph pool (v0.19 rows that log it), GiB")
    graphs = []
    for i, r in enumerate(rows):
        dims = model(r)
        g = note(r["notes"], "CUDA graph memory")
        if dims is None or g is None or "pp=1" not in r["notes"]:
            continue
        graphs.append((i, dims[0], dims[1], g))
    train = [(layers, g) for _, fam, layers, g in graphs if fam in ("llama", "qwen")]
    test = [(layers, g) for _, fam, layers, g in graphs if fam not in ("llama", "qwen")]
    a, b = fit(train)
    med, worst = summary([a + b * x - y for x, y in test])
    print(f"fit on Llama + Qwen ({len(train)} rows): {a:.3f} + {b * 100:.3f} x layers/100")
    print(f"  held out (Gemma, Mistral, Mixtral; {len(test)} rows): median |error| {med:.3f}, worst {worst:.3f}")
    a, b = fit(train + test)
    med, worst = summary([a + b * x - y for x, y in train + test])
    print(f"fit on all {len(train + test)} rows: {a:.3f} + {b * 100:.3f} x layers/100, median {med:.3f}, worst {worst:.3f}")
    a0, b0 = 0.325, 1.653 / 100
    med, worst = summary([a0 + b0 * x - y for x, y in train + test])
    print(f"applied (0.325 + 1.653 x layers/100): median {med:.3f}, worst {worst:.3f}")

    print("\n## 2. Profiling forward pass: 6 B x intermediate + 6 B x hidden per token")
    print("row  model                         tokens  predicted GiB  measured GiB  what")
    for i, r in enumerate(rows):
        dims = model(r)
        if dims is None:
            continue
        notes = r["notes"]
        fam, layers, hidden, inter, vocab = dims
        per_token = 6 * inter + 6 * hidden
        measured = None
        what = ""
        peak = note(notes, "peak_torch_memory")
        if peak is not None and r["weights_gib"]:
            measured, what = peak - float(r["weights_gib"]), "V0, pass = max_model_len"
            tokens = int(r["max_model_len"])
        elif "V0" in notes and note(notes, "activation peak") is not None and r["max_model_len"]:
            measured, what = note(notes, "activation peak"), "V0, pass = max_model_len"
            tokens = int(r["max_model_len"])
        elif fam == "mistral" and vocab < 50000 and note(notes, "torch peak increase") is not None:
            measured = note(notes, "torch peak increase")
            what = "V1, 8192 tokens (+ 0.337 GiB base)"
            tokens = 8192
            per_token_pred = per_token * tokens / GIB + 0.337
            print(f"{i:>3}  {r['model'][:28]:<28} {tokens:>7}  {per_token_pred:>13.2f}  {measured:>12.2f}  {what}")
            continue
        if measured is None:
            continue
        pred = per_token * tokens / GIB
        print(f"{i:>3}  {r['model'][:28]:<28} {tokens:>7}  {pred:>13.2f}  {measured:>12.2f}  {what}")


if __name__ == "__main__":
    main()
