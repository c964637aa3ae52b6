import { eagerMigration } from './eagerMigration';
import { exportBatchOne } from './exportBatchOne';
import { float16FakeQuant } from './float16FakeQuant';
import { fuseMode } from './fuseMode';
import { legacyNamespace } from './legacyNamespace';
import { onnxOpset } from './onnxOpset';
import { qconfigAfterPrepare } from './qconfigAfterPrepare';
import { quantRangeCode } from './quantRangeCode';
import { reusedModule } from './reusedModule';
import { saveConverted } from './saveConverted';
import type { PythonRuleContext } from './syntax';
import { trainEvalOrder } from './trainEvalOrder';
import { tvmRelay } from './tvmRelay';
import type { Finding } from '../types';

/** One rule per file; each gets the parsed script and returns findings. */
export const pythonRules: Array<(ctx: PythonRuleContext) => Finding[]> = [
  trainEvalOrder,
  legacyNamespace,
  eagerMigration,
  tvmRelay,
  float16FakeQuant,
  quantRangeCode,
  onnxOpset,
  fuseMode,
  reusedModule,
  exportBatchOne,
  saveConverted,
  qconfigAfterPrepare,
];
