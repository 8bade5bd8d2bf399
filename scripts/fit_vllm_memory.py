#!/usr/bin/env python3
"""Calibrate deployfit's vLLM memory terms against real vLLM startup logs.

Reads ../shared/calibration/vllm_logs.csv and ../shared/catalog/models.csv (relative to the
repository root; override with --shared DIR) and prints:

  1. the row -> catalog-architecture mapping,
  2. KV bytes per token per GPU from the catalog versus vLLM's own
     "available KV cache memory / KV cache size in tokens",
  3. fits of the non-KV overhead (total non-KV memory - weights per GPU) with candidate
     formulas, with in-sample residuals and leave-one-config-out / leave-one-model-out
     cross-validation,
  4. the prediction error of weights per GPU and of the KV token capacity.

Standard library only. Nothing in here is a result: every number printed is computed
from the two CSV files. The only hand-written inputs are the mapping rules (which
catalog architecture a logged model uses) and the per-format bytes-per-parameter table,
both listed below with their reasons.

Usage: python3 scripts/fit_vllm_memory.py [--shared DIR] [--markdown]
"""

import argparse
import csv
import math
import os
import re
import statistics
import sys

GIB = 2 ** 30
BLOCK = 16  # vLLM's default block size (README: kv_tokens / gpu_blocks = 16 on standard rows)

# ---------------------------------------------------------------------------
# 1. Mapping: logged model name -> catalog hf_id. Order matters (first match wins).
#    Each rule says why the architecture is the same. Anything not matched is reported
#    as "not mapped" together with the reason from UNMAPPED_REASONS.
# ---------------------------------------------------------------------------
MAP_RULES = [
    (r"llama-3\.3-70b", "meta-llama/Llama-3.1-70B",
     "Llama-3.3-70B reuses the Llama-3.1-70B architecture (80 L, 8 KV heads, vocab 128256)"),
    (r"llama-3\.1-70b", "meta-llama/Llama-3.1-70B", "Instruct/quantized variant of the same architecture"),
    (r"llama-3\.1-405b", "meta-llama/Llama-3.1-405B", "Instruct FP8 variant of the same architecture"),
    (r"llama-3\.1-8b", "meta-llama/Llama-3.1-8B", "Instruct/quantized variant of the same architecture"),
    (r"meta-llama-3-8b$", "meta-llama/Llama-3.1-8B",
     "Llama-3-8B has the same dims as Llama-3.1-8B (32 L, 4096, 14336, 32/8 heads, vocab 128256); only RoPE scaling/context differ"),
    (r"qwen2\.5-7b-instruct", "Qwen/Qwen2.5-7B", "Instruct/quantized variant of Qwen2.5-7B (same config dims)"),
    (r"qwq-32b", "Qwen/Qwen2.5-32B", "QwQ-32B is a Qwen2.5-32B fine-tune (Qwen2 architecture, same dims)"),
    (r"kimi-dev-72b", "Qwen/Qwen2.5-72B", "Kimi-Dev-72B is a Qwen2.5-72B fine-tune (Qwen2 architecture, same dims)"),
    (r"qwen3-30b-a3b", "Qwen/Qwen3-30B-A3B", "same model"),
    (r"qwen3-235b-a22b", "Qwen/Qwen3-235B-A22B", "FP8 checkpoint of the same architecture"),
    (r"qwen/qwen3-8b$", "Qwen/Qwen3-8B", "same model"),
    (r"mixtral-8x7b", "mistralai/Mixtral-8x7B-v0.1", "Instruct variant of the same architecture"),
    (r"mistral-small-3\.1-24b", "mistralai/Mistral-Small-24B-Base-2501",
     "Mistral-Small-3.1 = Mistral-Small-3 (2501) text decoder + a vision encoder; KV dims identical, weights include the vision tower"),
    (r"gemma-2-27b", "google/gemma-2-27b", "-it variant of the same architecture"),
    (r"gemma-3-(4|12|27)b-it", None,  # filled below: google/gemma-3-{N}b-pt
     "-it checkpoint = same text decoder as -pt; the logged weights also include the SigLIP vision tower, which the catalog's params exclude"),
]

UNMAPPED_REASONS = [
    (r"gemma-2-2b", "gemma-2-2b is not in the catalog (only 9b/27b)"),
    (r"granite", "IBM Granite 3.1 is not in the catalog"),
    (r"llama-4-scout", "Llama-4-Scout is not in the catalog"),
    (r"phi-2", "phi-2 is not in the catalog (phi-4 is a different architecture)"),
    (r"kimi-vl", "Kimi-VL-A3B (DeepSeek-V3-style MLA decoder, 16B MoE) is not in the catalog; DeepSeek-V3's dims differ"),
    (r"llama-3\.2-11b-vision", "Llama-3.2-11B-Vision (cross-attention layers) is not in the catalog"),
    (r"llama-2", "Llama-2 is not in the catalog (Llama-2-7B is MHA; Llama-2-70B has vocab 32000 and a different param count)"),
    (r"qwen2\.5-0\.5b", "Qwen2.5-0.5B is not in the catalog"),
    (r"glm4-chat", "GLM-4-9B-Chat (ChatGLM architecture, 2024) is a different model from the catalog's GLM-4-9B-0414"),
    (r"gemma-4", "Gemma 4 is not in the catalog"),
    (r"qwen3\.6|qwen3\.8", "Qwen3.6/3.8 (hybrid Gated-DeltaNet) are not in the catalog"),
    (r"qwen3-4b", "Qwen3-4B is not in the catalog (only 0.6B/8B/32B dense)"),
]

# TP not in the tp column but implied by the notes; used only in a separately printed
# list, never in the main error statistics.
ASSUMED_TP = {
    57: (8, "issue title says 8x H100; TP not shown in the excerpt"),
    58: (4, "notes: 'on each of 4 worker ranks'"),
}


def map_row(name):
    n = name.lower()
    for pat, hf, why in MAP_RULES:
        m = re.search(pat, n)
        if m:
            if hf is None:
                hf = "google/gemma-3-%sb-pt" % m.group(1)
            return hf, why
    for pat, why in UNMAPPED_REASONS:
        if re.search(pat, n):
            return None, why
    return None, "no catalog architecture identified"


# ---------------------------------------------------------------------------
# Parsing helpers
# ---------------------------------------------------------------------------
def fnum(s):
    s = (s or "").strip()
    return float(s) if s else None


def note_num(notes, patterns):
    for p in patterns:
        m = re.search(p, notes, re.I)
        if m:
            return float(m.group(1))
    return None


NUM = r"(-?[\d.]+)"


def parse_row(i, r):
    notes = r["notes"]
    dq_full = r["dtype_or_quant"].lower()
    dq = re.sub(r"kv_cache_dtype=\w+", "", dq_full)   # weight format must not see the KV dtype
    d = dict(idx=i, model=r["model"], dq=r["dtype_or_quant"], gpu=r["gpu"],
             gpu_mem=fnum(r["gpu_mem_gib"]), tp=fnum(r["tp"]), util=fnum(r["gpu_mem_util"]),
             mml=fnum(r["max_model_len"]), weights=fnum(r["weights_gib"]),
             blocks=fnum(r["gpu_blocks"]), kv_tokens=fnum(r["kv_tokens"]),
             conc=fnum(r["max_concurrency"]), notes=notes)
    d["tp"] = int(d["tp"]) if d["tp"] is not None else None
    m = re.search(r"pp=(\d+)", notes) or re.search(r"pipeline_parallel_size=(\d+)", notes)
    d["pp"] = int(m.group(1)) if m else 1
    d["v1_019"] = "v0.19.0 V1" in notes
    d["avail"] = note_num(notes, [
        r"available KV cache memory " + NUM + r" GiB",
        r"available_kv_cache_memory " + NUM + r" GiB",
        r"kv_cache_size " + NUM + r" GiB",
        r"KV cache " + NUM + r" GiB",
        r"KV budget " + NUM + r" GiB"])
    d["nonkv"] = note_num(notes, [r"total non-KV memory " + NUM + r" GiB"])
    d["act_peak"] = note_num(notes, [r"torch peak increase " + NUM, r"activation peak " + NUM])
    d["non_torch"] = note_num(notes, [r"non-torch forward " + NUM, r"non_torch(?:_memory)? " + NUM])
    d["cuda_graph"] = note_num(notes, [r"CUDA graph memory " + NUM])
    d["peak_torch_total"] = note_num(notes, [r"peak_torch_memory " + NUM])
    d["failed"] = "FAILED" in notes or "failed" in notes
    # token capacity: V1 prints it; V0 prints blocks only (block size 16 in that era)
    d["kv_tokens_src"] = "kv_tokens"
    if d["kv_tokens"] is None and d["blocks"] and d["avail"] is not None:
        d["kv_tokens"] = d["blocks"] * BLOCK
        d["kv_tokens_src"] = "blocks*16"
    # --- model dtype / weight format ---------------------------------------
    if "float32" in dq:
        d["wfmt"], d["act_bytes"] = "fp32", 4
    elif "bitsandbytes" in dq or "bnb-4bit" in r["model"].lower():
        d["wfmt"], d["act_bytes"] = "int4-bnb", 2
    elif ("quantization=fp8" in dq or "fp8" in dq or "w8a8" in dq
          or ("compressed-tensors" in dq and re.search(r"fp8|w8a8", r["model"], re.I))):
        d["wfmt"], d["act_bytes"] = "8bit", 2
    else:
        d["wfmt"], d["act_bytes"] = "16bit", 2
    # KV dtype: explicit fp8, else 'auto' = the model dtype (fp32 rows store KV in fp32)
    d["kv_bytes"] = 1 if "kv_cache_dtype=fp8" in dq_full else d["act_bytes"]
    d["kv_note"] = ("fp8" if d["kv_bytes"] == 1 else
                    "auto=fp32" if d["kv_bytes"] == 4 else "auto=16-bit")
    # measured overhead (non-KV memory minus weights, per GPU)
    d["overhead"], d["overhead_src"] = None, ""
    if d["nonkv"] is not None and d["weights"] is not None:
        d["overhead"], d["overhead_src"] = d["nonkv"] - d["weights"], "total non-KV - weights"
    elif d["act_peak"] is not None and d["non_torch"] is not None:
        d["overhead"], d["overhead_src"] = d["act_peak"] + d["non_torch"], "activation peak + non-torch"
    elif None not in (d["gpu_mem"], d["util"], d["avail"], d["weights"]):
        d["overhead"], d["overhead_src"] = (d["gpu_mem"] * d["util"] - d["avail"] - d["weights"],
                                            "mem*util - KV - weights")
    return d


def load(shared):
    with open(os.path.join(shared, "catalog", "models.csv"), newline="") as f:
        cat = {r["hf_id"]: r for r in csv.DictReader(f)}
    with open(os.path.join(shared, "calibration", "vllm_logs.csv"), newline="") as f:
        rows = [parse_row(i, r) for i, r in enumerate(csv.DictReader(f))]
    for d in rows:
        hf, why = map_row(d["model"])
        if hf is not None and hf not in cat:
            hf, why = None, "mapping target %s missing from catalog" % hf
        d["arch_id"], d["map_why"] = hf, why
        d["arch"] = cat.get(hf) if hf else None
    return cat, rows


# ---------------------------------------------------------------------------
# Architecture arithmetic
# ---------------------------------------------------------------------------
def ival(a, k, default=None):
    v = (a.get(k) or "").strip()
    return int(v) if v else default


def layer_types(a):
    """(n_global, n_local, window) for a swa-hybrid model from the catalog's pattern text."""
    L = ival(a, "layers")
    pat = a["swa_layers_pattern"].lower()
    w = ival(a, "sliding_window")
    m = re.search(r"(\d+) local.*?:\s*(\d+) global", pat)
    if m:                      # "5 local : 1 global, repeating; layer 0 local"
        nl, ng = int(m.group(1)), int(m.group(2))
    else:                      # "alternating ..." = 1:1
        nl, ng = 1, 1
    period = nl + ng
    n_global = sum(1 for i in range(L) if i % period >= nl)  # layer 0 local
    return n_global, L - n_global, w


def kv_per_layer_token(a, tp, kv_bytes):
    """Per-GPU K+V bytes for one layer and one token (GQA/MHA)."""
    kvh = ival(a, "kv_heads") or ival(a, "heads")
    hd = ival(a, "head_dim") or ival(a, "hidden") // ival(a, "heads")
    return 2 * math.ceil(kvh / tp) * hd * kv_bytes


def kv_bpt(a, tp, pp, kv_bytes, context=None):
    """Per-GPU KV bytes per token.

    Returns dict with
      plain   : 2 x layers/pp x ceil(kv_heads/tp) x head_dim x kv_bytes over ALL layers
                (the brief's formula; MLA: layers x (kv_lora_rank + rope) x kv_bytes)
      vllm    : what vLLM V1's token count implies (hybrid models: layers are grouped in
                KV-cache groups of equal size, the smaller layer type sets the group size,
                each group owns a whole page, so a partly filled group is padded)
      design  : estimation.md's sliding-window rule at `context` (local layers hold
                min(context, window) tokens), expressed per token of context
    """
    L = ival(a, "layers") // pp
    att = a["attention"]
    if att == "mla":
        per = (ival(a, "mla_kv_lora_rank") + ival(a, "mla_qk_rope_dim")) * kv_bytes
        b = L * per                      # latent held whole on every TP rank
        return dict(plain=b, vllm=b, design=b, groups=1, group_size=L, padded_layers=L)
    per = kv_per_layer_token(a, tp, kv_bytes)
    plain = L * per
    if att != "swa-hybrid":
        return dict(plain=plain, vllm=plain, design=plain, groups=1, group_size=L, padded_layers=L)
    ng, nl, w = layer_types(a)
    gs = min(ng, nl)
    groups = math.ceil(ng / gs) + math.ceil(nl / gs)
    vllm = groups * gs * per
    ctx = context or 0
    design = (ng * ctx + nl * min(ctx, w)) * per / ctx if ctx else plain
    return dict(plain=plain, vllm=vllm, design=design, groups=groups, group_size=gs,
                padded_layers=groups * gs, n_global=ng, n_local=nl, window=w)


def embed_params(a):
    v, h = ival(a, "vocab"), ival(a, "hidden")
    tied = (a.get("tie_embeddings") or "").strip().lower() == "true"
    # gemma-2: the key is absent but the catalog counted it as tied
    if not (a.get("tie_embeddings") or "").strip() and a["family"] == "gemma2":
        tied = True
    return v * h * (1 if tied else 2)


BYTES_PER_PARAM_SIMPLE = {"16bit": 2.0, "fp32": 4.0, "8bit": 1.0, "int4-bnb": 0.5}


def weights_pred(a, fmt, tp, pp=1, refined=False):
    """Predicted weights per GPU (GiB). simple: params x bytes / (tp*pp).
    refined: embedding + lm_head stay 16-bit in 8-bit and bnb-4bit checkpoints
    (compressed-tensors fp8/w8a8, vLLM runtime fp8 and bitsandbytes quantize Linear layers only)."""
    P = ival(a, "params_total")
    bpp = BYTES_PER_PARAM_SIMPLE[fmt]
    if refined and fmt in ("8bit", "int4-bnb"):
        E = embed_params(a)
        total = (P - E) * bpp + E * 2
    else:
        total = P * bpp
    return total / (tp * pp) / GIB


# ---------------------------------------------------------------------------
# Small linear-algebra helpers (least squares by normal equations)
# ---------------------------------------------------------------------------
def solve(A, b):
    n = len(A)
    M = [row[:] + [b[i]] for i, row in enumerate(A)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(M[r][c]))
        M[c], M[p] = M[p], M[c]
        if abs(M[c][c]) < 1e-12:
            raise ZeroDivisionError("singular")
        for r in range(n):
            if r != c:
                f = M[r][c] / M[c][c]
                for k in range(c, n + 1):
                    M[r][k] -= f * M[c][k]
    return [M[i][n] / M[i][i] for i in range(n)]


def lstsq(X, y):
    k = len(X[0])
    A = [[sum(x[i] * x[j] for x in X) for j in range(k)] for i in range(k)]
    b = [sum(x[i] * yy for x, yy in zip(X, y)) for i in range(k)]
    return solve(A, b)


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def stats_abs(errs):
    a = [abs(e) for e in errs]
    return med(a), max(a) if a else float("nan")


# ---------------------------------------------------------------------------
# Overhead features (all known before launch)
# ---------------------------------------------------------------------------
def features(d, wpred):
    a = d["arch"]
    return dict(
        one=1.0,
        tp_gt1=1.0 if d["tp"] > 1 else 0.0,
        vocab_1e5=ival(a, "vocab") / 1e5,
        hv_tp=ival(a, "hidden") * ival(a, "vocab") / d["tp"] / 1e9,   # lm_head shard, G-params
        hv=ival(a, "hidden") * ival(a, "vocab") / 1e9,
        w=wpred,                                                      # predicted weights/GPU GiB
        layers=ival(a, "layers") / 100.0,
        mml_1e4=(d["mml"] or 0) / 1e4,
    )


CANDIDATES = [
    # name, feature list, description
    ("F1 base + r*weights", ["one", "w"], "a + r x weights_per_gpu"),
    ("F2 base + r*weights + tp", ["one", "w", "tp_gt1"], "a + r x weights_per_gpu + c x [tp>1]"),
    ("F3 base + b*vocab", ["one", "vocab_1e5"], "a + b x vocab/1e5"),
    ("F4 base + b*hidden*vocab/tp + tp", ["one", "hv_tp", "tp_gt1"], "a + b x hidden x vocab / tp + c x [tp>1]"),
    ("F5 base + b*hidden*vocab + tp", ["one", "hv", "tp_gt1"], "a + b x hidden x vocab + c x [tp>1]"),
    ("F6 base + b*vocab + tp  (PROPOSED)", ["one", "vocab_1e5", "tp_gt1"], "a + b x vocab/1e5 + c x [tp>1]"),
    ("F7 F6 + r*weights (diagnostic, 4 const)", ["one", "vocab_1e5", "tp_gt1", "w"], "F6 + r x weights"),
]
PROPOSED = "F6 base + b*vocab + tp  (PROPOSED)"


def fmt_coefs(names, coefs):
    return ", ".join("%s=%.4g" % (n, c) for n, c in zip(names, coefs))


# ---------------------------------------------------------------------------
def main():
    ap = argparse.ArgumentParser()
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--shared", default=os.path.normpath(os.path.join(here, "..", "..", "shared")))
    args = ap.parse_args()
    cat, rows = load(args.shared)

    print("=" * 100)
    print("vLLM memory calibration — %d log rows, %d catalog architectures" % (len(rows), len(cat)))
    print("=" * 100)

    # ---------------- mapping ----------------
    print("\n## 0. Mapping (row -> catalog architecture)\n")
    for d in rows:
        tgt = d["arch_id"] or "NOT MAPPED"
        print("row %2d  %-62s -> %-38s | %s" % (d["idx"], d["model"][:62], tgt, d["map_why"]))
    mapped = [d for d in rows if d["arch"]]
    print("\nmapped rows: %d of %d" % (len(mapped), len(rows)))

    # ---------------- Q1: KV bytes per token ----------------
    print("\n## 1. KV bytes per token per GPU vs vLLM's available KV memory / token capacity\n")
    print("ratio_plain = kv_tokens x bpt_plain / available   (1.000 = formula reproduces vLLM)")
    print("ratio_vllm  = same with vLLM's grouped/padded hybrid layout (equal to plain for non-hybrid)")
    print("ratio_design= same with estimation.md's sliding-window rule at context=max_model_len\n")
    hdr = "%3s %-40s %3s %2s %-11s %9s %9s %9s %8s %8s %8s %s" % (
        "row", "model", "tp", "pp", "kv", "avail_GiB", "kv_tokens", "bpt_plain",
        "r_plain", "r_vllm", "r_design", "flags")
    print(hdr)
    q1 = []
    for d in mapped:
        if d["avail"] is None or d["kv_tokens"] is None or d["tp"] is None or d["avail"] <= 0:
            continue
        b = kv_bpt(d["arch"], d["tp"], d["pp"], d["kv_bytes"], d["mml"])
        avail_b = d["avail"] * GIB
        rp = d["kv_tokens"] * b["plain"] / avail_b
        rv = d["kv_tokens"] * b["vllm"] / avail_b
        rd = d["kv_tokens"] * b["design"] / avail_b
        flags = []
        if d["arch"]["attention"] != "gqa":
            flags.append(d["arch"]["attention"])
            if d["arch"]["attention"] == "swa-hybrid":
                flags.append("groups=%dx%d layers (%d real)" % (b["groups"], b["group_size"],
                                                              ival(d["arch"], "layers")))
        if d["pp"] > 1:
            flags.append("PP=%d" % d["pp"])
        if not d["v1_019"]:
            flags.append("not v0.19")
        if d["kv_tokens_src"] != "kv_tokens":
            flags.append(d["kv_tokens_src"])
        d.update(bpt=b, r_plain=rp, r_vllm=rv, r_design=rd)
        q1.append(d)
        print("%3d %-40s %3d %2d %-11s %9.2f %9d %9d %8.4f %8.4f %8.4f %s" % (
            d["idx"], d["model"][-40:], d["tp"], d["pp"], d["kv_note"], d["avail"],
            d["kv_tokens"], b["plain"], rp, rv, rd, "; ".join(flags)))

    def summarize(label, sel, key):
        vals = [x[key] for x in sel]
        if vals:
            dev = [abs(v - 1) for v in vals]
            print("  %-52s n=%2d  ratio median %.4f  min %.4f  max %.4f  worst |1-r| %.2f%%" % (
                label, len(vals), med(vals), min(vals), max(vals), 100 * max(dev)))

    std = [d for d in q1 if d["arch"]["attention"] == "gqa" and d["pp"] == 1]
    hyb = [d for d in q1 if d["arch"]["attention"] == "swa-hybrid"]
    pps = [d for d in q1 if d["pp"] > 1]
    print()
    summarize("standard GQA, PP=1 (plain formula)", std, "r_plain")
    summarize("swa-hybrid, plain all-layer formula", hyb, "r_plain")
    summarize("swa-hybrid, vLLM grouped/padded layout", hyb, "r_vllm")
    summarize("swa-hybrid, design sliding rule @max_model_len", hyb, "r_design")
    summarize("PP>1 rows (plain, layers/pp)", pps, "r_plain")
    for d in hyb:
        # vLLM's reported token count = (num_blocks // groups) x 16
        if d["blocks"]:
            b = d["bpt"]
            print("  row %d: gpu_blocks // %d groups x 16 = %d (logged kv_tokens %d)" % (
                d["idx"], b["groups"], (int(d["blocks"]) // b["groups"]) * BLOCK, d["kv_tokens"]))

    # implied bytes/token for unmapped rows (data only, no catalog)
    print("\n  implied per-GPU bytes/token (available / kv_tokens) on unmapped rows:")
    for d in rows:
        if d["arch"] is None and d["avail"] and d["kv_tokens"] and d["avail"] > 0:
            print("    row %2d %-50s tp=%s  %.0f B/token" % (
                d["idx"], d["model"][:50], d["tp"], d["avail"] * GIB / d["kv_tokens"]))

    # ---------------- Q2: overhead fit ----------------
    print("\n## 2. Overhead = total non-KV memory - weights per GPU\n")
    fit_rows = [d for d in mapped if d["v1_019"] and d["overhead"] is not None and d["pp"] == 1]
    for d in mapped:
        d["w_pred"] = (weights_pred(d["arch"], d["wfmt"], d["tp"], d["pp"], refined=True)
                       if d["tp"] else None)
    # consistency: V1 non-KV == act peak + non-torch
    diffs = [d["overhead"] - d["act_peak"] - d["non_torch"] for d in fit_rows]
    print("check: (non-KV - weights) - (torch peak increase + non-torch forward): max |diff| %.3f GiB over %d rows"
          % (max(abs(x) for x in diffs), len(diffs)))
    # de-duplicate configurations: overhead does not depend on max_model_len / kv dtype in V1
    groups = {}
    for d in fit_rows:
        key = (d["arch_id"], d["model"], d["wfmt"], d["act_bytes"], d["tp"])
        groups.setdefault(key, []).append(d)
    cfgs = []
    for key, ds in groups.items():
        c = dict(ds[0])
        c["overhead"] = statistics.mean(x["overhead"] for x in ds)
        c["n_rows"] = len(ds)
        c["spread"] = max(x["overhead"] for x in ds) - min(x["overhead"] for x in ds)
        cfgs.append(c)
    print("fit set: %d V1 v0.19.0 mapped rows with PP=1 -> %d distinct configurations "
          "(model, weight format, dtype, tp); max spread of overhead within a configuration %.2f GiB"
          % (len(fit_rows), len(cfgs), max(c["spread"] for c in cfgs)))
    print("(max_model_len 2048..32768 and kv dtype fp8/auto do not change the overhead in these V1 logs)\n")
    print("%3s %-44s %3s %6s %7s %7s %7s %7s %6s" % ("row", "model", "tp", "vocab", "w_meas", "w_pred",
                                                   "ovh", "actpk", "nontch"))
    for c in sorted(cfgs, key=lambda c: c["idx"]):
        print("%3d %-44s %3d %6d %7.2f %7.2f %7.2f %7.2f %6.2f  (n=%d, graphs %.2f)" % (
            c["idx"], c["model"][-44:], c["tp"], ival(c["arch"], "vocab"), c["weights"], c["w_pred"],
            c["overhead"], c["act_peak"], c["non_torch"], c["n_rows"], c["cuda_graph"]))

    def feat_matrix(ds, names):
        return [[features(d, d["w_pred"])[n] for n in names] for d in ds]

    def predict(coefs, names, d):
        f = features(d, d["w_pred"])
        return sum(c * f[n] for c, n in zip(coefs, names))

    print("\nCurrent deployfit vllm engine constants: overhead = 1.2 GiB + 0.03 x weights_per_gpu")
    cur = [1.2 + 0.03 * c["w_pred"] - c["overhead"] for c in cfgs]
    cur_rows = [1.2 + 0.03 * d["w_pred"] - d["overhead"] for d in fit_rows]
    print("  residual on configs: median |e| %.2f, worst %.2f GiB; on rows: median %.2f, worst %.2f; mean bias %+.2f"
          % (*stats_abs(cur), *stats_abs(cur_rows), statistics.mean(cur)))

    results = {}
    models_in_fit = sorted(set(c["arch_id"] for c in cfgs))
    print("\n%-42s %-58s | in-sample cfg (med/worst) | rows (med/worst) | LOO-cfg (med/worst) | LOMO (med/worst)"
          % ("candidate", "constants (GiB; vocab in 1e5, h*v in 1e9)"))
    for name, names, desc in CANDIDATES:
        X = feat_matrix(cfgs, names)
        y = [c["overhead"] for c in cfgs]
        coefs = lstsq(X, y)
        res = [predict(coefs, names, c) - c["overhead"] for c in cfgs]
        res_rows = [predict(coefs, names, d) - d["overhead"] for d in fit_rows]
        loo = []
        for i in range(len(cfgs)):
            tr = cfgs[:i] + cfgs[i + 1:]
            cf = lstsq(feat_matrix(tr, names), [c["overhead"] for c in tr])
            loo.append(predict(cf, names, cfgs[i]) - cfgs[i]["overhead"])
        lomo = []
        for m in models_in_fit:
            tr = [c for c in cfgs if c["arch_id"] != m]
            te = [c for c in cfgs if c["arch_id"] == m]
            try:
                cf = lstsq(feat_matrix(tr, names), [c["overhead"] for c in tr])
            except ZeroDivisionError:
                continue
            lomo += [predict(cf, names, c) - c["overhead"] for c in te]
        results[name] = dict(coefs=coefs, names=names, res=res, loo=loo, lomo=lomo, desc=desc)
        print("%-42s %-58s | %5.2f / %5.2f | %5.2f / %5.2f | %5.2f / %5.2f | %5.2f / %5.2f" % (
            name, fmt_coefs(names, coefs)[:58], *stats_abs(res), *stats_abs(res_rows),
            *stats_abs(loo), *stats_abs(lomo)))

    P = results[PROPOSED]
    a0, bv, ct = P["coefs"]
    print("\nPROPOSED: overhead_GiB = %.3f + %.3f x vocab/1e5 + %.3f x [tp>1]" % (a0, bv, ct))
    print("  i.e. %.0f MiB + %.0f bytes x vocab  (+ %.0f MiB when tp>1)" % (
        a0 * 1024, bv * GIB / 1e5, ct * 1024))
    print("  per-configuration residuals (pred - meas, GiB):")
    for c, e, l in zip(cfgs, P["res"], P["loo"]):
        print("    row %2d %-46s tp=%d  meas %.2f  pred %.2f  resid %+.2f  LOO-resid %+.2f" % (
            c["idx"], c["model"][-46:], c["tp"], c["overhead"], c["overhead"] + e, e, l))

    # time-split check: fit on tp=1, test on tp>1 is impossible for the tp term; instead a
    # model-family split: fit on Llama+Qwen rows, test on everything else.
    fam_train = [c for c in cfgs if re.search(r"llama|qwen", c["arch_id"], re.I)]
    fam_test = [c for c in cfgs if c not in fam_train]
    cf = lstsq(feat_matrix(fam_train, P["names"]), [c["overhead"] for c in fam_train])
    st = [predict(cf, P["names"], c) - c["overhead"] for c in fam_test]
    print("  split check: fit on Llama/Qwen configs (%d) -> %s; test on the other %d configs "
          "(Gemma, Mistral, Mixtral): median |e| %.2f, worst %.2f GiB"
          % (len(fam_train), fmt_coefs(P["names"], cf), len(fam_test), *stats_abs(st)))

    # out-of-sample: unmapped V1 rows for weights-only formulas; V0-era rows for the proposed one
    print("\n  out-of-sample, V1 v0.19 rows NOT in the catalog (only F1/F2 need no catalog data; "
          "w = measured weights):")
    um = [d for d in rows if d["arch"] is None and d["v1_019"] and d["overhead"] is not None]
    for name in ("F1 base + r*weights", "F2 base + r*weights + tp"):
        R = results[name]
        errs = []
        for d in um:
            f = dict(one=1.0, w=d["weights"], tp_gt1=1.0 if d["tp"] > 1 else 0.0)
            errs.append(sum(c * f[n] for c, n in zip(R["coefs"], R["names"])) - d["overhead"])
        print("    %-30s n=%d median |e| %.2f worst %.2f GiB" % (name, len(um), *stats_abs(errs)))
    print("    measured overhead on these rows: " + ", ".join(
        "%s tp%d %.2f" % (d["model"].split("/")[-1][:24], d["tp"], d["overhead"]) for d in um))

    print("\n  other-version rows (V0 / older V1; different profiler), proposed formula vs measured:")
    for d in rows:
        if d["arch"] is None or d["v1_019"] or d["overhead"] is None or d["tp"] is None:
            continue
        pred = a0 + bv * ival(d["arch"], "vocab") / 1e5 + ct * (d["tp"] > 1)
        print("    row %2d %-40s tp=%d mml=%-6s meas %.2f (%s)  pred %.2f  resid %+.2f" % (
            d["idx"], d["model"][:40], d["tp"], int(d["mml"]) if d["mml"] else "?", d["overhead"],
            d["overhead_src"], pred, pred - d["overhead"]))
    print("  PP rows (excluded from the fit):")
    for d in mapped:
        if d["pp"] > 1 and d["overhead"] is not None and d["v1_019"]:
            pred = a0 + bv * ival(d["arch"], "vocab") / 1e5 + ct * (d["tp"] > 1)
            print("    row %2d %s pp=%d meas %.2f pred %.2f (torch peak %.2f, non-torch %.2f)" % (
                d["idx"], d["model"], d["pp"], d["overhead"], pred, d["act_peak"], d["non_torch"]))
    # CUDA graphs: a separate footprint term (not part of the KV budget in these logs)
    gc = [c for c in cfgs if c["cuda_graph"] is not None]
    gco = lstsq([[1.0, ival(c["arch"], "layers") / 100.0] for c in gc], [c["cuda_graph"] for c in gc])
    gres = [gco[0] + gco[1] * ival(c["arch"], "layers") / 100.0 - c["cuda_graph"] for c in gc]
    print("  CUDA graph memory fit (configs): graphs_GiB = %.3f + %.3f x layers/100; median |e| %.2f, worst %.2f GiB"
          % (gco[0], gco[1], *stats_abs(gres)))
    graphs = [d["cuda_graph"] for d in fit_rows if d["cuda_graph"] is not None]
    print("  CUDA graph memory (NOT deducted from the KV budget in these logs): median %.2f, range %.2f..%.2f GiB"
          % (med(graphs), min(graphs), max(graphs)))

    # ---------------- Q3: weights and KV capacity prediction ----------------
    print("\n## 3. Prediction errors\n")
    print("bytes per parameter used: 16-bit 2, fp32 4, 8-bit (fp8-dynamic, w8a8, runtime fp8, FP8 ckpt) 1,"
          " bnb 4-bit 0.5;\n'refined' keeps embedding + lm_head (vocab x hidden, x2 if untied) at 2 bytes"
          " for 8-bit/4-bit formats.\n")
    print("### 3a. weights per GPU (params_total x bytes / tp), PP=1 rows with tp stated\n")
    print("%3s %-50s %-9s %3s %7s %7s %7s %7s %7s" % ("row", "model", "format", "tp", "w_meas",
                                                      "simple", "err%", "refined", "err%"))
    wrows = [d for d in mapped if d["weights"] is not None and d["tp"] is not None and d["pp"] == 1]
    es, er = [], []
    seen = set()
    for d in wrows:
        s = weights_pred(d["arch"], d["wfmt"], d["tp"])
        r = weights_pred(d["arch"], d["wfmt"], d["tp"], refined=True)
        e1, e2 = 100 * (s / d["weights"] - 1), 100 * (r / d["weights"] - 1)
        es.append(e1)
        er.append(e2)
        key = (d["model"], d["wfmt"], d["act_bytes"], d["tp"])
        dup = key in seen
        seen.add(key)
        if not dup:
            print("%3d %-50s %-9s %3d %7.2f %7.2f %+7.1f %7.2f %+7.1f" % (
                d["idx"], d["model"][-50:], d["wfmt"],
                d["tp"], d["weights"], s, e1, r, e2))
    print("\n  all %d rows: simple  median |err| %.1f%%, worst %.1f%%" % (len(es), *stats_abs(es)))
    print("  all %d rows: refined median |err| %.1f%%, worst %.1f%%" % (len(er), *stats_abs(er)))
    nov = [e for d, e in zip(wrows, er) if not re.search(r"gemma-3|mistral-small-3\.1", d["model"], re.I)]
    print("  refined, excluding multimodal checkpoints (Gemma-3-it, Mistral-Small-3.1): n=%d median %.1f%%, worst %.1f%%"
          % (len(nov), *stats_abs(nov)))
    for i, (tp, why) in ASSUMED_TP.items():
        d = rows[i]
        if d["arch"] and d["weights"]:
            s = weights_pred(d["arch"], d["wfmt"], tp)
            r = weights_pred(d["arch"], d["wfmt"], tp, refined=True)
            print("  assumed tp=%d for row %d (%s): meas %.2f simple %.2f (%+.1f%%) refined %.2f (%+.1f%%)"
                  % (tp, i, why, d["weights"], s, 100 * (s / d["weights"] - 1), r, 100 * (r / d["weights"] - 1)))
    for d in mapped:
        if d["pp"] > 1 and d["weights"] is not None:
            s = weights_pred(d["arch"], d["wfmt"], d["tp"] or 1, d["pp"])
            print("  PP row %d (pp=%d): meas %.2f vs params x 2 / pp %.2f (%+.1f%%) — rank 0 holds the embedding"
                  % (d["idx"], d["pp"], d["weights"], s, 100 * (s / d["weights"] - 1)))

    print("\n### 3b. KV token capacity: available = gpu_mem x util - weights - overhead; "
          "tokens = floor(available / (16 x bpt)) x 16\n")
    krows = [d for d in q1 if None not in (d["gpu_mem"], d["util"]) and d["pp"] == 1]
    lomo_coefs = {}
    for m in models_in_fit:
        tr = [c for c in cfgs if c["arch_id"] != m]
        lomo_coefs[m] = lstsq(feat_matrix(tr, P["names"]), [c["overhead"] for c in tr])

    def ovh(d, coefs):
        return coefs[0] + coefs[1] * ival(d["arch"], "vocab") / 1e5 + coefs[2] * (d["tp"] > 1)

    def tokens(d, avail_gib, layout):
        b = d["bpt"][layout]
        if d["bpt"]["groups"] > 1 and layout == "vllm":
            per_block = BLOCK * b / d["bpt"]["groups"]      # one page holds group_size layers
            nb = math.floor(avail_gib * GIB / per_block)
            return (nb // d["bpt"]["groups"]) * BLOCK
        return math.floor(avail_gib * GIB / (BLOCK * b)) * BLOCK

    scen = [
        ("A measured weights + measured overhead (KV formula only)", lambda d: d["weights"], lambda d: d["overhead"]),
        ("B measured weights + proposed overhead", lambda d: d["weights"], lambda d: ovh(d, P["coefs"])),
        ("C predicted weights (refined) + proposed overhead", lambda d: weights_pred(d["arch"], d["wfmt"], d["tp"], refined=True),
         lambda d: ovh(d, P["coefs"])),
        ("D predicted weights (simple) + proposed overhead", lambda d: weights_pred(d["arch"], d["wfmt"], d["tp"]),
         lambda d: ovh(d, P["coefs"])),
        ("E as C, overhead constants fitted without this row's model (LOMO)",
         lambda d: weights_pred(d["arch"], d["wfmt"], d["tp"], refined=True),
         lambda d: ovh(d, lomo_coefs.get(d["arch_id"], P["coefs"]))),
        ("F as C with current deployfit overhead 1.2 + 3% weights",
         lambda d: weights_pred(d["arch"], d["wfmt"], d["tp"], refined=True),
         lambda d: 1.2 + 0.03 * weights_pred(d["arch"], d["wfmt"], d["tp"], refined=True)),
    ]
    per_row = {d["idx"]: {} for d in krows}
    print("rows: %d (mapped, PP=1, gpu_mem and util stated); hybrids use vLLM's grouped layout\n" % len(krows))
    for label, wf, of in scen:
        errs = []
        for d in krows:
            if d["overhead"] is None and of(d) is None:
                continue
            if label.startswith("A") and d["overhead"] is None:
                continue
            av = d["gpu_mem"] * d["util"] - wf(d) - of(d)
            t = tokens(d, av, "vllm")
            e = 100 * (t / d["kv_tokens"] - 1)
            per_row[d["idx"]][label[0]] = e
            errs.append(e)
        v1 = [per_row[d["idx"]][label[0]] for d in krows if d["v1_019"] and label[0] in per_row[d["idx"]]]
        v0 = [per_row[d["idx"]][label[0]] for d in krows if not d["v1_019"] and label[0] in per_row[d["idx"]]]
        print("  %-66s all n=%2d: median %4.1f%% worst %5.1f%% | v0.19 H100 n=%2d: median %4.1f%% worst %5.1f%%"
              " | older/RTX3090 n=%d: %s" % (
                  label, len(errs), *stats_abs(errs), len(v1), *stats_abs(v1), len(v0),
                  ", ".join("%+.1f%%" % e for e in v0)))
    for k in "CDE":
        tm = [per_row[d["idx"]][k] for d in krows if d["v1_019"] and k in per_row[d["idx"]]
              and not re.search(r"gemma-3|mistral-small-3\.1", d["model"], re.I)]
        print("  scenario %s, v0.19 rows excluding multimodal checkpoints (Gemma-3-it, Mistral-Small-3.1): "
              "n=%d median %.1f%% worst %.1f%%" % (k, len(tm), *stats_abs(tm)))
    print("\n  per row (error % of kv_tokens, scenarios A..F):")
    print("  %3s %-44s %3s %9s %s" % ("row", "model", "tp", "kv_tokens", "    A      B      C      D      E      F"))
    for d in krows:
        pr = per_row[d["idx"]]
        print("  %3d %-44s %3d %9d %s" % (d["idx"], d["model"][-44:], d["tp"], d["kv_tokens"],
                                          " ".join("%+6.1f" % pr[k] if k in pr else "     -" for k in "ABCDEF")))
    # hybrid: what the design's sliding-window rule would claim
    print("\n  hybrids: tokens claimed by the design's sliding-window rule (at context=max_model_len) vs logged:")
    for d in krows:
        if d["arch"]["attention"] == "swa-hybrid":
            t = math.floor(d["avail"] * GIB / d["bpt"]["design"])
            print("    row %2d %-28s logged %7d  plain %7d  vLLM-layout %7d  design-SWA %7d (%.2fx)" % (
                d["idx"], d["model"][-28:], d["kv_tokens"], tokens(d, d["avail"], "plain"),
                tokens(d, d["avail"], "vllm"), t, t / d["kv_tokens"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
