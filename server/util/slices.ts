// Long analyses are written as step generators (a `yield` between units of work) so one home decides whether
// they run at once (runAll) or in slices that leave the event loop to other requests (runSliced).

/** The next turn of the event loop: queued requests are read and answered before it resolves. */
export const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Runs every step now. */
export function runAll<T>(steps: Iterator<void, T>): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * Runs the steps in slices of about `sliceMs`, yielding to the event loop between them; undefined as soon as
 * `stale()` says the result is no longer wanted (the rest of the steps never run).
 */
export async function runSliced<T>(
  steps: Iterator<void, T>,
  stale: () => boolean,
  sliceMs = 20,
): Promise<T | undefined> {
  for (;;) {
    const until = performance.now() + sliceMs;
    let step = steps.next();
    while (!step.done && performance.now() < until) step = steps.next();
    if (step.done) return step.value;
    await nextTurn();
    if (stale()) return undefined;
  }
}
