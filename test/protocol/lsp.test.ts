// Starts the real language server process and speaks LSP to it over stdio.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, test } from 'node:test';
import {
  createMessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
  type MessageConnection,
} from 'vscode-jsonrpc/node';
import type { Diagnostic, Range } from 'vscode-languageserver';

const root = path.resolve(__dirname, '..', '..', '..');
let conn: MessageConnection;
let proc: ReturnType<typeof spawn>;
const published = new Map<string, Array<(d: { uri: string; diagnostics: Diagnostic[] }) => void>>();

function nextDiagnostics(uri: string, timeoutMs = 5000) {
  return new Promise<{ uri: string; diagnostics: Diagnostic[] }>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no diagnostics for ${uri} within ${timeoutMs} ms`)), timeoutMs);
    published.set(uri, [
      ...(published.get(uri) ?? []),
      (d) => {
        clearTimeout(t);
        resolve(d);
      },
    ]);
  });
}

before(async () => {
  proc = spawn(process.execPath, [path.join(root, 'out', 'server', 'server.js'), '--stdio'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  conn = createMessageConnection(new StreamMessageReader(proc.stdout!), new StreamMessageWriter(proc.stdin!));
  conn.onNotification('textDocument/publishDiagnostics', (p) => {
    const waiting = published.get(p.uri) ?? [];
    published.set(p.uri, []);
    for (const w of waiting) w(p);
  });
  conn.listen();
  const init = (await conn.sendRequest('initialize', { processId: process.pid, rootUri: null, capabilities: {} })) as {
    capabilities: Record<string, unknown>;
  };
  assert.equal(init.capabilities.textDocumentSync, 2);
  assert.ok(init.capabilities.completionProvider, 'completion advertised');
  assert.equal(init.capabilities.hoverProvider, true);
  assert.equal(init.capabilities.documentSymbolProvider, true);
  assert.deepEqual(init.capabilities.semanticTokensProvider, {
    legend: { tokenTypes: ['namespace', 'property'], tokenModifiers: ['int8', 'float'] },
    full: true,
  });
  assert.deepEqual(init.capabilities.codeActionProvider, { codeActionKinds: ['quickfix'] });
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
  const text =
    'version: 1\nmodel: {entry: "m.py:f", example_input: [2, 4]}\nqconfig:\n  activation: {dtype: quint8, quant_min: 0, quant_max: 256}\n';
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
  await conn.sendNotification('textDocument/didOpen', {
    textDocument: { uri, languageId: 'python', version: 1, text },
  });
  const { diagnostics } = await first;
  // QAT004 is the one-per-file migration hint to PT2E, on the same call.
  assert.deepEqual(
    diagnostics.map((d) => d.code),
    ['QAT001', 'QAT004'],
  );
  assert.equal(diagnostics[0].range.start.line, 2);

  const second = nextDiagnostics(uri);
  await conn.sendNotification('textDocument/didChange', {
    textDocument: { uri, version: 2 },
    contentChanges: [
      {
        range: { start: { line: 2, character: 26 }, end: { line: 2, character: 26 } },
        text: '  # qat: ignore[QAT001]',
      },
    ],
  });
  assert.deepEqual(
    (await second).diagnostics.map((d) => d.code),
    ['QAT004'],
  );
});

test('other YAML files are left alone', async () => {
  const uri = 'file:///tmp/ws/docker-compose.yaml';
  const first = nextDiagnostics(uri);
  await conn.sendNotification('textDocument/didOpen', {
    textDocument: { uri, languageId: 'yaml', version: 1, text: 'version: "3"\nservices: {a: {quant_max: 999}}\n' },
  });
  assert.deepEqual((await first).diagnostics, []);
});

const CONFIG =
  'version: 1\nmodel: {entry: "m.py:f", example_input: [2, 4]}\nqconfig:\n  activation: {observer: MovingAverageMinMaxObserver, dtype: , quant_max: 300}\n';

async function open(uri: string, languageId: string, text: string) {
  const first = nextDiagnostics(uri);
  await conn.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId, version: 1, text } });
  return first;
}

test('completion, hover and document symbols over the wire', async () => {
  const uri = 'file:///tmp/ws/features.qat.yaml';
  await open(uri, 'yaml', CONFIG);
  const completion = (await conn.sendRequest('textDocument/completion', {
    textDocument: { uri },
    position: { line: 3, character: 61 },
  })) as { items: Array<{ label: string }> };
  assert.deepEqual(
    completion.items.map((i) => i.label),
    ['quint8', 'qint8', 'qint32', 'quint4x2', 'float16'],
  );
  const hover = (await conn.sendRequest('textDocument/hover', {
    textDocument: { uri },
    position: { line: 3, character: 4 },
  })) as { contents: { value: string } };
  assert.match(hover.contents.value, /\*\*activation\*\*/);
  assert.match(hover.contents.value, /scale = \(max\(x_max, 0\) - min\(x_min, 0\)\) \/ 255/);
  const symbols = (await conn.sendRequest('textDocument/documentSymbol', { textDocument: { uri } })) as Array<{
    name: string;
  }>;
  assert.deepEqual(
    symbols.map((x) => x.name),
    ['version', 'model', 'qconfig'],
  );
  assert.equal(
    await conn.sendRequest('textDocument/hover', {
      textDocument: { uri: 'file:///tmp/ws/unknown.qat.yaml' },
      position: { line: 0, character: 0 },
    }),
    null,
  );
});

test('a code action fixes QCFG001 over the wire, and the diagnostic goes away', async () => {
  const uri = 'file:///tmp/ws/fix.qat.yaml';
  const text = CONFIG.replace('dtype: , ', 'dtype: quint8, ');
  const { diagnostics } = await open(uri, 'yaml', text);
  assert.deepEqual(
    diagnostics.map((d) => d.code),
    ['QCFG001'],
  );
  const actions = (await conn.sendRequest('textDocument/codeAction', {
    textDocument: { uri },
    range: diagnostics[0].range,
    context: { diagnostics },
  })) as Array<{
    title: string;
    kind: string;
    isPreferred?: boolean;
    edit: { changes: Record<string, Array<{ range: Range; newText: string }>> };
  }>;
  assert.equal(actions[0].kind, 'quickfix');
  assert.equal(actions[0].isPreferred, true);
  const [edit] = actions[0].edit.changes[uri];
  assert.equal(edit.newText, '255');
  const next = nextDiagnostics(uri);
  await conn.sendNotification('textDocument/didChange', {
    textDocument: { uri, version: 2 },
    contentChanges: [{ range: edit.range, text: edit.newText }],
  });
  assert.deepEqual((await next).diagnostics, []);
});

test('pushed settings switch a code off and back on (client without workspace/configuration)', async () => {
  const uri = 'file:///tmp/ws/settings.qat.yaml';
  const { diagnostics } = await open(uri, 'yaml', CONFIG.replace('dtype: , ', ''));
  assert.deepEqual(
    diagnostics.map((d) => d.code),
    ['QCFG001'],
  );
  let next = nextDiagnostics(uri);
  await conn.sendNotification('workspace/didChangeConfiguration', {
    settings: { qatStudio: { diagnostics: { severity: { QCFG001: 'off' } } } },
  });
  assert.deepEqual((await next).diagnostics, []);
  next = nextDiagnostics(uri);
  await conn.sendNotification('workspace/didChangeConfiguration', {
    settings: { qatStudio: { diagnostics: { severity: { QCFG001: 'hint' } } } },
  });
  assert.deepEqual(
    (await next).diagnostics.map((d) => d.severity),
    [4],
  );
  next = nextDiagnostics(uri);
  await conn.sendNotification('workspace/didChangeConfiguration', { settings: null });
  assert.deepEqual(
    (await next).diagnostics.map((d) => d.severity),
    [1],
  );
});

test('the server keeps answering after hundreds of random edits', async () => {
  const uri = 'file:///tmp/ws/fuzz.qat.yaml';
  let text = CONFIG;
  await open(uri, 'yaml', text);
  let seed = 7;
  const rand = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  const junk = ['{', '}', ':', '- ', '\n', '"', 'observer: ', '[', '#', ' '];
  for (let version = 2; version < 302; version++) {
    const at = Math.floor(rand() * (text.length + 1));
    const del = rand() < 0.4 ? Math.floor(rand() * 5) : 0;
    const ins = del ? '' : junk[Math.floor(rand() * junk.length)];
    const start = positionAt(text, at);
    const end = positionAt(text, Math.min(text.length, at + del));
    text = text.slice(0, at) + ins + text.slice(Math.min(text.length, at + del));
    await conn.sendNotification('textDocument/didChange', {
      textDocument: { uri, version },
      contentChanges: [{ range: { start, end }, text: ins }],
    });
  }
  const position = positionAt(text, Math.floor(text.length / 2));
  const answers = await Promise.all([
    conn.sendRequest('textDocument/completion', { textDocument: { uri }, position }),
    conn.sendRequest('textDocument/hover', { textDocument: { uri }, position }),
    conn.sendRequest('textDocument/codeAction', {
      textDocument: { uri },
      range: { start: position, end: position },
      context: { diagnostics: [] },
    }),
  ]);
  assert.equal(answers.length, 3);
  const next = nextDiagnostics(uri);
  await conn.sendNotification('textDocument/didChange', {
    textDocument: { uri, version: 400 },
    contentChanges: [{ text: CONFIG }],
  });
  assert.ok(Array.isArray((await next).diagnostics));
});

function positionAt(text: string, offset: number) {
  const before = text.slice(0, offset).split('\n');
  return { line: before.length - 1, character: before[before.length - 1].length };
}

test('a client with workspace/configuration is asked for qatStudio settings', async () => {
  const server = spawn(process.execPath, [path.join(root, 'out', 'server', 'server.js'), '--stdio'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const client = createMessageConnection(
    new StreamMessageReader(server.stdout!),
    new StreamMessageWriter(server.stdin!),
  );
  const asked: unknown[] = [];
  client.onRequest('workspace/configuration', (params: { items: Array<{ section: string }> }) => {
    asked.push(params.items.map((i) => i.section));
    return [{ diagnostics: { severity: { QAT001: 'off' } } }];
  });
  client.onRequest('client/registerCapability', () => null);
  const got = new Promise<Array<{ code: string }>>((resolve) => {
    client.onNotification('textDocument/publishDiagnostics', (p: { diagnostics: Array<{ code: string }> }) =>
      resolve(p.diagnostics),
    );
  });
  client.listen();
  try {
    await client.sendRequest('initialize', {
      processId: process.pid,
      rootUri: null,
      capabilities: { workspace: { configuration: true, didChangeConfiguration: { dynamicRegistration: true } } },
    });
    await client.sendNotification('initialized', {});
    await client.sendNotification('textDocument/didOpen', {
      textDocument: {
        uri: 'file:///tmp/ws/pull.py',
        languageId: 'python',
        version: 1,
        text: 'from torch.ao.quantization import prepare_qat\nmodel.eval()\nmodel = prepare_qat(model)\n',
      },
    });
    const diagnostics = await Promise.race([
      got,
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('no diagnostics')), 5000)),
    ]);
    assert.deepEqual(asked, [['qatStudio']]);
    assert.deepEqual(
      diagnostics.map((d) => d.code),
      ['QAT004'],
    );
    await client.sendRequest('shutdown');
  } finally {
    client.dispose();
    server.kill();
  }
});

test('a graph file the watcher reports brings module names: QCFG015 appears, tokens and completion use them', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'lsp-graph-'));
  try {
    const uri = pathToFileURL(path.join(dir, 'net.qat.yaml')).href;
    const text =
      'version: 1\nmodel: {entry: "m.py:f", example_input: [2, 4]}\nqconfig: {}\noverrides:\n  - {match: "fc|conv9", precision: fp32}\n';
    const first = nextDiagnostics(uri);
    await conn.sendNotification('textDocument/didOpen', {
      textDocument: { uri, languageId: 'yaml', version: 1, text },
    });
    assert.deepEqual((await first).diagnostics, [], 'nothing is known about the model yet');
    const graph = path.join(dir, 'graphs', 'net.qatgraph.json');
    mkdirSync(path.dirname(graph));
    writeFileSync(
      graph,
      JSON.stringify({
        format: 'qat-studio.graph/1',
        name: 'Net',
        stage: 'fp32',
        flow: 'pt2e',
        nodes: [],
        config: path.join(dir, 'net.qat.yaml'),
        modules: [
          { path: 'conv1', type: 'Conv2d' },
          { path: 'fc', type: 'Linear' },
        ],
      }),
    );
    const second = nextDiagnostics(uri);
    await conn.sendNotification('workspace/didChangeWatchedFiles', {
      changes: [{ uri: pathToFileURL(graph).href, type: 1 }],
    });
    const { diagnostics } = await second;
    assert.deepEqual(
      diagnostics.map((d) => [d.code, d.message]),
      [['QCFG015', '"conv9" is not a module of the model (from net.qatgraph.json, fp32 graph).']],
    );
    const tokens = (await conn.sendRequest('textDocument/semanticTokens/full', { textDocument: { uri } })) as {
      data: number[];
    };
    assert.deepEqual(tokens.data, [4, 13, 2, 0, 0], 'fc at line 4, column 13, as a namespace');
    const completion = (await conn.sendRequest('textDocument/completion', {
      textDocument: { uri },
      position: { line: 4, character: 13 },
    })) as { items: Array<{ label: string }> };
    assert.deepEqual(
      completion.items.map((i) => i.label),
      ['conv1', 'fc'],
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
