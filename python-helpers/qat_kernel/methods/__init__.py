"""Method table: RPC method name -> handler(ctx) returning the result object.

Handler modules import only the standard library at load time; heavy packages are imported inside
the handlers, so the kernel starts fast."""
from . import compare_layers, kernel_info

METHODS = {
    "kernel/info": kernel_info.run,
    "compare/layers": compare_layers.run,
}
