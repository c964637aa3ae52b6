// Starts the real language server process and speaks LSP to it over stdio.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter, type MessageConnection } from 'vscode-jsonrpc/node';

const root = path.resolve(__dirname, '..', '..', '..');
let conn: MessageConnection;
let proc: ReturnType<typeof spawn>;
const published = new Map<string, Array<(d: { uri: string; diagnostics: Array<{ code: string; message: string; range: unknown }> }) => void>>();

function nextDiagnostics(uri: string, timeoutMs = 5000) {
  return new Promise<{ uri: string; diagnostics: Array<{ code: string; message: string; range: any }> }>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no diagnostics for ${uri} within ${timeoutMs} ms`)), timeoutMs);
    published.set(uri, [...(published.get(uri) ?? []), (d) => { clearTimeout(t); resolve(d); }]);
  });
}

before(async () => {
  proc = spawn(process.execPath, [path.join(root, 'out', 'server', 'server.js'), '--stdio'], { stdio: ['pipe', 'pipe', 'inherit'] });
  conn = createMessageConnection(new StreamMessageReader(proc.stdout!), new StreamMessageWriter(proc.stdin!));
  conn.onNotification('textDocument/publishDiagnostics', (p) => {
    const waiting = published.get(p.uri) ?? [];
    published.set(p.uri, []);
    for (const w of waiting) w(p);
  });
  conn.listen();
  const init = await conn.sendRequest('initialize', { processId: process.pid, rootUri: null, capabilities: {} }) as { capabilities: { textDocumentSync: number } };
  assert.equal(init.capabilities.textDocumentSync, 2);
  await conn.sendNotification('initialized', {});
});

after(async () => {
  await conn.sendRequest('shutdown');
  await conn.sendNotification('exit');
  conn.dispose();
  proc.kill();
});

test('a config YAML with a bad quant_max gets QCFG001 over the wire, and the fix clears it', async () => {
  const uri = 'file:///tmp/ws/bad.qat.yaml';
  const text = 'version: 1\nmodel: {entry: "m.py:f", example_input: [2, 4]}\nqconfig:\n  activation: {dtype: quint8, quant_min: 0, quant_max: 256}\n';
  const first = nextDiagnostics(uri);
  await conn.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'yaml', version: 1, text } });
  const { diagnostics } = await first;
  assert.equal(diagnostics.length, 1);
  assert.equal(diagnostics[0].code, 'QCFG001');
  assert.equal(diagnostics[0].message, 'quant_max 256 is outside the range of quint8 (0..255).');
  assert.deepEqual(diagnostics[0].range, { start: { line: 3, character: 55 }, end: { line: 3, character: 58 } });

  const second = nextDiagnostics(uri);
  await conn.sendNotification('textDocument/didChange', {
    textDocument: { uri, version: 2 },
    contentChanges: [{ range: { start: { line: 3, character: 55 }, end: { line: 3, character: 58 } }, text: '255' }],
  });
  assert.deepEqual((await second).diagnostics, []);
});

test('a Python script with prepare_qat after eval() gets QAT001; ignore comments suppress it', async () => {
  const uri = 'file:///tmp/ws/train.py';
  const text = 'from torch.ao.quantization import prepare_qat\nmodel.eval()\nmodel = prepare_qat(model)\n';
  const first = nextDiagnostics(uri);
  await conn.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'python', version: 1, text } });
  const { diagnostics } = await first;
  assert.deepEqual(diagnostics.map((d) => d.code), ['QAT001']);
  assert.equal(diagnostics[0].range.start.line, 2);

  const second = nextDiagnostics(uri);
  await conn.sendNotification('textDocument/didChange', {
    textDocument: { uri, version: 2 },
    contentChanges: [{ range: { start: { line: 2, character: 26 }, end: { line: 2, character: 26 } }, text: '  # qat: ignore[QAT001]' }],
  });
  assert.deepEqual((await second).diagnostics, []);
});

test('other YAML files are left alone', async () => {
  const uri = 'file:///tmp/ws/docker-compose.yaml';
  const first = nextDiagnostics(uri);
  await conn.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'yaml', version: 1, text: 'version: "3"\nservices: {a: {quant_max: 999}}\n' } });
  assert.deepEqual((await first).diagnostics, []);
});
