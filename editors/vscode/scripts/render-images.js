#!/usr/bin/env node
// Renders the extension's images with headless Chromium:
//
//   images/icon.png          the Marketplace icon, 256×256, from images/icon.svg
//   images/hover.png         examples/02-glm4-32b-at-the-limit.deploy: the tight-fit warning,
//                            the inlay fit hint, the explain lens, the hover breakdown and
//                            the Problems panel with the diagnostic's labels
//   images/quick-fix.png     tests/fixtures/diagnostics/name.unknown.deploy: the unknown-GPU
//                            error and its quick fix
//   images/completion.png    examples/02 with `gpu = a100` being typed: the GPU completions
//
// The screenshots are drawn from what the real language server answers: the script starts
// `deployfit lsp`, opens each file (initialize, didOpen, didChange), and asks for its
// diagnostics, inlay hints, code lenses, hover, code actions and completions. Every message,
// hint, number and list item shown is the server's; the script adds only the editor's
// chrome (tab, breadcrumbs, panel titles) and, for completion.png, the edit being typed.
// Colours come from the extension's TextMate grammar (scripts/grammar.js), in the style of
// VS Code's Dark Modern theme.
//
//   node scripts/render-images.js [--deployfit PATH] [--chromium PATH] [icon] [screenshots]
//
// `--deployfit` defaults to $DEPLOYFIT, then ../../target/release/deployfit or
// ../../target/debug/deployfit (whichever is newer), then `deployfit` on PATH; `--chromium`
// to $CHROMIUM, then chromium, chromium-browser or google-chrome on PATH.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawn, spawnSync } = require('child_process');
const { pathToFileURL } = require('url');
const MarkdownIt = require('markdown-it');
const { loadGrammar, INITIAL, colour } = require('./grammar');

const EXTENSION = path.join(__dirname, '..');
const REPOSITORY = path.join(EXTENSION, '..', '..');
const IMAGES = path.join(EXTENSION, 'images');
const ICON_SIZE = 256;
const TIMEOUT_MS = 30000;

// ---------------------------------------------------------------------------------------
// Tools

function onPath(name) {
  for (const dir of (process.env.PATH || '').split(path.delimiter)) {
    const candidate = path.join(dir, name);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

function findDeployfit(explicit) {
  if (explicit) return explicit;
  if (process.env.DEPLOYFIT) return process.env.DEPLOYFIT;
  const built = ['release', 'debug']
    .map((profile) => path.join(REPOSITORY, 'target', profile, 'deployfit'))
    .filter((p) => fs.existsSync(p))
    .sort((a, b) => fs.statSync(b).mtimeMs - fs.statSync(a).mtimeMs);
  if (built.length > 0) return built[0];
  const found = onPath('deployfit');
  if (found) return found;
  throw new Error('no deployfit binary: build it (cargo build --release) or pass --deployfit PATH');
}

function findChromium(explicit) {
  if (explicit) return explicit;
  if (process.env.CHROMIUM) return process.env.CHROMIUM;
  for (const name of ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable']) {
    const found = onPath(name);
    if (found) return found;
  }
  throw new Error('no Chromium: install it (apt-get install chromium) or pass --chromium PATH');
}

function chromiumArgs(extra) {
  return [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--hide-scrollbars',
    '--no-first-run',
    '--force-device-scale-factor=1',
    '--font-render-hinting=none',
    ...extra,
  ];
}

function runChromium(chromium, args) {
  const result = spawnSync(chromium, chromiumArgs(args), {
    encoding: 'utf8',
    timeout: 120000,
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.error) throw result.error;
  if (result.status !== 0) {
    throw new Error(`${chromium} exited with ${result.status}:\n${result.stderr}`);
  }
  return result.stdout;
}

/** Screenshots `url` into `out` at `width`×`height` CSS pixels. */
function screenshot(chromium, url, out, width, height, transparent) {
  const args = [`--window-size=${width},${height}`, `--screenshot=${out}`];
  if (transparent) args.push('--default-background-color=00000000');
  runChromium(chromium, [...args, url]);
  const png = fs.readFileSync(out);
  const size = [png.readUInt32BE(16), png.readUInt32BE(20)];
  if (png.toString('ascii', 1, 4) !== 'PNG' || size[0] !== width || size[1] !== height) {
    throw new Error(`${out}: expected a ${width}×${height} PNG, got ${size.join('×')}`);
  }
}

// ---------------------------------------------------------------------------------------
// A minimal LSP client over stdio

class Server {
  constructor(command) {
    this.command = command;
    this.process = spawn(command, ['lsp'], { stdio: ['pipe', 'pipe', 'inherit'] });
    this.buffer = Buffer.alloc(0);
    this.nextId = 1;
    this.pending = new Map();
    this.listeners = [];
    this.process.on('error', (error) => this.fail(error));
    this.process.on('exit', (code) => {
      if (this.pending.size > 0) this.fail(new Error(`${command} lsp exited with ${code}`));
    });
    this.process.stdout.on('data', (chunk) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.drain();
    });
  }

  fail(error) {
    for (const { reject } of this.pending.values()) reject(error);
    this.pending.clear();
  }

  drain() {
    for (;;) {
      const end = this.buffer.indexOf('\r\n\r\n');
      if (end < 0) return;
      const header = this.buffer.subarray(0, end).toString('ascii');
      const length = Number(/content-length: *(\d+)/i.exec(header)?.[1]);
      if (!Number.isFinite(length)) throw new Error(`bad frame header: ${header}`);
      if (this.buffer.length < end + 4 + length) return;
      const message = JSON.parse(this.buffer.subarray(end + 4, end + 4 + length).toString('utf8'));
      this.buffer = this.buffer.subarray(end + 4 + length);
      this.dispatch(message);
    }
  }

  dispatch(message) {
    if (message.method === undefined) {
      const waiting = this.pending.get(message.id);
      if (!waiting) return;
      this.pending.delete(message.id);
      if (message.error) {
        waiting.reject(new Error(`${waiting.method}: ${JSON.stringify(message.error)}`));
      } else {
        waiting.resolve(message.result);
      }
    } else if (message.id !== undefined) {
      // A request from the server (configuration, registration): answer it plainly.
      this.send({ jsonrpc: '2.0', id: message.id, result: null });
    } else {
      this.listeners = this.listeners.filter((listener) => !listener(message));
    }
  }

  send(message) {
    const body = Buffer.from(JSON.stringify(message), 'utf8');
    this.process.stdin.write(`Content-Length: ${body.length}\r\n\r\n`);
    this.process.stdin.write(body);
  }

  request(method, params) {
    const id = this.nextId++;
    return withTimeout(
      new Promise((resolve, reject) => {
        this.pending.set(id, { method, resolve, reject });
        this.send({ jsonrpc: '2.0', id, method, params });
      }),
      method,
    );
  }

  notify(method, params) {
    this.send({ jsonrpc: '2.0', method, params });
  }

  /** The next notification `predicate` accepts. Register before sending what causes it. */
  next(what, predicate) {
    return withTimeout(
      new Promise((resolve) =>
        this.listeners.push((message) => (predicate(message) ? (resolve(message), true) : false)),
      ),
      what,
    );
  }

  async initialize() {
    const result = await this.request('initialize', {
      processId: process.pid,
      clientInfo: { name: 'render-images.js' },
      rootUri: pathToFileURL(REPOSITORY).href,
      capabilities: {
        textDocument: {
          hover: { contentFormat: ['markdown', 'plaintext'] },
          publishDiagnostics: { relatedInformation: true, versionSupport: true },
          inlayHint: {},
          codeLens: {},
          codeAction: {
            codeActionLiteralSupport: { codeActionKind: { valueSet: ['quickfix'] } },
          },
          completion: { completionItem: { snippetSupport: false } },
        },
      },
    });
    this.notify('initialized', {});
    return result;
  }

  async shutdown() {
    await this.request('shutdown', null);
    this.notify('exit', null);
    await new Promise((resolve) => {
      if (this.process.exitCode !== null) resolve();
      else this.process.on('exit', resolve);
    });
  }
}

function withTimeout(promise, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer to ${what} in ${TIMEOUT_MS} ms`)), TIMEOUT_MS);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** An open document: its text as the server has it, and the server's answers about it. */
class Document {
  constructor(server, file) {
    this.server = server;
    this.file = file;
    this.uri = pathToFileURL(file).href;
    this.text = fs.readFileSync(file, 'utf8');
    this.version = 1;
  }

  diagnosticsFor(version) {
    return this.server
      .next(
        `diagnostics of ${this.file} version ${version}`,
        (m) =>
          m.method === 'textDocument/publishDiagnostics' &&
          m.params.uri === this.uri &&
          (m.params.version === undefined || m.params.version === version),
      )
      .then((m) => m.params.diagnostics);
  }

  async open() {
    const diagnostics = this.diagnosticsFor(this.version);
    this.server.notify('textDocument/didOpen', {
      textDocument: { uri: this.uri, languageId: 'deploy', version: this.version, text: this.text },
    });
    this.diagnostics = await diagnostics;
  }

  /** Replaces the first `from` by `to`, as typing would; returns the position after it. */
  async replace(from, to) {
    const offset = this.text.indexOf(from);
    if (offset < 0) throw new Error(`${this.file} has no ${JSON.stringify(from)}`);
    const start = this.position(offset);
    const end = this.position(offset + from.length);
    this.text = this.text.slice(0, offset) + to + this.text.slice(offset + from.length);
    this.version++;
    const diagnostics = this.diagnosticsFor(this.version);
    this.server.notify('textDocument/didChange', {
      textDocument: { uri: this.uri, version: this.version },
      contentChanges: [{ range: { start, end }, text: to }],
    });
    this.diagnostics = await diagnostics;
    return this.position(offset + to.length);
  }

  close() {
    this.server.notify('textDocument/didClose', { textDocument: { uri: this.uri } });
  }

  position(offset) {
    const before = this.text.slice(0, offset).split('\n');
    return { line: before.length - 1, character: before[before.length - 1].length };
  }

  lines() {
    return this.text.replace(/\n$/, '').split('\n');
  }

  request(method, params) {
    return this.server.request(method, { textDocument: { uri: this.uri }, ...params });
  }

  inlayHints() {
    const lines = this.lines();
    return this.request('textDocument/inlayHint', {
      range: { start: { line: 0, character: 0 }, end: { line: lines.length, character: 0 } },
    });
  }

  codeLenses() {
    return this.request('textDocument/codeLens', {});
  }

  symbols() {
    return this.request('textDocument/documentSymbol', {});
  }

  hover(position) {
    return this.request('textDocument/hover', { position });
  }

  codeActions(diagnostic) {
    return this.request('textDocument/codeAction', {
      range: diagnostic.range,
      context: { diagnostics: [diagnostic], only: ['quickfix'] },
    });
  }

  completion(position) {
    return this.request('textDocument/completion', { position });
  }
}

// ---------------------------------------------------------------------------------------
// The editor-like page

// Liberation Mono: DejaVu Sans Mono's underscore falls between pixel rows at 14px.
const FONT = "'Liberation Mono', 'DejaVu Sans Mono', Menlo, Consolas, monospace";
const UI_FONT = "'DejaVu Sans', 'Liberation Sans', Arial, sans-serif";
const SEVERITY = { 1: 'error', 2: 'warning', 3: 'info', 4: 'hint' };

function escape(text) {
  return String(text)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');
}

function icon(kind) {
  switch (kind) {
    case 'error':
      return '<svg class="sev" viewBox="0 0 16 16"><circle cx="8" cy="8" r="7" fill="#f14c4c"/><path d="M5.5 5.5l5 5M10.5 5.5l-5 5" stroke="#1f1f1f" stroke-width="1.6" stroke-linecap="round"/></svg>';
    case 'warning':
      return '<svg class="sev" viewBox="0 0 16 16"><path d="M8 1.5l7 13H1z" fill="#cca700"/><path d="M8 6v4.2" stroke="#1f1f1f" stroke-width="1.6" stroke-linecap="round"/><circle cx="8" cy="12.4" r="0.9" fill="#1f1f1f"/></svg>';
    case 'info':
      return '<svg class="sev" viewBox="0 0 16 16"><circle cx="8" cy="8" r="7" fill="#3794ff"/><path d="M8 7v4.5" stroke="#1f1f1f" stroke-width="1.6" stroke-linecap="round"/><circle cx="8" cy="4.8" r="0.9" fill="#1f1f1f"/></svg>';
    case 'bulb':
      return '<svg class="bulb" viewBox="0 0 16 16"><path d="M8 1.5a4.5 4.5 0 0 0-2.6 8.2c.5.4.8.9.8 1.5v.8h3.6v-.8c0-.6.3-1.1.8-1.5A4.5 4.5 0 0 0 8 1.5z" fill="#ffcc00"/><rect x="6.2" y="12.8" width="3.6" height="1.6" rx=".6" fill="#ffcc00"/></svg>';
    case 'fix':
      return '<svg class="fix" viewBox="0 0 16 16"><path d="M8 1.5a4.5 4.5 0 0 0-2.6 8.2c.5.4.8.9.8 1.5v.8h3.6v-.8c0-.6.3-1.1.8-1.5A4.5 4.5 0 0 0 8 1.5z" fill="#ffcc00"/><rect x="6.2" y="12.8" width="3.6" height="1.6" rx=".6" fill="#ffcc00"/></svg>';
    case 'value':
      return '<svg class="kind" viewBox="0 0 16 16"><rect x="2" y="4" width="12" height="8" rx="1" fill="none" stroke="#ee9d28" stroke-width="1.4"/><path d="M5 8h6" stroke="#ee9d28" stroke-width="1.4"/></svg>';
    default:
      return '<svg class="kind" viewBox="0 0 16 16"><circle cx="8" cy="8" r="4" fill="none" stroke="#75beff" stroke-width="1.4"/></svg>';
  }
}

const COMPLETION_KINDS = { 12: 'value', 13: 'value', 20: 'value' };

const STYLE = `
* { box-sizing: border-box; }
html, body { margin: 0; padding: 0; background: #181818; }
body { font-family: ${UI_FONT}; font-size: 13px; color: #cccccc; }
#window { display: inline-block; position: relative; background: #1f1f1f; }
.tabs { display: flex; background: #181818; border-bottom: 1px solid #2b2b2b; height: 35px; }
.tab { display: flex; align-items: center; gap: 6px; padding: 0 14px; background: #1f1f1f;
  border-top: 1px solid #0078d4; border-right: 1px solid #2b2b2b; color: #ffffff; }
.tab .dot { width: 9px; height: 9px; border-radius: 50%; background: #4ec9b0; }
.tab .count { color: #cca700; font-size: 12px; }
.tab .count.error { color: #f14c4c; }
.crumbs { height: 22px; line-height: 22px; padding-left: 18px; color: #a9a9a9; font-size: 12.5px; }
.editor { position: relative; padding: 4px 24px 14px 0; font-family: ${FONT}; font-size: 14px; }
.line { position: relative; display: flex; height: 19px; line-height: 19px; white-space: pre; }
.line.current { background: #ffffff08; outline: 1px solid #282828; }
.gutter { position: relative; flex: none; width: 68px; padding-right: 22px; text-align: right; color: #6e7681; }
.line.current .gutter { color: #cccccc; }
.code { position: relative; color: #d4d4d4; }
.lens { font-family: ${UI_FONT}; font-size: 12px; color: #999999; }
.squiggle-error { text-decoration: underline wavy #f14c4c; text-decoration-skip-ink: none; text-underline-offset: 3px; }
.squiggle-warning { text-decoration: underline wavy #cca700; text-decoration-skip-ink: none; text-underline-offset: 3px; }
.squiggle-info { text-decoration: underline wavy #3794ff; text-decoration-skip-ink: none; text-underline-offset: 3px; }
.hint { font-size: 12.6px; color: #969696; background: #6161614d; border-radius: 4px; margin-left: 3px;
  padding: 1px 2px 1px 0; }
.anchor { position: relative; display: inline-block; width: 0; height: 19px; vertical-align: top; }
.cursor { position: absolute; left: -1px; top: 0; width: 2px; height: 19px; background: #aeafad; }
.bulb { position: absolute; left: 4px; top: 2px; width: 16px; height: 16px; }
.widget { position: absolute; top: 21px; left: -4px; z-index: 10; background: #202020; border: 1px solid #454545;
  border-radius: 3px; box-shadow: 0 2px 8px #00000099; font-family: ${UI_FONT}; font-size: 13px;
  color: #cccccc; white-space: normal; }
.hover { width: max-content; max-width: 620px; }
.hover .part { padding: 4px 8px; }
.hover .part + .part { border-top: 1px solid #454545; }
.hover p { margin: 4px 0; line-height: 19px; }
.hover code { font-family: ${FONT}; font-size: 12.5px; color: #d7ba7d; }
.hover table { border-collapse: collapse; margin: 4px 0 6px; }
.hover th, .hover td { padding: 1px 8px 1px 0; text-align: left; vertical-align: top; line-height: 18px; }
.hover thead { display: none; }
.hover td:first-child { color: #9d9d9d; padding-right: 16px; white-space: nowrap; }
.message { white-space: pre-wrap; line-height: 19px; color: #cccccc; }
.source { color: #9d9d9d; }
.statusbar { display: flex; gap: 18px; padding: 5px 8px; border-top: 1px solid #454545; color: #4daafc; font-size: 12.5px; }
.statusbar .key { color: #9d9d9d; }
.menu { min-width: 300px; padding: 4px; }
.menu .title { padding: 4px 8px 6px; color: #9d9d9d; font-size: 12px; }
.menu .item { display: flex; align-items: center; gap: 8px; padding: 3px 8px; border-radius: 3px; white-space: pre; }
.menu .item.selected { background: #04395e; outline: 1px solid #2488db; color: #ffffff; }
.menu .item .fix { width: 14px; height: 14px; flex: none; }
.suggest { width: 520px; padding: 0; }
.suggest .item { display: flex; align-items: center; gap: 6px; height: 22px; padding: 0 8px; font-family: ${FONT}; font-size: 13.5px; white-space: pre; }
.suggest .item.selected { background: #04395e; outline: 1px solid #2488db; }
.suggest .match { color: #2aaaff; font-weight: bold; }
.suggest .detail { margin-left: auto; padding-left: 24px; color: #9d9d9d; font-family: ${UI_FONT}; font-size: 12.5px; }
.kind { width: 16px; height: 16px; flex: none; }
.sev { width: 14px; height: 14px; flex: none; }
.panel { border-top: 1px solid #2b2b2b; background: #181818; padding: 0 0 8px; font-size: 13px; }
.panel .heads { display: flex; gap: 22px; padding: 8px 20px 6px; font-size: 11px; letter-spacing: .4px; color: #9d9d9d; }
.panel .heads .active { color: #e7e7e7; border-bottom: 1px solid #0078d4; padding-bottom: 3px; }
.panel .badge { display: inline-block; min-width: 16px; margin-left: 4px; padding: 0 4px; border-radius: 8px;
  background: #616161; color: #ffffff; text-align: center; font-size: 10.5px; }
.row { display: flex; align-items: flex-start; gap: 6px; padding: 2px 20px; line-height: 19px; white-space: pre; }
.row.file { color: #cccccc; }
.row .dim { color: #9d9d9d; }
.row .sev { margin-top: 2.5px; }
.row.related { padding-left: 62px; }
`;

/** One line's HTML: grammar colours, squiggles, and widgets inserted at characters. */
function lineHtml(line, tokens, squiggles, inserts) {
  const colours = new Array(line.length).fill('#d4d4d4');
  for (const token of tokens) {
    const c = colour(token.scopes);
    for (let i = token.startIndex; i < Math.min(token.endIndex, line.length); i++) colours[i] = c;
  }
  const severity = new Array(line.length).fill(0);
  for (const { from, to, level } of squiggles) {
    for (let i = from; i < Math.min(to, line.length); i++) {
      // The most severe diagnostic wins (1 is an error).
      if (severity[i] === 0 || level < severity[i]) severity[i] = level;
    }
  }
  let html = '';
  let i = 0;
  const insertAt = (at) => (inserts.get(at) || []).join('');
  while (i < line.length) {
    html += insertAt(i);
    let j = i + 1;
    while (j < line.length && colours[j] === colours[i] && severity[j] === severity[i] && !inserts.has(j)) j++;
    const cls = severity[i] ? ` class="squiggle-${SEVERITY[severity[i]]}"` : '';
    html += `<span style="color:${colours[i]}"${cls}>${escape(line.slice(i, j))}</span>`;
    i = j;
  }
  for (const [at, parts] of inserts) {
    if (at >= line.length) html += parts.join('');
  }
  return html;
}

/**
 * The page for one screenshot. `view`: { title, crumbs, lines, tokens, diagnostics,
 * hints, lenses, current (line), gutter (line → HTML), widgets: [{ line, character, html }],
 * panel (HTML) }.
 */
function page(view) {
  const inserts = view.lines.map(() => new Map());
  const add = (line, character, html) => {
    const at = inserts[line];
    if (!at.has(character)) at.set(character, []);
    at.get(character).push(html);
  };
  for (const hint of view.hints) {
    const label =
      typeof hint.label === 'string' ? hint.label : hint.label.map((part) => part.value).join('');
    add(hint.position.line, hint.position.character, `<span class="hint">${escape(label)}</span>`);
  }
  for (const widget of view.widgets) {
    add(widget.line, widget.character, `<span class="anchor">${widget.html}</span>`);
  }
  const squiggles = view.lines.map(() => []);
  for (const d of view.diagnostics) {
    const { start, end } = d.range;
    for (let l = start.line; l <= end.line && l < view.lines.length; l++) {
      const from = l === start.line ? start.character : 0;
      const to = l === end.line ? end.character : view.lines[l].length;
      squiggles[l].push({ from, to: Math.max(to, from + 1), level: d.severity || 1 });
    }
  }
  const lensesByLine = new Map();
  for (const lens of view.lenses) {
    const line = lens.range.start.line;
    if (!lensesByLine.has(line)) lensesByLine.set(line, []);
    if (lens.command) lensesByLine.get(line).push(lens.command.title);
  }
  const errors = view.diagnostics.filter((d) => d.severity === 1).length;
  const others = view.diagnostics.length - errors;
  const counts = errors > 0 ? `<span class="count error">${errors}</span>` : others > 0 ? `<span class="count">${others}</span>` : '';

  let rows = '';
  view.lines.forEach((line, index) => {
    const lenses = lensesByLine.get(index);
    if (lenses && lenses.length > 0) {
      const indent = /^\s*/.exec(line)[0];
      rows += `<div class="line"><span class="gutter"></span><span class="code">${escape(indent)}<span class="lens">${lenses.map(escape).join(' | ')}</span></span></div>`;
    }
    const current = index === view.current ? ' current' : '';
    const gutter = (view.gutter && view.gutter[index]) || '';
    rows += `<div class="line${current}"><span class="gutter">${gutter}${index + 1}</span><span class="code">${lineHtml(line, view.tokens[index], squiggles[index], inserts[index])}</span></div>\n`;
  });

  return `<!DOCTYPE html>
<html><head><meta charset="utf-8"><style>${STYLE}</style></head>
<body><div id="window">
<div class="tabs"><div class="tab"><span class="dot"></span>${escape(view.title)} ${counts}</div></div>
<div class="crumbs">${view.crumbs.map(escape).join(' › ')}</div>
<div class="editor">${rows}</div>
${view.panel || ''}
</div>
<script>
  // Grow the editor and the window over every widget (as VS Code keeps a widget inside the
  // editor), and leave the window's size in the title for render-images.js to read.
  const box = document.getElementById('window');
  const editor = box.querySelector('.editor');
  const widgets = [...document.querySelectorAll('.widget')].map((w) => w.getBoundingClientRect());
  const editorTop = editor.getBoundingClientRect().top;
  const bottom = Math.max(0, ...widgets.map((r) => r.bottom + 12 - editorTop));
  editor.style.minHeight = Math.ceil(bottom) + 'px';
  const right = Math.max(0, ...widgets.map((r) => r.right + 16 - box.getBoundingClientRect().left));
  box.style.minWidth = Math.max(760, Math.ceil(right)) + 'px';
  const size = box.getBoundingClientRect();
  document.title = 'size=' + Math.ceil(size.width) + 'x' + Math.ceil(size.height);
</script>
</body></html>
`;
}

function diagnosticHtml(d) {
  const code = d.code !== undefined ? `<span class="source">${escape(d.source || '')}(${escape(d.code)})</span>` : '';
  return `<div class="message">${escape(d.message)} ${code}</div>`;
}

function problemsPanel(diagnostics, file) {
  const name = path.basename(file);
  const folder = path.relative(REPOSITORY, path.dirname(file));
  let rows = `<div class="row file"><span>${escape(name)}</span> <span class="dim">${escape(folder)}</span> <span class="badge">${diagnostics.length}</span></div>`;
  for (const d of diagnostics) {
    const at = `[Ln ${d.range.start.line + 1}, Col ${d.range.start.character + 1}]`;
    const [first, ...rest] = d.message.split('\n');
    rows += `<div class="row">${icon(SEVERITY[d.severity || 1])}<span>${escape(first)} <span class="dim">${escape(d.source || '')}(${escape(d.code)}) ${at}</span>${rest.map((l) => `\n${escape(l)}`).join('')}</span></div>`;
    for (const related of d.relatedInformation || []) {
      const where = `${path.basename(new URL(related.location.uri).pathname)}[Ln ${related.location.range.start.line + 1}, Col ${related.location.range.start.character + 1}]`;
      rows += `<div class="row related"><span>${escape(related.message)} <span class="dim">${escape(where)}</span></span></div>`;
    }
  }
  return `<div class="panel"><div class="heads"><span class="active">PROBLEMS<span class="badge">${diagnostics.length}</span></span><span>OUTPUT</span><span>DEBUG CONSOLE</span><span>TERMINAL</span></div>${rows}</div>`;
}

async function tokenize(lines) {
  const grammar = await loadGrammar();
  let stack = INITIAL;
  return lines.map((line) => {
    const result = grammar.tokenizeLine(line, stack);
    stack = result.ruleStack;
    return result.tokens;
  });
}

function within(range, position) {
  const after = (a, b) => a.line > b.line || (a.line === b.line && a.character >= b.character);
  return after(position, range.start) && after(range.end, position);
}

// ---------------------------------------------------------------------------------------
// The screenshots

const markdown = new MarkdownIt({ html: false, linkify: false });

/** Hover on the first deployment's name: the breakdown, then the problems at that place. */
async function hoverShot(server) {
  const file = path.join(REPOSITORY, 'examples', '02-glm4-32b-at-the-limit.deploy');
  const doc = new Document(server, file);
  await doc.open();
  const [hints, lenses, symbols] = await Promise.all([doc.inlayHints(), doc.codeLenses(), doc.symbols()]);
  const deployment = symbols.find((s) => s.detail === 'deployment');
  const at = deployment.selectionRange.start;
  const hover = await doc.hover(at);
  if (!hover) throw new Error(`no hover on ${deployment.name}`);
  const problems = doc.diagnostics.filter((d) => within(d.range, at));
  let html = `<div class="part">${markdown.render(hover.contents.value)}</div>`;
  for (const d of problems) html += `<div class="part">${diagnosticHtml(d)}</div>`;
  if (problems.length > 0) {
    html += '<div class="statusbar"><span>View Problem <span class="key">(Alt+F8)</span></span><span>Quick Fix... <span class="key">(Ctrl+.)</span></span></div>';
  }
  doc.close();
  const lines = doc.lines();
  return {
    name: 'hover.png',
    view: {
      title: path.basename(file),
      crumbs: ['examples', path.basename(file), deployment.name],
      lines,
      tokens: await tokenize(lines),
      diagnostics: doc.diagnostics,
      hints,
      lenses,
      current: at.line,
      widgets: [{ line: at.line, character: at.character, html: `<div class="widget hover">${html}</div>` }],
      panel: problemsPanel(doc.diagnostics, file),
    },
    facts: { diagnostics: doc.diagnostics.length, hints: hints.length, lenses: lenses.length, hover: deployment.name },
  };
}

/** The first error's quick fixes, as the lightbulb menu shows them. */
async function quickFixShot(server) {
  const file = path.join(REPOSITORY, 'tests', 'fixtures', 'diagnostics', 'name.unknown.deploy');
  const doc = new Document(server, file);
  await doc.open();
  const [hints, lenses] = await Promise.all([doc.inlayHints(), doc.codeLenses()]);
  const error = doc.diagnostics.find((d) => d.severity === 1) || doc.diagnostics[0];
  if (!error) throw new Error(`${file}: no diagnostic`);
  const actions = (await doc.codeActions(error)) || [];
  if (actions.length === 0) throw new Error(`${file}: no quick fix for ${error.code}`);
  const at = error.range.end;
  const items = actions
    .map(
      (a, i) =>
        `<div class="item${i === 0 ? ' selected' : ''}">${icon('fix')}${escape(a.title)}</div>`,
    )
    .join('');
  doc.close();
  const lines = doc.lines();
  return {
    name: 'quick-fix.png',
    view: {
      title: path.basename(file),
      crumbs: ['tests', 'fixtures', 'diagnostics', path.basename(file)],
      lines,
      tokens: await tokenize(lines),
      diagnostics: doc.diagnostics,
      hints,
      lenses,
      current: at.line,
      gutter: { [at.line]: icon('bulb') },
      widgets: [
        {
          line: at.line,
          character: at.character,
          html: `<span class="cursor"></span><div class="widget menu"><div class="title">Quick Fix</div>${items}</div>`,
        },
      ],
      panel: problemsPanel(doc.diagnostics, file),
    },
    facts: { diagnostic: error.code, actions: actions.map((a) => a.title) },
  };
}

/** Completion after `gpu = a100`, filtered by the typed word as VS Code does. */
async function completionShot(server) {
  const file = path.join(REPOSITORY, 'examples', '02-glm4-32b-at-the-limit.deploy');
  const doc = new Document(server, file);
  await doc.open();
  const typed = 'a100';
  const at = await doc.replace('gpu      = rtx_3090', `gpu      = ${typed}`);
  const [hints, lenses, completion] = await Promise.all([
    doc.inlayHints(),
    doc.codeLenses(),
    doc.completion(at),
  ]);
  const all = Array.isArray(completion) ? completion : completion.items;
  const matching = all.filter((item) => (item.filterText || item.label).toLowerCase().startsWith(typed));
  if (matching.length === 0) throw new Error(`no completion starts with ${typed}`);
  const shown = matching.slice(0, 10);
  const items = shown
    .map(
      (item, i) =>
        `<div class="item${i === 0 ? ' selected' : ''}">${icon(COMPLETION_KINDS[item.kind] || 'other')}<span><span class="match">${escape(item.label.slice(0, typed.length))}</span>${escape(item.label.slice(typed.length))}</span><span class="detail">${escape(item.detail || '')}</span></div>`,
    )
    .join('');
  doc.close();
  const lines = doc.lines();
  return {
    name: 'completion.png',
    view: {
      title: path.basename(file),
      crumbs: ['examples', path.basename(file)],
      lines,
      tokens: await tokenize(lines),
      diagnostics: doc.diagnostics,
      hints,
      lenses,
      current: at.line,
      widgets: [
        {
          line: at.line,
          character: at.character - typed.length,
          html: `<div class="widget suggest">${items}</div>`,
        },
        { line: at.line, character: at.character, html: '<span class="cursor"></span>' },
      ],
    },
    facts: { completions: all.length, matching: matching.length, shown: shown.map((i) => i.label) },
  };
}

async function renderScreenshots(chromium, deployfit) {
  const server = new Server(deployfit);
  const info = await server.initialize();
  console.log(`${deployfit} lsp: ${info.serverInfo?.name} ${info.serverInfo?.version ?? ''}`);
  const shots = [];
  try {
    for (const shot of [hoverShot, quickFixShot, completionShot]) shots.push(await shot(server));
  } finally {
    await server.shutdown();
  }
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'deployfit-images-'));
  try {
    for (const shot of shots) {
      const html = page(shot.view);
      const htmlPath = path.join(work, shot.name.replace(/\.png$/, '.html'));
      fs.writeFileSync(htmlPath, html);
      const url = pathToFileURL(htmlPath).href;
      // First pass: lay the page out and read its size; second: screenshot it at that size.
      const dom = runChromium(chromium, ['--window-size=2400,2400', '--dump-dom', url]);
      const size = /<title>size=(\d+)x(\d+)<\/title>/.exec(dom);
      if (!size) throw new Error(`${htmlPath}: the page did not report its size`);
      const out = path.join(IMAGES, shot.name);
      screenshot(chromium, url, out, Number(size[1]), Number(size[2]), false);
      console.log(`images/${shot.name} ${size[1]}×${size[2]} ${JSON.stringify(shot.facts)}`);
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

function renderIcon(chromium) {
  const svg = path.join(IMAGES, 'icon.svg');
  const out = path.join(IMAGES, 'icon.png');
  screenshot(chromium, pathToFileURL(svg).href, out, ICON_SIZE, ICON_SIZE, true);
  console.log(`images/icon.png ${ICON_SIZE}×${ICON_SIZE} from images/icon.svg`);
}

async function main() {
  const args = process.argv.slice(2);
  const option = (name) => {
    const i = args.indexOf(name);
    if (i < 0) return undefined;
    const value = args[i + 1];
    if (!value) throw new Error(`${name} needs a value`);
    args.splice(i, 2);
    return value;
  };
  const deployfitOption = option('--deployfit');
  const chromiumOption = option('--chromium');
  const unknown = args.filter((a) => a !== 'icon' && a !== 'screenshots');
  if (unknown.length > 0) {
    console.error('usage: node scripts/render-images.js [--deployfit PATH] [--chromium PATH] [icon] [screenshots]');
    process.exit(2);
  }
  const what = args.length > 0 ? args : ['icon', 'screenshots'];
  const chromium = findChromium(chromiumOption);
  if (what.includes('icon')) renderIcon(chromium);
  if (what.includes('screenshots')) await renderScreenshots(chromium, findDeployfit(deployfitOption));
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
