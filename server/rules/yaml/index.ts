import { quantRange } from './quantRange';
import type { Finding } from '../types';
import type { YamlRuleContext } from './context';

/** One rule per file; each gets the parsed document and returns findings. */
export const yamlRules: Array<(ctx: YamlRuleContext) => Finding[]> = [quantRange];
