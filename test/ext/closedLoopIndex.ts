// Extension-host runner for the closed loop on examples/cifar (see test/e2e/closedLoop.test.ts).
import { runFiles } from './index';

export function run(): Promise<void> {
  return runFiles(['closedLoop.test.js'], 900_000);
}
