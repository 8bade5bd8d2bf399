#!/usr/bin/env node
// Writes the licenses (and third-party notices) of the npm packages esbuild bundled into out/extension.js (from its
// metafile), since minifying drops their copyright headers. The .vsix ships the result.
//
//   node scripts/third-party-notices.js out/meta.json out/ThirdPartyNotices.txt
'use strict';
const fs = require('fs');
const path = require('path');

const [metafile, out] = process.argv.slice(2);
if (!metafile || !out) {
  console.error('usage: node scripts/third-party-notices.js META.json OUT.txt');
  process.exit(2);
}

// Every package folder an input lies in (the innermost node_modules/<name>).
const folders = new Set();
for (const input of Object.keys(JSON.parse(fs.readFileSync(metafile, 'utf8')).inputs)) {
  const match = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input.replace(/\\/g, '/'));
  if (match) folders.add(match[1]);
}

const packages = [...folders]
  .map((folder) => {
    const manifest = JSON.parse(fs.readFileSync(path.join(folder, 'package.json'), 'utf8'));
    const license = fs.readdirSync(folder).find((f) => /^licen[cs]e(\.(md|txt))?$/i.test(f));
    if (!license) throw new Error(`${folder}: no license file`);
    // A package's own notices for the code it incorporates go with its license.
    const notices = fs.readdirSync(folder).find((f) => /^third-?party-?notices(\.(md|txt))?$/i.test(f));
    return {
      name: manifest.name,
      version: manifest.version,
      license: manifest.license,
      text: [license, notices]
        .filter(Boolean)
        .map((f) => fs.readFileSync(path.join(folder, f), 'utf8').trim())
        .join('\n\n'),
    };
  })
  .sort((a, b) => a.name.localeCompare(b.name));
if (packages.length === 0) throw new Error(`${metafile}: no bundled npm package`);

let text =
  'The Deployfit extension bundles the following npm packages into out/extension.js.\n' +
  'Their licenses follow.\n';
for (const p of packages) {
  text += `\n${'='.repeat(80)}\n${p.name} ${p.version} (${p.license})\n${'='.repeat(80)}\n\n${p.text}\n`;
}
fs.writeFileSync(out, text);
console.log(`${out}: ${packages.map((p) => `${p.name}@${p.version}`).join(', ')}`);
