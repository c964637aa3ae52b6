// The document as the units see each other: classes, functions and what they do, from every unit's summary,
// plus the module's names. A fingerprint of it keys the per-unit cache: a unit is analysed again only when
// its own text or something it may read here changed.
import type { Anchored } from './findings';
import type { ModuleScope } from './scope';
import type { Mode } from './state';
import type { ClassSummary, Desc, FnSummary, FuseInfo, Step, UnitSummary } from './summaries';

export type Effect = { kind: 'none' } | { kind: 'unknown' } | { kind: 'set'; mode: Mode; site: Anchored };

export interface DocFlags {
  /** The file imports torch.ao / torchao quantization (or spells it). */
  quantizes: boolean;
  /** Every torch.export.export call in the file passes strict=True (and there is one). */
  strictExportOnly: boolean;
  /** The file may convert a torchao QAT model (see document.ts). */
  qatConverts: boolean;
}

export class DocContext {
  readonly classes = new Map<string, ClassSummary>();
  readonly functions = new Map<string, FnSummary>();
  private effectMemo = new Map<string, Effect>();
  private lineageMemo = new Map<string, ClassSummary[]>();
  private usersMemo = new Map<string, string[]>();

  constructor(
    readonly module: ModuleScope,
    summaries: UnitSummary[],
    readonly flags: DocFlags,
    readonly fingerprint: string,
  ) {
    for (const u of summaries) {
      for (const c of u.classes) if (!this.classes.has(c.name)) this.classes.set(c.name, c);
      for (const f of u.functions) if (!this.functions.has(f.name)) this.functions.set(f.name, f);
    }
  }

  /** In-file bases of a class, nearest first (cycles cut). */
  lineage(cls: string): ClassSummary[] {
    const hit = this.lineageMemo.get(cls);
    if (hit) return hit;
    const out: ClassSummary[] = [];
    const seen = new Set<string>();
    const walk = (name: string) => {
      const c = this.classes.get(name);
      if (!c || seen.has(name)) return;
      seen.add(name);
      out.push(c);
      for (const b of c.bases) walk(b.split('.').pop()!);
    };
    walk(cls);
    this.lineageMemo.set(cls, out);
    return out;
  }

  isModuleClass(cls: string): boolean {
    return this.lineage(cls).some((c) => c.torchBase);
  }

  attr(cls: string, name: string) {
    for (const c of this.lineage(cls)) if (c.attrs[name]) return { info: c.attrs[name], owner: c };
    return undefined;
  }

  method(cls: string, name: string): { summary: FnSummary; owner: ClassSummary } | undefined {
    for (const c of this.lineage(cls)) if (c.methods[name]) return { summary: c.methods[name], owner: c };
    return undefined;
  }

  /** Classes of the file whose `method` is the one `owner` defines (owner itself and subclasses not overriding). */
  usersOf(owner: string, method: string): string[] {
    const key = `${owner}.${method}`;
    let out = this.usersMemo.get(key);
    if (!out) {
      out = [];
      // only classes that derive from owner can inherit its method
      for (const [name, c] of this.classes)
        if ((name === owner || c.bases.length) && this.method(name, method)?.owner.name === owner) out.push(name);
      this.usersMemo.set(key, out);
    }
    return out;
  }

  /** A call's description through the file: in-file class -> itself, in-file function -> what it returns. */
  resolveDesc(desc: Desc, depth = 0): Desc | { cls: string } {
    if (!desc || !('call' in desc)) return desc;
    if (this.classes.has(desc.call)) return { cls: desc.call };
    const f = this.functions.get(desc.call);
    return f?.returns && depth < 4 ? this.resolveDesc(f.returns, depth + 1) : null;
  }

  /** What calling `fn` (a function or method summary) does to the mode of its parameter `param`. */
  effect(fn: FnSummary, param: string, owner?: string, depth = 0): Effect {
    const key = `${owner ?? ''}.${fn.name}.${param}`;
    const hit = this.effectMemo.get(key);
    if (hit) return hit;
    this.effectMemo.set(key, { kind: 'unknown' }); // recursion: unknown
    const result = depth > 6 ? ({ kind: 'unknown' } as Effect) : this.fold(fn.effects[param] ?? [], owner, depth);
    this.effectMemo.set(key, result);
    return result;
  }

  /** Folds mode steps into the effect at the function's exits. */
  fold(steps: Step[], owner: string | undefined, depth: number, start: Effect = { kind: 'none' }): Effect {
    let state: Effect = start;
    const exits: Effect[] = [];
    for (const step of steps) {
      if ('mode' in step) state = { kind: 'set', mode: step.mode, site: step.site };
      else if ('unknown' in step) state = { kind: 'unknown' };
      else if ('exit' in step) exits.push(state);
      else if ('rebound' in step) break;
      else {
        const eff = this.callEffect(step.call, step.arg, owner, depth);
        if (eff.kind !== 'none') state = step.nested ? { kind: 'unknown' } : eff;
      }
    }
    exits.push(state);
    const first = exits[0];
    const same = exits.every(
      (e) => e.kind === first.kind && (e.kind !== 'set' || (first.kind === 'set' && e.mode === first.mode)),
    );
    return same ? first : { kind: 'unknown' };
  }

  private callEffect(call: string, arg: number, owner: string | undefined, depth: number): Effect {
    const [kind, name] = call.split(':');
    if (kind === 'self') {
      const m = owner ? this.method(owner, name) : undefined;
      return m ? this.effect(m.summary, m.summary.params[0] ?? 'self', m.owner.name, depth + 1) : { kind: 'unknown' };
    }
    const f = this.functions.get(name);
    if (!f || arg < 0 || arg >= f.params.length) return { kind: 'unknown' };
    return this.effect(f, f.params[arg], undefined, depth + 1);
  }

  /** The conv+bn fusion a method (or function) runs on its parameter `param`, directly or through its calls. */
  fusion(fn: FnSummary, param: number, owner?: string, depth = 0): FuseInfo | undefined {
    const direct = fn.fuse.find((f) => f.param === param);
    if (direct || depth > 6) return direct;
    for (const c of fn.fuseCalls) {
      if (c.param !== param) continue;
      const [kind, name] = c.call.split(':');
      if (kind === 'self' && owner) {
        const m = this.method(owner, name);
        const hit = m && this.fusion(m.summary, 0, m.owner.name, depth + 1);
        if (hit) return hit;
      } else if (kind === 'fn') {
        const f = this.functions.get(name);
        const hit = f && this.fusion(f, 0, undefined, depth + 1);
        if (hit) return hit;
      }
    }
    return undefined;
  }
}
