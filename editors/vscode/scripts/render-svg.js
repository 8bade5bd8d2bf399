#!/usr/bin/env node
// Renders a .deploy file as an SVG image highlighted by the extension's grammar, with a
// dark theme in the style of VS Code's Dark Modern: docs/editors.md shows the result.
//
//   node scripts/render-svg.js FILE OUT.svg
'use strict';
const fs = require('fs');
const { loadGrammar, INITIAL, colour } = require('./grammar');

function escape(text) {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

async function main() {
  const [file, out] = process.argv.slice(2);
  if (!file || !out) {
    console.error('usage: node scripts/render-svg.js FILE OUT.svg');
    process.exit(2);
  }
  const grammar = await loadGrammar();
  const lines = fs.readFileSync(file, 'utf8').replace(/\n$/, '').split('\n');
  const lineHeight = 20;
  const charWidth = 8.4;
  const width = Math.ceil(Math.max(...lines.map((l) => l.length)) * charWidth + 80);
  const height = lines.length * lineHeight + 30;
  let body = '';
  let stack = INITIAL;
  lines.forEach((line, index) => {
    const result = grammar.tokenizeLine(line, stack);
    stack = result.ruleStack;
    const y = 22 + index * lineHeight;
    body += `<text x="8" y="${y}" fill="#6e7681">${String(index + 1).padStart(2, ' ')}</text>`;
    body += `<text x="40" y="${y}" xml:space="preserve">`;
    for (const token of result.tokens) {
      const text = line.slice(token.startIndex, token.endIndex);
      body += `<tspan fill="${colour(token.scopes)}">${escape(text)}</tspan>`;
    }
    body += '</text>\n';
  });
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" font-size="14">
<rect width="100%" height="100%" fill="#1f1f1f"/>
${body}</svg>
`;
  fs.writeFileSync(out, svg);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
