// The ONNX importer against ONNX's own backend node test cases (1,884 models built by the onnx wheel,
// Q/DQ, float8, int4 and subgraphs of If/Loop/Scan among them), the wheel's real CNNs, the digits export and a
// synthetic QDQ graph: the wire decoder's graph must equal the one read from protobufjs' full decode. And a
// fuzz run over mutated files.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { before, test } from 'node:test';
import type { onnx } from '../../build/generated/onnx-pb.js';
import { onnxImporter } from '../../webview/importers/onnx';
import { decodeOnnx, referenceGraph } from '../support/onnxReference';
import { repoRoot, venvPython } from '../support/paths';

interface Expected {
  ops: string[];
  opsets: Record<string, number>;
  ir_version: number;
  functions: number;
  initializer_types: number[];
  input_elem_types: number[];
  subgraph_nodes: number;
}
let dir: string;
let expected: Record<string, Expected>;

before(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'onnx-cases-'));
  execFileSync(venvPython, [path.join(repoRoot, 'scripts', 'onnx_backend_cases.py'), dir], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  expected = JSON.parse(readFileSync(path.join(dir, 'summary.json'), 'utf8'));
});

function subgraphNodes(g: onnx.IGraphProto): number {
  let n = 0;
  for (const node of g.node ?? []) {
    for (const a of node.attribute ?? []) {
      for (const sub of [...(a.g ? [a.g] : []), ...(a.graphs ?? [])]) n += (sub.node?.length ?? 0) + subgraphNodes(sub);
    }
  }
  return n;
}

test('every ONNX backend test model decodes with the node list, opsets and types the onnx package reports', () => {
  const files = Object.keys(expected);
  assert.ok(files.length >= 1800, `only ${files.length} cases`);
  let quantized = 0;
  for (const file of files) {
    const want = expected[file];
    const model = decodeOnnx(readFileSync(path.join(dir, file)));
    const g = model.graph!;
    assert.deepEqual(
      (g.node ?? []).map((n) => n.op_type),
      want.ops,
      file,
    );
    const opsets = Object.fromEntries(
      (model.opset_import ?? []).map((o) => [o.domain || 'ai.onnx', Number(o.version)]),
    );
    assert.deepEqual(opsets, want.opsets, file);
    assert.equal(Number(model.ir_version), want.ir_version, file);
    assert.equal(model.functions?.length ?? 0, want.functions, file);
    assert.deepEqual(
      [...new Set((g.initializer ?? []).map((t) => t.data_type ?? 0))].sort((a, b) => a - b),
      want.initializer_types,
      file,
    );
    assert.deepEqual(
      (g.input ?? []).map((i) => i.type?.tensor_type?.elem_type ?? 0),
      want.input_elem_types,
      file,
    );
    assert.equal(subgraphNodes(g), want.subgraph_nodes, file);
    if (want.ops.some((op) => /QuantizeLinear|DequantizeLinear|QLinear/.test(op))) quantized++;
  }
  assert.ok(quantized >= 30, `only ${quantized} quantized cases`);
});

test('the importer opens every backend test model into a graph with one box per non-constant node', () => {
  for (const file of Object.keys(expected)) {
    const graph = onnxImporter.open(readFileSync(path.join(dir, file)));
    const ops = graph.nodes.filter((n) => n.kind === 'op').map((n) => n.op);
    assert.deepEqual(
      ops,
      expected[file].ops.filter((op) => op !== 'Constant'),
      file,
    );
  }
});

/** Real models: the onnx wheel's light CNNs (ResNet-50, DenseNet-121, Inception, ...), the digits QDQ export, and a
 * 2,000-node synthetic QDQ graph with torch-style module scopes. */
function realModels(): Array<[string, Uint8Array]> {
  const light = path.join(
    execFileSync(venvPython, ['-c', 'import os, onnx; print(os.path.dirname(onnx.__file__))'], {
      encoding: 'utf8',
    }).trim(),
    'backend',
    'test',
    'data',
    'light',
  );
  const synthetic = path.join(dir, 'qdq-2000.onnx');
  execFileSync(
    venvPython,
    [path.join(repoRoot, 'scripts', 'gen_qdq_graph.py'), '--nodes', '2000', '--out', synthetic],
    {
      stdio: 'ignore',
    },
  );
  return [
    ...readdirSync(light)
      .filter((f) => f.endsWith('.onnx'))
      .map((f): [string, Uint8Array] => [f, readFileSync(path.join(light, f))]),
    ['digits.qdq.onnx', readFileSync(path.join(repoRoot, 'test', 'fixtures', 'digits', 'digits.qdq.onnx'))],
    ['qdq-2000.onnx', readFileSync(synthetic)],
  ];
}

test('the wire decoder reads the same graph as protobufjs full decode, on every test case and real model', () => {
  const files: Array<[string, Uint8Array]> = [
    ...Object.keys(expected).map((f): [string, Uint8Array] => [f, readFileSync(path.join(dir, f))]),
    ...realModels(),
  ];
  let withScopes = 0;
  let withValues = 0;
  for (const [file, bytes] of files) {
    const want = referenceGraph(bytes);
    const got = onnxImporter.open(bytes);
    assert.deepStrictEqual(got, want, file);
    if (got.nodes.some((n) => n.scopes?.length)) withScopes++;
    if ([...got.tensors.values()].some((t) => t.values?.length)) withValues++;
  }
  assert.ok(files.length > 1890, `only ${files.length} files`);
  assert.ok(withScopes >= 2, `only ${withScopes} models with module scopes`);
  assert.ok(withValues > 100, `only ${withValues} models with tensor values`);
});

test('float8 and int4 types survive decoding', () => {
  const types = new Set(Object.values(expected).flatMap((e) => [...e.initializer_types, ...e.input_elem_types]));
  for (const t of [17, 19, 21, 22]) assert.ok(types.has(t), `no case with data type ${t}`);
});

/** Deterministic PRNG (mulberry32) so a failing mutation can be replayed. */
function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

test('3,000 mutated or truncated models either open or fail with an Error, never hang or crash', () => {
  const seeds = [
    readFileSync(path.join(repoRoot, 'test', 'fixtures', 'digits', 'digits.qdq.onnx')),
    ...readdirSync(dir)
      .filter((f) => /quantizelinear|dequantizelinear|qlinear|_if|_loop|scan/i.test(f))
      .slice(0, 30)
      .map((f) => readFileSync(path.join(dir, f))),
  ];
  const random = rng(20261202);
  let opened = 0,
    failed = 0;
  for (let i = 0; i < 3000; i++) {
    const src = seeds[i % seeds.length];
    let bytes = Buffer.from(src);
    const kind = Math.floor(random() * 4);
    if (kind === 0) bytes = bytes.subarray(0, Math.floor(random() * bytes.length));
    else if (kind === 1)
      for (let k = 0; k < 1 + random() * 8; k++)
        bytes[Math.floor(random() * bytes.length)] = Math.floor(random() * 256);
    else if (kind === 2)
      bytes = Buffer.concat([
        bytes.subarray(0, Math.floor(random() * bytes.length)),
        Buffer.from(Array.from({ length: 16 }, () => Math.floor(random() * 256))),
      ]);
    else bytes = Buffer.from(Array.from({ length: Math.floor(random() * 512) }, () => Math.floor(random() * 256)));
    const started = Date.now();
    try {
      onnxImporter.open(bytes);
      opened++;
    } catch (err) {
      assert.ok(err instanceof Error, `mutation ${i} threw a non-Error: ${String(err)}`);
      failed++;
    }
    assert.ok(Date.now() - started < 5000, `mutation ${i} took ${Date.now() - started} ms`);
  }
  assert.equal(opened + failed, 3000);
  assert.ok(failed > 100, `only ${failed} mutations failed: the fuzzer is not mutating`);
});
