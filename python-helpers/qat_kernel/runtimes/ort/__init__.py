"""ONNX Runtime: sessions, precision as executed, Q/DQ re-placement, mixed-precision candidates, build/ort's report."""
