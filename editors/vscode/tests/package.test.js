// Checks that the extension is ready to publish: the manifest's publishing fields, the icon,
// the README's images, settings and commands, the CHANGELOG, and what .vscodeignore lets
// into the .vsix. Run by `npm test` (node --test); .ci/run then checks the built .vsix.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('fs');
const path = require('path');
const vsce = require('@vscode/vsce');

const root = path.join(__dirname, '..');
const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
const changelog = fs.readFileSync(path.join(root, 'CHANGELOG.md'), 'utf8');

/** Width and height of a PNG file, or an assertion failure if it is not one. */
function pngSize(file) {
  const data = fs.readFileSync(file);
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  assert.ok(data.subarray(0, 8).equals(signature), `${file} is not a PNG`);
  assert.equal(data.toString('ascii', 12, 16), 'IHDR', `${file} has no IHDR chunk first`);
  return { width: data.readUInt32BE(16), height: data.readUInt32BE(20) };
}

/** The lines of the README section under `## title`, up to the next `## `. */
function section(title) {
  const lines = readme.split('\n');
  const start = lines.indexOf(`## ${title}`);
  assert.notEqual(start, -1, `README.md has no "## ${title}" section`);
  const end = lines.findIndex((line, i) => i > start && line.startsWith('## '));
  return lines.slice(start + 1, end === -1 ? undefined : end);
}

/** Every image the README shows: Markdown images and <img> tags. */
function readmeImages() {
  const images = [];
  for (const m of readme.matchAll(/!\[([^\]]*)\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) images.push(m[2]);
  for (const m of readme.matchAll(/<img\b[^>]*\bsrc=["']([^"']+)["']/gi)) images.push(m[1]);
  return images;
}

test('manifest: the fields the Marketplace needs, and a package script that bypasses no check', () => {
  for (const field of ['name', 'displayName', 'description', 'publisher', 'version', 'license']) {
    assert.equal(typeof manifest[field], 'string', `package.json has no ${field}`);
  }
  assert.match(manifest.repository.url, /^https:\/\/github\.com\/[^/]+\/[^/]+\.git$/);
  assert.match(manifest.bugs.url, /^https:\/\//);
  assert.match(manifest.homepage, /^https:\/\//);
  assert.match(manifest.galleryBanner.color, /^#[0-9a-f]{6}$/i);
  assert.ok(['dark', 'light'].includes(manifest.galleryBanner.theme));
  assert.ok(fs.existsSync(path.join(root, 'LICENSE')), 'no LICENSE next to package.json');
  const script = manifest.scripts.package;
  assert.match(script, /^vsce package /);
  for (const bypass of ['--skip-license', '--allow-missing-repository', '--allow-star-activation']) {
    assert.ok(!script.includes(bypass), `the package script passes ${bypass}`);
  }
  // The extension lives in a subfolder of the repository: vsce must point the README's
  // relative links there, not at the repository's root.
  const base = manifest.repository.url.replace(/\.git$/, '');
  const folder = manifest.repository.directory;
  assert.ok(script.includes(`--baseImagesUrl ${base}/raw/main/${folder}`), 'no --baseImagesUrl');
  assert.ok(script.includes(`--baseContentUrl ${base}/blob/main/${folder}`), 'no --baseContentUrl');
});

test('icon: package.json names a square PNG of at least 128 px, with its SVG source', () => {
  assert.equal(typeof manifest.icon, 'string', 'package.json has no icon');
  assert.match(manifest.icon, /\.png$/, 'the Marketplace icon must be a PNG');
  const icon = path.join(root, manifest.icon);
  assert.ok(fs.existsSync(icon), `${manifest.icon} does not exist`);
  const { width, height } = pngSize(icon);
  assert.equal(width, height, `${manifest.icon} is ${width}×${height}, not square`);
  assert.ok(width >= 128, `${manifest.icon} is ${width} px wide, under 128`);
  assert.ok(fs.existsSync(icon.replace(/\.png$/, '.svg')), 'the icon has no SVG source next to it');
});

test('README: every image is a PNG in this folder that exists', () => {
  const images = readmeImages();
  assert.ok(images.length >= 3, `README.md shows ${images.length} images, expected the screenshots`);
  for (const image of images) {
    assert.doesNotMatch(image, /^[a-z]+:/i, `${image}: use a relative path (vsce rewrites it)`);
    assert.match(image, /\.png$/i, `${image}: vsce rejects SVG images; use a PNG`);
    const file = path.resolve(root, image);
    assert.ok(file.startsWith(root + path.sep), `${image} is outside editors/vscode`);
    assert.ok(fs.existsSync(file), `${image} does not exist`);
    const { width } = pngSize(file);
    assert.ok(width >= 400 && width <= 1600, `${image} is ${width} px wide`);
  }
  assert.doesNotMatch(readme, /<svg\b/i, 'vsce rejects <svg> in the README');
});

test('README: every setting is documented with its default and its values', () => {
  const rows = section('Settings').filter((line) => line.startsWith('| `'));
  const properties = manifest.contributes.configuration.properties;
  for (const [key, property] of Object.entries(properties)) {
    const row = rows.find((line) => line.startsWith(`| \`${key}\` |`));
    assert.ok(row, `the README's Settings table has no row for ${key}`);
    const cells = row.split(' | ');
    assert.ok(
      cells[1].includes(`\`${JSON.stringify(property.default)}\``),
      `${key}: the README's default is not ${JSON.stringify(property.default)}`,
    );
    for (const value of property.enum || []) {
      assert.ok(row.includes(`\`${JSON.stringify(value)}\``), `${key}: the README does not name ${JSON.stringify(value)}`);
    }
  }
  for (const row of rows) {
    const key = /^\| `([^`]+)`/.exec(row)[1];
    assert.ok(key in properties, `the README documents ${key}, which package.json does not contribute`);
  }
});

test('README: every command is documented with its title and id', () => {
  const rows = section('Commands');
  for (const { command, title } of manifest.contributes.commands) {
    assert.ok(
      rows.some((line) => line.includes(`**${title}**`) && line.includes(`\`${command}\``)),
      `the README's Commands section does not document ${title} (${command})`,
    );
  }
});

test('CHANGELOG: a Keep a Changelog entry for the package.json version', () => {
  assert.match(changelog, /^# Changelog\n/);
  assert.match(changelog, /keepachangelog\.com/);
  const version = manifest.version.replace(/\./g, '\\.');
  const heading = new RegExp(`^## \\[${version}\\] - (\\d{4}-\\d{2}-\\d{2})$`, 'm').exec(changelog);
  assert.ok(heading, `CHANGELOG.md has no "## [${manifest.version}] - YYYY-MM-DD" heading`);
  assert.ok(!Number.isNaN(Date.parse(heading[1])), `${heading[1]} is not a date`);
  const body = changelog.slice(heading.index + heading[0].length).split(/^## /m)[0];
  assert.match(body, /^### (Added|Changed|Deprecated|Removed|Fixed|Security)$/m);
});

test('.vscodeignore: the .vsix holds the bundle, grammar, configuration, icon and documents only', async () => {
  const expected = [
    'CHANGELOG.md',
    'LICENSE',
    'README.md',
    manifest.icon,
    'language-configuration.json',
    'out/ThirdPartyNotices.txt', // built with it
    'out/extension.js', // present once built (vscode:prepublish)
    'package.json',
    ...manifest.contributes.grammars.map((g) => g.path.replace(/^\.\//, '')),
  ].sort();
  const listed = (await vsce.listFiles({ cwd: root, packageManager: vsce.PackageManager.None })).sort();
  // Without a build there is no out/; every other file must be there.
  const present = expected.filter((file) => fs.existsSync(path.join(root, file)));
  assert.deepEqual(listed, present);
  for (const file of expected) {
    if (!file.startsWith('out/')) assert.ok(listed.includes(file), `${file} is left out of the .vsix`);
  }
  assert.equal(manifest.main, './out/extension.js');
  for (const language of manifest.contributes.languages) {
    assert.ok(listed.includes(language.configuration.replace(/^\.\//, '')));
  }
});
