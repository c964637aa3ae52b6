// The train task's summary of observer drift: the layers whose scale moved most during QAT.
import type { QatTrainResult } from '../../protocol/kernel';

/** The layers whose observer scale moved most during QAT (first to last sampled step). */
export function driftLines(drift: QatTrainResult['drift'], top = 3): string[] {
  if (!drift) return [];
  const moved = drift.layers
    .map((l) => {
      const first = l.scaleMean[0];
      const last = l.scaleMean[l.scaleMean.length - 1];
      return { l, first, last, rel: first ? (last - first) / first : 0 };
    })
    .sort((a, b) => Math.abs(b.rel) - Math.abs(a.rel))
    .slice(0, top);
  return [
    `observer drift over steps ${drift.steps[0]}-${drift.steps[drift.steps.length - 1]} (mean scale, first -> last), largest:`,
    ...moved.map(
      ({ l, first, last, rel }) =>
        `  ${`${l.module} ${l.role}`.padEnd(24)} ${first.toPrecision(3)} -> ${last.toPrecision(3)} (${rel >= 0 ? '+' : ''}${(rel * 100).toFixed(1)} %)`,
    ),
  ];
}
