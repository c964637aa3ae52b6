// QCFG016: a file a config names that resolves outside the workspace folders (relative, absolute or through a
// symlink) is an error before the kernel refuses it; inside, or with the machine setting on, nothing is shown.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { configFindings } from '../../server/services/configDiagnostics';
import { visibleFindings } from '../../server/services/diagnostics';
import { defaultSettings } from '../../server/services/settings';
import { setWorkspaceFolders } from '../../server/services/workspaceFolders';

const root = mkdtempSync(path.join(tmpdir(), 'qcfg016-'));
after(() => {
  setWorkspaceFolders([]);
  rmSync(root, { recursive: true, force: true });
});
const ws = path.join(root, 'ws');
const elsewhere = path.join(root, 'elsewhere');
mkdirSync(path.join(ws, 'sub'), { recursive: true });
mkdirSync(elsewhere);
writeFileSync(path.join(ws, 'model.py'), 'def make(): ...\n');
writeFileSync(path.join(elsewhere, 'model.py'), 'def make(): ...\n');
symlinkSync(path.join(elsewhere, 'model.py'), path.join(ws, 'linked.py'));
symlinkSync(elsewhere, path.join(ws, 'linkdir'));
const configFile = path.join(ws, 'net.qat.yaml');
const uri = pathToFileURL(configFile).href;

const config = (model: string, extra = '') =>
  `version: 1\nmodel: {entry: "${model}", example_input: [1, 3, 8, 8]}\ndata: {entry: "model.py:make"}\n${extra}`;

const outside = (text: string) =>
  configFindings(text, undefined, uri)
    .filter((f) => f.code === 'QCFG016')
    .map((f) => text.slice(f.start, f.end));

test('QCFG016: entries, weights and outputs that lead out of the workspace, however they are spelt', () => {
  setWorkspaceFolders([pathToFileURL(ws).href]);
  assert.deepEqual(outside(config('model.py:make')), []);
  assert.deepEqual(outside(config('sub/../model.py:make')), [], 'a path that stays inside');
  assert.deepEqual(outside(config('../elsewhere/model.py:make')), ['"../elsewhere/model.py:make"']);
  assert.deepEqual(outside(config(`${elsewhere}/model.py:make`)), [`"${elsewhere}/model.py:make"`]);
  assert.deepEqual(outside(config('linked.py:make')), ['"linked.py:make"'], 'a symlink out counts as out');
  const extra = 'train: {loss: "../../loss.py:fn"}\nexport: {onnx: {path: linkdir/new.onnx}}\n';
  const text = config('model.py:make', extra);
  assert.deepEqual(outside(text), ['"../../loss.py:fn"', 'linkdir/new.onnx']);
  const weights = 'version: 1\nmodel: {entry: "model.py:make", weights: /etc/passwd}\n';
  assert.deepEqual(outside(weights), ['/etc/passwd']);
  const [finding] = configFindings(weights, undefined, uri).filter((f) => f.code === 'QCFG016');
  assert.equal(finding.severity, 'error');
  assert.match(finding.message, /model\.weights: \/etc\/passwd is outside the workspace/);
  assert.match(finding.message, /qatStudio\.kernel\.allowPathsOutsideWorkspace/);
});

test('QCFG016: nothing for a config outside every folder, nor without folders; the machine setting hides it', () => {
  const text = config('../elsewhere/model.py:make');
  setWorkspaceFolders([pathToFileURL(elsewhere).href]);
  assert.deepEqual(outside(text), [], 'the config itself is not in a workspace folder');
  setWorkspaceFolders([]);
  assert.deepEqual(outside(text), []);
  setWorkspaceFolders([pathToFileURL(ws).href]);
  const doc = TextDocument.create(uri, 'yaml', 1, text);
  assert.ok(visibleFindings(doc, defaultSettings).some((f) => f.code === 'QCFG016'));
  const allowed = { ...defaultSettings, allowPathsOutsideWorkspace: true };
  assert.ok(!visibleFindings(doc, allowed).some((f) => f.code === 'QCFG016'));
});
