"""deploy/c-artifact: the converted INT8 graph as a C header and a portable C99 runner, toolchains, TVM C backend."""
