// Hover in a QAT config: the schema's description of the key, the meaning of an enum value, and for
// observer specs the resolved integer range with torch's scale / zero_point formulas.
import { isMap, isScalar, isSeq, type Node, type Pair, type YAMLMap } from 'yaml';
import type { Hover, Position } from 'vscode-languageserver';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import { VALUE_DOCS } from '../knowledge/docs';
import {
  DEFAULT_DTYPE,
  FLOAT_OBSERVERS,
  effectiveRange,
  isPerChannel,
  isSymmetric,
  UNSIGNED_DTYPES,
} from '../knowledge/quant';
import { scalarValue, stringValue } from '../rules/yaml/context';
import { MODULE_TESTS_PER_HOVER } from '../util/budget';
import { compilePython } from '../util/pyRegex';
import { parsedConfig } from './configDiagnostics';
import type { ModelKnowledge } from './modelIndex';
import { schemaAt } from './schema';

interface Hit {
  path: Array<string | number>;
  pair: Pair<Node, Node>;
  onValue: boolean;
  parents: Node[];
}

function find(
  node: Node | null | undefined,
  offset: number,
  path: Array<string | number>,
  parents: Node[],
): Hit | undefined {
  if (isMap(node)) {
    for (const pair of node.items as Array<Pair<Node, Node>>) {
      const key = isScalar(pair.key) ? String(pair.key.value) : undefined;
      if (key === undefined) continue;
      const k = pair.key.range;
      if (k && offset >= k[0] && offset <= k[1])
        return { path: [...path, key], pair, onValue: false, parents: [...parents, node] };
      const v = pair.value?.range;
      if (v && offset >= v[0] && offset <= v[1]) {
        if (isScalar(pair.value)) return { path: [...path, key], pair, onValue: true, parents: [...parents, node] };
        return find(pair.value, offset, [...path, key], [...parents, node]);
      }
    }
  } else if (isSeq(node)) {
    for (const [i, item] of node.items.entries()) {
      const r = (item as Node).range;
      if (r && offset >= r[0] && offset <= r[1]) return find(item as Node, offset, [...path, i], [...parents, node]);
    }
  }
  return undefined;
}

export function yamlHover(doc: TextDocument, position: Position, model?: ModelKnowledge): Hover | null {
  const parsed = parsedConfig(doc.uri, doc.getText());
  const hit = find(parsed.contents, doc.offsetAt(position), [], []);
  if (!hit) return null;
  const key = String(hit.path[hit.path.length - 1]);
  const schema = schemaAt(hit.path);
  const parts: string[] = [];
  if (hit.onValue && isScalar(hit.pair.value) && VALUE_DOCS[String(hit.pair.value.value)]) {
    parts.push(`**${String(hit.pair.value.value)}**: ${VALUE_DOCS[String(hit.pair.value.value)]}`);
  }
  parts.push(`**${key}**${schema?.description ? `: ${schema.description}` : ''}`);
  if (schema?.enum) parts.push(`One of: ${schema.enum.map((e) => `\`${e}\``).join(', ')}`);
  if (schema?.default !== undefined) parts.push(`Default: \`${JSON.stringify(schema.default)}\``);
  // An observer spec: the hovered `activation:`/`weight:` key, or any key inside one.
  const role = hit.path.find((p) => p === 'activation' || p === 'weight') as 'activation' | 'weight' | undefined;
  const specIndex = role ? hit.path.lastIndexOf(role) : -1;
  const spec = role && (specIndex === hit.path.length - 1 ? hit.pair.value : hit.parents[specIndex + 1]);
  if (role && isMap(spec)) parts.push(observerSummary(spec, role));
  if (key === 'match' && hit.path[0] === 'overrides' && hit.onValue && isScalar(hit.pair.value) && model) {
    parts.push(matchedModules(String(hit.pair.value.value), model));
  }
  const k = hit.pair.key.range!;
  const v = hit.pair.value?.range;
  const [start, end] = hit.onValue && v ? [v[0], v[1]] : [k[0], k[1]];
  return {
    contents: { kind: 'markdown', value: parts.join('\n\n') },
    range: { start: doc.positionAt(start), end: doc.positionAt(end) },
  };
}

/** Which modules of the last exported graph an override's match selects (re.fullmatch, as the kernel does); of a
 * model with more than MODULE_TESTS_PER_HOVER modules, which of the first ones. */
function matchedModules(pattern: string, model: ModelKnowledge): string {
  const compiled = compilePython(pattern);
  if (compiled.ok !== true) return '';
  const scanned = model.modules.slice(0, MODULE_TESTS_PER_HOVER);
  const hits = scanned.filter((m) => compiled.regex.test(m.path));
  const of =
    scanned.length < model.modules.length ? ` of the first ${scanned.length} (of ${model.modules.length})` : '';
  if (hits.length === 0) return `**Matches** no module${of} of the ${model.stage} graph.`;
  const shown = hits
    .slice(0, 12)
    .map((m) => `\`${m.path}\` ${m.type}`)
    .join(', ');
  return `**Matches** ${hits.length} module${hits.length === 1 ? '' : 's'}${of} (and their children): ${shown}${hits.length > 12 ? ', ...' : ''}`;
}

/** The range an observer spec resolves to and how torch computes scale / zero_point from it. */
export function observerSummary(spec: YAMLMap, role: 'activation' | 'weight'): string {
  const observer = stringValue(spec, 'observer');
  const dtype = stringValue(spec, 'dtype') ?? DEFAULT_DTYPE[role];
  if ((observer && FLOAT_OBSERVERS.has(observer)) || dtype === 'float16') {
    return `**Resolved**: ${dtype}, no integer range — values are cast, not quantized.`;
  }
  const qscheme =
    stringValue(spec, 'qscheme') ?? (observer?.includes('PerChannel') ? 'per_channel_affine' : 'per_tensor_affine');
  const num = (k: string) => {
    const v = scalarValue(spec, k);
    return typeof v === 'number' ? v : undefined;
  };
  const reduce = scalarValue(spec, 'reduce_range') === true;
  const range = effectiveRange(dtype, num('quant_min'), num('quant_max'), reduce);
  if (!range) return '';
  const [qmin, qmax] = range;
  const custom = num('quant_min') !== undefined && num('quant_max') !== undefined;
  const lines = [
    `**Resolved**: ${dtype} ${qmin}..${qmax}${reduce ? ' (reduce_range halves the range)' : ''}, ${qscheme}` +
      (isPerChannel(qscheme) ? ` along ch_axis ${num('ch_axis') ?? 0}` : ''),
  ];
  const code: string[] = [];
  if (isSymmetric(qscheme)) {
    const zp = UNSIGNED_DTYPES.has(dtype) ? (custom ? Math.floor((qmin + qmax) / 2) : 128) : 0;
    code.push(`scale = max(-min(x_min, 0), max(x_max, 0)) / ${(qmax - qmin) / 2}`, `zero_point = ${zp}`);
  } else {
    code.push(
      `scale = (max(x_max, 0) - min(x_min, 0)) / ${qmax - qmin}`,
      `zero_point = clamp(${qmin} - round(min(x_min, 0) / scale), ${qmin}, ${qmax})`,
    );
  }
  code.push(`scale = max(scale, eps${num('eps') !== undefined ? ` = ${num('eps')}` : ''})`);
  lines.push('```\n' + code.join('\n') + '\n```');
  lines.push(
    'x_min / x_max: ' +
      (observer?.startsWith('MovingAverage') || observer === 'FusedMovingAvgObsFakeQuantize'
        ? `moving averages (averaging_constant ${num('averaging_constant') ?? 0.01})`
        : observer === 'HistogramObserver'
          ? 'chosen from the histogram to minimise the L2 error'
          : 'running min / max') +
      (isPerChannel(qscheme) ? ', per channel.' : '.'),
  );
  return lines.join('\n\n');
}
