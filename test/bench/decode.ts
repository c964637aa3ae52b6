// Decoding speed of the ONNX importer (one pass over the wire, webview/importers/onnxWire.ts) next to protobufjs'
// full decode of the same bytes (the static module from onnx-ml.proto) and the full decode read into the same
// graph: MB/s of graph protobuf (CPU time), as the webview receives it (large weights already left out by the host).
import { decodeOnnxGraph } from '../../webview/importers/onnxWire';
import { decodeOnnx, referenceGraph } from '../support/onnxReference';
import { type BenchFigure, recordBench } from './results';

/**
 * Each decoder's least CPU time (user + system of this process, ms) over `runs` rounds, the decoders taking turns
 * within a round: CPU time, not wall time, so that other load on the machine (which preempts us) counts less.
 */
function bestCpu(runs: number, decoders: Array<() => unknown>): number[] {
  const best = decoders.map(() => Infinity);
  for (let r = 0; r < runs; r++)
    decoders.forEach((f, i) => {
      const t0 = process.cpuUsage();
      f();
      const t = process.cpuUsage(t0);
      best[i] = Math.min(best[i], (t.user + t.system) / 1000);
    });
  return best;
}

export function benchDecode(files: Array<{ label: string; nodes: number; bytes: Uint8Array }>): void {
  console.log('\n## ONNX decode (Node, least CPU time of 3-8 rounds; MB/s of the bytes the webview receives)');
  console.log(
    'model           | nodes   | MB     | wire decoder      | protobufjs decode | protobufjs + graph | wire vs pbjs',
  );
  const figures: BenchFigure[] = [];
  for (const { label, nodes, bytes } of files) {
    const mb = bytes.length / 2 ** 20;
    const [wire, pb, ref] = bestCpu(mb > 20 ? 3 : 8, [
      () => decodeOnnxGraph(bytes),
      () => decodeOnnx(bytes),
      () => referenceGraph(bytes),
    ]);
    const cell = (ms: number) => `${ms.toFixed(0).padStart(6)} ms ${(mb / (ms / 1000)).toFixed(0).padStart(4)} MB/s`;
    console.log(
      `${label.padEnd(15)} | ${String(nodes).padEnd(7)} | ${mb.toFixed(1).padStart(6)} | ${cell(wire)} | ${cell(pb)} | ${cell(ref).padEnd(18)} | ${(pb / wire).toFixed(1)}x faster than decode alone, ${(ref / wire).toFixed(1)}x than decode + graph`,
    );
    const model = `${label}, ${nodes} nodes, ${mb.toFixed(1)} MB`;
    const value = `${(mb / (wire / 1000)).toFixed(0)} MB/s`;
    const spread = `least CPU time of ${mb > 20 ? 3 : 8} rounds`;
    figures.push(
      {
        model,
        measure: 'wire decoder vs protobufjs decode',
        value,
        baseline: `${cell(pb).trim()}`,
        ratio: pb / wire,
        spread,
      },
      {
        model,
        measure: 'wire decoder vs protobufjs + graph',
        value,
        baseline: `${cell(ref).trim()}`,
        ratio: ref / wire,
        spread,
      },
    );
  }
  recordBench({
    area: 'graph',
    title: 'ONNX decode',
    ratio: "the baseline's CPU time over the wire decoder's (above 1: faster)",
    figures,
  });
}
