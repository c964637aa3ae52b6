// Decoding speed of the ONNX importer (one pass over the wire, webview/importers/onnxWire.ts) next to protobufjs'
// full decode of the same bytes (the static module from onnx-ml.proto) and the full decode read into the same
// graph: MB/s of graph protobuf, as the webview receives it (large weights already left out by the host).
import { decodeOnnxGraph } from '../../webview/importers/onnxWire';
import { decodeOnnx, referenceGraph } from '../support/onnxReference';

/** Best of `runs` wall-clock milliseconds (the least disturbed by other load). */
function best(runs: number, f: () => unknown): number {
  let min = Infinity;
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    f();
    min = Math.min(min, performance.now() - t0);
  }
  return min;
}

export function benchDecode(files: Array<{ label: string; nodes: number; bytes: Uint8Array }>): void {
  console.log('\n## ONNX decode (Node, best of 3; MB/s of the bytes the webview receives)');
  console.log(
    'model           | nodes   | MB     | wire decoder      | protobufjs decode | protobufjs + graph | wire vs pbjs',
  );
  for (const { label, nodes, bytes } of files) {
    const mb = bytes.length / 2 ** 20;
    const runs = mb > 20 ? 2 : 3;
    const wire = best(runs, () => decodeOnnxGraph(bytes));
    const pb = best(runs, () => decodeOnnx(bytes));
    const ref = best(runs, () => referenceGraph(bytes));
    const cell = (ms: number) => `${ms.toFixed(0).padStart(6)} ms ${(mb / (ms / 1000)).toFixed(0).padStart(4)} MB/s`;
    console.log(
      `${label.padEnd(15)} | ${String(nodes).padEnd(7)} | ${mb.toFixed(1).padStart(6)} | ${cell(wire)} | ${cell(pb)} | ${cell(ref).padEnd(18)} | ${(pb / wire).toFixed(1)}x faster than decode alone, ${(ref / wire).toFixed(1)}x than decode + graph`,
    );
  }
}
