#!/usr/bin/env node
// Parses every example, test fixture and stdlib file of the repository with the grammar
// and fails when a file the compiler accepts has an ERROR or MISSING node. Files with
// syntax errors of their own (deployfit reports a `deploy::syntax::*` code) are skipped:
// some fixtures are broken on purpose.
//
//   TREE_SITTER=path/to/tree-sitter DEPLOYFIT=path/to/deployfit node scripts/parse-all.js
'use strict';
const fs = require('fs');
const path = require('path');
const { execFileSync, spawnSync } = require('child_process');

const repo = path.resolve(__dirname, '../../..');
const treeSitter = process.env.TREE_SITTER || 'tree-sitter';
const deployfit = process.env.DEPLOYFIT || path.join(repo, 'target/debug/deployfit');

function walk(dir, out) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) walk(full, out);
    else if (entry.name.endsWith('.deploy')) out.push(full);
  }
  return out;
}

const files = ['examples', 'examples-failing', 'stdlib', 'tests/fixtures']
  .flatMap((d) => walk(path.join(repo, d), []))
  .sort();
// One deployfit run over every file: the files with syntax errors of their own.
const check = spawnSync(deployfit, ['check', '--format', 'json', ...files], {
  encoding: 'utf8',
  maxBuffer: 1 << 30,
});
let report;
try {
  report = JSON.parse(check.stdout);
} catch (e) {
  console.error(`deployfit gave no JSON (${check.error || check.stderr.trim()})`);
  process.exit(1);
}
const broken = new Set(
  report.diagnostics
    .filter((d) => d.code.startsWith('deploy::syntax::'))
    .map((d) => path.resolve(d.file)),
);
let parsed = 0;
let skipped = 0;
const failures = [];
for (const file of files) {
  if (broken.has(path.resolve(file))) {
    skipped += 1;
    continue;
  }
  const result = spawnSync(treeSitter, ['parse', '--quiet', file], { cwd: path.join(__dirname, '..'), encoding: 'utf8' });
  parsed += 1;
  if (result.status !== 0 || /ERROR|MISSING/.test(result.stdout)) {
    failures.push(`${path.relative(repo, file)}:\n${result.stdout}${result.stderr}`);
  }
}
console.log(`${parsed} files parsed without error nodes, ${skipped} skipped (syntax errors of their own), ${failures.length} failed`);
if (failures.length > 0) {
  console.error(failures.join('\n'));
  process.exit(1);
}
if (parsed < 50) {
  console.error('too few files parsed: is the repository layout right?');
  process.exit(1);
}
