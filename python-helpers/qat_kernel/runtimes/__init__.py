"""Where models run once trained: ONNX export, ONNX Runtime, TVM, Inductor and the C runner, with the CPU
facts, parity and latency measurement they share."""
