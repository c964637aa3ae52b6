// The graph every importer produces and the view renders; one importer per file format.
export interface GraphNode {
  id: string;
  name: string;
  op: string;
  inputs: string[];
  outputs: string[];
  /** Module path the node belongs to (from the exporter's name scopes), e.g. `conv1`. */
  module?: string;
  kind: 'op' | 'input' | 'output' | 'group';
  /** Enclosing module paths, outermost first (the last one is `module`). */
  scopes?: string[];
  /** For a collapsed group: how many nodes it stands for. */
  size?: number;
  attributes?: Record<string, string>;
  /** Precision the op runs in, from the QDQ structure around it (set by view/qdq.ts). */
  precision?: 'int8' | 'fp16' | 'fp32';
}

export interface TensorInfo { dtype: string; dims: number[]; values?: number[] }

export interface Graph {
  name: string;
  nodes: GraphNode[];
  /** `label` marks an edge that stands for a collapsed Q -> DQ pair (int8 on the wire). */
  edges: Array<{ from: string; to: string; tensor: string; label?: string }>;
  opsets: Record<string, number>;
  /** Initializers, constants and typed value infos by tensor name (values only for small tensors). */
  tensors: Map<string, TensorInfo>;
}

export interface Importer {
  /** True when the bytes look like this format. */
  match(bytes: Uint8Array, fileName: string): boolean;
  open(bytes: Uint8Array): Graph;
}

export const isQdq = (op: string) => op === 'QuantizeLinear' || op === 'DequantizeLinear';
