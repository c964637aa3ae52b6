// The small charts' axes (common/axes.ts): round ticks and labels, and a drift range in which a change of a
// few percent stays a few percent of the height.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MIN_RELATIVE_SPAN, driftDomain, niceTicks, tickLabel } from '../../common/axes';

test('ticks are round values inside the range, 1, 2 or 5 times a power of ten apart', () => {
  assert.deepEqual(niceTicks(-0.43, 0.51, 4), { ticks: [-0.4, -0.2, 0, 0.2, 0.4], step: 0.2 });
  assert.deepEqual(niceTicks(0, 1234, 2), { ticks: [0, 500, 1000], step: 500 });
  assert.deepEqual(niceTicks(0.0412, 0.0466, 3).ticks, [0.042, 0.044, 0.046]);
  assert.deepEqual(niceTicks(3, 3), { ticks: [3], step: 0 });
  for (const [lo, hi] of [
    [-1.7, 2.3],
    [1e-5, 9e-5],
    [17, 4000],
  ]) {
    const { ticks, step } = niceTicks(lo, hi, 4);
    assert.ok(ticks.length >= 2 && ticks.length <= 9, `${lo}..${hi}: ${ticks}`);
    assert.ok(
      ticks.every((t) => t >= lo - 1e-12 && t <= hi + 1e-12),
      `${lo}..${hi}: ${ticks}`,
    );
    assert.ok(/^[125]$/.test(String(Number((step / 10 ** Math.floor(Math.log10(step))).toFixed(6)))), String(step));
  }
});

test('tick labels have the decimals their step needs and no float noise', () => {
  assert.equal(tickLabel(0.2 + 0.1, 0.1), '0.3');
  assert.equal(tickLabel(0.044, 0.002), '0.044');
  assert.equal(tickLabel(-0.4, 0.2), '-0.4');
  assert.equal(tickLabel(0, 0.2), '0');
  assert.equal(tickLabel(2000, 1000), '2k');
  assert.equal(tickLabel(1500, 500), '1.5k');
  assert.equal(tickLabel(40, 20), '40');
  assert.equal(tickLabel(0.00004, 0.00002), '4e-5');
});

test('the drift range: a 1.2 % change fills about a tenth of the height, a large one all of it', () => {
  const first = 0.05;
  const small = [first, 0.0503, 0.0506];
  const [lo, hi] = driftDomain(small, first);
  const height = (0.0506 - 0.05) / (hi - lo);
  assert.ok(height < 0.15, `a 1.2 % change takes ${(height * 100).toFixed(0)} % of the height`);
  assert.ok(hi - lo >= first * MIN_RELATIVE_SPAN);
  assert.ok(lo <= first && hi >= 0.0506);
  // A 60 % change: the range is the data's, with a little room.
  const [a, b] = driftDomain([0.05, 0.065, 0.08], 0.05);
  assert.ok((0.08 - 0.05) / (b - a) > 0.85);
  // The first value (the no-change baseline) is always inside, even when every later value is above it.
  const [c] = driftDomain([0.09, 0.1], 0.05);
  assert.ok(c <= 0.05);
  // A constant zero series still has a range.
  const [z0, z1] = driftDomain([0, 0], 0);
  assert.ok(z1 > z0);
});
