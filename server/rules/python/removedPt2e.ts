// QAT014: PT2E APIs that torch 2.13 no longer has (checked by test/rule-claims): the torch.ao.quantization
// PT2E modules moved to torchao.quantization.pt2e (ModuleNotFoundError), move_exported_model_to_eval/train
// left torch.ao.quantization (ImportError / AttributeError), torch._export.capture_pre_autograd_graph and
// torch.export.export_for_training are gone: torch.export.export(model, args) replaces both (.module() for
// the graph module capture_pre_autograd_graph returned). Old scripts die on their first line; this says why.
// Imports inside try/except ImportError or a version check are fallbacks and are left alone.
import type { RuleInput } from '../../analysis/document';
import type { StoredEdit, StoredFinding } from '../../analysis/findings';
import { canonical } from '../../analysis/names';
import moduleExports from '../../knowledge/module-exports.json';
import pt2eMoves from '../../knowledge/pt2e-moves.json';
import { ensureImported, importEdit, importsOf, type Fix } from './helpers';

const XNNPACK =
  'XNNPACKQuantizer moved to ExecuTorch (executorch.backends.xnnpack.quantizer.xnnpack_quantizer, as the deprecation note of ' +
  "torchao's private copy says); for x86 CPUs torchao has X86InductorQuantizer in torchao.quantization.pt2e.quantizer.x86_inductor_quantizer.";

const moves = pt2eMoves as unknown as {
  modules: Array<[string, string | null]>;
  torchaoModules: string[];
  names: Record<string, string>;
};
/** Removed module prefixes -> where they live now (null: no torchao equivalent). */
const MODULES = moves.modules;
/** Submodules torchao 0.18 has under the new prefixes (a fix is offered only for these). */
const TORCHAO_PT2E_MODULES = new Set(moves.torchaoModules);
const NAMES = moves.names;
/** Public names of each torchao PT2E module (generated from the pinned torchao). */
const ATTRIBUTES = new Map(
  Object.entries((moduleExports as { attributes: Record<string, string[]> }).attributes).map(([m, n]) => [
    m,
    new Set(n),
  ]),
);
const CAPTURE = 'torch._export.capture_pre_autograd_graph';
const REMOVED_PREFIX = /^torch\.(ao\.)?quantization\.(quantize_pt2e|quantizer|pt2e|move_exported|allow_exported)/;
const FOR_TRAINING = 'torch.export.export_for_training';

function movedModule(module: string): { old: string; now: string | null; full: string | null } | undefined {
  const m = canonical(module)!;
  for (const [old, now] of MODULES) {
    if (m !== old && !m.startsWith(old + '.')) continue;
    const full = now ? now + m.slice(old.length) : null;
    return { old: m, now, full: full && TORCHAO_PT2E_MODULES.has(full) ? full : null };
  }
  return undefined;
}

function error(start: number, end: number, message: string, fixes?: Fix[]): StoredFinding {
  return { code: 'QAT014', severity: 'error', start, end, message, fixes };
}

export function removedPt2e(input: RuleInput): StoredFinding[] {
  const findings: StoredFinding[] = [];
  const torchBound = input.ctx.module.names.lookup('torch') === 'torch';
  for (const s of importsOf(input)) {
    if (s.guarded) continue;
    const moved = movedModule(s.module);
    if (moved) {
      // a fix only when the new module has every name imported from the old one
      const names = s.names.filter((n) => n.name !== '*').map((n) => n.name);
      const have = moved.full ? ATTRIBUTES.get(moved.full) : undefined;
      const missing = have ? names.filter((n) => !have.has(n)) : [];
      const xnnpack = missing.some((n) => /XNNPACK|symmetric_quantization_config/.test(n));
      const fixes =
        moved.full && !missing.length
          ? [
              {
                title: `Import from ${moved.full}`,
                edits: [{ start: s.moduleFrom, end: s.moduleTo, newText: moved.full }],
                preferred: true,
              },
            ]
          : undefined;
      const instead =
        !moved.now || xnnpack
          ? XNNPACK
          : missing.length
            ? `Use ${moved.full}; it has no ${missing.join(', ')}.`
            : `Use ${moved.full ?? moved.now}.`;
      findings.push(
        error(
          s.moduleFrom,
          s.moduleTo,
          `${moved.old} no longer exists in torch 2.13 (ModuleNotFoundError): PT2E quantization moved to torchao. ${instead}`,
          fixes,
        ),
      );
      continue;
    }
    if (!s.isFrom) continue;
    const module = canonical(s.module);
    for (const n of s.names) {
      const q = `${module}.${n.name}`;
      const home = NAMES[q];
      if (!home && q !== CAPTURE && q !== FOR_TRAINING) continue;
      const rest = s.names.filter((x) => x !== n);
      const removeName: StoredEdit =
        rest.length === 0
          ? {
              start: s.from,
              // a statement that goes away takes its line with it
              end: !home && torchBound && input.text[s.to] === '\n' ? s.to + 1 : s.to,
              newText: home ? `from ${home} import ${n.name}` : torchBound ? '' : 'import torch',
            }
          : {
              start: n.from,
              end: n.to,
              newText: '',
            };
      // dropping a name from a list also drops its comma
      if (rest.length) {
        const after = input.text.slice(n.to).match(/^\s*,\s*/);
        const before = input.text.slice(0, n.from).match(/,\s*$/);
        if (after) removeName.end = n.to + after[0].length;
        else if (before) removeName.start = n.from - before[0].length;
      }
      const edits: StoredEdit[] = [removeName];
      if (rest.length && home) edits.push(importEdit(input, `from ${home} import ${n.name}`));
      if (rest.length && !home && !torchBound) edits.push(importEdit(input, 'import torch'));
      const message = home
        ? `${q} no longer exists in torch 2.13 (ImportError): it moved to ${home}.${n.name}.`
        : q === CAPTURE
          ? `${CAPTURE} no longer exists in torch 2.13 (ImportError): use torch.export.export(model, args).module(), which gives the same kind of graph module.`
          : `${FOR_TRAINING} no longer exists in torch 2.13 (ImportError): torch.export.export(model, args) is the same export now.`;
      findings.push(
        error(n.from, n.to, message, [
          { title: home ? `Import it from ${home}` : 'Use torch.export.export', edits, preferred: true },
        ]),
      );
    }
  }
  // In code: torch.ao.quantization.quantize_pt2e.prepare_pt2e(...), tq.move_exported_model_to_eval(m), ...
  const reported = new Set<number>();
  for (const ref of input.facts.refs) {
    if (ref.guarded || !ref.qualified.some((q) => q && REMOVED_PREFIX.test(q))) continue;
    for (let i = 1; i < ref.parts.length; i++) {
      const q = canonical(ref.qualified[i]);
      const head = canonical(ref.qualified[i - 1]);
      if (!q || (head && (movedModule(head) || NAMES[head]))) continue;
      const moved = movedModule(q);
      const spelled = ref.parts.slice(0, i + 1).join('.');
      if (moved && movedModule(q)?.old === q) {
        const fixes: Fix[] | undefined = moved.full
          ? [
              {
                title: `Use ${moved.full}`,
                edits: [
                  { start: ref.from, end: ref.ends[i], newText: moved.full },
                  importEdit(input, `import ${moved.full}`),
                ],
                preferred: true,
              },
            ]
          : undefined;
        findings.push(
          error(
            ref.from,
            ref.ends[i],
            `${spelled} is ${q}, which no longer exists in torch 2.13 (AttributeError): PT2E quantization moved to torchao. ` +
              (moved.now ? `Use ${moved.full ?? moved.now}.` : XNNPACK),
            fixes,
          ),
        );
        reported.add(ref.from);
        break;
      }
      if (NAMES[q]) {
        const name = ref.parts[i];
        findings.push(
          error(
            ref.from,
            ref.ends[i],
            `${spelled} is ${q}, which torch 2.13 no longer has (AttributeError): it moved to ${NAMES[q]}.${name}.`,
            [
              {
                title: `Use ${name} from ${NAMES[q]}`,
                edits: [{ start: ref.from, end: ref.ends[i], newText: name }, ...ensureImported(input, NAMES[q], name)],
                preferred: true,
              },
            ],
          ),
        );
        reported.add(ref.from);
        break;
      }
    }
  }
  // Calls to capture_pre_autograd_graph / export_for_training: the call itself changes shape.
  for (const call of input.facts.calls) {
    // a bare capture_pre_autograd_graph(...) still needs rewriting once its import is gone
    const bare = call.callee?.length === 1 ? call.callee[0] : undefined;
    const local = bare ? call.state?.vars.get(bare) : undefined;
    const unbound =
      bare && !input.ctx.module.names.has(bare) && !local?.defs && !local?.objs?.some((o) => o.startsWith('param:'));
    const q =
      unbound && bare === 'capture_pre_autograd_graph'
        ? CAPTURE
        : unbound && bare === 'export_for_training'
          ? FOR_TRAINING
          : call.qualified;
    if ((q !== CAPTURE && q !== FOR_TRAINING) || reported.has(call.calleeSpan.from)) continue;
    const argsText = input.text.slice(call.calleeSpan.to, call.to);
    const newText = q === CAPTURE ? `torch.export.export${argsText}.module()` : `torch.export.export${argsText}`;
    const edits: StoredEdit[] = [{ start: call.from, end: call.to, newText }];
    if (!torchBound) edits.push(importEdit(input, 'import torch'));
    findings.push(
      error(
        call.calleeSpan.from,
        call.calleeSpan.to,
        q === CAPTURE
          ? `capture_pre_autograd_graph was removed from torch (torch 2.13 has no torch._export.capture_pre_autograd_graph): torch.export.export(model, args).module() gives the graph module PT2E takes.`
          : `export_for_training was removed from torch 2.13: torch.export.export(model, args) is the same export now.`,
        [
          {
            title: `Use ${q === CAPTURE ? 'torch.export.export(...).module()' : 'torch.export.export(...)'}`,
            edits,
            preferred: true,
          },
        ],
      ),
    );
  }
  return findings;
}
