// The graph every importer produces and the view renders; one importer per file format.
export interface GraphNode {
  id: string;
  name: string;
  op: string;
  inputs: string[];
  outputs: string[];
  /** Module path the node belongs to (from the exporter's name scopes), e.g. `conv1`. */
  module?: string;
  kind: 'op' | 'input' | 'output';
}

export interface Graph {
  name: string;
  nodes: GraphNode[];
  edges: Array<{ from: string; to: string; tensor: string }>;
  opsets: Record<string, number>;
}

export interface Importer {
  /** True when the bytes look like this format. */
  match(bytes: Uint8Array, fileName: string): boolean;
  open(bytes: Uint8Array): Graph;
}

export const isQdq = (op: string) => op === 'QuantizeLinear' || op === 'DequantizeLinear';
