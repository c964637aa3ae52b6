// Tensor shapes drawn on edges (the toolbar's Shapes toggle): the dims and, when not float32, the element type of
// the value an edge carries, from the file's declared types (ONNX value_info, inputs, outputs; the kernel's graph
// JSON tensors).
import { dimsText, type Graph, type TensorInfo } from '../importers/types';

/** An edge's shape text: `batch×16×8×8`, or `uint8 batch×16×8×8` for other element types. */
export function shapeLabel(t: TensorInfo | undefined): string | undefined {
  if (!t || (t.dtype === '?' && !t.dims.length && !t.unranked)) return undefined;
  const dims = t.unranked ? '?' : t.dims.length ? dimsText(t) : 'scalar';
  return t.dtype === 'float32' ? dims : `${t.dtype} ${dims}`;
}

export interface EdgeShape {
  /** Values the edge carries (more than one when a node reads several outputs of another). */
  tensors: string[];
  text: string;
}

/** Per drawn edge (`from>to`), the shape text of the values it carries, for edges whose values have a known type. */
export function edgeShapes(graph: Graph): Map<string, EdgeShape> {
  const out = new Map<string, EdgeShape>();
  for (const e of graph.edges) {
    const text = shapeLabel(graph.tensors.get(e.tensor));
    if (!text) continue;
    const key = `${e.from}>${e.to}`;
    const had = out.get(key);
    if (!had) out.set(key, { tensors: [e.tensor], text });
    else if (!had.tensors.includes(e.tensor)) {
      had.tensors.push(e.tensor);
      had.text += `, ${text}`;
    }
  }
  return out;
}

/** The point halfway along a polyline (by length), where an edge's label goes. */
export function midpoint(points: Array<{ x: number; y: number }>): { x: number; y: number } {
  if (points.length < 2) return points[0] ?? { x: 0, y: 0 };
  const lengths = points.slice(1).map((p, i) => Math.hypot(p.x - points[i].x, p.y - points[i].y));
  let rest = lengths.reduce((a, b) => a + b, 0) / 2;
  for (let i = 0; i < lengths.length; i++) {
    if (rest <= lengths[i] || i === lengths.length - 1) {
      const k = lengths[i] ? Math.min(1, rest / lengths[i]) : 0;
      return {
        x: points[i].x + (points[i + 1].x - points[i].x) * k,
        y: points[i].y + (points[i + 1].y - points[i].y) * k,
      };
    }
    rest -= lengths[i];
  }
  return points[points.length - 1];
}

/**
 * Where an edge's label goes: beside its middle, on the side away from the edge's slant, so the labels of two
 * edges that meet at one node (a Conv's input and weight) fall on either side instead of over each other.
 */
export function labelPlace(points: Array<{ x: number; y: number }>): { x: number; y: number; anchor: 'start' | 'end' } {
  const mid = midpoint(points);
  const first = points[0],
    last = points[points.length - 1];
  const leftward = first && last && first.x < last.x - 1;
  return leftward ? { x: mid.x - 4, y: mid.y, anchor: 'end' } : { x: mid.x + 4, y: mid.y, anchor: 'start' };
}
