// Loads the extension's TextMate grammar with the same engine VS Code uses
// (vscode-textmate and vscode-oniguruma), for the scripts in this folder.
'use strict';
const fs = require('fs');
const path = require('path');
const vsctm = require('vscode-textmate');
const oniguruma = require('vscode-oniguruma');

const grammarPath = path.join(__dirname, '..', 'syntaxes', 'deploy.tmLanguage.json');

async function loadGrammar() {
  const wasm = fs.readFileSync(require.resolve('vscode-oniguruma/release/onig.wasm'));
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
  const registry = new vsctm.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (sources) => new oniguruma.OnigScanner(sources),
      createOnigString: (s) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async (scopeName) =>
      scopeName === 'source.deploy'
        ? vsctm.parseRawGrammar(fs.readFileSync(grammarPath, 'utf8'), grammarPath)
        : null,
  });
  return registry.loadGrammar('source.deploy');
}

// Scope prefixes → colours in the style of VS Code's Dark Modern theme, most specific
// first: render-svg.js and render-images.js colour tokens with them.
const THEME = [
  ['comment.line.documentation', '#6a9955'],
  ['comment', '#6a9955'],
  ['string', '#ce9178'],
  ['constant.character.escape', '#d7ba7d'],
  ['meta.interpolation', '#9cdcfe'],
  ['punctuation.section.interpolation', '#569cd6'],
  ['constant.numeric', '#b5cea8'],
  ['keyword.other.unit', '#4ec9b0'],
  ['keyword.operator.hole', '#c586c0'],
  ['keyword', '#c586c0'],
  ['storage.type', '#569cd6'],
  ['entity.name', '#4ec9b0'],
  ['variable.other.property', '#9cdcfe'],
  ['variable', '#dcdcaa'],
];

function colour(scopes) {
  for (let i = scopes.length - 1; i >= 0; i--) {
    for (const [prefix, value] of THEME) {
      if (scopes[i].startsWith(prefix)) return value;
    }
  }
  return '#d4d4d4';
}

module.exports = { loadGrammar, INITIAL: vsctm.INITIAL, colour };
