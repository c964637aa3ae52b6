import { averagingConstant } from './averagingConstant';
import { chAxis } from './chAxis';
import type { YamlRuleContext } from './context';
import { eps } from './eps';
import { float16FakeQuant } from './float16FakeQuant';
import { observerFlow } from './observerFlow';
import { overrideMatch } from './overrideMatch';
import { overrideShadowed } from './overrideShadowed';
import { overrideUnmatched } from './overrideUnmatched';
import { pathOutside } from './pathOutside';
import { precisionSupport } from './precisionSupport';
import { qschemeObserver } from './qschemeObserver';
import { quantRange } from './quantRange';
import { reduceRange } from './reduceRange';
import { symmetricUnsigned } from './symmetricUnsigned';
import { torchaoGroupSize } from './torchaoGroupSize';
import type { Finding } from '../types';

/**
 * One rule per file; each gets the parsed document and returns findings, or, when its work grows with the
 * number of overrides, is a step generator returning them (it yields between overrides, so the server can
 * answer other requests meanwhile). QCFG002/003 come from the schema.
 */
export type YamlRule = (ctx: YamlRuleContext) => Finding[] | Generator<void, Finding[]>;

export const yamlRules: YamlRule[] = [
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
  pathOutside,
  torchaoGroupSize,
];
