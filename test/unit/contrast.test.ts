// Label colours on coloured boxes: the theme's foreground where it reads (4.5:1), else its background, else
// black or white; translucent fills count as painted over the editor background.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { contrast, parseRgb, readableOn } from '../../webview/view/contrast';

test('WCAG contrast of known pairs', () => {
  assert.equal(contrast(parseRgb('rgb(0, 0, 0)')!, parseRgb('rgb(255, 255, 255)')!).toFixed(1), '21.0');
  assert.equal(contrast(parseRgb('rgb(118, 118, 118)')!, parseRgb('rgb(255, 255, 255)')!).toFixed(2), '4.54');
  assert.deepEqual(parseRgb('rgba(234, 92, 0, 0.33)'), [234, 92, 0, 0.33]);
  assert.equal(parseRgb('color(srgb 1 0 0)'), undefined);
});

test('labels on Light Modern, Dark Modern and High Contrast fills', () => {
  const light = { fg: 'rgb(51, 51, 51)', bg: 'rgb(255, 255, 255)' };
  const dark = { fg: 'rgb(204, 204, 204)', bg: 'rgb(31, 31, 31)' };
  const hc = { fg: 'rgb(255, 255, 255)', bg: 'rgb(0, 0, 0)' };
  const on = (fill: string, t: { fg: string; bg: string }) => readableOn(fill, [t.fg, t.bg], t.bg);
  // Widget background: the foreground reads.
  assert.equal(on('rgb(243, 243, 243)', light), light.fg);
  assert.equal(on('rgb(32, 32, 32)', dark), dark.fg);
  // charts.purple: #652d90 (light) takes white, #b180d7 (dark, HC) takes the dark background / black.
  assert.equal(on('rgb(101, 45, 144)', light), light.bg);
  assert.equal(on('rgb(177, 128, 215)', dark), dark.bg);
  assert.equal(on('rgb(177, 128, 215)', hc), hc.bg);
  // Light's charts.yellow #bf8803: neither #333 (4.2:1) nor white (2.9:1) reads; black does (7:1).
  assert.equal(on('rgb(191, 136, 3)', light), 'rgb(0, 0, 0)');
  // Translucent charts.orange over the dark background is dark: the light foreground reads.
  assert.equal(on('rgba(234, 92, 0, 0.33)', dark), dark.fg);
});
