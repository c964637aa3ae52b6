import type { DocumentRule, PythonRule } from '../../analysis/document';
import { eagerMigration, firstMigrationHint } from './eagerMigration';
import { exportBatchOne } from './exportBatchOne';
import { float16FakeQuant } from './float16FakeQuant';
import { fuseMode } from './fuseMode';
import { legacyNamespace } from './legacyNamespace';
import { onnxOpset } from './onnxOpset';
import { qatConvertMismatch } from './qatConvertMismatch';
import { qatGroupSize } from './qatGroupSize';
import { qatLegacyApi } from './qatLegacyApi';
import { qatNeverConverted } from './qatNeverConverted';
import { qatNoLinear } from './qatNoLinear';
import { qconfigAfterPrepare } from './qconfigAfterPrepare';
import { quantRangeCode } from './quantRangeCode';
import { removedPt2e } from './removedPt2e';
import { reusedModule } from './reusedModule';
import { saveConverted } from './saveConverted';
import { trainEvalOrder } from './trainEvalOrder';
import { tvmRelay } from './tvmRelay';

/** One rule per file; each reads the shared walk of a unit (analysis/walker.ts) and returns findings. */
export const pythonRules: PythonRule[] = [
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
  removedPt2e,
  qatConvertMismatch,
  qatNeverConverted,
  qatGroupSize,
  qatNoLinear,
  qatLegacyApi,
];

/** Rules over the whole document's findings. */
export const pythonDocumentRules: DocumentRule[] = [firstMigrationHint];
