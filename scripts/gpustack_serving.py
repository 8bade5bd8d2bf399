#!/usr/bin/env python3
"""Extracts the serving benchmarks of GPUStack's performance lab into a CSV.

Source: github.com/gpustack/gpustack, docs/performance-lab/<model>/<gpu>.md. Each page runs
`vllm bench serve` (ShareGPT, 1000 prompts, or random prompts, request rate inf) against
vLLM, SGLang and TensorRT-LLM servings of one model on one GPU type, and prints the
benchmark's result block after the server command it measured. This script pairs every
result block with the last server command above it and copies the figures as printed.

Usage: scripts/gpustack_serving.py REPO_GIT_DIR COMMIT > tests/fixtures/calibration/gpustack_serving.csv

Nothing is computed except the per-request mean prompt and output lengths (the block's
token totals over its successful requests); tests/it/serving_accuracy.rs decides which rows
the model can evaluate (the server flags it understands) and which it skips.

A result block is one measurement, so blocks printed more than once are kept once:
- on one page (a block repeated under a second heading), the first print is kept;
- on several pages (a page's blocks pasted from another GPU's or model's page), a print is
  kept only where its own page's conclusion table lists the block's total token throughput
  ("Total TPS: ..."), and none is kept when the tables do not settle it. At commit 47277d79
  the H100 page of GLM-4.5-Air prints the A100 page's eight "Other Benchmark Cases" blocks
  figure for figure, while its own conclusion table gives other totals for the same cases
  (random 32K input: 20732.85 tok/s against the A100's 6435.97); Qwen3-8B's 910B page
  repeats five blocks of Qwen3-30B-A3B's.
"""

import csv
import re
import subprocess
import sys

FIELDS = [
    "page",
    "gpu",
    "engine",
    "engine_version",
    "command",
    "dataset",
    "requests",
    "concurrency",
    "prompt_mean",
    "output_mean",
    "duration_s",
    "output_tps",
    "ttft_mean_ms",
    "ttft_median_ms",
    "tpot_mean_ms",
    "tpot_median_ms",
    "itl_mean_ms",
    "source",
]

KEYS = {
    "Successful requests": "requests",
    "Maximum request concurrency": "concurrency",
    "Benchmark duration (s)": "duration_s",
    "Total input tokens": "input_total",
    "Total generated tokens": "output_total",
    "Output token throughput (tok/s)": "output_tps",
    "Total Token throughput (tok/s)": "total_tps",
    "Mean TTFT (ms)": "ttft_mean_ms",
    "Median TTFT (ms)": "ttft_median_ms",
    "Mean TPOT (ms)": "tpot_mean_ms",
    "Median TPOT (ms)": "tpot_median_ms",
    "Mean ITL (ms)": "itl_mean_ms",
}

SERVERS = ("vllm serve", "sglang.launch_server", "trtllm-serve")


def engine_of(command):
    if "vllm serve" in command:
        return "vllm"
    if "sglang" in command:
        return "sglang"
    return "tensorrt_llm"


def git(repo, *args):
    return subprocess.run(["git", "--git-dir", repo, *args], check=True, capture_output=True, text=True).stdout


def versions(text):
    found = {}
    for engine, pattern in [
        ("vllm", r"-\s*vLLM:\s*(\S+)"),
        ("sglang", r"-\s*SGLang:\s*(\S+)"),
        ("tensorrt_llm", r"-\s*TensorRT-LLM:\s*(\S+)"),
    ]:
        m = re.search(pattern, text)
        if m:
            found[engine] = m.group(1)
    return found


def rows(repo, commit, path):
    text = git(repo, "show", f"{commit}:{path}")
    page = path.removeprefix("docs/performance-lab/").removesuffix(".md")
    gpu = page.split("/")[1]
    engine_versions = versions(text)
    lines = text.splitlines()
    # The totals the page's conclusion table lists ("Total TPS: 7909.53").
    head = text.split("## Experiment Results")[0]
    listed = {float(x) for x in re.findall(r"Total TPS:\s*([\d.]+)", head)}
    command = None
    dataset = None
    block = None
    # The conclusion's table comes before any result block; commands start being
    # tracked after the "Experiment Results" heading.
    started = False
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        i += 1
        if line.startswith("## Experiment Results"):
            started = True
            continue
        if not started:
            continue
        if any(s in line for s in SERVERS) and "bench serve" not in line:
            # A command may continue over lines ending in a backslash.
            parts = [line.rstrip("\\").strip()]
            while line.endswith("\\") and i < len(lines):
                line = lines[i].strip()
                i += 1
                parts.append(line.rstrip("\\").strip())
            command = " ".join(p for p in parts if p)
            dataset = None
            continue
        if line.startswith("# ") and block is None:
            dataset = line[2:].strip()
            continue
        if "Serving Benchmark Result" in line:
            block = {}
            continue
        if block is not None:
            if line.startswith("=====") and block:
                row = finish(page, gpu, engine_versions, command, dataset, block, commit, path)
                yield row, fingerprint(block), block.get("total_tps") in listed
                block = None
                continue
            m = re.match(r"(.+?):\s+([-\d.]+)$", line)
            if m and m.group(1).strip() in KEYS:
                block[KEYS[m.group(1).strip()]] = float(m.group(2))


def finish(page, gpu, engine_versions, command, dataset, block, commit, path):
    n = block["requests"]
    engine = engine_of(command or "")
    total_in = block.get("input_total")
    # ShareGPT's 1000 prompts total 2xx,xxx tokens; the random sets are fixed lengths.
    if dataset is None:
        dataset = "sharegpt" if n == 1000 and total_in and total_in % 1000 else "random"
    return {
        "page": page,
        "gpu": gpu,
        "engine": engine,
        "engine_version": engine_versions.get(engine, ""),
        "command": command or "",
        "dataset": dataset,
        "requests": int(n),
        "concurrency": int(block["concurrency"]) if "concurrency" in block else "",
        "prompt_mean": round(total_in / n, 2) if total_in else "",
        "output_mean": round(block["output_total"] / n, 2) if "output_total" in block else "",
        "duration_s": block.get("duration_s", ""),
        "output_tps": block.get("output_tps", ""),
        "ttft_mean_ms": block.get("ttft_mean_ms", ""),
        "ttft_median_ms": block.get("ttft_median_ms", ""),
        "tpot_mean_ms": block.get("tpot_mean_ms", ""),
        "tpot_median_ms": block.get("tpot_median_ms", ""),
        "itl_mean_ms": block.get("itl_mean_ms", ""),
        "source": f"https://github.com/gpustack/gpustack/blob/{commit}/{path}",
    }


def fingerprint(block):
    """The figures that make a block one measurement."""
    keys = ("requests", "duration_s", "input_total", "output_total", "output_tps", "ttft_mean_ms", "tpot_mean_ms")
    return tuple(block.get(k) for k in keys)


def measurements(found):
    """`found`: (row, fingerprint, listed in its page's table) in page order. Yields each
    measurement once, from the page that owns it (see the module's docstring)."""
    pages = {}
    for row, key, listed in found:
        pages.setdefault(key, {}).setdefault(row["page"], listed)
    emitted = set()
    for row, key, _ in found:
        by_page = pages[key]
        confirmed = [page for page, listed in by_page.items() if listed]
        owner = next(iter(by_page)) if len(by_page) == 1 else (confirmed[0] if len(confirmed) == 1 else None)
        if row["page"] == owner and key not in emitted:
            emitted.add(key)
            yield row


def main():
    repo, commit = sys.argv[1], sys.argv[2]
    paths = [
        p
        for p in git(repo, "ls-tree", "-r", "--name-only", commit, "docs/performance-lab").split()
        if p.endswith(".md") and "/references/" not in p and not p.endswith("overview.md")
    ]
    out = csv.DictWriter(sys.stdout, FIELDS, lineterminator="\n")
    out.writeheader()
    found = [found for path in sorted(paths) for found in rows(repo, commit, path)]
    for row in measurements(found):
        out.writerow(row)


if __name__ == "__main__":
    main()
