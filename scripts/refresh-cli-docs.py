#!/usr/bin/env python3
"""Re-runs the complete outputs quoted in docs/cli.md ("Real output of `deployfit ...`")
with the debug binary and replaces each quoted block. Blocks the text says are excerpts
("one row shown", "first rows", ...) and commands run on files the page writes itself are
left alone: refresh those by hand. Then refreshes the two outputs of the README's
"An example" section that tests/it/cli.rs `readme_examples_are_real` checks (the check of
examples-failing/too-big.deploy and the explain of example 03).
Usage: python3 scripts/refresh-cli-docs.py [BINARY]"""
import re, subprocess, sys, shlex

binary = sys.argv[1] if len(sys.argv) > 1 else "./target/debug/deployfit"
path = "docs/cli.md"
text = open(path).read()
out, pos, changed = [], 0, 0
pattern = re.compile(r"Real output of\s+`deployfit ([^`]+)`([^\n]*(?:\n(?!\n)[^\n]*)*)\n\n```([a-z]*)\n(.*?)```", re.S)
for m in pattern.finditer(text):
    args, lead, lang, body = m.group(1), m.group(2), m.group(3), m.group(4)
    if any(w in lead for w in ("shown", "first", " for")) or "chat.deploy" in args:
        continue
    run = subprocess.run([binary] + shlex.split(args), capture_output=True, text=True,
                         env={"NO_COLOR": "1", "PATH": "/usr/bin:/bin"})
    new = run.stdout
    if not new.endswith("\n"):
        new += "\n"
    if new != body:
        changed += 1
    out.append(text[pos:m.start(4)])
    out.append(new)
    pos = m.end(4)
out.append(text[pos:])
open(path, "w").write("".join(out))
print(f"{changed} block(s) refreshed")

# The README's example: fenced blocks 2 and 3 of the section (after the source block).
readme = open("README.md").read()
head, sep, section = readme.partition("## An example")
blocks = section.split("```")
for index, args in ((3, ["check", "examples-failing/too-big.deploy"]),
                    (5, ["explain", "examples/03-llama-70b-tensor-parallel.deploy"])):
    run = subprocess.run([binary] + args, capture_output=True, text=True,
                         env={"NO_COLOR": "1", "PATH": "/usr/bin:/bin"})
    lang = blocks[index].split("\n", 1)[0]
    blocks[index] = lang + "\n" + run.stdout
open("README.md", "w").write(head + sep + "```".join(blocks))
print("README example outputs refreshed")
