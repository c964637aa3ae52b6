// Memory of a whole process tree on Linux (a browser with its renderer, GPU and utility processes), sampled
// from /proc: Pss from smaps_rollup (shared pages split between the processes that map them), else VmRSS.
// Files are read asynchronously, so the kernel's walk of a multi-GB renderer's pages (a few hundred ms)
// runs on libuv's thread pool, not on the event loop that drives the page under test.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Browser } from 'playwright-core';

const readText = (file: string) => readFile(file, 'utf8').catch(() => undefined);

/** The pid and every descendant of it, found through the parent pid in /proc/<pid>/stat. */
export async function processTree(rootPid: number): Promise<number[]> {
  const pids = (await readdir('/proc')).filter((name) => /^\d+$/.test(name)).map(Number);
  const stats = await Promise.all(pids.map((pid) => readText(`/proc/${pid}/stat`)));
  const children = new Map<number, number[]>();
  pids.forEach((pid, i) => {
    const stat = stats[i];
    if (!stat) return;
    // The command name, in parentheses, may itself hold spaces or parentheses: fields follow the last ')'.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    const list = children.get(ppid);
    if (list) list.push(pid);
    else children.set(ppid, [pid]);
  });
  const tree: number[] = [];
  const queue = [rootPid];
  while (queue.length) {
    const pid = queue.shift()!;
    tree.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return tree;
}

/** Proportional set size of one process in bytes (resident size where smaps_rollup is unreadable); 0 once it is gone. */
export async function processBytes(pid: number): Promise<number> {
  const pss = /^Pss:\s+(\d+) kB/m.exec((await readText(`/proc/${pid}/smaps_rollup`)) ?? '');
  if (pss) return Number(pss[1]) * 1024;
  const rss = /^VmRSS:\s+(\d+) kB/m.exec((await readText(`/proc/${pid}/status`)) ?? '');
  return rss ? Number(rss[1]) * 1024 : 0;
}

export async function treeBytes(rootPid: number): Promise<number> {
  const sizes = await Promise.all((await processTree(rootPid)).map(processBytes));
  return sizes.reduce((sum, n) => sum + n, 0);
}

/**
 * A Chromium process's role from its command line: the value of --type= (renderer, gpu-process, zygote,
 * utility, ...), with --utility-sub-type= appended for a utility process (utility:network.mojom.NetworkService);
 * "browser" for a Chromium process without --type, else the executable's name. Chromium's child processes
 * rewrite their command line as one space-separated string, so both NULs and spaces separate arguments.
 */
export async function processType(pid: number): Promise<string> {
  const args = ((await readText(`/proc/${pid}/cmdline`)) ?? '').split(/[\0 ]/);
  const flag = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const type = flag('type');
  if (type) return type === 'utility' && flag('utility-sub-type') ? `utility:${flag('utility-sub-type')}` : type;
  const exe = path.basename(args[0] ?? '');
  return /chrom/i.test(exe) ? 'browser' : exe || '?';
}

export interface ProcessMemory {
  pid: number;
  type: string;
  bytes: number;
}

/** Every process of the tree with its role and Pss (as processBytes measures it). */
export async function treeBreakdown(rootPid: number): Promise<ProcessMemory[]> {
  const pids = await processTree(rootPid);
  const [types, sizes] = await Promise.all([Promise.all(pids.map(processType)), Promise.all(pids.map(processBytes))]);
  return pids.map((pid, i) => ({ pid, type: types[i], bytes: sizes[i] })).filter((p) => p.bytes > 0);
}

/** "renderer 210, gpu-process 95, ..." in MiB, summed by role, largest first. */
export function formatBreakdown(processes: ProcessMemory[]): string {
  const byType = new Map<string, { bytes: number; count: number }>();
  for (const p of processes) {
    const t = byType.get(p.type) ?? { bytes: 0, count: 0 };
    t.bytes += p.bytes;
    t.count += 1;
    byType.set(p.type, t);
  }
  return [...byType]
    .sort((a, b) => b[1].bytes - a[1].bytes)
    .map(([type, t]) => `${type}${t.count > 1 ? ` ×${t.count}` : ''} ${(t.bytes / 2 ** 20).toFixed(0)}`)
    .join(', ');
}

export interface MemorySampler {
  /** Largest tree total seen so far, in MiB. */
  peakMB(): number;
  /** The processes of the sample that set the peak, when sampling with a breakdown; else empty. */
  peakBreakdown(): ProcessMemory[];
  /** Waits for the sample in flight, takes a last one, stops sampling and returns the peak in MiB. */
  stop(): Promise<number>;
}

/**
 * Samples the tree under rootPid every intervalMs until stopped, keeping the largest total. A sample that
 * takes long (a tree of many GB) stretches the wait after it to four times its duration, which keeps the
 * sampling itself under a fifth of one core.
 */
export function sampleTreeMemory(rootPid: number, intervalMs = 200, breakdown = false): MemorySampler {
  let peak = 0;
  let peakProcesses: ProcessMemory[] = [];
  let stopped = false;
  let wake: (() => void) | undefined;
  let timer: NodeJS.Timeout | undefined;
  const sample = async () => {
    if (!breakdown) {
      peak = Math.max(peak, await treeBytes(rootPid));
      return;
    }
    const processes = await treeBreakdown(rootPid);
    const total = processes.reduce((sum, p) => sum + p.bytes, 0);
    if (total > peak) {
      peak = total;
      peakProcesses = processes;
    }
  };
  const loop = (async () => {
    while (!stopped) {
      const started = Date.now();
      await sample();
      const took = Date.now() - started;
      if (stopped) break;
      await new Promise<void>((resolve) => {
        wake = resolve;
        timer = setTimeout(resolve, Math.max(intervalMs - took, 4 * took));
      });
    }
  })();
  let done: Promise<number> | undefined;
  return {
    peakMB: () => peak / 2 ** 20,
    peakBreakdown: () => peakProcesses,
    stop: () => {
      done ??= (async () => {
        stopped = true;
        clearTimeout(timer);
        wake?.();
        await loop;
        await sample();
        return peak / 2 ** 20;
      })();
      return done;
    },
  };
}

/** Pid of a launched Chromium's browser process, as the browser itself reports it over the DevTools protocol. */
export async function browserPid(browser: Browser): Promise<number> {
  const cdp = await browser.newBrowserCDPSession();
  try {
    const { processInfo } = await cdp.send('SystemInfo.getProcessInfo');
    const main = processInfo.find((p) => p.type === 'browser');
    if (!main) throw new Error('Chromium reported no browser process');
    return main.id;
  } finally {
    await cdp.detach();
  }
}

/** Samples the tree of a launched Chromium, from its browser process down, with a per-process breakdown if asked. */
export async function sampleBrowserMemory(
  browser: Browser,
  intervalMs?: number,
  breakdown = false,
): Promise<MemorySampler> {
  return sampleTreeMemory(await browserPid(browser), intervalMs, breakdown);
}
