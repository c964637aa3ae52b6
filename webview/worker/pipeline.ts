// Decode + layout, shared by the worker and the main-thread fallback.
import { onnxImporter } from '../importers/onnx';
import type { Graph } from '../importers/types';
import { fastLayout } from '../view/fastLayout';
import { collapseQdq, precisionOf, producerMap } from '../view/qdq';
import { DAGRE_LIMIT, dagreLayout, type Layout } from '../view/layout';

export interface LaidOut { graph: Graph; layout: Layout; big: boolean; timings: { decode: number; layout: number } }

export interface ViewOptions { renderer?: 'auto' | 'svg' | 'canvas'; collapseQdq?: boolean }

export function decodeAndLayout(bytes: Uint8Array, { renderer = 'auto', collapseQdq: collapse = false }: ViewOptions = {}): LaidOut {
  const t0 = performance.now();
  let graph = onnxImporter.open(bytes);
  const producers = producerMap(graph);
  for (const n of graph.nodes) n.precision = precisionOf(n, graph, producers);
  if (collapse) graph = collapseQdq(graph);
  const t1 = performance.now();
  const big = renderer === 'canvas' || (renderer !== 'svg' && graph.nodes.length > DAGRE_LIMIT);
  const layout = big ? fastLayout(graph) : dagreLayout(graph);
  return { graph, layout, big, timings: { decode: t1 - t0, layout: performance.now() - t1 } };
}
