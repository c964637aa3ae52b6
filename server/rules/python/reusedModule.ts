// QAT010: one stateless module instance (e.g. a single nn.ReLU) called twice in forward(). PT2E's
// X86InductorQuantizer then fails with "Input partition has more than one output node" (torchvision's
// ResNet blocks do this). Fix: a second instance. A warning in files that quantize, a hint elsewhere.
import type { SyntaxNode } from '@lezer/common';
import type { Finding } from '../types';
import { indentAt, lineStartOf, quantizationImports, textOf, type PythonRuleContext } from './syntax';

const STATELESS =
  /^(ReLU|ReLU6|LeakyReLU|GELU|SiLU|Hardswish|Hardsigmoid|Hardtanh|Sigmoid|Tanh|ELU|Mish|Softmax|Dropout|Dropout2d|Identity|Flatten|MaxPool[123]d|AvgPool[123]d|AdaptiveAvgPool[123]d|AdaptiveMaxPool[123]d|Upsample)$/;

/** A class's methods by name (decorated ones included). */
function methods(ctx: PythonRuleContext, cls: SyntaxNode): Map<string, SyntaxNode> {
  const out = new Map<string, SyntaxNode>();
  for (let c = cls.getChild('Body')?.firstChild; c; c = c.nextSibling) {
    const fn =
      c.name === 'DecoratedStatement' ? c.getChild('FunctionDefinition') : c.name === 'FunctionDefinition' ? c : null;
    const name = fn?.getChild('VariableName');
    if (fn && name) out.set(textOf(ctx, name), fn);
  }
  return out;
}

export function reusedModule(ctx: PythonRuleContext): Finding[] {
  const findings: Finding[] = [];
  const quantizing =
    quantizationImports(ctx).size > 0 || /\b(torchao|torch\.ao\.quantization|torch\.quantization)\b/.test(ctx.text);
  ctx.tree.iterate({
    enter(ref) {
      if (ref.name !== 'ClassDefinition') return;
      const fns = methods(ctx, ref.node);
      const init = fns.get('__init__');
      const forward = fns.get('forward');
      if (!init || !forward) return;
      // self.X = nn.ReLU(...) in __init__.
      const made = new Map<string, SyntaxNode>();
      init.cursor().iterate((n) => {
        if (n.name !== 'AssignStatement') return;
        const target = n.node.firstChild;
        const value = target?.nextSibling?.nextSibling;
        const attr = /^self\.(\w+)$/.exec(target ? textOf(ctx, target) : '');
        const ctor = value?.name === 'CallExpression' ? /(?:^|\.)(\w+)$/.exec(textOf(ctx, value.firstChild!)) : null;
        if (attr && ctor && STATELESS.test(ctor[1]) && value) made.set(attr[1], n.node);
      });
      // self.X(...) calls in forward, in order.
      const uses = new Map<string, SyntaxNode[]>();
      forward.cursor().iterate((n) => {
        if (n.name !== 'CallExpression') return;
        const m = /^self\.(\w+)$/.exec(textOf(ctx, n.node.firstChild!));
        if (m && made.has(m[1])) uses.set(m[1], [...(uses.get(m[1]) ?? []), n.node.firstChild!]);
      });
      for (const [attr, calls] of uses) {
        if (calls.length < 2) continue;
        const assign = made.get(attr)!;
        const taken = (name: string) =>
          made.has(name) || fns.has(name) || new RegExp(`\\bself\\.${name}\\b`).test(ctx.text);
        let k = 2;
        const lineEnd = ctx.text.indexOf('\n', assign.to);
        const insertAt = lineEnd < 0 ? ctx.text.length : lineEnd;
        const ctorText = textOf(ctx, assign.firstChild!.nextSibling!.nextSibling!);
        for (const callee of calls.slice(1)) {
          while (taken(`${attr}${k}`)) k++;
          const fresh = `${attr}${k++}`;
          findings.push({
            code: 'QAT010',
            severity: quantizing ? 'warning' : 'hint',
            start: callee.from,
            end: callee.to,
            message:
              `self.${attr} is called more than once in forward(): one module instance used twice makes PT2E's ` +
              'X86InductorQuantizer fail ("Input partition has more than one output node"). Give each call its own instance.',
            fixes: [
              {
                title: `Add self.${fresh} and use it here`,
                edits: [
                  {
                    start: insertAt,
                    end: insertAt,
                    newText: `\n${indentAt(ctx.text, lineStartOf(ctx.text, assign.from))}self.${fresh} = ${ctorText}`,
                  },
                  { start: callee.from, end: callee.to, newText: `self.${fresh}` },
                ],
                preferred: true,
              },
            ],
          });
        }
      }
      return false;
    },
  });
  return findings;
}
