#!/usr/bin/env python3
"""Generates stdlib/offers.deploy from ../shared/catalog/cloud_prices.csv.

One `offer` per CSV row with an on-demand price: provider, instance type, the catalog GPU,
GPUs per instance, on-demand and spot $/h, region. Which catalog entry a row's GPU column
means is decided by the table below, per provider and instance where the column is
ambiguous (the same reasoning as the `// price match:` notes in stdlib/gpus.deploy).

    python3 scripts/gen_offers.py           # writes stdlib/offers.deploy
    python3 scripts/gen_offers.py --check   # fails when the file is out of date
"""
import csv
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CSV = os.path.join(ROOT, "..", "shared", "catalog", "cloud_prices.csv")
if "--csv" in sys.argv:
    CSV = sys.argv[sys.argv.index("--csv") + 1]
OUT = os.environ.get("OFFERS_OUT") or os.path.join(ROOT, "stdlib", "offers.deploy")

# The CSV's GPU column -> catalog entry, unless an instance rule below says otherwise.
GPU = {
    "A10G": "a10g",
    "A10": "a10",
    "L4": "l4",
    "L40S": "l40s",
    "L40": "l40",
    "T4": "t4",
    "V100-32GB": "v100_sxm2_32gb",
    "A100": "a100_sxm4_40gb",
    "A100-80GB-SXM": "a100_sxm4_80gb",
    "H100-SXM": "h100_sxm5",
    "H200": "h200_sxm",
    "H200-SXM": "h200_sxm",
    "B200": "b200",
    "A6000": "rtx_a6000",
    "RTX6000": "quadro_rtx_6000",
    "RTX3090": "rtx_3090",
    "RTX4000-Ada": "rtx_4000_ada",
    "RTX4090": "rtx_4090",
}

# The GPU-to-GPU network between instances (GPUDirect RDMA over EFA or InfiniBand) that a
# provider states for an instance type: (provider, instance) -> (Gb/s per instance, source).
# An offer with it may hold a tensor-parallel group across whole instances, its all-reduces
# timed over the `network` per GPU (docs/cost.md). Instances not listed state none.
NETWORK = {
    ("aws", "p4d.24xlarge"): (400, "aws.amazon.com/ec2/instance-types/p4/: p4d.24xlarge, 400 Gbps networking with EFA and GPUDirect RDMA"),
    ("aws", "p4de.24xlarge"): (400, "aws.amazon.com/ec2/instance-types/p4/: p4de.24xlarge, 400 Gbps networking with EFA and GPUDirect RDMA"),
    ("aws", "p5.48xlarge"): (3200, "aws.amazon.com/ec2/instance-types/p5/: p5.48xlarge, 3200 Gbps EFAv2 with GPUDirect RDMA"),
    ("aws", "p5en.48xlarge"): (3200, "aws.amazon.com/ec2/instance-types/p5/: p5en.48xlarge, 3200 Gbps EFAv3 with GPUDirect RDMA"),
    ("azure", "Standard_ND96asr_v4"): (1600, "learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/nda100v4-series: 8 x 200 Gb/s HDR InfiniBand, one per GPU, GPUDirect RDMA"),
    ("azure", "Standard_ND96amsr_A100_v4"): (1600, "learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/ndma100v4-series: 8 x 200 Gb/s HDR InfiniBand, one per GPU, GPUDirect RDMA"),
    ("azure", "Standard_ND96isr_H100_v5"): (3200, "learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/ndh100v5-series: 8 x 400 Gb/s NDR InfiniBand, one per GPU, GPUDirect RDMA"),
}


def network(row, count):
    """The offer's `network` per GPU in GB/s (as written) and its source, or None."""
    entry = NETWORK.get((row["provider"], row["instance_type"]))
    if entry is None:
        return None
    gbits, source = entry
    per_gpu = gbits / count / 8
    text = f"{per_gpu:g} GB/s"
    return text, f"{source} ({gbits} Gb/s over {count} GPUs = {text} per GPU each way)"


def catalog_gpu(row):
    """The catalog entry of a row, with the reason when the GPU column is ambiguous."""
    gpu, provider, instance = row["gpu"], row["provider"], row["instance_type"]
    if gpu == "V100":
        # Azure NCv3 is the PCIe card; AWS p3 and Lambda's 8x V100 are SXM2 servers.
        if provider == "azure":
            return "v100_pcie_16gb", "Azure NCv3 is the PCIe V100 16GB"
        return "v100_sxm2_16gb", "an NVLink server: V100 SXM2 16GB"
    if gpu == "A100-80GB":
        # RunPod lists "A100-80GB" (PCIe) apart from "A100-80GB-SXM"; Azure NC A100 v4 is PCIe.
        if provider == "runpod" or instance.startswith("Standard_NC"):
            return "a100_pcie_80gb", "the PCIe A100 80GB"
        return "a100_sxm4_80gb", "an HGX server: A100 SXM4 80GB"
    if gpu == "H100":
        if instance == "gpu_1x_h100_pcie":
            return "h100_pcie", "Lambda's PCIe H100"
        if instance.startswith("Standard_NC"):
            return "h100_nvl", "Azure NC H100 v5 is the H100 NVL 94GB (cloud_prices.csv note)"
        return "h100_sxm5", "an HGX server: H100 SXM5"
    if gpu not in GPU:
        sys.exit(f"no catalog entry for the CSV's GPU {gpu!r} ({provider} {instance}): add it to GPU")
    return GPU[gpu], None


def offer_name(row):
    provider, instance = row["provider"], row["instance_type"]
    if instance.startswith("(accelerator only)"):
        instance = f"{row['gpu']}_x{row['gpu_count']}"
    name = re.sub(r"[^a-z0-9]+", "_", f"{provider}_{instance}".lower()).strip("_")
    return name


def money(text):
    """The CSV's price as written (no rounding), checked to be a positive decimal."""
    text = text.strip()
    if not re.fullmatch(r"\d+(\.\d+)?", text) or float(text) <= 0:
        sys.exit(f"not a positive price: {text!r}")
    return f"${text}/h"


def generate():
    with open(CSV, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    out = [
        "// GENERATED by scripts/gen_offers.py from ../shared/catalog/cloud_prices.csv (SkyPilot's",
        "// public catalog, skypilot-org/skypilot-catalog; the commit is on each row). DO NOT EDIT:",
        "// change the script, then regenerate with",
        "//     python3 scripts/gen_offers.py",
        "// (`python3 scripts/gen_offers.py --check` fails when this file is out of date).",
        "// An offer is what a cloud rents: whole instances of `gpus` GPUs at `price` (on demand) or",
        "// `spot` per instance-hour. `pricing = cloud` deployments pay for whole instances of one",
        "// (docs/cost.md).",
    ]
    skipped = []
    names = set()
    body = []
    for row in rows:
        if not row["price_usd_per_hour"].strip():
            skipped.append(f"{row['provider']} {row['instance_type']} (no on-demand price)")
            continue
        gpu, why = catalog_gpu(row)
        name = offer_name(row)
        if name in names:
            sys.exit(f"two rows make the offer name {name}")
        names.add(name)
        count = int(row["gpu_count"])
        display = row["instance_type"]
        if display.startswith("(accelerator only)"):
            display = f"{row['gpu']} x{count} (accelerator only)"
        body.append("")
        body.append(f"/// {row['provider']} {display}: {count} x {row['gpu']}")
        body.append(f"// source: {row['source']} ({row['as_of']})")
        if row["notes"].strip():
            body.append(f"// note: {row['notes'].strip()}")
        if why:
            body.append(f"// gpu: {why}")
        net = network(row, int(row["gpu_count"]))
        if net:
            body.append(f"// network: {net[1]}")
        body.append(f"offer {name} {{")
        fields = [
            ("name", f'"{row["provider"]} {display}"'),
            ("provider", row["provider"]),
            ("instance", f'"{display}"'),
            ("gpu", gpu),
            ("gpus", str(count)),
            ("price", money(row["price_usd_per_hour"])),
        ]
        if row["spot_price_usd_per_hour"].strip():
            fields.append(("spot", money(row["spot_price_usd_per_hour"])))
        fields.append(("region", f'"{row["region"]}"'))
        if net:
            fields.append(("network", net[0]))
        width = max(len(k) for k, _ in fields)
        for key, value in fields:
            body.append(f"    {key.ljust(width)} = {value}")
        body.append("}")
    out.append(f"// {len(names)} offers; skipped rows: {'; '.join(skipped) if skipped else 'none'}")
    return "\n".join(out + body) + "\n"


def main():
    text = generate()
    if "--check" in sys.argv:
        with open(OUT, encoding="utf-8") as f:
            if f.read() != text:
                sys.exit("stdlib/offers.deploy is out of date: run python3 scripts/gen_offers.py")
        print("stdlib/offers.deploy is up to date")
        return
    with open(OUT, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
