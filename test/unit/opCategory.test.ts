// Op categories for the graph's colours, for ONNX op types and torch/aten names alike.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { categoryFill, opCategory } from '../../webview/graph/opCategory';

test('ONNX and aten names land in the categories Netron users expect', () => {
  const cases: Record<string, string | undefined> = {
    Conv: 'layer',
    ConvTranspose: 'layer',
    Gemm: 'layer',
    MatMul: 'layer',
    'aten.conv2d.default': 'layer',
    'aten.linear.default': 'layer',
    Relu: 'activation',
    'aten.relu.default': 'activation',
    'aten.hardswish_.default': 'activation',
    Sigmoid: 'activation',
    Softmax: 'activation',
    Clip: 'activation',
    MaxPool: 'pooling',
    GlobalAveragePool: 'pooling',
    'aten.max_pool2d.default': 'pooling',
    'aten.adaptive_avg_pool2d.default': 'pooling',
    BatchNormalization: 'normalization',
    LayerNormalization: 'normalization',
    'aten.batch_norm.default': 'normalization',
    Reshape: 'layout',
    Flatten: 'layout',
    'aten.flatten.using_ints': 'layout',
    Transpose: 'layout',
    Concat: 'layout',
    'aten.cat.default': 'layout',
    If: 'control',
    Loop: 'control',
    Scan: 'control',
    Add: undefined,
    Mul: undefined,
    get_attr: undefined,
    Constant: undefined,
  };
  for (const [op, want] of Object.entries(cases)) assert.equal(opCategory(op), want, op);
});

test('a category fill falls back to the widget background when the page sets no colour for it', () => {
  assert.equal(categoryFill('layer'), 'var(--qat-op-layer, var(--vscode-editorWidget-background, #eee))');
});
