// Extension-host runner for the closed loop on a language model (see test/e2e/lmClosedLoop.test.ts).
import { runFiles } from './index';

export function run(): Promise<void> {
  return runFiles(['lmClosedLoop.test.js'], 900_000);
}
