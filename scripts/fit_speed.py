#!/usr/bin/env python3
"""Calibrate deployfit's SPEED model (decode and prefill tokens/s) against llama-bench rows.

Reads (relative to the repository root; override with --shared DIR / --catalog FILE):
  ../shared/calibration/llamacpp_bench.csv   282 llama-bench rows (pp*/tg*)
  ../shared/calibration/other_tps.csv        43 other measured speeds (report only)
  tests/fixtures/calibration/llamacpp_hbm_bench.csv
                                             56 llama-bench rows on HBM data-centre cards (A100 SXM4
                                             80GB, H100 PCIe), same columns, one source URL per row
                                             (--supplement FILE); they fit the HBM decode eta only
  ../shared/catalog/models.csv               architectures (layers, hidden, kv heads, head_dim)
  stdlib/gpus.deploy                         deployfit's GPU catalog (bandwidth, bf16)

and prints:
  1. the device -> catalog mapping (family, backend), and the rows that cannot be mapped;
  2. decode fits: the plain-bandwidth baseline and physical candidates, with
     leave-one-device-out (LODO) and a fixed 50/50 device split;
  3. prefill fits (compute-bound, MFU per family) with the same hold-out;
  4. the held-out spread of measured/predicted (p10, p90) per quantity -> the [low, high]
     range deployfit shows;
  5. how the chosen decode/prefill model does on other_tps.csv (report only).

Standard library only. Nothing printed is hard-coded: every constant is fitted here.
Hand-written inputs are (a) the device mapping rules, (b) a small SUPPLEMENT of public
spec-sheet numbers for devices the catalog lacks (each marked), (c) model architectures
for the three bench models missing from models.csv, (d) the bits-per-weight used only to
impute the size of the few rows whose size the source does not print.

Usage: python3 scripts/fit_speed.py [--shared DIR] [--catalog FILE] [--supplement CSV] [--export CSV]
       [--export-hbm CSV]

--export CSV writes the mapped bench rows with the inputs used for each (see export_rows) and
exits without printing the report; tests/it/speed_accuracy.rs reads the result.
"""

import argparse
import csv
import math
import os
import random
import re
import statistics
import sys

GB = 1e9
GIB = 2 ** 30

# ---------------------------------------------------------------------------
# 1. Device mapping.  (regex on the lower-cased device text with any "Nx " prefix removed,
#    catalog key or None, family, supplement, note).  First match wins.
#    SUPPLEMENT values are public spec-sheet numbers for devices the catalog lacks; they
#    are used only where the catalog has no value and are flagged in the mapping table.
# ---------------------------------------------------------------------------
DEVICE_RULES = [
    (r"geforce rtx 3070", None, "nvidia_consumer",
     {"bandwidth": 448.0}, "not in catalog; 256-bit GDDR6 14 Gbps = 448 GB/s (NVIDIA spec); no tensor peak entered"),
    (r"geforce rtx 3080 ti", "rtx_3080_ti", "nvidia_consumer", {}, "catalog has no bf16 -> no prefill"),
    (r"geforce rtx 3080", "rtx_3080", "nvidia_consumer", {}, ""),
    (r"geforce rtx 3090 ti", "rtx_3090_ti", "nvidia_consumer", {}, ""),
    (r"geforce rtx 3090", "rtx_3090", "nvidia_consumer", {}, ""),
    (r"geforce rtx 4090", "rtx_4090", "nvidia_consumer", {}, ""),
    (r"geforce rtx 2080 ti", None, "nvidia_consumer",
     {"bandwidth": 616.0}, "not in catalog; 352-bit GDDR6 14 Gbps = 616 GB/s (NVIDIA spec); no tensor peak entered"),
    (r"geforce rtx 2080\b", None, "nvidia_consumer",
     {"bandwidth": 448.0}, "not in catalog; 256-bit GDDR6 14 Gbps = 448 GB/s (NVIDIA spec)"),
    (r"rtx 4000 ada", None, "nvidia_workstation",
     {"bandwidth": 360.0}, "not in catalog; 160-bit GDDR6 18 Gbps = 360 GB/s (NVIDIA spec); no tensor peak entered"),
    (r"rtx 6000 ada", "rtx_6000_ada", "nvidia_workstation", {}, ""),
    (r"rtx a6000", "rtx_a6000", "nvidia_workstation", {}, ""),
    (r"a100 80gb pcie", "a100_pcie_80gb", "nvidia_datacenter", {}, ""),
    (r"a100-sxm4-80gb", "a100_sxm4_80gb", "nvidia_datacenter", {}, "supplement (llamacpp_hbm_bench.csv)"),
    (r"h100 pcie", "h100_pcie", "nvidia_datacenter", {}, "supplement (llamacpp_hbm_bench.csv)"),
    (r"h100", "h100_sxm5", "nvidia_datacenter", {},
     "other_tps only: variant not stated; SXM5 assumed"),
    (r"radeon ai pro r9700", None, "amd",
     {"bandwidth": 640.0}, "not in catalog; 256-bit GDDR6 20 Gbps = 640 GB/s (AMD spec)"),
    (r"apple m1 max", "m1_max", "apple",
     {"bandwidth": 400.0}, "catalog entry has no bandwidth; Apple spec 400 GB/s"),
    (r"apple m1 \(8-core", None, "apple", {"bandwidth": 68.25}, "not in catalog; row states 68 GB/s"),
    (r"apple m2 max", "m2_max_96gb", "apple", {}, ""),
    (r"apple m2 ultra", "m2_ultra_192gb", "apple", {}, ""),
    (r"apple m3 max", "m3_max", "apple", {}, ""),
    (r"apple m3 pro", None, "apple", {"bandwidth": 150.0}, "not in catalog; row states 150 GB/s"),
    (r"apple m4 pro", "m4_pro_64gb", "apple", {}, ""),
    (r"apple m4 \(10-core", None, "apple", {"bandwidth": 120.0}, "not in catalog; row states 120 GB/s"),
]
UNMAPPED = [
    (r"iris xe", "shared system memory: bandwidth depends on the DDR4/LPDDR4x configuration, which the source does not state; no catalog entry"),
    (r"cix cp8180", "CPU (Arm SoC) not in catalog; memory bandwidth not stated by the source"),
    (r"arm|cpu", "CPU host, not in catalog"),
]
# Apple GPU peak: cores x 128 FP32 ALUs x 2 FLOP x clock.  Apple GPUs run FP16 matmul at
# the FP32 ALU rate, so this is the dense fp16 peak llama.cpp's Metal kernels can reach.
# Clocks are public but approximate (M3/M4 especially); the catalog has no Apple peak.
APPLE_CLOCK_GHZ = {"m1": 1.278, "m2": 1.398, "m3": 1.60, "m4": 1.80}

# Backend classification of the `backend`/`engine` text.
def backend_of(text):
    t = text.lower()
    for key, name in (("cuda", "CUDA"), ("rocm", "ROCm"), ("hip", "ROCm"), ("metal", "Metal"),
                      ("vulkan", "Vulkan"), ("sycl", "SYCL"), ("cpu", "CPU")):
        if key in t:
            return name
    return "?"

# ---------------------------------------------------------------------------
# Model architectures (needed for KV bytes per step and the attention FLOP term).
# From models.csv where present; the three below are the published HF configs.
# ---------------------------------------------------------------------------
ARCH_EXTRA = {
    # name: (params, layers, hidden, kv_heads, head_dim)
    "llama2-7b": (6.74e9, 32, 4096, 32, 128),      # LLaMA-1/2-7B, CodeLlama-7B (MHA)
    "tinyllama-1.1b": (1.10e9, 22, 2048, 4, 64),   # TinyLlama-1.1B config
    "mistral-7b": (7.24e9, 32, 4096, 8, 128),      # Mistral-7B v0.1/0.2 (same dims as v0.3)
    "qwen3-4b": (4.02e9, 36, 2560, 8, 128),        # Qwen3-4B config
    "ministral-8b": (8.02e9, 36, 4096, 8, 128),    # Ministral-8B-2410 config
}
MODEL_RULES = [  # regex on lower-cased model text -> models.csv hf_id or ARCH_EXTRA key
    (r"70b", "meta-llama/Llama-3.1-70B"),
    (r"llama-3\.2-3b", "meta-llama/Llama-3.2-3B"),
    (r"(meta-llama-3-8b|llama-3\.1-8b|llama-3-8b)", "meta-llama/Llama-3.1-8B"),
    (r"tinyllama", "tinyllama-1.1b"),
    (r"(llama-2-7b|llama 7b|codellama-7b)", "llama2-7b"),
    (r"(mistral-7b|llama-family 7b)", "mistral-7b"),
    (r"qwen3-4b", "qwen3-4b"),
    (r"qwen3-8b", "Qwen/Qwen3-8B"),
    (r"ministral-8b", "ministral-8b"),
    (r"deepseek-r1-distill-qwen-14b", "Qwen/Qwen2.5-14B"),
    (r"qwen2\.5-72b", "Qwen/Qwen2.5-72B"),
]
FLOAT_QUANTS = {"F16", "BF16", "F32"}
KV_BYTES = 2  # llama-bench default f16 KV cache


def pct(xs, q):
    xs = sorted(xs)
    if not xs:
        return float("nan")
    k = (len(xs) - 1) * q
    f = math.floor(k)
    c = min(f + 1, len(xs) - 1)
    return xs[f] + (xs[c] - xs[f]) * (k - f)


def ape_stats(pairs):
    """pairs: (measured, predicted). Returns (n, median APE %, p90 APE %)."""
    e = [abs(p / m - 1) * 100 for m, p in pairs]
    return len(e), (statistics.median(e) if e else float("nan")), pct(e, 0.9)


def solve(a, b):
    """Gaussian elimination with partial pivoting (small dense systems)."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(m[r][c]))
        if abs(m[p][c]) < 1e-300:
            raise ValueError("singular")
        m[c], m[p] = m[p], m[c]
        for r in range(n):
            if r != c:
                f = m[r][c] / m[c][c]
                for k in range(c, n + 1):
                    m[r][k] -= f * m[c][k]
    return [m[i][n] / m[i][i] for i in range(n)]


def wls_relative(xs, ys, ridge=1e-9):
    """Minimise sum((x.beta - y)/y)^2; returns beta. x rows are feature lists."""
    k = len(xs[0])
    ata = [[0.0] * k for _ in range(k)]
    atb = [0.0] * k
    for x, y in zip(xs, ys):
        w = 1.0 / (y * y)
        for i in range(k):
            atb[i] += w * x[i] * y
            for j in range(k):
                ata[i][j] += w * x[i] * x[j]
    for i in range(k):
        ata[i][i] += ridge * (ata[i][i] + 1e-30)
    return solve(ata, atb)


# ---------------------------------------------------------------------------
# Loading
# ---------------------------------------------------------------------------
def load_catalog(path):
    gpus, cur = {}, None
    for line in open(path, encoding="utf-8"):
        s = line.strip()
        m = re.match(r"gpu\s+(\w+)\s*\{", s)
        if m:
            cur = m.group(1)
            gpus[cur] = {}
            continue
        if s.startswith("}"):
            cur = None
            continue
        if cur:
            m = re.match(r"(\w+)\s*=\s*(.+)$", s)
            if m:
                key, val = m.group(1), m.group(2)
                n = re.match(r"\$?([0-9.]+)", val)
                if key in ("bandwidth", "bf16", "fp8", "memory") and n:
                    gpus[cur][key] = float(n.group(1))
                elif key in ("name", "vendor"):
                    gpus[cur][key] = val.strip('"')
    return gpus


def load_models(path):
    arch = {}
    for r in csv.DictReader(open(path, encoding="utf-8")):
        try:
            arch[r["hf_id"]] = (float(r["params_active"] or r["params_total"]), int(r["layers"]),
                                int(r["hidden"]), int(r["kv_heads"]), int(r["head_dim"]))
        except (ValueError, KeyError):
            pass
    arch.update(ARCH_EXTRA)
    return arch


def map_device(dev, catalog):
    """-> dict(count, key, family, bandwidth, peak, bw_src, peak_src, note) or (None, reason)."""
    d = dev.lower()
    count = 1
    m = re.match(r"\s*(\d+)x\s+(.*)", d)
    if m:
        count, d = int(m.group(1)), m.group(2)
    for rx, key, fam, sup, note in DEVICE_RULES:
        if re.search(rx, d):
            entry = catalog.get(key, {}) if key else {}
            bw, bw_src = entry.get("bandwidth"), "catalog"
            if bw is None and "bandwidth" in sup:
                bw, bw_src = sup["bandwidth"], "supplement"
            peak, peak_src = entry.get("bf16"), "catalog bf16"
            if peak is None and fam == "apple":
                gen = re.search(r"apple (m\d)", d).group(1)
                cores = re.search(r"(\d+)-core gpu", d)
                if cores:
                    peak = int(cores.group(1)) * 128 * 2 * APPLE_CLOCK_GHZ[gen] / 1000
                    peak_src = "apple cores x clock (approx.)"
                else:
                    peak_src = "none (GPU core count not stated)"
            elif peak is None:
                peak_src = "none"
            ident = key or re.sub(r"\W+", "_", rx).strip("_")
            chip = re.sub(r"_(\d+gb)$", "", ident)
            vendor = fam.split("_")[0]
            # GeForce catalog tensor figures are FP32-accumulate (half rate); llama.cpp/cuBLAS
            # half-precision GEMMs accumulate in FP16, which runs at 2x on GeForce.
            peak16 = peak * 2 if (peak and fam == "nvidia_consumer") else peak
            return {"count": count, "key": key, "group": chip, "family": fam, "vendor": vendor,
                    "peak_fp16acc": peak16, "bandwidth": bw,
                    "peak": peak, "bw_src": bw_src, "peak_src": peak_src, "note": note}, None
    for rx, reason in UNMAPPED:
        if re.search(rx, d):
            return None, reason
    return None, "no mapping rule"


def map_model(name, arch):
    n = name.lower()
    for rx, key in MODEL_RULES:
        if re.search(rx, n):
            return key, arch.get(key)
    return None, None


def tokens_of(test):
    m = re.match(r"(pp|tg)(\d+|_default)", test)
    kind, n = m.group(1), m.group(2)
    if n == "_default":
        n = "512" if kind == "pp" else "128"  # build-3622 defaults (README)
    return kind, int(n)


def load_bench(path, catalog, arch):
    rows, unmapped = [], []
    raw = list(csv.DictReader(open(path, encoding="utf-8")))
    # bits/weight per quant from the rows that print both size and params (for imputation).
    bpw = {}
    for r in raw:
        if r["size_gib"] and r["params_b"]:
            bpw.setdefault(r["quant"], []).append(float(r["size_gib"]) * GIB * 8 / (float(r["params_b"]) * 1e9))
    bpw = {q: statistics.median(v) for q, v in bpw.items()}
    for i, r in enumerate(raw):
        dev, why = map_device(r["device"], catalog)
        mkey, a = map_model(r["model"], arch)
        kind, ntok = tokens_of(r["test"])
        base = {"i": i + 2, "device": r["device"], "backend": backend_of(r["backend"]),
                "model": r["model"], "quant": r["quant"], "test": r["test"], "tps": float(r["tps"]),
                "source": r["source"]}
        if dev is None or dev["bandwidth"] is None:
            unmapped.append((base, why or "no bandwidth"))
            continue
        if a is None:
            unmapped.append((base, "model architecture unknown"))
            continue
        params = float(r["params_b"]) * 1e9 if r["params_b"] else a[0]
        imputed = False
        if r["size_gib"]:
            size = float(r["size_gib"]) * GIB
        else:
            size = params * bpw[r["quant"]] / 8
            imputed = True
        base.update(dev)
        base.update({"params": params, "size": size, "size_imputed": imputed, "kind": kind, "ntok": ntok,
                     "layers": a[1], "hidden": a[2],
                     "kv_per_tok": 2 * a[1] * a[3] * a[4] * KV_BYTES,
                     "qclass": "float" if r["quant"] in FLOAT_QUANTS else "quant"})
        rows.append(base)
    return rows, unmapped, bpw


# ---------------------------------------------------------------------------
# Decode models.  Every model predicts seconds per token; tps = 1 / time.
#   bytes(row) = weights (+ KV of the average context, ntok/2, when use_kv)
#   time = bytes / (eta_family * BW) + t0_backend [* layers/32 when per_layer]
# Coefficients are linear (1/eta, t0), so a relative-error weighted least squares fits them.
# ---------------------------------------------------------------------------
class DecodeModel:
    def __init__(self, name, eta_by=None, t0_by=None, use_kv=False, per_layer=False, fixed_eta=None, cap_by=None):
        self.name, self.eta_by, self.t0_by, self.cap_by = name, eta_by, t0_by, cap_by
        self.use_kv, self.per_layer, self.fixed_eta = use_kv, per_layer, fixed_eta

    def step_bytes(self, r):
        b = r["size"]
        if self.use_kv:
            b += r["kv_per_tok"] * r["ntok"] / 2
        return b

    def feats(self, r):
        keys, vals = [], []
        x = self.step_bytes(r) / (r["bandwidth"] * GB)
        keys.append(("inv_eta", r[self.eta_by] if self.eta_by else "all"))
        vals.append(x)
        if self.cap_by:
            # kernel-throughput cap C (GB/s) of the backend's mat-vec kernels: time += bytes / C
            keys.append(("inv_cap", r[self.cap_by]))
            vals.append(self.step_bytes(r) / GB)
        if self.t0_by:
            keys.append(("t0", r[self.t0_by]))
            vals.append(r["layers"] / 32 if self.per_layer else 1.0)
        return keys, vals

    def fit(self, rows):
        if self.fixed_eta:
            self.coef = {("inv_eta", "all"): 1 / self.fixed_eta}
            return self
        names = sorted({k for r in rows for k in self.feats(r)[0]})
        idx = {k: j for j, k in enumerate(names)}
        xs, ys = [], []
        for r in rows:
            x = [0.0] * len(names)
            for k, v in zip(*self.feats(r)):
                x[idx[k]] += v
            xs.append(x)
            ys.append(1 / r["tps"])
        beta = wls_relative(xs, ys)
        self.coef = dict(zip(names, beta))
        # A negative t0 is unphysical: drop it (t0 = 0) and refit.
        neg = [k for k, v in self.coef.items() if k[0] in ("t0", "inv_cap") and v < 0]
        if neg:
            keep = [k for k in names if k not in neg]
            kidx = [idx[k] for k in keep]
            beta = wls_relative([[x[j] for j in kidx] for x in xs], ys)
            self.coef = dict(zip(keep, beta))
            for k in neg:
                self.coef[k] = 0.0
        self.pooled = None
        return self

    def predict(self, r, fallback=None):
        t = 0.0
        for k, v in zip(*self.feats(r)):
            if k not in self.coef:
                if fallback is None:
                    return None
                # unseen family/backend: the pooled fit's value for that term
                kk = (k[0], "all") if k[0] == "inv_eta" else k
                c = fallback.coef.get(kk)
                if c is None and k[0] in ("t0", "inv_cap"):
                    c = statistics.median([vv for kk2, vv in self.coef.items() if kk2[0] == k[0]])
                t += c * v
            else:
                t += self.coef[k] * v
        return 1 / t


class TwoStageDecodeModel(DecodeModel):
    """M4 fitted on the shared rows only, then the eta of the families the supplement adds
    (HBM data-centre cards) refitted on all of that family's rows with every other term held.

    The supplement adds only HBM rows, so it should move only the HBM eta: t0 per backend and
    the other families' eta stay as the 86 shared rows (20 devices, 3 backends) fit them.
    Stage 2 is the one-parameter relative least squares
        min sum_i ((x_i k + t0_i) tps_i - 1)^2  ->  k = sum x_i tps_i (1 - t0_i tps_i) / sum (x_i tps_i)^2
    with x_i = bytes_i / BW_i and k = 1/eta.  Used inside LODO like any model: a held-out device
    is absent from both stages."""

    def __init__(self, name):
        super().__init__(name, eta_by="family", t0_by="backend", use_kv=True, per_layer=True)

    def fit(self, rows):
        base = [r for r in rows if not r.get("supplement")]
        super().fit(base)
        for fam in sorted({r["family"] for r in rows if r.get("supplement")}):
            own = [r for r in rows if r["family"] == fam]
            num = den = 0.0
            for r in own:
                x = self.step_bytes(r) / (r["bandwidth"] * GB)
                t0 = sum(self.coef.get(k, 0.0) * v for k, v in zip(*self.feats(r)) if k[0] == "t0")
                num += x * r["tps"] * (1 - t0 * r["tps"])
                den += (x * r["tps"]) ** 2
            self.coef[("inv_eta", fam)] = num / den
        return self


# ---------------------------------------------------------------------------
# Prefill model: time/token = max(FLOP/(peak*mfu), bytes/(ubatch*eta*BW))
#   FLOP/token = 2*params + a_att * 4*layers*hidden*T     (design's attention term)
#   mfu per (family[, quant class]); a_att one global constant found by a 1-D search.
# ---------------------------------------------------------------------------
class PrefillModel:
    def __init__(self, name, by=("family",), a_att=None, fixed_mfu=None, peak="peak"):
        self.name, self.by, self.a_fixed, self.fixed_mfu, self.pk = name, by, a_att, fixed_mfu, peak

    def key(self, r):
        return tuple(r[b] for b in self.by)

    def flop(self, r, a):
        return 2 * r["params"] + a * 4 * r["layers"] * r["hidden"] * r["ntok"]

    def _fit_k(self, rows, a):
        groups = {}
        for r in rows:
            x = self.flop(r, a) / (r[self.pk] * 1e12) * r["tps"]  # = 1/mfu implied
            groups.setdefault(self.key(r), []).append(x)
        # relative LS for time = k*x  -> k = sum(x/y)/sum((x/y)^2) with y = 1/tps
        return {g: sum(v) / sum(x * x for x in v) for g, v in groups.items()}

    def fit(self, rows):
        if self.fixed_mfu:
            self.a, self.k = 0.0, None
            return self
        best = None
        grid = [self.a_fixed] if self.a_fixed is not None else [i / 20 for i in range(0, 81)]
        for a in grid:
            k = self._fit_k(rows, a)
            err = sum((self.flop(r, a) / (r[self.pk] * 1e12) * r["tps"] * k[self.key(r)] - 1) ** 2 for r in rows)
            if best is None or err < best[0]:
                best = (err, a, k)
        _, self.a, self.k = best
        self.mfu = {g: 1 / v for g, v in self.k.items()}
        return self

    def predict(self, r, fallback=None):
        if self.fixed_mfu:
            mfu = self.fixed_mfu
        else:
            mfu = self.mfu.get(self.key(r))
            if mfu is None:
                if fallback is None:
                    return None
                mfu = fallback.mfu.get(("all",) * len(fallback.by)) or statistics.median(fallback.mfu.values())
        return (r[self.pk] * 1e12 * mfu) / self.flop(r, self.a)


# ---------------------------------------------------------------------------
# Hold-out machinery
# ---------------------------------------------------------------------------
def holdout_lodo(make, rows, pooled_make=None):
    """Leave-one-device-out: for each device group, fit on the others, predict it."""
    out = []
    for g in sorted({r["group"] for r in rows}):
        train = [r for r in rows if r["group"] != g]
        test = [r for r in rows if r["group"] == g]
        if not train:
            continue
        m = make().fit(train)
        fb = pooled_make().fit(train) if pooled_make else None
        for r in test:
            p = m.predict(r, fb)
            if p is not None:
                out.append((r, p))
    return out


def split_half(rows):
    """Fixed 50/50 split by device group: groups sorted by name, alternating."""
    groups = sorted({r["group"] for r in rows})
    a = set(groups[0::2])
    return [r for r in rows if r["group"] in a], [r for r in rows if r["group"] not in a]


def holdout_half(make, rows, pooled_make=None):
    out = []
    A, B = split_half(rows)
    for train, test in ((A, B), (B, A)):
        m = make().fit(train)
        fb = pooled_make().fit(train) if pooled_make else None
        for r in test:
            p = m.predict(r, fb)
            if p is not None:
                out.append((r, p))
    return out


CV_FOLDS = 5
CV_SEEDS = tuple(range(20))


def cv_folds(rows, k, seed):
    """Stratified row folds: each device group's rows are shuffled and dealt round-robin over
    the k folds (a running counter across groups, so fold sizes stay balanced).  A device with
    n >= 2 rows therefore never has all its rows in one fold: when one of its rows is held out,
    at least n - ceil(n/k) of its other rows stay in training.  (A device with a single row is
    necessarily unseen when that row is held out.)"""
    rng = random.Random(seed)
    groups = sorted({r["group"] for r in rows})
    rng.shuffle(groups)
    fold, c = {}, 0
    for g in groups:
        rs = [r for r in rows if r["group"] == g]
        rng.shuffle(rs)
        for r in rs:
            fold[id(r)] = c % k
            c += 1
    return fold


def holdout_rowcv(make, rows, pooled_make=None, k=CV_FOLDS, seeds=CV_SEEDS):
    """Repeated stratified k-fold CV over rows: for each seed and fold, refit the model (and the
    pooled fallback) on the other k-1 folds and predict the held-out rows.  Returns the
    (row, prediction) pairs pooled over all seeds (each row appears once per seed)."""
    out = []
    for seed in seeds:
        fold = cv_folds(rows, k, seed)
        for f in range(k):
            train = [r for r in rows if fold[id(r)] != f]
            test = [r for r in rows if fold[id(r)] == f]
            m = make().fit(train)
            fb = pooled_make().fit(train) if pooled_make else None
            for r in test:
                p = m.predict(r, fb)
                if p is not None:
                    out.append((r, p))
    return out


def cv_device_table(rows, cv):
    """Per-device row-level CV errors (pooled over repeats), largest median APE first."""
    out = []
    for g in {r["group"] for r in rows}:
        rs = [r for r in rows if r["group"] == g]
        pairs = [(r["tps"], p) for r, p in cv if r["group"] == g]
        _, med, p90 = ape_stats(pairs)
        out.append((med, g, rs[0]["family"], "/".join(sorted({r["backend"] for r in rs})), len(rs),
                    statistics.median([m / p for m, p in pairs]), p90))
    out.sort(key=lambda t: (-t[0], t[1]))
    return [(g, fam, be, n, f"{rat:.3f}", fmt(med), fmt(p90)) for med, g, fam, be, n, rat, p90 in out]


def fmt(x, nd=1):
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{nd}f}"


def table(header, rows):
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    for r in rows:
        print("| " + " | ".join(str(c) for c in r) + " |")
    print()


# ---------------------------------------------------------------------------
# Export of the per-row inputs (for tests/it/speed_accuracy.rs)
# ---------------------------------------------------------------------------
EXPORT_FAMILY = {"nvidia_consumer": "geforce", "nvidia_workstation": "workstation",
                 "nvidia_datacenter": "hbm", "apple": "apple"}
EXPORT_BACKEND = {"CUDA": "cuda", "Metal": "metal", "Vulkan": "vulkan", "ROCm": "rocm", "CPU": "cpu"}
EXPORT_COLUMNS = ["row", "source_device", "test", "kind", "tokens", "family", "backend", "devices",
                  "bandwidth_gbs", "peak_tflops", "params", "layers", "hidden", "size_bytes",
                  "kv_bytes_per_token", "tps"]


def export_rows(rows, path, with_source=False):
    """One line per mapped bench row (every row load_bench keeps), sorted by row number.

    row: 1-based data row of llamacpp_bench.csv (file line - 1).  devices: the "Nx " count
    (> 1 = llama.cpp layer split).  bandwidth_gbs: one card's.  peak_tflops: the dense 16-bit
    peak the prefill fit uses (GeForce x2, Apple cores x 128 x 2 x clock), empty if unknown.
    tokens: N of ppN/tgN; decode KV uses N/2 of it, the prefill attention term uses T = N.
    """
    def num(x):
        return "" if x is None else f"{x:.10g}"
    out = []
    for r in sorted(rows, key=lambda r: r["i"]):
        out.append({
            "row": r["i"] - 1, "source_device": r["device"], "test": r["test"],
            "kind": "decode" if r["kind"] == "tg" else "prefill", "tokens": r["ntok"],
            "family": EXPORT_FAMILY.get(r["family"], "other"), "backend": EXPORT_BACKEND[r["backend"]],
            "devices": r["count"], "bandwidth_gbs": num(r["bandwidth"]), "peak_tflops": num(r["peak_fp16acc"]),
            "params": round(r["params"]), "layers": r["layers"], "hidden": r["hidden"],
            "size_bytes": round(r["size"]), "kv_bytes_per_token": r["kv_per_tok"], "tps": num(r["tps"])})
        if with_source:
            out[-1]["source"] = r["source"]
    d = os.path.dirname(path)
    if d:
        os.makedirs(d, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, fieldnames=EXPORT_COLUMNS + (["source"] if with_source else []), lineterminator="\n")
        w.writeheader()
        w.writerows(out)
    return len(out)


# ---------------------------------------------------------------------------
def main():
    ap = argparse.ArgumentParser()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--shared", default=os.path.join(root, "..", "shared"))
    ap.add_argument("--catalog", default=os.path.join(root, "stdlib", "gpus.deploy"))
    ap.add_argument("--export", metavar="CSV", help="write the per-row inputs to CSV and exit")
    ap.add_argument("--supplement", default=os.path.join(root, "tests", "fixtures", "calibration", "llamacpp_hbm_bench.csv"),
                    help="extra llama-bench rows in llamacpp_bench.csv's format (HBM data-centre cards)")
    ap.add_argument("--export-hbm", metavar="CSV", help="write the supplement's per-row inputs (with source) and exit")
    args = ap.parse_args()

    catalog = load_catalog(args.catalog)
    arch = load_models(os.path.join(args.shared, "catalog", "models.csv"))
    rows, unmapped, bpw = load_bench(os.path.join(args.shared, "calibration", "llamacpp_bench.csv"), catalog, arch)
    supp, supp_unmapped, _ = load_bench(args.supplement, catalog, arch)
    for r in supp:
        r["supplement"] = True
    if supp_unmapped:
        sys.exit(f"unmapped supplement rows: {supp_unmapped}")
    if args.export:
        n = export_rows(rows, args.export)
        print(f"{n} rows written to {args.export}")
        return 0
    if args.export_hbm:
        n = export_rows(supp, args.export_hbm, with_source=True)
        print(f"{n} rows written to {args.export_hbm}")
        return 0
    base_rows = rows
    rows = rows + supp

    # ---------------- 1. mapping ----------------
    print("## 1. Device mapping\n")
    devs = {}
    for r in rows:
        devs.setdefault(r["device"], r)
    table(["device (bench text)", "n rows", "catalog key", "family", "backend", "BW GB/s (src)", "peak TFLOPS (src)", "note"],
          [(d, sum(1 for x in rows if x["device"] == d), r["key"] or "—", r["family"], r["backend"],
            f"{r['bandwidth']:g} ({r['bw_src']})", f"{fmt(r['peak'])} ({r['peak_src']})", r["note"])
           for d, r in sorted(devs.items(), key=lambda kv: (kv[1]["family"], kv[0]))])
    print(f"Unmapped rows: {len(unmapped)}")
    seen = {}
    for b, why in unmapped:
        seen.setdefault((b["device"], why), 0)
        seen[(b["device"], why)] += 1
    table(["device", "rows", "why"], [(d, n, w) for (d, w), n in seen.items()])
    imp = [r for r in rows if r["size_imputed"]]
    print(f"Rows with size imputed as params x median bits/weight of the quant ({', '.join(f'{q} {v:.2f}' for q, v in sorted(bpw.items()))}): "
          f"{len(imp)} ({', '.join(sorted({r['device'] + ' ' + r['model'] for r in imp}))})\n")

    # ---------------- 2. decode ----------------
    tg_all = [r for r in rows if r["kind"] == "tg"]
    tg = [r for r in tg_all if r["count"] == 1]
    tg_multi = [r for r in tg_all if r["count"] > 1]
    print(f"## 2. Decode (tg rows, single device: {len(tg)} rows on {len({r['group'] for r in tg})} devices; "
          f"multi-GPU layer-split rows reported separately: {len(tg_multi)})\n")

    candidates = [
        ("B0 baseline eta=0.7 (deployfit placeholder)", lambda: DecodeModel("B0", fixed_eta=0.7)),
        ("B1 baseline, one global eta (fitted)", lambda: DecodeModel("B1")),
        ("M1 eta per family", lambda: DecodeModel("M1", eta_by="family")),
        ("M2 eta per family + t0 per backend", lambda: DecodeModel("M2", eta_by="family", t0_by="backend")),
        ("M3 M2 + KV of avg context", lambda: DecodeModel("M3", eta_by="family", t0_by="backend", use_kv=True)),
        ("M4 M3 with t0 per layer (t0 x layers/32)", lambda: DecodeModel("M4", eta_by="family", t0_by="backend", use_kv=True, per_layer=True)),
        ("M5 eta per backend + t0 per backend + KV", lambda: DecodeModel("M5", eta_by="backend", t0_by="backend", use_kv=True)),
        ("M6 one eta + t0 per backend + KV", lambda: DecodeModel("M6", t0_by="backend", use_kv=True)),
        ("M7 eta per vendor + kernel cap per backend + t0/layer per backend + KV",
         lambda: DecodeModel("M7", eta_by="vendor", t0_by="backend", use_kv=True, per_layer=True, cap_by="backend")),
        ("M8 eta per family + kernel cap per backend + t0/layer per backend + KV",
         lambda: DecodeModel("M8", eta_by="family", t0_by="backend", use_kv=True, per_layer=True, cap_by="backend")),
        ("M9 M4 on the shared rows, then the supplement's family eta refitted with t0 held",
         lambda: TwoStageDecodeModel("M9")),
    ]
    pooled = lambda: DecodeModel("pool", t0_by="backend", use_kv=True)
    res = {}
    trows = []
    for name, mk in candidates:
        lodo = holdout_lodo(mk, tg, pooled)
        half = holdout_half(mk, tg, pooled)
        ins = mk().fit(tg)
        insample = [(r["tps"], ins.predict(r, pooled().fit(tg))) for r in tg]
        res[name] = (lodo, half, ins)
        n1, m1, p1 = ape_stats([(r["tps"], p) for r, p in lodo])
        n2, m2, p2 = ape_stats([(r["tps"], p) for r, p in half])
        _, m0, p0 = ape_stats(insample)
        trows.append((name, n1, fmt(m1), fmt(p1), n2, fmt(m2), fmt(p2), fmt(m0), fmt(p0)))
    table(["decode model", "LODO n", "LODO median %", "LODO p90 %", "50/50 n", "50/50 median %", "50/50 p90 %",
           "in-sample median %", "in-sample p90 %"], trows)

    chosen_name = "M4 M3 with t0 per layer (t0 x layers/32)"
    # Choose the candidate with the lowest LODO p90 + median among the physical ones (M2..M6).
    scores = {}
    for name, _ in candidates[2:]:
        _, m, p = ape_stats([(r["tps"], pr) for r, pr in res[name][0]])
        scores[name] = m + p
    chosen_name = min(scores, key=scores.get)
    print(f"Lowest LODO median + p90: **{chosen_name}**\n")
    if any(r.get("supplement") for r in tg) and chosen_name.startswith("M4"):
        # The supplement holds only HBM rows: let it move only the HBM eta (M9 = M4's form and
        # its fit on the shared rows, plus that eta), so the GDDR/Apple eta and every t0 (which
        # the serving model's eager launches also use) stay as the shared rows fit them.
        chosen_name = next(n for n, _ in candidates if n.startswith("M9"))
        print(f"Chosen decode model: **{chosen_name}** (the same form; the supplement moves only the HBM eta)\n")
    dm = res[chosen_name][2]
    print("Fitted on all single-device tg rows:")
    table(["term", "group", "value"],
          [(("eta" if k[0] == "inv_eta" else "kernel cap C (GB/s)" if k[0] == "inv_cap" else
             "t0 (ms" + (", per 32 layers" if dm.per_layer else "") + ")"), k[1],
            f"{1 / v:.3f}" if k[0] == "inv_eta" else (f"{1 / v:.0f}" if v > 0 else "inf (no cap)") if k[0] == "inv_cap"
            else f"{v * 1e3:.3f}") for k, v in sorted(dm.coef.items())])
    pooled_all = pooled().fit([r for r in tg if not r.get("supplement")])
    print("Pooled fallback (one eta, t0 per backend; used for families without data, e.g. amd, cpu):")
    table(["term", "group", "value"],
          [(("eta" if k[0] == "inv_eta" else "t0 (ms)"), k[1], f"{1 / v:.3f}" if k[0] == "inv_eta" else f"{v * 1e3:.3f}")
           for k, v in sorted(pooled_all.coef.items())])

    # per-device held-out detail for baseline and chosen
    b1 = {id(r): p for r, p in res["B1 baseline, one global eta (fitted)"][0]}
    b0 = {id(r): p for r, p in res["B0 baseline eta=0.7 (deployfit placeholder)"][0]}
    ch = {id(r): p for r, p in res[chosen_name][0]}
    print("Held-out (LODO) decode per device: median APE %")
    drows = []
    for g in sorted({r["group"] for r in tg}):
        rs = [r for r in tg if r["group"] == g]
        drows.append((g, rs[0]["family"], "/".join(sorted({r["backend"] for r in rs})), len(rs),
                      fmt(ape_stats([(r["tps"], b0[id(r)]) for r in rs])[1]),
                      fmt(ape_stats([(r["tps"], b1[id(r)]) for r in rs])[1]),
                      fmt(ape_stats([(r["tps"], ch[id(r)]) for r in rs if id(r) in ch])[1])))
    table(["device", "family", "backend", "n", "B0 (eta .7)", "B1 (global eta)", "chosen"], drows)
    print("Held-out decode residual by quant (chosen model, LODO), median measured/predicted:")
    table(["quant", "n", "median ratio"],
          [(q, len(v), f"{statistics.median(v):.3f}") for q, v in sorted(
              {q: [r["tps"] / p for r, p in res[chosen_name][0] if r["quant"] == q] for q in {r["quant"] for r in tg}}.items())])

    # multi-GPU decode (layer split): same model with one card's bandwidth
    mg = [(r["tps"], dm.predict(r, pooled_all)) for r in tg_multi]
    n, m, p = ape_stats(mg)
    rat = [a / b for a, b in mg]
    print(f"Multi-GPU layer-split decode ({n} rows), chosen model with ONE card's bandwidth (layer split is sequential): "
          f"median APE {fmt(m)} %, p90 {fmt(p)} %, median measured/predicted {statistics.median(rat):.3f}\n")

    # HBM supplement: the chosen model fitted WITHOUT the supplement predicts it (out of sample,
    # "before"), against its leave-one-device-out prediction with the supplement in the fit ("after").
    supp_tg = [r for r in tg if r.get("supplement")]
    if supp_tg:
        base_tg = [r for r in tg if not r.get("supplement")]
        before = dict(candidates)[chosen_name]().fit(base_tg)
        before_fb = pooled().fit(base_tg)
        hbm = [r for r in tg if r["family"] == "nvidia_datacenter"]
        print("HBM data-centre decode per device: the chosen model fitted without the supplement rows "
              f"(eta {1 / before.coef[('inv_eta', 'nvidia_datacenter')]:.3f}; out of sample for the supplement's "
              "devices) against its LODO prediction with them (each device predicted by a fit without it):")
        hrows = []
        for g in sorted({r["group"] for r in hbm}):
            rs = [r for r in hbm if r["group"] == g]
            b = [(r["tps"], before.predict(r, before_fb)) for r in rs]
            a = [(r["tps"], ch[id(r)]) for r in rs]
            hrows.append((g, len(rs), "yes" if rs[0].get("supplement") else "no",
                          f"{statistics.median([m / p for m, p in b]):.3f}", fmt(ape_stats(b)[1]), fmt(ape_stats(b)[2]),
                          f"{statistics.median([m / p for m, p in a]):.3f}", fmt(ape_stats(a)[1]), fmt(ape_stats(a)[2])))
        b = [(r["tps"], before.predict(r, before_fb)) for r in supp_tg]
        a = [(r["tps"], ch[id(r)]) for r in supp_tg]
        hrows.append(("supplement rows", len(supp_tg), "", f"{statistics.median([m / p for m, p in b]):.3f}",
                      fmt(ape_stats(b)[1]), fmt(ape_stats(b)[2]), f"{statistics.median([m / p for m, p in a]):.3f}",
                      fmt(ape_stats(a)[1]), fmt(ape_stats(a)[2])))
        table(["device", "n", "supplement", "before: meas/pred", "before median %", "before p90 %",
               "after LODO: meas/pred", "after median %", "after p90 %"], hrows)

    dcv = holdout_rowcv(dict(candidates)[chosen_name], tg, pooled)
    print(f"Row-level CV of the chosen decode model ({CV_FOLDS}-fold, stratified by device, {len(CV_SEEDS)} repeats, "
          f"seeds {CV_SEEDS[0]}..{CV_SEEDS[-1]}; {len(dcv)} held-out predictions of {len(tg)} rows), per device, "
          "largest median APE first:")
    table(["device", "family", "backend", "n rows", "median measured/predicted (CV)", "median APE %", "p90 APE %"],
          cv_device_table(tg, dcv))

    # ---------------- 3. prefill ----------------
    # The HBM supplement informs decode only: its prefill rows (one A100 SXM4 F16 run measures
    # 604 t/s at pp512, a tenth of the same card's Q4_K_M) stay out of the prefill fit.
    pp_all = [r for r in rows if r["kind"] == "pp" and not r.get("supplement")]
    pp = [r for r in pp_all if r["count"] == 1 and r["peak"]]
    no_peak = [r for r in pp_all if r["count"] == 1 and not r["peak"]]
    print(f"## 3. Prefill (pp rows, single device with a peak: {len(pp)} rows; without a peak: {len(no_peak)} "
          f"({', '.join(sorted({r['device'] for r in no_peak}))}); multi-GPU: {sum(1 for r in pp_all if r['count'] > 1)})\n")
    pcands = [
        ("P0 baseline mfu=0.4 (deployfit placeholder)", lambda: PrefillModel("P0", fixed_mfu=0.4)),
        ("P1 one global mfu, no attention term", lambda: PrefillModel("P1", by=("all",), a_att=0.0)),
        ("P2 mfu per family, no attention term", lambda: PrefillModel("P2", a_att=0.0)),
        ("P3 mfu per family + design attention term (a=1)", lambda: PrefillModel("P3", a_att=1.0)),
        ("P4 mfu per family + attention term, a fitted", lambda: PrefillModel("P4")),
        ("P5 mfu per family x quant class + attention a fitted", lambda: PrefillModel("P5", by=("family", "qclass"))),
        ("P6 mfu per backend x quant class + attention a fitted", lambda: PrefillModel("P6", by=("backend", "qclass"))),
        ("P7 FP16-acc peak, mfu per vendor x quant class + a fitted",
         lambda: PrefillModel("P7", by=("vendor", "qclass"), peak="peak_fp16acc")),
        ("P8 FP16-acc peak, mfu per family x quant class + a fitted",
         lambda: PrefillModel("P8", by=("family", "qclass"), peak="peak_fp16acc")),
        ("P9 FP16-acc peak, mfu per vendor + a fitted",
         lambda: PrefillModel("P9", by=("vendor",), peak="peak_fp16acc")),
    ]
    for r in rows:
        r["all"] = "all"
    ppooled = lambda: PrefillModel("pool", by=("all",), peak="peak_fp16acc")
    pres = {}
    prow = []
    for name, mk in pcands:
        lodo = holdout_lodo(mk, pp, ppooled)
        half = holdout_half(mk, pp, ppooled)
        ins = mk().fit(pp)
        pres[name] = (lodo, half, ins)
        n1, m1, p1 = ape_stats([(r["tps"], p) for r, p in lodo])
        n2, m2, p2 = ape_stats([(r["tps"], p) for r, p in half])
        _, m0, p0 = ape_stats([(r["tps"], ins.predict(r, ppooled().fit(pp))) for r in pp])
        prow.append((name, n1, fmt(m1), fmt(p1), n2, fmt(m2), fmt(p2), fmt(m0), fmt(p0)))
    table(["prefill model", "LODO n", "LODO median %", "LODO p90 %", "50/50 n", "50/50 median %", "50/50 p90 %",
           "in-sample median %", "in-sample p90 %"], prow)
    pscores = {}
    for name, _ in pcands[2:]:
        _, m, p = ape_stats([(r["tps"], pr) for r, pr in pres[name][0]])
        pscores[name] = m + p
    pchosen = min(pscores, key=pscores.get)
    pm = pres[pchosen][2]
    print(f"Chosen prefill model (lowest LODO median + p90): **{pchosen}**; attention multiplier a = {pm.a:.2f}\n")
    table(["group", "mfu (vs catalog/derived dense peak)", "rows"],
          [("/".join(g), f"{v:.3f}", sum(1 for r in pp if pm.key(r) == g)) for g, v in sorted(pm.mfu.items())])
    ppool_all = ppooled().fit(pp)
    print(f"Pooled fallback mfu (all families): {ppool_all.mfu[('all',)]:.3f} (a = {ppool_all.a:.2f})\n")
    pch = {id(r): p for r, p in pres[pchosen][0]}
    pcv = holdout_rowcv(dict(pcands)[pchosen], pp, ppooled)
    table(["device", "family", "n", "median measured/predicted (LODO)", "median APE %"],
          [(g, [r for r in pp if r["group"] == g][0]["family"], len([r for r in pp if r["group"] == g]),
            f"{statistics.median([r['tps'] / pch[id(r)] for r in pp if r['group'] == g]):.3f}",
            fmt(ape_stats([(r["tps"], pch[id(r)]) for r in pp if r["group"] == g])[1]))
           for g in sorted({r["group"] for r in pp})])

    print(f"Row-level CV of the chosen prefill model ({CV_FOLDS}-fold, stratified by device, {len(CV_SEEDS)} repeats, "
          f"seeds {CV_SEEDS[0]}..{CV_SEEDS[-1]}; {len(pcv)} held-out predictions of {len(pp)} rows), per device, "
          "largest median APE first:")
    table(["device", "family", "backend", "n rows", "median measured/predicted (CV)", "median APE %", "p90 APE %"],
          cv_device_table(pp, pcv))

    # ---------------- 4. spread ----------------
    print("## 4. Held-out spread of measured / predicted (for the [low, high] range)\n")
    print(f"Row CV = {CV_FOLDS}-fold cross-validation over rows, stratified by device, {len(CV_SEEDS)} repeats "
          f"(seeds {CV_SEEDS[0]}..{CV_SEEDS[-1]}); n counts every held-out prediction (each row once per repeat).\n")
    srows = []
    for label, pairs in (("decode (chosen, LODO)", [(r["tps"], p) for r, p in res[chosen_name][0]]),
                         ("decode (chosen, 50/50)", [(r["tps"], p) for r, p in res[chosen_name][1]]),
                         ("decode (chosen, row CV)", [(r["tps"], p) for r, p in dcv]),
                         ("decode baseline B1 (LODO)", [(r["tps"], p) for r, p in res["B1 baseline, one global eta (fitted)"][0]]),
                         ("prefill (chosen, LODO)", [(r["tps"], p) for r, p in pres[pchosen][0]]),
                         ("prefill (chosen, 50/50)", [(r["tps"], p) for r, p in pres[pchosen][1]]),
                         ("prefill (chosen, row CV)", [(r["tps"], p) for r, p in pcv])):
        rat = [m / p for m, p in pairs]
        _, med, p90 = ape_stats(pairs)
        srows.append((label, len(rat), fmt(med), fmt(p90),
                      f"{pct(rat, 0.1):.3f}", f"{statistics.median(rat):.3f}", f"{pct(rat, 0.9):.3f}"))
    table(["quantity", "n", "median APE %", "p90 APE %", "p10 ratio", "median ratio", "p90 ratio"], srows)

    # ---------------- 5. other_tps ----------------
    print("## 5. other_tps.csv with the chosen models (report only, nothing fitted)\n")
    orows = []
    for r in csv.DictReader(open(os.path.join(args.shared, "calibration", "other_tps.csv"), encoding="utf-8")):
        dev, why = map_device(r["device"], catalog)
        mkey, a = map_model(r["model"], arch)
        metric = r["metric"]
        be = backend_of(r["engine"])
        if be == "?" and "llama.cpp" in r["engine"]:
            be = "Vulkan" if "vulkan" in r["device"].lower() or "host" in r["device"].lower() else "CUDA"
        label = f"{r['device'][:38]} | {r['model'][:30]} | {r['quant'][:14]} | {metric} {r['ctx']}"
        if dev is None or dev["bandwidth"] is None:
            orows.append((label, r["value"], "—", "—", f"unmapped device: {why}"))
            continue
        if a is None:
            orows.append((label, r["value"], "—", "—", "model not mapped (MoE / MXFP4 active bytes unknown)" if "gpt-oss" in r["model"] else "model not mapped"))
            continue
        q = r["quant"].split()[0] if r["quant"] and not r["quant"].startswith("(") else None
        bits = None
        note = ""
        if q in bpw:
            bits = bpw[q]
        elif q and q.startswith("Q6"):
            bits = 6.5625; note = "Q6_K 6.5625 bpw (format spec); "
        elif q is None and "llama" in r["engine"].lower():
            bits = bpw["Q4_K_M"]; note = "quant not stated: Q4_K_M assumed; "
        elif q is None:
            bits = 16.0; note = "quant not stated: bf16 assumed; "
        elif q.lower().startswith("fp8"):
            bits = 8.0
        params = a[0]
        tp = dev["count"]
        rr = {"peak_fp16acc": dev["peak_fp16acc"], "vendor": dev["vendor"], "size": params * bits / 8 / tp, "kv_per_tok": 2 * a[1] * a[3] * a[4] * KV_BYTES / tp, "ntok": 0,
              "layers": a[1], "hidden": a[2], "params": params / tp, "backend": be if be != "?" else "CUDA",
              "family": dev["family"], "bandwidth": dev["bandwidth"], "peak": dev["peak"], "qclass": "quant" if bits < 16 else "float",
              "all": "all"}
        if be == "?":
            note += "engine not stated: CUDA t0 used; "
        if dev["count"] > 1:
            note += f"TP={tp} assumed (per-GPU shard), all-reduce ignored; "
        if metric in ("decode_tps", "decode_tps_per_user", "tpot_ms") or metric.startswith("avg decode"):
            ctxm = re.search(r"ISL=(\d+)", r["ctx"])
            rr["ntok"] = 2 * int(ctxm.group(1)) if ctxm else 0  # KV read at ~ISL (+OSL/2 ignored)
            pred = dm.predict(rr, pooled_all)
            meas = float(r["value"])
            if metric == "tpot_ms":
                meas = 1000 / meas
                label += " (as tps)"
            orows.append((label, f"{meas:.1f}", f"{pred:.1f}", f"{meas / pred:.2f}", note))
        elif metric in ("prefill_tps", "prompt_eval_tps"):
            if not dev["peak"]:
                orows.append((label, r["value"], "—", "—", "no peak"))
                continue
            n = re.search(r"ISL=(\d+)", r["ctx"])
            rr["ntok"] = int(n.group(1)) if n else 512
            pred = pm.predict(rr, ppool_all) * 1  # per GPU shard -> whole prompt rate on TP group
            orows.append((label, r["value"], f"{pred:.0f}", f"{float(r['value']) / pred:.2f}", note + "prompt length from ISL"))
        elif metric == "ttft_ms":
            continue  # same information as prefill_tps; skipped
        else:
            orows.append((label, r["value"], "—", "—", f"metric {metric} not modelled"))
    table(["row", "measured", "predicted", "meas/pred", "notes"], orows)


if __name__ == "__main__":
    sys.exit(main())
