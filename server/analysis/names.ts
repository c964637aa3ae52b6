// What a name in a script stands for: module-level imports (aliases, `from torch import nn`, star imports of
// the modules listed in knowledge/module-exports.json) and module-level aliases (`tq = torch.ao.quantization`).
// Function-local names shadow them; the walker resolves those (see Scope in walker.ts).
import type { SyntaxNode } from '@lezer/common';
import moduleExports from '../knowledge/module-exports.json';

export interface ImportStatement {
  from: number;
  to: number;
  /** The dotted module as written (`torch.ao.quantization`, `.utils`). */
  module: string;
  moduleFrom: number;
  moduleTo: number;
  /** `from M import a as b, c` -> [{name: a, local: b}, {name: c, local: c}]; empty for `import M`. */
  names: Array<{ name: string; local: string; from: number; to: number }>;
  /** `import a.b as c` / `import a.b`: the local name it binds (c / a) and what to (a.b / a). */
  local?: string;
  target?: string;
  isFrom: boolean;
  /** Inside a try/except ImportError or a version check: a fallback the pinned libraries may never run. */
  guarded: boolean;
}

const STARS = (moduleExports as { stars: Record<string, string[]> }).stars;
const starSets = new Map(Object.entries(STARS).map(([m, names]) => [m, new Set(names)]));

/** Parses one ImportStatement node. */
export function readImport(text: string, node: SyntaxNode, guarded: boolean): ImportStatement[] {
  const out: ImportStatement[] = [];
  let c = node.firstChild;
  if (!c) return out;
  // Dotted name starting at `c`: VariableName ('.' VariableName)*, with leading dots for relative imports.
  const dotted = (start: SyntaxNode | null): { text: string; from: number; to: number; next: SyntaxNode | null } => {
    let n = start;
    let s = '';
    let from = -1;
    let to = -1;
    while (n && (n.name === 'VariableName' || n.name === '.' || n.name === 'Ellipsis')) {
      if (from < 0) from = n.from;
      to = n.to;
      s += n.name === 'Ellipsis' ? '...' : text.slice(n.from, n.to);
      n = n.nextSibling;
    }
    return { text: s, from, to, next: n };
  };
  if (c.name === 'from') {
    const mod = dotted(c.nextSibling);
    const stmt: ImportStatement = {
      from: node.from,
      to: node.to,
      module: mod.text,
      moduleFrom: mod.from,
      moduleTo: mod.to,
      names: [],
      isFrom: true,
      guarded,
    };
    for (let n = mod.next; n; n = n.nextSibling) {
      if (n.name === '*') {
        stmt.names.push({ name: '*', local: '*', from: n.from, to: n.to });
        continue;
      }
      if (n.name !== 'VariableName') continue;
      const name = text.slice(n.from, n.to);
      const from = n.from;
      let local = name;
      if (n.nextSibling?.name === 'as' && n.nextSibling.nextSibling?.name === 'VariableName') {
        n = n.nextSibling.nextSibling;
        local = text.slice(n.from, n.to);
      }
      stmt.names.push({ name, local, from, to: n.to });
    }
    out.push(stmt);
    return out;
  }
  // import a.b as c, d
  c = c.nextSibling;
  while (c) {
    const mod = dotted(c);
    if (!mod.text) {
      c = c.nextSibling;
      continue;
    }
    // `import a.b` binds a to a; `import a.b as c` binds c to a.b.
    let local = mod.text.split('.')[0];
    let target = local;
    let n = mod.next;
    if (n?.name === 'as' && n.nextSibling?.name === 'VariableName') {
      local = text.slice(n.nextSibling.from, n.nextSibling.to);
      target = mod.text;
      n = n.nextSibling.nextSibling;
    }
    out.push({
      from: node.from,
      to: node.to,
      module: mod.text,
      moduleFrom: mod.from,
      moduleTo: mod.to,
      names: [],
      local,
      target,
      isFrom: false,
      guarded,
    });
    while (n && n.name === ',') n = n.nextSibling;
    c = n;
  }
  return out;
}

/** The bindings of a module (or a function's local imports). */
export class NameTable {
  /** Local name -> the qualified names it may stand for (more than one when imports disagree). */
  readonly bindings = new Map<string, string[]>();
  /** Names bound at module level to something that is not an import or alias (variables, defs). */
  readonly variables = new Set<string>();
  readonly stars: string[] = [];
  readonly imports: ImportStatement[] = [];

  addImport(s: ImportStatement): void {
    this.imports.push(s);
    if (!s.isFrom) {
      this.bind(s.local!, s.target!);
      return;
    }
    for (const n of s.names) {
      if (n.name === '*') this.stars.push(s.module);
      else this.bind(n.local, `${s.module}.${n.name}`);
    }
  }

  bind(local: string, target: string): void {
    const list = this.bindings.get(local) ?? [];
    if (!list.includes(target)) list.push(target);
    this.bindings.set(local, list);
  }

  /** The qualified name `name` stands for, or undefined when it is a variable or bound ambiguously. */
  lookup(name: string): string | undefined {
    const list = this.bindings.get(name);
    if (list) {
      if (list.length === 1) return list[0];
      // try: new location / except ImportError: old location — the binding that exists on the pinned
      // libraries is the one that runs, so prefer one the caller can tell apart (see preferBinding).
      return preferBinding(list);
    }
    if (this.variables.has(name)) return undefined;
    for (const m of this.stars) if (starSets.get(m)?.has(name)) return `${m}.${name}`;
    return undefined;
  }

  /** Is `name` bound at module level at all (import, alias, star or variable)? */
  has(name: string): boolean {
    return this.bindings.has(name) || this.variables.has(name) || this.stars.some((m) => starSets.get(m)?.has(name));
  }

  /**
   * The qualified name of a dotted reference. An unbound head stands for itself (a module spelled in
   * full, as `torch` in a snippet without imports); a head bound to a variable gives undefined.
   */
  qualify(parts: string[]): string | undefined {
    if (!parts.length) return undefined;
    const head = this.lookup(parts[0]);
    if (head === undefined && (this.bindings.has(parts[0]) || this.variables.has(parts[0]))) return undefined;
    return [head ?? parts[0], ...parts.slice(1)].join('.');
  }

  /** A fingerprint of everything resolution depends on. */
  fingerprint(): string {
    return JSON.stringify([[...this.bindings], [...this.variables].sort(), this.stars]);
  }
}

/** Of several bindings, the one outside torch.ao's removed PT2E modules; else the first. */
export function preferBinding(list: string[]): string {
  return (
    list.find((t) => !/^torch\.ao\.quantization\.(quantize_pt2e|quantizer|pt2e)\b|^torch\._export\./.test(t)) ?? list[0]
  );
}

/** torch.quantization is torch.ao.quantization under its legacy name; resolution compares the new names. */
export function canonical(qualified: string | undefined): string | undefined {
  if (!qualified || !(qualified.startsWith('torch.quantization') || qualified.startsWith('torch.nn.')))
    return qualified;
  return qualified
    .replace(/^torch\.quantization(?=\.|$)/, 'torch.ao.quantization')
    .replace(/^torch\.nn\.(quantized|qat|intrinsic|quantizable)(?=\.|$)/, 'torch.ao.nn.$1');
}
