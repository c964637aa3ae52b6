import { trainEvalOrder } from './trainEvalOrder';
import type { Finding } from '../types';
import type { PythonRuleContext } from './syntax';

/** One rule per file; each gets the parsed script and returns findings. */
export const pythonRules: Array<(ctx: PythonRuleContext) => Finding[]> = [trainEvalOrder];
