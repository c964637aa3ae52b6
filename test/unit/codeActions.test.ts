import assert from 'node:assert/strict';
import { test } from 'node:test';
import { codeActionsFor } from '../../server/services/codeActions';
import { diagnosticsFor } from '../../server/services/diagnostics';
import { parseSettings } from '../../server/services/settings';
import { config, pyDoc, yamlDoc } from './helpers/builder';

const everything = (doc: ReturnType<typeof yamlDoc>) => ({
  start: { line: 0, character: 0 },
  end: doc.positionAt(doc.getText().length),
});

test('quick fixes come with their diagnostic, the preferred one first, and an ignore action', () => {
  const doc = yamlDoc(config({ activation: 'dtype: quint8, quant_min: 0, quant_max: 300' }));
  const actions = codeActionsFor(doc, everything(doc));
  assert.deepEqual(
    actions.map((a) => a.title),
    ['Use 255, the largest quint8 value', 'Ignore QCFG001 on this line'],
  );
  assert.equal(actions[0].isPreferred, true);
  assert.equal(actions[0].diagnostics![0].code, 'QCFG001');
  const edit = actions[0].edit!.changes![doc.uri][0];
  assert.equal(edit.newText, '255');
  assert.equal(actions[1].edit!.changes![doc.uri][0].newText, '  # qat: ignore[QCFG001]');
});

test('the ignore action suppresses the diagnostic; a second code joins the same comment', () => {
  const src = 'import torch.quantization as tq\n';
  const doc = pyDoc(src);
  const ignore = codeActionsFor(doc, everything(doc)).find((a) => a.title === 'Ignore QAT003 on this line')!;
  const edited = src.replace('\n', ignore.edit!.changes![doc.uri][0].newText + '\n');
  assert.deepEqual(diagnosticsFor(pyDoc(edited)), []);
  const both = pyDoc('x = 1  # qat: ignore[QAT001]\n');
  assert.deepEqual(codeActionsFor(both, everything(both)), []);
});

test('actions only for findings in the requested range', () => {
  const doc = yamlDoc(config({ activation: 'quant_max: 300' }));
  assert.deepEqual(codeActionsFor(doc, { start: { line: 0, character: 0 }, end: { line: 0, character: 3 } }), []);
});

test('severity settings change or switch off diagnostics per code', () => {
  const doc = yamlDoc(config({ activation: 'quant_max: 300', weight: 'eps: 0' }));
  assert.deepEqual(
    diagnosticsFor(doc).map((d) => [d.code, d.severity]),
    [
      ['QCFG001', 1],
      ['QCFG008', 1],
    ],
  );
  const settings = parseSettings({
    diagnostics: { severity: { QCFG001: 'off', QCFG008: 'hint', QCFG002: 'nonsense' } },
  });
  assert.deepEqual(settings.severity, { QCFG001: 'off', QCFG008: 'hint' });
  assert.deepEqual(
    diagnosticsFor(doc, settings).map((d) => [d.code, d.severity]),
    [['QCFG008', 4]],
  );
  assert.deepEqual(
    codeActionsFor(doc, everything(doc), settings).map((a) => a.diagnostics![0].code),
    ['QCFG008', 'QCFG008'],
  );
  const none = { severity: {}, allowPathsOutsideWorkspace: false };
  assert.deepEqual(parseSettings(undefined), none);
  assert.deepEqual(parseSettings({ diagnostics: 'x' }), none);
  assert.deepEqual(parseSettings({ kernel: { allowPathsOutsideWorkspace: 'yes' } }), none, 'only true turns it on');
  assert.equal(parseSettings({ kernel: { allowPathsOutsideWorkspace: true } }).allowPathsOutsideWorkspace, true);
});
