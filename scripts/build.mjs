// One build for every entry: generated protocol types, the ONNX schema, and the esbuild bundles.
//   node scripts/build.mjs [--production]
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { compile } from 'json-schema-to-typescript';
import Ajv from 'ajv';
import standaloneCode from 'ajv/dist/standalone/index.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const production = process.argv.includes('--production');
const gen = path.join(root, 'build', 'generated');
mkdirSync(gen, { recursive: true });

function writeIfChanged(file, text) {
  if (existsSync(file) && readFileSync(file, 'utf8') === text) return;
  writeFileSync(file, text);
}

// Kernel RPC types come from the JSON Schema that the Python side validates against.
const rpcSchema = JSON.parse(readFileSync(path.join(root, 'protocol', 'kernel-rpc.schema.json'), 'utf8'));
const rpcTypes = await compile(rpcSchema, 'KernelRpc', {
  bannerComment: '/* Generated from protocol/kernel-rpc.schema.json by scripts/build.mjs. Do not edit. */',
  additionalProperties: false,
  unreachableDefinitions: true,
});
writeIfChanged(path.join(gen, 'kernel-rpc.ts'), rpcTypes);

// The method map, notification names and error codes, from the same schema: nothing of the contract is
// written twice. A method's params/result types are the definitions its schema entry refers to.
const refName = (node) => node.$ref.split('/').pop();
const methodLines = Object.entries(rpcSchema.properties.methods.properties).map(
  ([name, spec]) =>
    `  '${name}': { params: T.${refName(spec.properties.params)}; result: T.${refName(spec.properties.result)} };`,
);
const codes = rpcSchema.definitions.KernelErrorData.properties.kind['x-codes'];
writeIfChanged(
  path.join(gen, 'kernel-protocol.ts'),
  [
    '/* Generated from protocol/kernel-rpc.schema.json by scripts/build.mjs. Do not edit. */',
    "import type * as T from './kernel-rpc';",
    '',
    'export interface KernelMethods {',
    ...methodLines,
    '}',
    '',
    '/** Notification method names, by the name the schema gives their params. */',
    `export const KernelNotificationNames = ${JSON.stringify(Object.keys(rpcSchema.properties.notifications.properties))} as const;`,
    '',
    '/** error.code of a failed kernel request by its KernelErrorData kind. */',
    `export const KernelErrorCode = ${JSON.stringify(codes, null, 2)} as const;`,
    '',
  ].join('\n'),
);

// The graph view checks *.qatgraph.json files against the same schema. The webview's CSP forbids the eval ajv
// compiles with, so the validator is generated here as plain code.
const graphAjv = new Ajv({ allErrors: false, strict: false, code: { source: true, esm: true } });
graphAjv.addSchema(rpcSchema, 'rpc');
writeIfChanged(
  path.join(gen, 'model-graph-validate.js'),
  '/* Generated from protocol/kernel-rpc.schema.json by scripts/build.mjs. Do not edit. */\n' +
    standaloneCode(graphAjv, { validateModelGraph: 'rpc#/definitions/ModelGraph' }),
);
writeIfChanged(
  path.join(gen, 'model-graph-validate.d.ts'),
  `import type { ErrorObject } from 'ajv';
import type { ModelGraph } from './kernel-rpc';
export declare const validateModelGraph: ((data: unknown) => data is ModelGraph) & { errors?: ErrorObject[] | null };
`,
);

const configSchema = JSON.parse(readFileSync(path.join(root, 'protocol', 'qat-config.schema.json'), 'utf8'));
const configTypes = await compile(configSchema, 'QatConfig', {
  bannerComment: '/* Generated from protocol/qat-config.schema.json by scripts/build.mjs. Do not edit. */',
  additionalProperties: false,
});
writeIfChanged(path.join(gen, 'qat-config.ts'), configTypes);

// The current onnx-ml.proto ships inside the onnx wheel. It becomes a protobufjs static module (decoders
// written out as code), because the webview's CSP forbids the eval that protobufjs' reflection uses.
const cache = process.env.QAT_STUDIO_CACHE ?? path.join(homedir(), '.cache', 'qat-studio');
const python = [path.join(cache, 'venv', 'bin', 'python'), 'python3'].find((p) => p === 'python3' || existsSync(p));
function onnxProtoPath() {
  const dir = execFileSync(python, ['-c', 'import os, onnx; print(os.path.dirname(onnx.__file__))'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  }).trim();
  return path.join(dir, 'onnx-ml.proto');
}
const protoFile = onnxProtoPath();
const protoHash = createHash('sha256').update(readFileSync(protoFile)).digest('hex');
const pbJs = path.join(gen, 'onnx-pb.js');
const pbStamp = path.join(gen, 'onnx-pb.sha256');
if (!existsSync(pbStamp) || readFileSync(pbStamp, 'utf8') !== protoHash) {
  const bin = (name) => path.join(root, 'node_modules', '.bin', name);
  execFileSync(
    bin('pbjs'),
    [
      '-t',
      'static-module',
      '-w',
      'es6',
      '--keep-case',
      '--force-number',
      '--no-create',
      '--no-encode',
      '--no-verify',
      '--no-convert',
      '--no-delimited',
      '-o',
      pbJs,
      protoFile,
    ],
    { stdio: 'inherit' },
  );
  execFileSync(bin('pbts'), ['-o', path.join(gen, 'onnx-pb.d.ts'), pbJs], { stdio: 'inherit' });
  writeFileSync(pbStamp, protoHash);
}

// Every operator's input names (x, x_scale, w, B, ...) from the operator schemas of the same onnx package (and
// ONNX Runtime's beside it), for the properties panel; made again when the script or either package changes.
const opInputs = path.join(gen, 'onnx-op-inputs.ts');
const opStamp = path.join(gen, 'onnx-op-inputs.stamp');
const opScript = path.join(root, 'scripts', 'gen_onnx_op_inputs.py');
const sitePackages = path.dirname(path.dirname(protoFile));
const installed = readdirSync(sitePackages).filter((f) => /^onnx(runtime)?-[^-]+\.dist-info$/.test(f));
const opHash = createHash('sha256')
  .update(readFileSync(opScript))
  .update(protoHash)
  .update(installed.sort().join(' '))
  .digest('hex');
if (!existsSync(opStamp) || !existsSync(opInputs) || readFileSync(opStamp, 'utf8') !== opHash) {
  execFileSync(python, [opScript, opInputs], { stdio: 'inherit' });
  writeFileSync(opStamp, opHash);
}

// A release build starts from an empty out/ so no source maps or test bundles end up in the .vsix.
if (production) rmSync(path.join(root, 'out'), { recursive: true, force: true });

const common = {
  bundle: true,
  sourcemap: !production,
  minify: production,
  logLevel: 'warning',
  absWorkingDir: root,
  target: 'es2022',
};
const node = {
  ...common,
  platform: 'node',
  format: 'cjs',
  external: ['vscode', 'mocha', 'playwright-core', '@vscode/test-electron'],
};
// The layout worker is bundled first and embedded in the webview bundle as text (started from a blob URL).
await esbuild.build({
  ...common,
  platform: 'browser',
  format: 'iife',
  entryPoints: ['webview/worker/layoutWorker.ts'],
  outfile: 'build/generated/layout-worker.js.txt',
});
await Promise.all([
  esbuild.build({
    ...node,
    entryPoints: {
      'client/extension': 'client/extension.ts',
      'client/slimWorker': 'client/editors/slimWorker.ts',
      'server/server': 'server/server.ts',
      'server/graphWorker': 'server/graphWorker.ts',
    },
    outdir: 'out',
  }),
  esbuild.build({
    ...common,
    platform: 'browser',
    format: 'iife',
    entryPoints: { 'webview/main': 'webview/main.ts', 'webview/ui': 'webview/ui.ts' },
    outdir: 'out',
    loader: { '.txt': 'text' },
  }),
  production
    ? null
    : esbuild.build({
        ...node,
        entryPoints: Object.fromEntries(
          execFileSync('find', ['test', '-name', '*.ts', '-not', '-path', 'test/fixtures/*'], {
            cwd: root,
            encoding: 'utf8',
          })
            .split('\n')
            .filter(Boolean)
            .map((f) => [f.replace(/\.ts$/, ''), f]),
        ),
        outdir: 'out',
      }),
]);
console.log(`built ${production ? '(production) ' : ''}from ${path.relative(root, protoFile) || protoFile}`);
