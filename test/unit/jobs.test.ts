// A `qat` task shows what the kernel rendered: each job is a method and its params; the lines it prints are the
// result's `summary` and the report it opens is the file the kernel wrote, from one request per job.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { BUILD_BENCH_RUNS, JOBS, summaryOf, type Job } from '../../client/tasks/jobs';
import type { BuildTvmResult, CompareStagesResult } from '../../protocol/kernel';
import { repoRoot } from '../support/paths';

const fixture = <T>(name: string) =>
  JSON.parse(readFileSync(path.join(repoRoot, 'protocol', 'fixtures', 'rpc', `${name}.json`), 'utf8')) as T;

const RESULTS = {
  train: 'QatTrainResult',
  evaluate: 'EvalAccuracyResult',
  convert: 'QatConvertResult',
  histograms: 'HistogramsResult',
  export: 'ExportOnnxResult',
  compare: 'CompareLayersResult',
  sensitivity: 'SensitivityResult',
  stages: 'CompareStagesResult',
  build: 'BuildTvmResult',
  deploy: 'DeployTorchaoResult',
  info: 'KernelInfoResult',
} as const;

test("every job prints the kernel's summary lines as they are", () => {
  assert.deepEqual(Object.keys(JOBS).sort(), Object.keys(RESULTS).sort());
  for (const [job, name] of Object.entries(RESULTS)) {
    const result = fixture<{ summary: string[] }>(name);
    assert.ok(result.summary.length > 0, `${name} has summary lines`);
    assert.deepEqual(summaryOf(result), result.summary, job);
    assert.ok(!('summary' in JOBS[job as keyof typeof JOBS]), `${job} renders nothing`);
  }
  assert.deepEqual(summaryOf({}), []);
});

test('Build for Target: one build/tvm request that times TVM with every runtime, and the kernel-written report', () => {
  const build = JOBS.build as unknown as Job<BuildTvmResult>;
  assert.equal(build.method, 'build/tvm');
  assert.deepEqual(build.params('/w/digits.qat.yaml', { target: 'x86-64' }), {
    config: '/w/digits.qat.yaml',
    target: 'x86-64',
    verify: true,
    bench: true,
    benchRuns: BUILD_BENCH_RUNS,
  });
  // nothing after the request: no build/ort or verify/parity for the report, no file written here
  assert.equal(build.after, undefined);
  const result = fixture<BuildTvmResult>('BuildTvmResult');
  assert.equal(build.report?.(result), result.markdownPath);
  assert.equal(path.basename(result.markdownPath), 'build-report.md');
  assert.match(result.markdown, /^# TVM build: x86-64\n/);
  for (const line of result.summary) assert.ok(result.markdown.includes(`    ${line}`), line);
});

test('Find Where INT8 Diverges: one compare/stages request and the report the kernel wrote', () => {
  const stages = JOBS.stages as unknown as Job<CompareStagesResult>;
  assert.equal(stages.method, 'compare/stages');
  assert.deepEqual(stages.params('/w/digits.qat.yaml', {}), { config: '/w/digits.qat.yaml' });
  const result = fixture<CompareStagesResult>('CompareStagesResult');
  assert.equal(stages.report?.(result), result.markdownPath);
  assert.equal(path.basename(result.markdownPath), 'digits.stages.md');
  assert.deepEqual(
    result.stages.map((s) => s.id),
    ['fp32', 'fakeQuant', 'int8', 'ort', 'c', 'tvm'],
  );
});

test('the other jobs open no report', () => {
  for (const [job, spec] of Object.entries(JOBS))
    if (job !== 'build' && job !== 'stages') assert.equal(spec.report, undefined, job);
});
