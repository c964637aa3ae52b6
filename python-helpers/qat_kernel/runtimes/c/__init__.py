"""The portable C99 runner: the converted INT8 graph as a C header (layers, cgen), the compilers and emulators
that build and run it (toolchain), and the deploy folder (folder). TVM's C backend is runtimes/tvm/c_backend.py."""
