// QAT: Create Kernel Environment's service against a real Python and pip, offline: a wheel built here into a
// local folder (pip --no-index --find-links), never a download. The environment works, its output is logged,
// progress reaches 1; a stop or a failure leaves no half-made environment behind.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { createKernelEnv, CreateEnvError, requirementNames, venvPython } from '../../client/kernel/createEnv';

const BASE_PYTHON = 'python3';

/** A one-module wheel, `qatenvprobe==1.0`, in a new folder. */
function wheelDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'qat-wheels-'));
  execFileSync(BASE_PYTHON, [
    '-c',
    `import zipfile, sys
name = 'qatenvprobe-1.0'
files = {'qatenvprobe.py': 'ANSWER = 42\\n',
  name + '.dist-info/METADATA': 'Metadata-Version: 2.1\\nName: qatenvprobe\\nVersion: 1.0\\n',
  name + '.dist-info/WHEEL': 'Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n'}
files[name + '.dist-info/RECORD'] = ''.join(f + ',,\\n' for f in list(files) + [name + '.dist-info/RECORD'])
with zipfile.ZipFile(sys.argv[1] + '/qatenvprobe-1.0-py3-none-any.whl', 'w') as z:
    for f, t in files.items(): z.writestr(f, t)`,
    dir,
  ]);
  return dir;
}

test('requirement names for progress: comments, options and markers left out', () => {
  assert.deepEqual(
    requirementNames('# pinned\n--extra-index-url x\ntorch==2.13.0\nPyYAML>=6 ; python_version>"3"\n\n'),
    ['torch', 'pyyaml'],
  );
});

test(
  'creates a venv with the pinned requirements from a local wheel folder, offline',
  { timeout: 600_000 },
  async () => {
    const wheels = wheelDir();
    const work = mkdtempSync(path.join(tmpdir(), 'qat-env-'));
    const requirements = path.join(work, 'requirements.txt');
    writeFileSync(requirements, '# the pinned set\nqatenvprobe==1.0\n');
    const lines: string[] = [];
    const progress: number[] = [];
    const python = await createKernelEnv({
      basePython: BASE_PYTHON,
      dir: path.join(work, 'env'),
      requirements,
      pipArgs: ['--no-index', '--find-links', wheels],
      onLine: (l) => lines.push(l),
      onProgress: (f) => progress.push(f),
    });
    assert.equal(python, venvPython(path.join(work, 'env')));
    assert.equal(execFileSync(python, ['-c', 'import qatenvprobe; print(qatenvprobe.ANSWER)']).toString().trim(), '42');
    assert.ok(
      lines.some((l) => /Successfully installed qatenvprobe-1\.0/.test(l)),
      lines.join('\n'),
    );
    assert.equal(progress.at(-1), 1);
    assert.ok(
      progress.some((f) => f > 0 && f < 1),
      `no progress between: ${progress.join(',')}`,
    );

    // A requirement the local folder does not have: a clear error with pip's words, and no environment left.
    writeFileSync(requirements, 'qatenvprobe==2.0\n');
    await assert.rejects(
      createKernelEnv({
        basePython: BASE_PYTHON,
        dir: path.join(work, 'env2'),
        requirements,
        pipArgs: ['--no-index', '--find-links', wheels],
      }),
      (err: Error) =>
        err instanceof CreateEnvError && /pip install failed \(exit 1\)[\s\S]*qatenvprobe==2\.0/.test(err.message),
    );
    assert.equal(existsSync(path.join(work, 'env2')), false);
  },
);

test('a stop while the venv is made ends it and removes the folder', { timeout: 300_000 }, async () => {
  const work = mkdtempSync(path.join(tmpdir(), 'qat-env-'));
  const requirements = path.join(work, 'requirements.txt');
  writeFileSync(requirements, 'qatenvprobe==1.0\n');
  const stop = new AbortController();
  const made = createKernelEnv({
    basePython: BASE_PYTHON,
    dir: path.join(work, 'env'),
    requirements,
    onProgress: (f) => {
      if (f === 0) setImmediate(() => stop.abort());
    },
    signal: stop.signal,
  });
  await assert.rejects(made, (err: Error) => err instanceof CreateEnvError && err.cancelled);
  assert.equal(existsSync(path.join(work, 'env')), false);
});

test('bad input is refused before anything is written', async () => {
  const work = mkdtempSync(path.join(tmpdir(), 'qat-env-'));
  await assert.rejects(
    createKernelEnv({
      basePython: BASE_PYTHON,
      dir: path.join(work, 'env'),
      requirements: path.join(work, 'none.txt'),
    }),
    /No requirements file at/,
  );
  writeFileSync(path.join(work, 'requirements.txt'), 'x\n');
  await assert.rejects(
    createKernelEnv({ basePython: BASE_PYTHON, dir: work, requirements: path.join(work, 'requirements.txt') }),
    /exists and is not a virtual environment/,
  );
  assert.equal(existsSync(path.join(work, 'env')), false);
});
