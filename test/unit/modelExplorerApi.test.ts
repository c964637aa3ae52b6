// The graph benchmark's reading of Model Explorer's server: the start-page address that names the model and
// the convert reply's error.
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { conversionError, modelExplorerUrl } from '../bench/modelExplorerApi';

test('the start page names the model by its absolute path in the data parameter', () => {
  const url = new URL(modelExplorerUrl('http://127.0.0.1:8123/', 'build/bench/a b&c.onnx'));
  assert.equal(url.origin, 'http://127.0.0.1:8123');
  assert.equal(url.pathname, '/');
  assert.deepEqual(JSON.parse(url.searchParams.get('data')!), {
    models: [{ url: path.resolve('build/bench/a b&c.onnx') }],
  });
});

test("a convert reply's error is its message; a converted graph has none", () => {
  const bytes = (s: string) => new TextEncoder().encode(s);
  assert.equal(
    conversionError(bytes('{"error": "DecodeError: Error parsing message"}')),
    'DecodeError: Error parsing message',
  );
  assert.equal(conversionError(bytes('{"graphCollections": [{"label": "m", "graphs": []}]}')), undefined);
  assert.match(conversionError(bytes('<html>500</html>'))!, /not JSON \(16 bytes\)/);
  // A graph of a megabyte or more is not parsed again, whatever it holds.
  assert.equal(conversionError(new Uint8Array(2 ** 20).fill(0x20)), undefined);
});
