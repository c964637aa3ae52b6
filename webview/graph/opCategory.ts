// Op categories for the graph's colours, as Netron users know them: layers (convolution, linear) blue,
// activations red, pooling green, normalization teal, layout (reshape, transpose, concat, ...) brown,
// control flow grey-violet. Q/DQ and compared layers keep their own colours (purple, cosine bands).
export type OpCategory = 'layer' | 'activation' | 'pooling' | 'normalization' | 'layout' | 'control';

const RULES: Array<[OpCategory, RegExp]> = [
  ['pooling', /pool/],
  ['normalization', /norm|^lrn$|instancenorm|^bn$/],
  ['layer', /conv|^gemm$|matmul|^linear$|^addmm$|^mm$|^bmm$|einsum|^embedding$/],
  [
    'activation',
    /relu|gelu|sigmoid|tanh|silu|swish|mish|softmax|softplus|softsign|^elu$|^selu$|^celu$|hard|^clip$|clamp|^erf$/,
  ],
  [
    'layout',
    /reshape|flatten|transpose|permute|^view$|squeeze|concat|^cat$|split|slice|gather|^pad$|^shape$|expand|tile|^identity$|^contiguous$|^stack$|depthtospace|spacetodepth|^chunk$|^select$/,
  ],
  ['control', /^if$|^loop$|^scan$|^where$|^cond$|while_loop|^sequence/],
];

/** By op: a model has a few dozen distinct ops and every drawn node asks. */
const known = new Map<string, OpCategory | null>();

/** The category of an op name (ONNX `Conv`, or a torch/aten name such as `conv2d.default`), if it has one. */
export function opCategory(op: string): OpCategory | undefined {
  let category = known.get(op);
  if (category === undefined) {
    const name = op
      .toLowerCase()
      .replace(/^aten[._:]+/, '')
      .replace(/\.(default|tensor|int|self|scalar)$/, '')
      .replace(/_+$/, '');
    category = RULES.find(([, re]) => re.test(name))?.[0] ?? null;
    if (known.size < 10_000) known.set(op, category);
  }
  return category ?? undefined;
}

/** The fill of an uncompared op of a category: a page variable set per theme kind in the webview's style. */
export const categoryFill = (c: OpCategory) => `var(--qat-op-${c}, var(--vscode-editorWidget-background, #eee))`;
