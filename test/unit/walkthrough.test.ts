// The walkthrough ticks a step on what really happened (a context key the extension sets), never on a command
// being invoked: a refused or cancelled command ticks nothing, and a step done from any UI (the sidebar, a task,
// the graph) ticks. In an untrusted folder the QAT Studio views say what is limited and offer the way out.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { STEP_CONTEXTS, stepOfRun } from '../../client/onboarding/steps';
import type { RunRecord } from '../../client/runs/runStore';
import { repoRoot } from './helpers/builder';

const manifest = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as {
  contributes: {
    walkthroughs: Array<{ id: string; steps: Array<{ id: string; completionEvents: string[] }> }>;
    viewsWelcome: Array<{ view: string; contents: string; when?: string }>;
    views: Record<string, Array<{ id: string }>>;
  };
};

test("every walkthrough step completes on its context key only, none on a command's invocation", () => {
  const steps = manifest.contributes.walkthroughs.find((w) => w.id === 'qatStudio.gettingStarted')!.steps;
  assert.deepEqual(
    steps.map((s) => s.id),
    Object.keys(STEP_CONTEXTS),
  );
  for (const s of steps)
    assert.deepEqual(s.completionEvents, [`onContext:${STEP_CONTEXTS[s.id as keyof typeof STEP_CONTEXTS]}`], s.id);
});

test('a run completes its step only when it went through', () => {
  const run = (kind: RunRecord['kind'], status: RunRecord['status']): RunRecord => ({
    id: 'x',
    kind,
    status,
    config: '/w/m.qat.yaml',
    started: '2026-01-01T00:00:00Z',
    figures: [],
  });
  assert.equal(stepOfRun(run('compare', 'done')), 'compare');
  assert.equal(stepOfRun(run('fix', 'done')), 'fix');
  assert.equal(stepOfRun(run('build', 'done')), 'build');
  for (const status of ['running', 'failed', 'cancelled'] as const)
    for (const kind of ['compare', 'fix', 'build'] as const) assert.equal(stepOfRun(run(kind, status)), undefined);
  assert.equal(stepOfRun(run('evaluate', 'done')), undefined);
});

test('in Restricted Mode every QAT Studio view says what is limited and offers Manage Workspace Trust', () => {
  const views = manifest.contributes.views.qatStudio.map((v) => v.id);
  for (const view of views) {
    const entries = manifest.contributes.viewsWelcome.filter((w) => w.view === view);
    const restricted = entries.filter((w) => w.when === '!isWorkspaceTrusted');
    assert.equal(restricted.length, 1, view);
    assert.match(restricted[0].contents, /does not start the Python kernel/);
    assert.match(restricted[0].contents, /\[Manage Workspace Trust\]\(command:workbench\.trust\.manage\)/);
    // The others (which offer kernel commands) show only in a trusted folder.
    for (const w of entries.filter((e) => e !== restricted[0])) assert.equal(w.when, 'isWorkspaceTrusted', view);
  }
});

test('npm start leaves the startup editor alone, so the walkthrough can open on first activation', () => {
  assert.doesNotMatch(readFileSync(path.join(repoRoot, 'scripts', 'start.mjs'), 'utf8'), /startupEditor/);
});
