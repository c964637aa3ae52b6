// User settings the services honour (qatStudio.* in VS Code), parsed defensively: a bad value is ignored.
import type { Severity } from '../rules/types';

export type SeverityOverride = Severity | 'off';

export interface Settings {
  /** Per-code severity, e.g. { QAT004: 'off', QCFG010: 'warning' }. */
  severity: Record<string, SeverityOverride>;
  /** qatStudio.kernel.allowPathsOutsideWorkspace (machine scope: a workspace cannot turn it on). */
  allowPathsOutsideWorkspace: boolean;
}

export const defaultSettings: Settings = { severity: {}, allowPathsOutsideWorkspace: false };

const LEVELS = new Set<string>(['error', 'warning', 'information', 'hint', 'off']);

/** Accepts the `qatStudio` section as the client sends it; anything malformed falls back to the defaults. */
export function parseSettings(section: unknown): Settings {
  const severity: Record<string, SeverityOverride> = {};
  const raw = (section as { diagnostics?: { severity?: unknown } } | null)?.diagnostics?.severity;
  if (raw && typeof raw === 'object') {
    for (const [code, level] of Object.entries(raw)) {
      if (typeof level === 'string' && LEVELS.has(level)) severity[code] = level as SeverityOverride;
    }
  }
  const kernel = (section as { kernel?: { allowPathsOutsideWorkspace?: unknown } } | null)?.kernel;
  return { severity, allowPathsOutsideWorkspace: kernel?.allowPathsOutsideWorkspace === true };
}
