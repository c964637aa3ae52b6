// The graph every importer produces and the view renders; one importer per file format.
export type Precision = 'int8' | 'fp16' | 'bf16' | 'fp32';

export interface SourceLocation {
  file: string;
  line: number;
}

/** Quantization parameters carried by a node itself (graph JSON); ONNX keeps them in Q/DQ input tensors. */
export interface QParams {
  dtype: string;
  /** One entry per tensor, or one per channel along `axis`. */
  scale: number[];
  zeroPoint: number[];
  axis?: number;
  quantMin?: number;
  quantMax?: number;
}

export interface GraphNode {
  id: string;
  name: string;
  op: string;
  /** The op's domain, when not the default one (ONNX: com.microsoft, ai.onnx.ml, ...). */
  domain?: string;
  inputs: string[];
  outputs: string[];
  /** Module path the node belongs to (from the exporter's name scopes), e.g. `conv1`. */
  module?: string;
  /** Every module a runtime's fused kernel covers (QLinearConv of conv1 and relu1), `module` first. */
  modules?: string[];
  kind: 'op' | 'input' | 'output' | 'group';
  /** Enclosing module paths, outermost first (the last one is `module`). */
  scopes?: string[];
  /** For a collapsed group: how many nodes it stands for. */
  size?: number;
  /** For a fold of repeated blocks (graph/groups.ts): the block scopes it stands for, e.g. `model.layers.1`. */
  folded?: string[];
  attributes?: Record<string, string>;
  /** Precision the op runs in: from the file when it says, else from the QDQ structure around it (graph/qdq.ts). */
  precision?: Precision;
  /** Where the node is computed in the user's code (graph JSON). */
  source?: SourceLocation;
  qparams?: QParams;
  /** What a runtime ran for this node (precision as executed), when its build report is known. */
  executed?: import('../../protocol/webview').ExecutedOp;
}

/** A tensor's values: a typed array of its own type when read from raw data. */
export type TensorValues =
  number[] | Float32Array | Float64Array | Int8Array | Uint8Array | Int16Array | Uint16Array | Int32Array;

export interface TensorInfo {
  dtype: string;
  /** Sizes; -1 where the file leaves a dimension symbolic or unknown. */
  dims: number[];
  /** Per dimension, the name the file gives a symbolic one (ONNX dim_param, e.g. `batch`), else ''. */
  dimNames?: string[];
  /** The file gives the element type but no shape (rank unknown). */
  unranked?: boolean;
  values?: TensorValues;
  /** Value summary for tensors whose values stayed in the extension host (large weights). */
  stats?: import('../../protocol/webview').WeightStats;
  /** What is wrong with the file's tensor (a negative dim, data that does not match its dims): no values then. */
  problem?: string;
}

/** Dims as the view writes them: 1×16×8×8, with a symbolic dimension's name (batch) or ? for an unknown one. */
export function dimsText(t: Pick<TensorInfo, 'dims' | 'dimNames' | 'unranked'>): string {
  if (t.unranked) return '?';
  return t.dims.map((d, i) => (d >= 0 ? String(d) : t.dimNames?.[i] || '?')).join('×');
}

export interface ModuleInfo {
  type: string;
  source?: SourceLocation;
}

export interface Graph {
  name: string;
  nodes: GraphNode[];
  /** `label` marks an edge that stands for a collapsed Q -> DQ pair (int8 on the wire). */
  edges: Array<{ from: string; to: string; tensor: string; label?: string }>;
  opsets: Record<string, number>;
  /** Initializers, constants and typed value infos by tensor name (values only for small tensors). */
  tensors: Map<string, TensorInfo>;
  /** Module class and definition by module path, when the file records them (graph JSON). */
  modules?: Record<string, ModuleInfo>;
  /** The QAT config the graph was made from (absolute path), when the file records it. */
  config?: string;
  /** fp32, prepared (fake-quant), converted (INT8) or tvm (a TVM build's kernels), when the file records it. */
  stage?: string;
}

export interface Importer {
  /** Names the format in messages. */
  readonly format: string;
  /** True when the bytes look like this format. */
  match(bytes: Uint8Array, fileName: string): boolean;
  open(bytes: Uint8Array): Graph;
}

export type QdqRole = 'q' | 'dq' | 'fq';

// ONNX QuantizeLinear/DequantizeLinear; PT2E quantized_decomposed ops and aten's (any namespace or overload);
// eager-mode Quantize/DeQuantize modules and stubs; fake-quant modules and ops of the prepared (QAT) model.
const DQ_OP =
  /^(DequantizeLinear|DeQuantize|DeQuantStub)$|(^|\.)dequantize(_per_(tensor|channel|channel_group|token)(_tensor\d?)?)?(\.|$)/;
const Q_OP =
  /^(QuantizeLinear|Quantize|QuantStub)$|(^|\.)quantize_per_(tensor|channel|channel_group|token)(_tensor\d?)?(\.|$)/;
const FQ_OP = /fake_?quant/i;

/** By op: a model has a few dozen distinct ops and asks about each node, often more than once. */
const roles = new Map<string, QdqRole | null>();

/** Whether an op quantizes, dequantizes or fake-quantizes (both at once), in any of the formats we open. */
export function qdqRole(op: string): QdqRole | undefined {
  let role = roles.get(op);
  if (role === undefined) {
    role = DQ_OP.test(op) ? 'dq' : Q_OP.test(op) ? 'q' : FQ_OP.test(op) ? 'fq' : null;
    if (roles.size < 10_000) roles.set(op, role);
  }
  return role ?? undefined;
}

export const isQdq = (op: string) => qdqRole(op) !== undefined;
