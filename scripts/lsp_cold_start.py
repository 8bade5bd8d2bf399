#!/usr/bin/env python3
"""Issue 33: the language server's cold start in CPU time.

Starts `deployfit lsp`, sends initialize / initialized, opens a 4,500-line document
(450 deployments, the shape of benches/lsp.rs's document) and waits for the
publishDiagnostics of that document, then shutdown / exit. Two figures of the server's
CPU time (every thread; this driver's own time is not counted): the cold start proper,
from the start to the diagnostics (the sum of /proc/PID/task/*/schedstat, in
nanoseconds, read when they arrive), and the whole run with shutdown and exit (wait4's
rusage). Prints the mean over RUNS runs.

Usage: scripts/lsp_cold_start.py [path/to/deployfit] [runs]
"""
import json
import os
import subprocess
import sys

BIN = sys.argv[1] if len(sys.argv) > 1 else "target/release/deployfit"
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 20

DEPLOYMENT = (
    "deployment d{n} {{\n    model    = glm4_9b\n    quant    = Q4_K_M\n    context  = 8k\n"
    "    engine   = llamacpp\n    gpu      = rtx_3090\n\n    require fits\n}}\n\n"
)
TEXT = "".join(DEPLOYMENT.format(n=n) for n in range(450))
URI = "file:///tmp/cold_start.deploy"


def send(proc, message):
    body = json.dumps(message).encode()
    proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    proc.stdin.flush()


def receive(proc):
    length = None
    while True:
        line = proc.stdout.readline()
        if not line:
            raise SystemExit("the server closed its output")
        if line in (b"\r\n", b"\n"):
            break
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return json.loads(proc.stdout.read(length))


def cpu_now(pid):
    """The CPU time of every thread of `pid` so far, in ms (Linux schedstat)."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                total += int(f.read().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            pass
    return total / 1e6


def one_run():
    proc = subprocess.Popen(
        [BIN, "lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    send(proc, {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"processId": None, "rootUri": None, "capabilities": {}}})
    while receive(proc).get("id") != 1:
        pass
    send(proc, {"jsonrpc": "2.0", "method": "initialized", "params": {}})
    send(proc, {"jsonrpc": "2.0", "method": "textDocument/didOpen",
                "params": {"textDocument": {"uri": URI, "languageId": "deploy",
                                            "version": 1, "text": TEXT}}})
    while True:
        message = receive(proc)
        if (message.get("method") == "textDocument/publishDiagnostics"
                and message["params"]["uri"] == URI):
            cold = cpu_now(proc.pid)
            break
    send(proc, {"jsonrpc": "2.0", "id": 2, "method": "shutdown", "params": None})
    while receive(proc).get("id") != 2:
        pass
    send(proc, {"jsonrpc": "2.0", "method": "exit", "params": None})
    proc.stdin.close()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return cold, (usage.ru_utime + usage.ru_stime) * 1000.0


runs = [one_run() for _ in range(RUNS)]
cold = sorted(r[0] for r in runs)
whole = sorted(r[1] for r in runs)
print(f"{sum(cold) / len(cold):.1f} ms CPU to the diagnostics (median {cold[len(cold) // 2]:.1f}); "
      f"{sum(whole) / len(whole):.1f} ms with shutdown and exit (mean of {len(runs)})")
