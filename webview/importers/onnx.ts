// ONNX importer: the model's graph read straight off the protobuf wire (onnxWire.ts).
import { decodeOnnxGraph } from './onnxWire';
import type { Importer } from './types';

export const onnxImporter: Importer = {
  format: 'ONNX',
  match(bytes, fileName) {
    return /\.onnx$/i.test(fileName) || (bytes.length > 2 && bytes[0] === 0x08);
  },
  open: decodeOnnxGraph,
};
