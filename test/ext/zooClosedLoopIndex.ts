// Extension-host runner for the closed loop on a zoo transformer (see test/e2e/zooClosedLoop.test.ts).
import { runFiles } from './index';

export function run(): Promise<void> {
  return runFiles(['zooClosedLoop.test.js'], 1_200_000);
}
