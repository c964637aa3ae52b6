// QAT010: one activation module called twice on one path through forward() (torchvision's BasicBlock calls
// self.relu twice), where a call follows a Conv2d (directly, through BatchNorm2d, or through an add). Under
// torch.export's default non-strict mode both calls get the same source module, and PT2E's
// X86InductorQuantizer fails with "Input partition has more than one output node" (checked on torch 2.13 /
// torchao 0.18 by test/rule-claims). strict=True export passes; so does a ReLU shared after Linear layers, or
// one that follows no conv. Calls in exclusive branches are on different paths and are fine.
import type { SyntaxNode } from '@lezer/common';
import type { RuleInput } from '../../analysis/document';
import type { StoredFinding } from '../../analysis/findings';
import { mentionsSelf } from '../../analysis/selfAttributes';
import { indentAt, lineStartOf, slice } from '../../analysis/syntax';
import type { CallInfo, FnRun } from '../../analysis/walker';
import { lines, type Fix } from './helpers';

/** The activations X86InductorQuantizer fuses after a conv (its conv+unary and conv+bn+unary patterns). */
const AFTER_CONV2D = new Set(['ReLU', 'ReLU6', 'Hardtanh', 'Hardswish', 'SiLU']);

function convFed(act: string, kinds: string[] | undefined): string | undefined {
  if (!kinds) return undefined;
  if (kinds.includes('conv2d') && AFTER_CONV2D.has(act)) return 'a Conv2d';
  if (act === 'ReLU' && kinds.includes('conv1d')) return 'a Conv1d';
  if (act === 'ReLU' && kinds.includes('convadd')) return 'a Conv2d + add';
  return undefined;
}

/** Methods of `selfCls` that forward() reaches through self.<method>() calls (forward included). */
function reachable(input: RuleInput, runs: FnRun[], calls: CallInfo[], selfCls: string): Set<FnRun> {
  const byMethod = new Map<string, FnRun>();
  for (const r of runs) if (r.selfCls === selfCls && r.def) byMethod.set(r.name.split('.').pop()!, r);
  const out = new Set<FnRun>();
  const todo = ['forward'];
  while (todo.length) {
    const run = byMethod.get(todo.pop()!);
    if (!run || out.has(run)) continue;
    out.add(run);
    for (const c of calls)
      if (c.run === run && c.callee?.length === 2 && c.callee[0] === 'self' && input.ctx.method(selfCls, c.callee[1]))
        todo.push(c.callee[1]);
  }
  return out;
}

function assignmentAt(input: RuleInput, offset: number): SyntaxNode | undefined {
  for (let n: SyntaxNode | null = input.tree.resolveInner(offset, 1); n; n = n.parent)
    if (n.name === 'AssignStatement' && n.from === offset) return n;
  return undefined;
}

export function reusedModule(input: RuleInput): StoredFinding[] {
  const { ctx, facts } = input;
  if (ctx.flags.strictExportOnly) return [];
  const findings = new Map<number, StoredFinding>();
  const selfClasses = new Set(facts.runs.filter((r) => r.selfCls && r.def).map((r) => r.selfCls!));
  for (const selfCls of selfClasses) {
    const runs = reachable(input, facts.runs, facts.calls, selfCls);
    const byAttr = new Map<string, CallInfo[]>();
    for (const c of facts.calls)
      if (c.selfAttr && c.state && runs.has(c.run)) byAttr.set(c.selfAttr, [...(byAttr.get(c.selfAttr) ?? []), c]);
    for (const [attr, uses] of byAttr) {
      const info = ctx.attr(selfCls, attr);
      const desc = info && ctx.resolveDesc(info.info.desc);
      if (!desc || !('m' in desc) || !AFTER_CONV2D.has(desc.m)) continue;
      const act = desc.m;
      const fed = uses.map((u) => convFed(act, u.argKinds)).find(Boolean);
      if (!fed) continue;
      for (const use of uses) {
        if (!use.prior?.length || findings.has(use.from)) continue;
        const loop = use.prior.includes(use.from);
        const earlier = use.prior.filter((p) => p !== use.from);
        const where = earlier.length
          ? `after its call on ${lines(input, earlier)}`
          : 'again on the next iteration of this loop';
        const inherited = use.run.cls !== selfCls ? ` (in ${selfCls}, which inherits this method)` : '';
        findings.set(use.from, {
          code: 'QAT010',
          severity: ctx.flags.quantizes ? 'warning' : 'hint',
          start: use.calleeSpan.from,
          end: use.calleeSpan.to,
          message:
            `self.${attr} is called ${where} on one path through forward()${inherited}, and a call of it follows ${fed}: ` +
            `with one nn.${act} for both, PT2E's X86InductorQuantizer fails under torch.export's default (non-strict) mode ` +
            'with "Input partition has more than one output node" (torch 2.13, torchao 0.18). Give each call its own ' +
            `nn.${act}, or export with strict=True (a shared activation after Linear layers quantizes fine).`,
          fixes: loop && !earlier.length ? undefined : freshInstanceFix(input, selfCls, attr, info!.info.site, use),
        });
      }
    }
  }
  return [...findings.values()];
}

/** `self.relu2 = nn.ReLU(...)` below the original assignment, and this call uses it. */
function freshInstanceFix(
  input: RuleInput,
  selfCls: string,
  attr: string,
  site: { anchor: string; rel: number },
  use: CallInfo,
): Fix[] | undefined {
  if (site.anchor !== input.anchor) return undefined;
  const assign = assignmentAt(input, input.base + site.rel);
  const value = assign?.lastChild;
  if (!assign || !value) return undefined;
  const unitText = input.text.slice(input.base, input.base + 200_000);
  const taken = (name: string) =>
    !!input.ctx.attr(selfCls, name) || !!input.ctx.method(selfCls, name) || mentionsSelf(unitText, name);
  let k = 2;
  while (taken(`${attr}${k}`)) k++;
  const fresh = `${attr}${k}`;
  const lineEnd = input.text.indexOf('\n', assign.to);
  const at = lineEnd < 0 ? input.text.length : lineEnd;
  const indent = indentAt(input.text, lineStartOf(input.text, assign.from));
  return [
    {
      title: `Add self.${fresh} and use it here`,
      edits: [
        { start: at, end: at, newText: `\n${indent}self.${fresh} = ${slice(input.text, value)}` },
        { start: use.calleeSpan.from, end: use.calleeSpan.to, newText: `self.${fresh}` },
      ],
      preferred: true,
    },
  ];
}
