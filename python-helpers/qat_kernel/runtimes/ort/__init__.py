"""ONNX Runtime: sessions, precision as executed, builds and Q/DQ re-placement."""
