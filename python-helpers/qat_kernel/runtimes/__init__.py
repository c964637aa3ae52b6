"""Where models run once trained, one package per backend: onnx/ (the QDQ export and its rewrites, which the
backends below read), ort/ (ONNX Runtime), tvm/, inductor/, c/ (the portable C runner). A backend imports no
other backend; what they share sits here: targets.py (which target a request means), parity.py, bench.py
(latency), cpu.py (the CPU's int8 instructions)."""
