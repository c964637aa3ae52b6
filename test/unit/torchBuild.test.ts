// Which torch Create Kernel Environment installs: the NVIDIA GPU look-up run for real on this machine (whatever it
// has), the /proc fallback against files in the kernel module's layout, and the decision for each setting,
// GPU, driver, platform and pip arguments.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import {
  CUDA_BUILDS,
  cudaBuildFor,
  cudaForDriver,
  detectNvidiaGpu,
  parseProcVersion,
  parseQueryGpu,
  parseSmiHeader,
  planTorch,
  type Exec,
  type GpuInfo,
} from '../../client/kernel/torchBuild';

const none: GpuInfo = {
  found: false,
  via: 'none',
  names: [],
  detail: 'nvidia-smi: not found; /proc/driver/nvidia: absent',
};
const h200 = (cuda: string, driver = '570.124.06'): GpuInfo => ({
  found: true,
  via: 'nvidia-smi',
  names: ['NVIDIA H200'],
  driver,
  cuda,
  detail: 'nvidia-smi: NVIDIA H200',
});

test('the GPU look-up on this machine agrees with what nvidia-smi and /proc/driver/nvidia say here', async () => {
  const smi = spawnSync('nvidia-smi', ['--query-gpu=name', '--format=csv,noheader'], { encoding: 'utf8' });
  const smiGpus = smi.status === 0 ? smi.stdout.trim().split('\n').filter(Boolean) : [];
  const proc = existsSync('/proc/driver/nvidia/gpus');
  const gpu = await detectNvidiaGpu();
  if (!smiGpus.length && !proc) {
    assert.equal(gpu.found, false);
    assert.equal(gpu.via, 'none');
    assert.deepEqual(gpu.names, []);
    const smiWord = (smi.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT' ? 'not found' : '';
    assert.match(gpu.detail, new RegExp(`nvidia-smi: ${smiWord}`));
    assert.match(gpu.detail, /\/proc\/driver\/nvidia: (absent|driver)/);
    // No GPU: auto installs the CPU build from PyTorch's cpu index and says why.
    const plan = planTorch('auto', gpu, [], 'linux');
    assert.equal(plan.build, 'cpu');
    assert.deepEqual(plan.pipArgs, ['--extra-index-url', 'https://download.pytorch.org/whl/cpu']);
    assert.match(plan.reason, /no NVIDIA GPU found/);
  } else {
    assert.equal(gpu.found, true);
    if (smiGpus.length) assert.deepEqual(gpu.names, smiGpus);
  }
});

test('without nvidia-smi, the GPUs and driver come from /proc/driver/nvidia', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'nvidia-proc-'));
  writeFileSync(
    path.join(dir, 'version'),
    'NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.124.06  Release Build  (dvs-builder@U16-I3-B03-4-3)  Tue Mar  4 12:49:19 UTC 2025\nGCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n',
  );
  for (const [bus, model] of [
    ['0000:1b:00.0', 'NVIDIA H200'],
    ['0000:2c:00.0', 'NVIDIA H200'],
  ]) {
    mkdirSync(path.join(dir, 'gpus', bus), { recursive: true });
    writeFileSync(
      path.join(dir, 'gpus', bus, 'information'),
      `Model: \t\t ${model}\nIRQ:   \t\t 17\nBus Type: \t PCIe\n`,
    );
  }
  // nvidia-smi is looked up for real under a name no machine has, so the fallback runs.
  const missing: Exec = (_cmd, args) => detectExec('qat-studio-no-such-nvidia-smi', args);
  const gpu = await detectNvidiaGpu({ exec: missing, procDir: dir });
  assert.equal(gpu.found, true);
  assert.equal(gpu.via, '/proc/driver/nvidia');
  assert.deepEqual(gpu.names, ['NVIDIA H200', 'NVIDIA H200']);
  assert.equal(gpu.driver, '570.124.06');
  assert.equal(gpu.cuda, '12.8');
  assert.equal(planTorch('auto', gpu, [], 'linux').tag, 'cu128');
  // A folder without GPUs is no GPU.
  const empty = mkdtempSync(path.join(tmpdir(), 'nvidia-proc-'));
  const nothing = await detectNvidiaGpu({ exec: missing, procDir: empty });
  assert.equal(nothing.found, false);
  assert.match(nothing.detail, /not found; .*absent/);
});

/** Runs a command for real, as detectNvidiaGpu's default does, reporting ENOENT as "not found". */
function detectExec(cmd: string, args: string[]): ReturnType<Exec> {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  const code = (r.error as NodeJS.ErrnoException | undefined)?.code;
  return Promise.resolve(
    r.status === 0
      ? { ok: true, stdout: r.stdout }
      : { ok: false, stdout: r.stdout ?? '', error: code === 'ENOENT' ? 'not found' : `exit ${r.status}` },
  );
}

test("nvidia-smi's answers: the CSV query, the header's driver and CUDA, and the /proc version line", () => {
  assert.deepEqual(parseQueryGpu('NVIDIA H200, 570.124.06\nNVIDIA H200, 570.124.06\n'), {
    names: ['NVIDIA H200', 'NVIDIA H200'],
    driver: '570.124.06',
  });
  assert.deepEqual(parseQueryGpu(''), { names: [], driver: undefined });
  assert.deepEqual(
    parseSmiHeader(
      '+-----------------------------------------------------------------------------------------+\n| NVIDIA-SMI 570.124.06             Driver Version: 570.124.06     CUDA Version: 12.8     |\n',
    ),
    { driver: '570.124.06', cuda: '12.8' },
  );
  assert.equal(
    parseProcVersion('NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.183.01  Sun May 12 19:39:15 UTC 2024'),
    '535.183.01',
  );
});

test('the driver decides the newest CUDA build it runs; too old a driver has none', () => {
  assert.equal(cudaForDriver('580.82.07'), '13.0');
  assert.equal(cudaForDriver('570.124.06'), '12.8');
  assert.equal(cudaForDriver('535.183.01'), '12.0');
  assert.equal(cudaForDriver('470.256.02'), undefined);
  assert.equal(cudaBuildFor('13.0')?.tag, 'cu130');
  assert.equal(cudaBuildFor('12.9')?.tag, 'cu128');
  assert.equal(cudaBuildFor('12.6')?.tag, 'cu126');
  assert.equal(cudaBuildFor('12.4'), undefined);
  // An unknown CUDA version (a driver too new for our table) takes the newest build.
  assert.equal(cudaBuildFor(undefined)?.tag, CUDA_BUILDS[0].tag);
});

test('the decision: setting, GPU, driver, platform and the user’s own pip arguments', () => {
  const cu = (tag: string) => ['--extra-index-url', `https://download.pytorch.org/whl/${tag}`];
  // auto follows the GPU.
  assert.deepEqual(planTorch('auto', h200('12.8'), [], 'linux').pipArgs, cu('cu128'));
  assert.equal(planTorch('auto', h200('13.0', '580.82.07'), [], 'linux').tag, 'cu130');
  assert.equal(planTorch('auto', h200('12.8'), [], 'win32').build, 'cuda');
  assert.deepEqual(planTorch('auto', none, [], 'linux').pipArgs, cu('cpu'));
  // A GPU whose driver is too old for every CUDA build: CPU, and the reason says to update the driver.
  const old = planTorch('auto', h200('12.2', '535.183.01'), [], 'linux');
  assert.equal(old.build, 'cpu');
  assert.match(old.reason, /update the driver/);
  // Forced either way.
  assert.deepEqual(planTorch('cpu', h200('12.8'), [], 'linux').pipArgs, cu('cpu'));
  const forced = planTorch('cuda', none, [], 'linux');
  assert.equal(forced.build, 'cuda');
  assert.equal(forced.tag, CUDA_BUILDS[0].tag);
  assert.match(forced.reason, /no NVIDIA GPU found here/);
  assert.equal(planTorch('cuda', h200('12.2', '535.183.01'), [], 'linux').tag, CUDA_BUILDS.at(-1)!.tag);
  // The user's pip arguments win: a PyTorch index they name, or an offline install.
  const own = planTorch('cpu', none, ['--index-url', 'https://download.pytorch.org/whl/cu126'], 'linux');
  assert.deepEqual([own.build, own.tag, own.pipArgs], ['cuda', 'cu126', []]);
  const offline = planTorch('auto', h200('12.8'), ['--no-index', '--find-links', '/srv/wheels'], 'linux');
  assert.deepEqual([offline.build, offline.pipArgs], ['pypi', []]);
  // macOS has no CUDA build: PyPI's torch, and a forced cuda says so.
  assert.deepEqual(planTorch('auto', none, [], 'darwin').pipArgs, []);
  assert.match(planTorch('cuda', none, [], 'darwin').reason, /no CUDA build for macOS/);
});
