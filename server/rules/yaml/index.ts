import { averagingConstant } from './averagingConstant';
import { chAxis } from './chAxis';
import type { YamlRuleContext } from './context';
import { eps } from './eps';
import { float16FakeQuant } from './float16FakeQuant';
import { observerFlow } from './observerFlow';
import { overrideMatch } from './overrideMatch';
import { overrideShadowed } from './overrideShadowed';
import { overrideUnmatched } from './overrideUnmatched';
import { precisionSupport } from './precisionSupport';
import { qschemeObserver } from './qschemeObserver';
import { quantRange } from './quantRange';
import { reduceRange } from './reduceRange';
import { symmetricUnsigned } from './symmetricUnsigned';
import type { Finding } from '../types';

/** One rule per file; each gets the parsed document and returns findings. QCFG002/003 come from the schema. */
export const yamlRules: Array<(ctx: YamlRuleContext) => Finding[]> = [
  quantRange,
  qschemeObserver,
  chAxis,
  symmetricUnsigned,
  averagingConstant,
  eps,
  observerFlow,
  reduceRange,
  float16FakeQuant,
  precisionSupport,
  overrideMatch,
  overrideShadowed,
  overrideUnmatched,
];
