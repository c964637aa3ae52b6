// The onnx package's own reading of the value types an ONNX file declares, as the oracle for the graph view's shapes.
import { execFileSync } from 'node:child_process';
import { venvPython } from './paths';

/** The onnx package's reading: per declared value, elem type and each dim as an int, a dim_param name, or null. */
export type Declared = Record<string, { elem: number; dims: Array<number | string | null> | null }>;
export function declaredByOnnx(file: string): Declared {
  const script = `
import json, sys, onnx
g = onnx.load(sys.argv[1]).graph
init = {t.name for t in g.initializer}
out = {}
for v in [*g.input, *g.output, *g.value_info]:
    if v.name in init or v.name in out or not v.type.HasField('tensor_type'):
        continue
    tt = v.type.tensor_type
    dims = None
    if tt.HasField('shape'):
        dims = [d.dim_value if d.HasField('dim_value') else d.dim_param if d.HasField('dim_param') else None
                for d in tt.shape.dim]
    out[v.name] = {'elem': tt.elem_type, 'dims': dims}
print(json.dumps(out))
`;
  return JSON.parse(execFileSync(venvPython, ['-c', script, file], { encoding: 'utf8' })) as Declared;
}
