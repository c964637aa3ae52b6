// Reading what a workspace holds: a FIFO, a symlink to a device, a file over the limit are refused at once with a
// typed error, never read, never waited on; the language server's graph and config readers and the run history
// take them as absent.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { RunStore } from '../../client/runs/runStore';
import {
  readWorkspaceFile,
  readWorkspaceFileSync,
  WorkspaceFileError,
  type WorkspaceFileProblem,
} from '../../common/workspaceFile';

const dir = mkdtempSync(path.join(tmpdir(), 'qat-wsfile-'));
const fifo = path.join(dir, 'fifo.qat.yaml');
execFileSync('mkfifo', [fifo]);
const zero = path.join(dir, 'zero.qatgraph.json');
symlinkSync('/dev/zero', zero);
const big = path.join(dir, 'big.json');
writeFileSync(big, 'x'.repeat(5000));
const ok = path.join(dir, 'ok.qat.yaml');
writeFileSync(ok, 'version: 1\n');

const problem = (f: () => unknown): WorkspaceFileProblem | undefined => {
  try {
    f();
  } catch (err) {
    assert.ok(err instanceof WorkspaceFileError, String(err));
    return err.problem;
  }
  return undefined;
};

test('a regular file under the limit is read; a FIFO, a device, a folder, a big or a missing file are refused', async () => {
  assert.equal(readWorkspaceFileSync(ok, 100), 'version: 1\n');
  assert.equal(await readWorkspaceFile(ok, 100), 'version: 1\n');
  const cases: Array<[string, WorkspaceFileProblem]> = [
    [fifo, 'not a regular file'],
    [zero, 'not a regular file'],
    [dir, 'not a regular file'],
    [big, 'too large'],
    [path.join(dir, 'none'), 'missing'],
  ];
  for (const [file, want] of cases) {
    assert.equal(
      problem(() => readWorkspaceFileSync(file, 4096)),
      want,
      file,
    );
    const got = await readWorkspaceFile(file, 4096).then(
      () => undefined,
      (err: WorkspaceFileError) => err.problem,
    );
    assert.equal(got, want, file);
  }
});

test('the run history in a FIFO, or with records missing their fields, loads as what it can read', async () => {
  const store = new RunStore(fifo);
  await store.load();
  assert.deepEqual(store.list(), []);
  const runs = path.join(dir, 'qat-runs.json');
  const good = {
    id: 'a',
    kind: 'compare',
    config: '/w/a.qat.yaml',
    started: '2026-01-01T00:00:00Z',
    status: 'done',
    figures: [['INT8', '90 %']],
  };
  writeFileSync(
    runs,
    JSON.stringify({
      version: 1,
      runs: [good, { id: 'b', kind: 'train', status: 'done' }, null, 7, { ...good, id: 'c', figures: 'x' }],
    }),
  );
  const mixed = new RunStore(runs);
  await mixed.load();
  assert.deepEqual(
    mixed.list().map((r) => r.id),
    ['a'],
  );
});
