// A node's inputs named by their role, as the ONNX (and ONNX Runtime) operator schemas name them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { inputRoles } from '../../webview/view/inputRoles';

test('inputs are named by their role in the ONNX operator schemas, for the opset the model imports', () => {
  const opsets = { 'ai.onnx': 18 };
  assert.deepEqual(inputRoles({ op: 'QLinearConv' }, opsets, 9), [
    'x',
    'x_scale',
    'x_zero_point',
    'w',
    'w_scale',
    'w_zero_point',
    'y_scale',
    'y_zero_point',
    'B',
  ]);
  assert.deepEqual(inputRoles({ op: 'QLinearConv' }, opsets, 8)?.at(-1), 'y_zero_point', 'the optional bias left out');
  assert.deepEqual(inputRoles({ op: 'Conv' }, opsets, 3), ['X', 'W', 'B']);
  assert.deepEqual(inputRoles({ op: 'Gemm' }, opsets, 3), ['A', 'B', 'C']);
  assert.deepEqual(inputRoles({ op: 'QuantizeLinear' }, opsets, 3), ['x', 'y_scale', 'y_zero_point']);
  assert.deepEqual(inputRoles({ op: 'DequantizeLinear' }, opsets, 3), ['x', 'x_scale', 'x_zero_point']);
  assert.deepEqual(inputRoles({ op: 'MatMulInteger' }, opsets, 4), ['A', 'B', 'a_zero_point', 'b_zero_point']);
  assert.deepEqual(inputRoles({ op: 'QLinearMatMul' }, opsets, 8)?.slice(0, 3), ['a', 'a_scale', 'a_zero_point']);
  assert.deepEqual(inputRoles({ op: 'LayerNormalization' }, opsets, 3), ['X', 'Scale', 'B']);
  // The schema version the model's opset selects: BatchNormalization renamed mean/var in opset 14.
  assert.deepEqual(inputRoles({ op: 'BatchNormalization' }, { 'ai.onnx': 13 }, 5)?.slice(3), ['mean', 'var']);
  assert.deepEqual(inputRoles({ op: 'BatchNormalization' }, opsets, 5)?.slice(3), ['input_mean', 'input_var']);
  // Variadic inputs are numbered; ONNX Runtime's contrib ops (their own domain) are named too.
  assert.deepEqual(inputRoles({ op: 'Concat' }, opsets, 3), ['inputs[0]', 'inputs[1]', 'inputs[2]']);
  assert.deepEqual(inputRoles({ op: 'QLinearAdd', domain: 'com.microsoft' }, { 'com.microsoft': 1 }, 8)?.slice(0, 4), [
    'A',
    'A_scale',
    'A_zero_point',
    'B',
  ]);
  // No schema (the kernel's graph JSON, custom ops): none, and the view numbers them.
  assert.equal(inputRoles({ op: 'aten.conv2d.default' }, {}, 2), undefined);
  assert.equal(inputRoles({ op: 'Relu' }, opsets, 3), undefined, 'more inputs than the schema has');
});
