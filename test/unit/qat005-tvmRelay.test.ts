import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pyCodes, spanOf } from './helpers/builder';

test('QAT005: Relay imports and calls name their Relax replacement', () => {
  const src =
    'import tvm\nmod, params = tvm.relay.frontend.from_onnx(model, shape)\nlib = tvm.relay.build(mod, target="llvm", params=params)\n';
  const hits = pyCodes(src, 'QAT005');
  assert.deepEqual(
    hits.map((f) => spanOf(src, f)),
    ['tvm.relay.frontend.from_onnx', 'tvm.relay.build'],
  );
  assert.match(hits[0].message, /tvm\.relax\.frontend\.onnx\.from_onnx/);
  assert.match(hits[1].message, /tvm\.compile\(mod, target\)/);
  const imp = pyCodes('from tvm.contrib import graph_executor\n', 'QAT005');
  assert.match(imp[0].message, /tvm\.contrib\.graph_executor no longer exists/);
});

test('QAT005 is quiet for Relax code', () => {
  assert.deepEqual(
    pyCodes(
      'import tvm\nfrom tvm import relax\nex = tvm.compile(mod, "llvm")\nvm = relax.VirtualMachine(ex, tvm.cpu())\n',
      'QAT005',
    ),
    [],
  );
});
