#!/usr/bin/env python3
"""Issue 33: the language server's cold start in CPU time.

Starts `deployfit lsp`, sends initialize / initialized, opens a 4,500-line document
(450 deployments, the shape of benches/lsp.rs's document) and waits for the
publishDiagnostics of that document, then shutdown / exit. The server's CPU time (user +
system, every thread) comes from wait4's rusage, so this driver's own time is not
counted. Prints the mean over RUNS runs.

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
            break
    send(proc, {"jsonrpc": "2.0", "id": 2, "method": "shutdown", "params": None})
    while receive(proc).get("id") != 2:
        pass
    send(proc, {"jsonrpc": "2.0", "method": "exit", "params": None})
    proc.stdin.close()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return (usage.ru_utime + usage.ru_stime) * 1000.0


times = [one_run() for _ in range(RUNS)]
times.sort()
print(f"{sum(times) / len(times):.1f} ms CPU (mean of {len(times)}; median {times[len(times) // 2]:.1f})")
