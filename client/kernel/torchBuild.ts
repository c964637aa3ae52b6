// Which torch build QAT: Create Kernel Environment installs: CPU, or CUDA matched to the NVIDIA driver found on
// this machine (nvidia-smi, else /proc/driver/nvidia), or what the qatStudio.kernelEnv.torch setting forces.
// The pinned `torch==X` then comes from the PyTorch index of that build (`X+cpu`, `X+cu128`: a local version
// label sorts above the plain PyPI one, so pip takes it). Free of the vscode module.
import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

export type TorchSetting = 'auto' | 'cpu' | 'cuda';

export interface GpuInfo {
  found: boolean;
  /** How it was found, or what was looked at: `nvidia-smi`, `/proc/driver/nvidia`, or `none`. */
  via: 'nvidia-smi' | '/proc/driver/nvidia' | 'none';
  names: string[];
  driver?: string;
  /** The newest CUDA the driver runs (nvidia-smi's header, else from the driver version). */
  cuda?: string;
  /** What the look-up saw, for the log (e.g. `nvidia-smi: not found; /proc/driver/nvidia: absent`). */
  detail: string;
}

/** PyTorch's index of wheels for one build. */
export const TORCH_INDEX = 'https://download.pytorch.org/whl';

/**
 * The CUDA builds the PyTorch index offers for the pinned torch, newest first, with the CUDA version each needs
 * from the driver. Set with the pin in python-helpers/requirements.txt; `qatStudio.kernelEnv.pipArgs` with an
 * `--index-url`/`--extra-index-url` of download.pytorch.org picks another one.
 */
export const CUDA_BUILDS: ReadonlyArray<{ tag: string; cuda: string }> = [
  { tag: 'cu130', cuda: '13.0' },
  { tag: 'cu128', cuda: '12.8' },
  { tag: 'cu126', cuda: '12.6' },
];

/** Minimum Linux driver for each CUDA release (NVIDIA's CUDA toolkit release notes, table 3). */
const DRIVER_CUDA: ReadonlyArray<[string, string]> = [
  ['580.65.06', '13.0'],
  ['570.26', '12.8'],
  ['560.28.03', '12.6'],
  ['555.42.02', '12.5'],
  ['550.54.14', '12.4'],
  ['525.60.13', '12.0'],
  ['520.61.05', '11.8'],
];

const versionKey = (v: string) => v.split('.').map(Number);
/** a < b for dotted versions. */
function older(a: string, b: string): boolean {
  const x = versionKey(a),
    y = versionKey(b);
  for (let i = 0; i < Math.max(x.length, y.length); i++)
    if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) < (y[i] ?? 0);
  return false;
}

export function cudaForDriver(driver: string): string | undefined {
  return DRIVER_CUDA.find(([min]) => !older(driver, min))?.[1];
}

/** `nvidia-smi --query-gpu=name,driver_version --format=csv,noheader`: one `name, driver` line per GPU. */
export function parseQueryGpu(text: string): { names: string[]; driver?: string } {
  const rows = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean)
    .map((l) => l.split(',').map((c) => c.trim()));
  return { names: rows.map((r) => r[0]).filter(Boolean), driver: rows[0]?.[1] || undefined };
}

/** The header of plain `nvidia-smi`: `| NVIDIA-SMI 570.124.06   Driver Version: 570.124.06   CUDA Version: 12.8 |`. */
export function parseSmiHeader(text: string): { driver?: string; cuda?: string } {
  return {
    driver: /Driver Version:\s*([\d.]+)/.exec(text)?.[1],
    cuda: /CUDA Version:\s*([\d.]+)/.exec(text)?.[1],
  };
}

/** /proc/driver/nvidia/version: `NVRM version: NVIDIA UNIX x86_64 Kernel Module  570.124.06  Thu Feb ...`. */
export function parseProcVersion(text: string): string | undefined {
  return /Kernel Module(?:\s+for\s+\S+)?\s+([\d.]+)/.exec(text)?.[1];
}

/** /proc/driver/nvidia/gpus/<bus>/information: `Model:           NVIDIA H200`. */
export function parseProcGpu(text: string): string | undefined {
  return /^Model:\s*(.+)$/m.exec(text)?.[1].trim();
}

export type Exec = (cmd: string, args: string[]) => Promise<{ ok: boolean; stdout: string; error?: string }>;

const execCommand: Exec = (cmd, args) =>
  new Promise((resolve) => {
    execFile(cmd, args, { timeout: 10_000, windowsHide: true }, (err, stdout) =>
      resolve(
        err
          ? {
              ok: false,
              stdout: String(stdout ?? ''),
              error: (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'not found' : err.message.split('\n')[0],
            }
          : { ok: true, stdout: String(stdout) },
      ),
    );
  });

/** Looks for an NVIDIA GPU: nvidia-smi first (names, driver, CUDA), then the kernel module's /proc files. */
export async function detectNvidiaGpu(o: { exec?: Exec; procDir?: string } = {}): Promise<GpuInfo> {
  const exec = o.exec ?? execCommand;
  const procDir = o.procDir ?? '/proc/driver/nvidia';
  const seen: string[] = [];
  const query = await exec('nvidia-smi', ['--query-gpu=name,driver_version', '--format=csv,noheader']);
  if (query.ok) {
    const { names, driver } = parseQueryGpu(query.stdout);
    if (names.length) {
      const header = await exec('nvidia-smi', []);
      const h = header.ok ? parseSmiHeader(header.stdout) : {};
      const drv = driver ?? h.driver;
      return {
        found: true,
        via: 'nvidia-smi',
        names,
        ...(drv ? { driver: drv } : {}),
        ...((h.cuda ?? (drv && cudaForDriver(drv))) ? { cuda: h.cuda ?? cudaForDriver(drv!) } : {}),
        detail: `nvidia-smi: ${names.join(', ')}${drv ? `, driver ${drv}` : ''}`,
      };
    }
    seen.push('nvidia-smi: no GPU listed');
  } else seen.push(`nvidia-smi: ${query.error ?? 'failed'}`);
  try {
    const driver = parseProcVersion(await readFile(path.join(procDir, 'version'), 'utf8'));
    const names: string[] = [];
    for (const bus of await readdir(path.join(procDir, 'gpus')).catch(() => [] as string[])) {
      const name = parseProcGpu(await readFile(path.join(procDir, 'gpus', bus, 'information'), 'utf8').catch(() => ''));
      names.push(name ?? bus);
    }
    if (names.length)
      return {
        found: true,
        via: '/proc/driver/nvidia',
        names,
        ...(driver ? { driver, ...(cudaForDriver(driver) ? { cuda: cudaForDriver(driver) } : {}) } : {}),
        detail: `${procDir}: ${names.join(', ')}${driver ? `, driver ${driver}` : ''}`,
      };
    seen.push(`${procDir}: driver ${driver ?? '?'} but no GPU listed`);
  } catch {
    seen.push(`${procDir}: absent`);
  }
  return { found: false, via: 'none', names: [], detail: seen.join('; ') };
}

export interface TorchPlan {
  build: 'cpu' | 'cuda' | 'pypi';
  /** The PyTorch index tag (`cpu`, `cu128`), when pip is pointed at one. */
  tag?: string;
  /** pip arguments to add to the user's. */
  pipArgs: string[];
  /** One sentence for the log and the progress title. */
  reason: string;
}

const PYTORCH_INDEX = /download\.pytorch\.org\/whl\/(cpu|cu\d+|rocm[\d.]+|xpu)\b/;

/** The newest CUDA build the driver runs, if any. */
export function cudaBuildFor(cuda: string | undefined): (typeof CUDA_BUILDS)[number] | undefined {
  if (!cuda) return CUDA_BUILDS[0];
  return CUDA_BUILDS.find((b) => !older(cuda, b.cuda));
}

/** Decides the torch build from the setting, the GPU found, the user's pip arguments and the platform. */
export function planTorch(
  setting: TorchSetting,
  gpu: GpuInfo,
  userPipArgs: readonly string[] = [],
  platform: NodeJS.Platform = process.platform,
): TorchPlan {
  const named = userPipArgs.map((a) => PYTORCH_INDEX.exec(a)?.[1]).find(Boolean);
  if (named)
    return {
      build: named === 'cpu' ? 'cpu' : 'cuda',
      tag: named,
      pipArgs: [],
      reason: `torch from the PyTorch index your pip arguments name (${named}).`,
    };
  if (userPipArgs.includes('--no-index'))
    return { build: 'pypi', pipArgs: [], reason: 'torch as your local index has it (--no-index).' };
  if (platform === 'darwin')
    return {
      build: 'pypi',
      pipArgs: [],
      reason:
        setting === 'cuda'
          ? 'PyTorch has no CUDA build for macOS: torch from PyPI (CPU and Metal).'
          : 'torch from PyPI (on macOS it is the CPU and Metal build).',
    };
  const index = (tag: string) => ['--extra-index-url', `${TORCH_INDEX}/${tag}`];
  const cpu = (why: string): TorchPlan => ({
    build: 'cpu',
    tag: 'cpu',
    pipArgs: index('cpu'),
    reason: `CPU torch: ${why}.`,
  });
  if (setting === 'cpu') return cpu('qatStudio.kernelEnv.torch is "cpu"');
  const build = cudaBuildFor(gpu.cuda);
  if (setting === 'cuda') {
    const b = build ?? CUDA_BUILDS[CUDA_BUILDS.length - 1];
    return {
      build: 'cuda',
      tag: b.tag,
      pipArgs: index(b.tag),
      reason: `CUDA ${b.cuda} torch: qatStudio.kernelEnv.torch is "cuda"${
        gpu.found
          ? build
            ? ` (${gpu.names[0]}, driver ${gpu.driver ?? '?'})`
            : ` — the driver (${gpu.driver}, CUDA ${gpu.cuda}) is older than this build needs`
          : ' — no NVIDIA GPU found here'
      }.`,
    };
  }
  if (!gpu.found) return cpu(`no NVIDIA GPU found (${gpu.detail})`);
  if (!build)
    return cpu(
      `${gpu.names[0]} found, but its driver ${gpu.driver ?? '?'} runs CUDA ${gpu.cuda}, older than the oldest CUDA build (${CUDA_BUILDS[CUDA_BUILDS.length - 1].cuda}); update the driver for GPU torch`,
    );
  return {
    build: 'cuda',
    tag: build.tag,
    pipArgs: index(build.tag),
    reason: `CUDA ${build.cuda} torch for ${gpu.names[0]} (driver ${gpu.driver ?? '?'}, CUDA ${gpu.cuda ?? '?'}).`,
  };
}
