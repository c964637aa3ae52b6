// Hover in a Python QAT script: on a module attribute (`self.conv1`, `model.fc`) the effective qconfig the
// config beside the script gives that module; on `qconfig` the config's global qconfig. Module paths come
// from the kernel's exported graph when there is one (nested modules resolve), else the attribute name.
import type { Hover, Position } from 'vscode-languageserver';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import { DEFAULT_DTYPE, FLOAT_OBSERVERS, effectiveRange, isPerChannel } from '../knowledge/quant';
import { assignsSelf } from '../analysis/selfAttributes';
import { parsePython } from './pythonDiagnostics';
import { pythonBudget } from '../util/budget';
import { modulePathsFor } from './modelIndex';
import { configForScript, effectiveQConfig, type OpenText, type ScriptConfig } from './scriptConfig';
import path from 'node:path';

export function pythonHover(doc: TextDocument, position: Position, open: OpenText = () => undefined): Hover | null {
  const text = doc.getText();
  const offset = doc.offsetAt(position);
  const analysed = pythonBudget(text).text;
  if (offset > analysed.length) return null;
  const node = parsePython(analysed, doc.uri).resolveInner(offset, 1);
  if (node.name !== 'PropertyName' || node.parent?.name !== 'MemberExpression') return null;
  const attribute = text.slice(node.from, node.to);
  const config = configForScript(doc.uri, open);
  if (!config) return null;
  const range = { start: doc.positionAt(node.from), end: doc.positionAt(node.to) };
  const header = `**QAT Studio** · ${path.basename(config.file)}`;
  if (attribute === 'qconfig') {
    const global = effectiveQConfig({ ...config.data, overrides: [] }, '');
    const n = config.data.overrides?.length ?? 0;
    const body = [header, '**Global qconfig**', ...specLines(global.activation, global.weight)];
    if (n) body.push(`${n} override${n === 1 ? '' : 's'} change it for matching modules.`);
    return { contents: { kind: 'markdown', value: body.join('\n\n') }, range };
  }
  const object = node.parent.firstChild ? text.slice(node.parent.firstChild.from, node.parent.firstChild.to) : '';
  const paths = modulePathsFor(attribute, config.model);
  // Without a graph, only attributes the script itself assigns on self are taken for modules.
  if (paths.length === 0 || (!config.model && !(object === 'self' && assignsSelf(text, attribute)))) return null;
  const sections = paths.slice(0, 4).map((p) => moduleSection(config, p));
  if (paths.length > 4) sections.push(`... and ${paths.length - 4} more modules named \`${attribute}\`.`);
  if (!config.model)
    sections.push(
      '_Module path taken from the attribute name; run **QAT: Show Model Graph** to resolve nested modules._',
    );
  return { contents: { kind: 'markdown', value: [header, ...sections].join('\n\n') }, range };
}

function moduleSection(config: ScriptConfig, modulePath: string): string {
  const eff = effectiveQConfig(config.data, modulePath);
  const type = config.model?.modules.find((m) => m.path === modulePath)?.type;
  const by = eff.override ? `override ${eff.override.index} (match \`${eff.override.match}\`)` : 'the global qconfig';
  const lines = [`\`${modulePath}\`${type ? ` (${type})` : ''}: **${eff.precision}**, from ${by}`];
  if (eff.precision === 'int8') lines.push(...specLines(eff.activation, eff.weight));
  else lines.push(`Kept in ${eff.precision}: no observers, no fake quantization.`);
  return lines.join('\n\n');
}

function specLines(activation?: Record<string, unknown>, weight?: Record<string, unknown>): string[] {
  return [
    ['activation', activation],
    ['weight', weight],
  ].map(([role, spec]) => `- ${role}: ${specLine(role as string, (spec ?? {}) as Record<string, unknown>)}`);
}

function specLine(role: string, spec: Record<string, unknown>): string {
  const str = (k: string) => (typeof spec[k] === 'string' ? (spec[k] as string) : undefined);
  const num = (k: string) => (typeof spec[k] === 'number' ? (spec[k] as number) : undefined);
  const observer = str('observer') ?? 'default observer';
  const dtype = str('dtype') ?? DEFAULT_DTYPE[role];
  if (FLOAT_OBSERVERS.has(observer) || dtype === 'float16') return `${observer}, ${dtype} (cast, not quantized)`;
  const qscheme = str('qscheme') ?? (observer.includes('PerChannel') ? 'per_channel_affine' : 'per_tensor_affine');
  const range = effectiveRange(dtype, num('quant_min'), num('quant_max'), spec.reduce_range === true);
  return (
    `${observer}, ${dtype}${range ? ` ${range[0]}..${range[1]}` : ''}, ${qscheme}` +
    (isPerChannel(qscheme) ? ` (ch_axis ${num('ch_axis') ?? 0})` : '')
  );
}
