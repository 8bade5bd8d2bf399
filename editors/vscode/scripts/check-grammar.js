#!/usr/bin/env node
// Tokenizes .deploy files with the extension's grammar and fails when a token gets an
// `invalid` scope, when non-blank text gets no scope beyond `source.deploy`, or when a
// begin/end rule (string, interpolation) is still open at the end of a line.
//
//   node scripts/check-grammar.js [--dump] FILE...
'use strict';
const fs = require('fs');
const { loadGrammar, INITIAL } = require('./grammar');


async function main() {
  const args = process.argv.slice(2);
  const dump = args[0] === '--dump';
  const files = dump ? args.slice(1) : args;
  if (files.length === 0) {
    console.error('usage: node scripts/check-grammar.js [--dump] FILE...');
    process.exit(2);
  }
  const grammar = await loadGrammar();
  let problems = 0;
  let lines = 0;
  for (const file of files) {
    const text = fs.readFileSync(file, 'utf8').split(/\r?\n/);
    let stack = INITIAL;
    text.forEach((line, i) => {
      lines++;
      const r = grammar.tokenizeLine(line, stack);
      for (const t of r.tokens) {
        const s = line.slice(t.startIndex, t.endIndex);
        if (dump && s.trim()) console.log(`${file}:${i + 1}: ${JSON.stringify(s)} ${t.scopes.slice(1).join(' ')}`);
        const where = `${file}:${i + 1}:${t.startIndex + 1}`;
        if (t.scopes.some((sc) => sc.startsWith('invalid'))) {
          console.log(`${where}: invalid scope on ${JSON.stringify(s)}: ${t.scopes.join(' ')}`);
          problems++;
        } else if (t.scopes.length === 1 && s.trim()) {
          console.log(`${where}: unscoped text ${JSON.stringify(s)}`);
          problems++;
        }
      }
      stack = r.ruleStack;
      if (stack.depth > 1) {
        console.log(`${file}:${i + 1}: a begin/end rule is still open at the end of the line`);
        problems++;
        stack = INITIAL;
      }
    });
  }
  console.log(`${files.length} files, ${lines} lines, ${problems} problem(s)`);
  process.exit(problems ? 1 : 0);
}

main().catch((err) => {
  console.error(err);
  process.exit(2);
});
