// The kernel's graph JSON importer: the digits fixture against the ModelGraph schema, what the view gets from it,
// clear errors for malformed files, and truncated or mutated files that fail cleanly.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import Ajv from 'ajv';
import { validateModelGraph } from '../../build/generated/model-graph-validate.js';
import rpcSchema from '../../protocol/kernel-rpc.schema.json';
import { importerFor } from '../../webview/importers';
import { qatGraphImporter, shortOp } from '../../webview/importers/qatGraph';
import { isQdq, qdqRole } from '../../webview/importers/types';
import { collapseQdq } from '../../webview/graph/qdq';
import { quantParams } from '../../webview/view/properties';
import { sourceOf } from '../../webview/view/source';
import { decodeAndLayout } from '../../webview/worker/pipeline';
import { repoRoot } from '../support/paths';

const fixtureDir = path.join(repoRoot, 'test', 'fixtures', 'digits');
const FILE = 'digits.converted.qatgraph.json';
const bytes = readFileSync(path.join(fixtureDir, FILE));
const fixture = JSON.parse(bytes.toString('utf8'));
const encode = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));
const clone = () => structuredClone(fixture);
const nodeById = (data: Record<string, unknown>, id: string) =>
  (data.nodes as Array<{ id: string }>).find((n) => n.id === id)! as Record<string, unknown> & {
    qparams?: Record<string, unknown>;
  };

const ajv = new Ajv({ allErrors: true, strict: false });
ajv.addSchema(rpcSchema, 'rpc');
const validateSchema = ajv.getSchema('rpc#/definitions/ModelGraph')!;

test('the digits graph fixture is a valid ModelGraph, and a mangled copy is not', () => {
  assert.ok(validateSchema(fixture), JSON.stringify(validateSchema.errors));
  const bad = clone();
  delete nodeById(bad, 'relu').kind;
  assert.equal(validateSchema(bad), false);
  // The fixture follows examples/digits/model.py: every module of DigitsNet, with the line that defines it.
  const model = readFileSync(path.join(repoRoot, 'examples', 'digits', 'model.py'), 'utf8').split('\n');
  for (const m of fixture.modules as Array<{ path: string; type: string; source: { file: string; line: number } }>) {
    assert.match(model[m.source.line - 1], new RegExp(`self\\.${m.path} = nn\\.${m.type}\\(`), m.path);
    assert.equal(path.resolve(fixtureDir, m.source.file), path.join(repoRoot, 'examples', 'digits', 'model.py'));
  }
});

test('the FP32 and fake-quant (prepared) graphs of the same model are valid too, and open', () => {
  for (const stage of ['fp32', 'prepared']) {
    const file = path.join(fixtureDir, `digits.${stage}.qatgraph.json`);
    const data = JSON.parse(readFileSync(file, 'utf8'));
    assert.ok(validateSchema(data), `${stage}: ${JSON.stringify(validateSchema.errors)}`);
    assert.equal(data.stage, stage);
    const graph = qatGraphImporter.open(readFileSync(file));
    const roles = graph.nodes.map((n) => qdqRole(n.op)).filter(Boolean);
    if (stage === 'fp32') {
      assert.deepEqual(roles, [], 'no quantization in the float model');
      // Unfolded batch norms are the float model's own nodes, in their modules.
      assert.deepEqual(
        graph.nodes.filter((n) => n.op === 'batch_norm').map((n) => n.module),
        ['bn1', 'bn2'],
      );
    } else {
      // Fake-quant modules (FusedMovingAvgObsFakeQuantize) on activations and weights.
      assert.equal(roles.length, 10);
      assert.ok(roles.every((r) => r === 'fq'));
      const fq = graph.nodes.find((n) => qdqRole(n.op) === 'fq' && (n.qparams?.scale.length ?? 0) > 1)!;
      assert.equal(fq.qparams?.axis, 0, 'a weight fake-quant is per channel');
      const collapsed = collapseQdq(
        decodeAndLayout(stage, readFileSync(file), {}, `digits.${stage}.qatgraph.json`).graph,
      );
      assert.equal(collapsed.nodes.filter((n) => isQdq(n.op)).length, 0);
      assert.ok(collapsed.edges.filter((e) => e.label?.startsWith('fake-quant uint8 s=')).length >= 6);
    }
  }
});

test('the importer is picked by file name or by the format field, and ONNX bytes are not taken for it', () => {
  assert.equal(importerFor(bytes, FILE), qatGraphImporter);
  assert.equal(importerFor(bytes, 'renamed.json'), qatGraphImporter, 'sniffed from the format field');
  const onnx = readFileSync(path.join(fixtureDir, 'digits.qdq.onnx'));
  assert.equal(qatGraphImporter.match(onnx, 'digits.qdq.onnx'), false);
  assert.equal(importerFor(onnx, 'digits.qdq.onnx').format, 'ONNX');
  assert.equal(qatGraphImporter.match(encode({ format: 'something/1' }), 'x.json'), false);
  assert.throws(
    () => importerFor(encode({ a: 1 }), 'notes.json'),
    /notes\.json is not a format this view opens \(QAT Studio graph, ONNX\)/,
  );
});

test('every file pattern the graph editor claims in package.json has an importer for it', () => {
  const manifest = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8'));
  const editor = manifest.contributes.customEditors.find(
    (e: { viewType: string }) => e.viewType === 'qatStudio.onnxViewer',
  );
  const patterns = editor.selector.map((s: { filenamePattern: string }) => s.filenamePattern);
  assert.deepEqual(patterns, ['*.onnx', '*.qatgraph.json']);
  const samples: Record<string, Uint8Array> = {
    '*.onnx': readFileSync(path.join(fixtureDir, 'digits.qdq.onnx')),
    '*.qatgraph.json': bytes,
  };
  for (const pattern of patterns) {
    const name = pattern.replace('*', 'model');
    assert.ok(importerFor(samples[pattern], name).open(samples[pattern]).nodes.length > 0, pattern);
  }
});

test('op names, Q/DQ roles and module-free shortening', () => {
  assert.equal(shortOp('aten.conv2d.default'), 'conv2d');
  assert.equal(shortOp('quantized_decomposed.quantize_per_tensor.default'), 'quantize_per_tensor');
  assert.equal(shortOp('torch.ops.aten.flatten.using_ints'), 'flatten');
  assert.equal(shortOp('<built-in function getitem>'), 'getitem');
  assert.equal(shortOp('Conv2d'), 'Conv2d');
  const roles = Object.fromEntries(
    [
      'QuantizeLinear',
      'DequantizeLinear',
      'quantize_per_tensor',
      'dequantize_per_channel',
      'quantized_decomposed.dequantize_per_tensor.tensor',
      'aten.dequantize.self',
      'DeQuantStub',
      'QuantStub',
      'FusedMovingAvgObsFakeQuantize',
      'fake_quantize_per_tensor_affine',
      'conv2d',
      'QuantizedConv2d',
      'Conv',
    ].map((op) => [op, qdqRole(op) ?? '-']),
  );
  assert.deepEqual(roles, {
    QuantizeLinear: 'q',
    DequantizeLinear: 'dq',
    quantize_per_tensor: 'q',
    dequantize_per_channel: 'dq',
    'quantized_decomposed.dequantize_per_tensor.tensor': 'dq',
    'aten.dequantize.self': 'dq',
    DeQuantStub: 'dq',
    QuantStub: 'q',
    FusedMovingAvgObsFakeQuantize: 'fq',
    fake_quantize_per_tensor_affine: 'fq',
    conv2d: '-',
    QuantizedConv2d: '-',
    Conv: '-',
  });
});

test('the digits graph opens with the nodes, edges, modules, sources and quantization the file records', () => {
  const graph = qatGraphImporter.open(bytes);
  const fileNodes = fixture.nodes as Array<{ id: string; op: string; kind: string; inputs: string[] }>;
  const attrs = fileNodes.filter((n) => n.op === 'get_attr');
  assert.equal(attrs.length, 16, 'weights, biases, scales and zero-points');
  assert.equal(
    graph.nodes.length,
    fileNodes.length - attrs.length,
    'get_attr nodes read as tensors, like ONNX initializers',
  );
  assert.equal(graph.nodes.length, 27, 'as many boxes as the QDQ ONNX export of the same model');
  assert.equal(graph.nodes.filter((n) => isQdq(n.op)).length, 16);
  assert.deepEqual(
    graph.nodes.filter((n) => n.kind !== 'op').map((n) => `${n.kind}:${n.op}:${n.name}`),
    ['input:Input:x', 'output:Output:output'],
  );
  const conv1 = graph.nodes.find((n) => n.name === 'conv2d_4')!;
  assert.equal(conv1.op, 'conv2d');
  assert.equal(conv1.attributes?.target, 'aten.conv2d.default');
  assert.equal(conv1.attributes?.padding, '[1, 1]');
  assert.equal(conv1.module, 'conv1');
  assert.deepEqual(conv1.scopes, ['conv1']);
  assert.equal(conv1.precision, 'int8');
  assert.deepEqual(conv1.source, { file: '../../../examples/digits/model.py', line: 21 });
  assert.deepEqual(graph.modules?.bn1, {
    type: 'BatchNorm2d',
    source: { file: '../../../examples/digits/model.py', line: 10 },
  });
  assert.equal(graph.stage, 'converted');
  // Edges: one per consumed value that a drawn node produces; weights and biases are tensors, not edges.
  const names = new Map(graph.nodes.map((n) => [n.id, n.name]));
  const into = (name: string) =>
    graph.edges
      .filter((e) => names.get(e.to) === name)
      .map((e) => names.get(e.from))
      .sort();
  assert.deepEqual(into('conv2d_4'), ['dequantize_per_channel', 'dequantize_per_tensor_default']);
  assert.deepEqual(graph.tensors.get('conv1_bias'), { dtype: 'float32', dims: [16] });
  assert.deepEqual(graph.tensors.get('quantize_per_channel'), { dtype: 'int8', dims: [16, 1, 3, 3] });
  const drawnInputs = graph.nodes.flatMap((n) => n.inputs).filter((t) => !attrs.some((a) => a.id === t));
  assert.equal(graph.edges.length, drawnInputs.length);

  // Quantization parameters read the same way as ONNX's scale / zero-point inputs.
  const wdq = graph.nodes.find((n) => n.name === 'dequantize_per_channel')!;
  const q = quantParams(wdq, graph);
  assert.equal(q.scale?.values?.length, 16);
  assert.deepEqual(q.scale?.dims, [16]);
  assert.equal(q.zeroPoint?.dtype, 'int8');
  assert.equal(q.axis, '0');
  assert.deepEqual(q.range, [-128, 127]);
  const act = quantParams(
    graph.nodes.find((n) => n.name === 'quantize_per_tensor_default')!,
    graph,
  );
  assert.deepEqual(
    { scale: act.scale?.values, zp: act.zeroPoint?.values, dims: act.scale?.dims },
    { scale: [0.062581711], zp: [0], dims: [] },
  );

  // A node's source line, else its module's definition; relative paths resolve against the opened file's folder.
  assert.deepEqual(sourceOf(conv1, graph, '/ws/test/fixtures/digits'), {
    file: '/ws/examples/digits/model.py',
    line: 21,
  });
  assert.deepEqual(sourceOf({ ...conv1, source: undefined }, graph, 'C:\\ws\\test\\fixtures\\digits'), {
    file: 'C:\\ws\\examples\\digits\\model.py',
    line: 9,
  });
  assert.deepEqual(sourceOf(conv1, { ...graph, config: '/home/u/a/b/c/digits.qat.yaml' }), {
    file: '/home/u/examples/digits/model.py',
    line: 21,
  });
});

test('through the pipeline: precision where the file leaves it out, Q/DQ join their module, and the collapse', () => {
  const laid = decodeAndLayout('qg', new Uint8Array(bytes), {}, FILE);
  const byName = new Map(laid.graph.nodes.map((n) => [n.name, n]));
  assert.equal(byName.get('flatten')!.precision, 'int8', 'reads only dequantized input');
  assert.equal(byName.get('quantize_per_tensor_default')!.precision, undefined);
  assert.deepEqual(byName.get('dequantize_per_channel')!.scopes, ['conv1'], 'a weight DQ joins the conv it feeds');
  assert.equal(laid.layout.nodes.size, 27);
  const collapsed = collapseQdq(laid.graph);
  assert.equal(collapsed.nodes.length, 27 - 16);
  const labels = collapsed.edges.filter((e) => e.label).map((e) => e.label!);
  assert.ok(labels.includes('uint8 s=0.0626 zp=0'), labels.join(' | '));
  assert.equal(labels.length, 6, labels.join(' | '));
  assert.ok(
    labels.every((l) => /^uint8 s=[0-9.]+ zp=0$/.test(l)),
    labels.join(' | '),
  );
  // Weight DQs go too: the conv then reads the int8 weight tensor itself, like ONNX's initializers.
  assert.deepEqual(collapsed.nodes.find((n) => n.name === 'conv2d_4')!.inputs, [
    'x',
    'quantize_per_channel',
    'conv1_bias',
  ]);
});

const failures: Array<[string, (d: Record<string, unknown>) => unknown, RegExp]> = [
  ['a top-level array', () => [1, 2], /^Not a QAT Studio graph: the file holds JSON, but not an object\.$/],
  [
    'no format field',
    (d) => {
      delete d.format;
    },
    /there is no "format": "qat-studio\.graph\/1" field/,
  ],
  [
    'a newer format',
    (d) => {
      d.format = 'qat-studio.graph/2';
    },
    /format qat-studio\.graph\/2; this version of QAT Studio reads qat-studio\.graph\/1\. Update the extension/,
  ],
  [
    'another format',
    (d) => {
      d.format = 'netron/1';
    },
    /format is "netron\/1", expected "qat-studio\.graph\/1"/,
  ],
  [
    'a node without op',
    (d) => {
      delete nodeById(d, 'relu').op;
    },
    /^Not a valid QAT Studio graph: nodes\[20\] \(node "relu"\) is missing the required field "op"\.$/,
  ],
  [
    'an unknown kind',
    (d) => {
      nodeById(d, 'relu_1').kind = 'layer';
    },
    /nodes\[\d+\]\.kind \(node "relu_1"\) must be one of "op", "input", "output"/,
  ],
  [
    'a scale that is text',
    (d) => {
      nodeById(d, 'quantize_per_tensor_default').qparams!.scale = '0.06';
    },
    /nodes\[\d+\]\.qparams\.scale \(node "quantize_per_tensor_default"\) must be a number or a list of numbers/,
  ],
  [
    'a field the format lacks',
    (d) => {
      d.weights = {};
    },
    /the graph has a field the format does not define: "weights"/,
  ],
  [
    'nodes not a list',
    (d) => {
      d.nodes = {};
    },
    /nodes must be a list/,
  ],
  [
    'a bad stage',
    (d) => {
      d.stage = 'int8';
    },
    /stage must be one of "fp32", "prepared", "converted"/,
  ],
  [
    'a duplicate id',
    (d) => {
      nodeById(d, 'relu_1').id = 'relu';
    },
    /two nodes have the id "relu"/,
  ],
  [
    'a value produced twice',
    (d) => {
      nodeById(d, 'relu_1').outputs = ['relu'];
    },
    /value "relu" is produced by both "relu" and "relu_1"/,
  ],
  [
    'scales and zero-points that disagree',
    (d) => {
      (nodeById(d, 'dequantize_per_channel').qparams!.zero_point as number[]).pop();
    },
    /node "dequantize_per_channel" has 16 scales but 15 zero-points/,
  ],
  [
    'a zero scale',
    (d) => {
      nodeById(d, 'quantize_per_tensor_default_2').qparams!.scale = 0;
    },
    /node "quantize_per_tensor_default_2" has a scale that is not a positive number/,
  ],
];

for (const [what, mutate, message] of failures) {
  test(`a graph with ${what} fails with a clear message`, () => {
    const data = clone();
    const replaced = mutate(data);
    assert.throws(
      () => qatGraphImporter.open(encode(replaced ?? data)),
      (err: Error) => {
        assert.ok(err instanceof Error);
        assert.match(err.message, message);
        return true;
      },
    );
  });
}

test('the validator generated at build time (the webview cannot compile one) agrees with the schema', () => {
  const cases = [
    fixture,
    ...failures.map(([, mutate]) => {
      const d = clone();
      return mutate(d) ?? d;
    }),
  ];
  for (const [i, data] of cases.entries()) assert.equal(validateModelGraph(data), validateSchema(data), `case ${i}`);
  assert.equal(
    cases.filter((d) => validateSchema(d)).length,
    1 + 4,
    'the fixture, and the four mistakes only the importer catches',
  );
});

test('text that is not JSON or not UTF-8 fails with the place it broke', () => {
  const cut = bytes.subarray(0, 2000);
  assert.throws(
    () => qatGraphImporter.open(cut),
    /This file is not valid JSON: .*\(line 72, column 262\)\. A graph file cut short while the kernel wrote it\? Export it again\./,
  );
  assert.throws(() => qatGraphImporter.open(new Uint8Array([0x7b, 0xff, 0xfe, 0x7d])), /not UTF-8 text/);
  const bom = new Uint8Array([0xef, 0xbb, 0xbf, ...bytes]);
  assert.equal(qatGraphImporter.open(bom).nodes.length, 27, 'a byte-order mark is fine');
});

/** Deterministic PRNG (mulberry32), so a failing case can be replayed. */
function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const MUTANTS = ' {}[]",:0-9aZ\u00ff';
const KNOWN =
  /^(This file is not valid JSON: |This file is not UTF-8 text|Not a QAT Studio graph: |Not a valid QAT Studio graph: |This graph is in format )/;

test("every truncation and 2,000 byte mutations either open or fail with one of the importer's messages", () => {
  const random = rng(20261202);
  let opened = 0,
    failed = 0;
  const attempt = (b: Uint8Array, what: string) => {
    const started = Date.now();
    try {
      const g = qatGraphImporter.open(b);
      // Whatever opens must be drawable: every edge between drawn nodes.
      const ids = new Set(g.nodes.map((n) => n.id));
      assert.ok(
        g.edges.every((e) => ids.has(e.from) && ids.has(e.to)),
        what,
      );
      opened++;
    } catch (err) {
      assert.ok(err instanceof Error, `${what} threw a non-Error: ${String(err)}`);
      assert.match(err.message, KNOWN, what);
      failed++;
    }
    assert.ok(Date.now() - started < 2000, `${what} took ${Date.now() - started} ms`);
  };
  for (let end = 0; end < bytes.length; end += 7) attempt(bytes.subarray(0, end), `truncated at ${end}`);
  for (let i = 0; i < 2000; i++) {
    const b = Buffer.from(bytes);
    for (let k = 0; k < 1 + random() * 4; k++)
      b[Math.floor(random() * b.length)] = MUTANTS.charCodeAt(Math.floor(random() * MUTANTS.length));
    attempt(b, `mutation ${i}`);
  }
  assert.ok(failed > 3000, `only ${failed} failed: the mutations do not bite`);
  assert.ok(opened > 0, 'no mutation kept the file valid (spaces in strings should)');
});
