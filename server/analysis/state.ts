// The abstract state the walker carries along each path of a function, and how two paths join.
// Variables point to objects (allocation sites); objects carry what the rules ask about: train/eval mode,
// prepared, converted, exported. "Must" facts survive a join only when both paths have them; "may" sets
// (the modes seen, the earlier call sites of a module) take the union. A missing variable is unknown.

export type Mode = 'train' | 'eval';

/** The modes an object may be in, each with the offsets that set it. `unknown`: some path says nothing. */
export interface ModeFact {
  train: number[];
  eval: number[];
  unknown: boolean;
}

export interface ObjFact {
  /** The in-file class it was constructed from, the same on every path. */
  cls?: string;
  /** Undefined: unknown on some path. */
  mode?: ModeFact;
  /** Offsets of the eager prepare/prepare_qat calls that made it (must). */
  prepared?: number[];
  /** Made by a convert call on every path (must). */
  converted?: { kind: 'eager' | 'fx' | 'pt2e'; at: number[] };
  /** A torch.export graph module (export(...).module(), prepare_pt2e, convert_pt2e): .train()/.eval() raise. */
  exported?: boolean;
  /** allow_exported_model_train_eval was called on it: .train()/.eval() work again. */
  trainEvalAllowed?: boolean;
  /** An ExportedProgram (torch.export.export's result before .module()). */
  program?: boolean;
}

export interface VarFact {
  /** The objects it may point to; undefined: unknown. */
  objs?: string[];
  /** What produced its value, for QAT010 (conv2d, conv1d, convadd, other); undefined: unknown. */
  kinds?: string[];
  /** Offsets of the assigned value expressions that reach here; undefined: unknown (a parameter, say). */
  defs?: number[];
}

const DELETED = Symbol('deleted');

/**
 * A persistent string map: set() returns a new map that shares the old one (a chain of one-entry overlays,
 * flattened every few levels), so keeping every call's state costs little.
 */
export class PMap<V> {
  private flat?: Map<string, V>;
  private constructor(
    private readonly parent: PMap<V> | undefined,
    private readonly key: string,
    private readonly value: V | typeof DELETED,
    private readonly depth: number,
    readonly size: number,
  ) {}

  static of<V>(entries?: Map<string, V>): PMap<V> {
    const m = new PMap<V>(undefined, '', DELETED, 0, entries?.size ?? 0);
    m.flat = entries ?? new Map();
    return m;
  }

  get(k: string): V | undefined {
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- walking the chain of overlays
    for (let m: PMap<V> | undefined = this; m; m = m.parent) {
      if (m.flat) return m.flat.get(k);
      if (m.key === k) return m.value === DELETED ? undefined : m.value;
    }
    return undefined;
  }

  has(k: string): boolean {
    return this.get(k) !== undefined;
  }

  set(k: string, v: V | undefined): PMap<V> {
    const had = this.has(k);
    if (v === undefined && !had) return this;
    const size = this.size + (v === undefined ? -1 : had ? 0 : 1);
    const next = new PMap<V>(this, k, v ?? DELETED, this.depth + 1, size);
    return next.depth > 16 ? PMap.of(next.entries()) : next;
  }

  /** All entries (computed once per map). */
  entries(): Map<string, V> {
    if (this.flat) return this.flat;
    const chain: PMap<V>[] = [];
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- walking the chain of overlays
    let m: PMap<V> = this;
    while (!m.flat) {
      chain.push(m);
      m = m.parent!;
    }
    const out = new Map(m.flat);
    for (let i = chain.length - 1; i >= 0; i--) {
      const c = chain[i];
      if (c.value === DELETED) out.delete(c.key);
      else out.set(c.key, c.value);
    }
    this.flat = out;
    return out;
  }

  keys(): IterableIterator<string> {
    return this.entries().keys();
  }

  /**
   * The keys that may differ between two maps and the root they share, when both are overlays on the same
   * flat map (a branch and its sibling); undefined when they share none.
   */
  static divergence<V>(a: PMap<V>, b: PMap<V>): { root: PMap<V>; keys: Set<string> } | undefined {
    const keys = new Set<string>();
    let ra: PMap<V> = a;
    while (!ra.flat) {
      keys.add(ra.key);
      ra = ra.parent!;
    }
    let rb: PMap<V> = b;
    while (!rb.flat) {
      keys.add(rb.key);
      rb = rb.parent!;
    }
    return ra === rb ? { root: ra, keys } : undefined;
  }

  [Symbol.iterator](): IterableIterator<[string, V]> {
    return this.entries()[Symbol.iterator]();
  }
}

export interface State {
  vars: PMap<VarFact>;
  /** The dotted names among vars (a.b), so that rebinding `a` can forget them. */
  dotted: PMap<true>;
  objs: PMap<ObjFact>;
  /** self.<attr>(...) call sites earlier on this path (for modules called more than once). */
  calls: PMap<number[]>;
}

export const emptyState = (): State => ({ vars: PMap.of(), dotted: PMap.of(), objs: PMap.of(), calls: PMap.of() });

const union = <T>(a: T[], b: T[]): T[] => {
  if (a === b || !b.length) return a;
  if (!a.length) return b;
  const out = [...a];
  for (const x of b) if (!out.includes(x)) out.push(x);
  return out;
};
const unionOpt = <T>(a: T[] | undefined, b: T[] | undefined) => (a && b ? union(a, b) : undefined);

function joinMode(a: ModeFact | undefined, b: ModeFact | undefined): ModeFact | undefined {
  if (!a || !b) return undefined;
  if (a === b) return a;
  return { train: union(a.train, b.train), eval: union(a.eval, b.eval), unknown: a.unknown || b.unknown };
}

function joinObj(a: ObjFact, b: ObjFact): ObjFact {
  if (a === b) return a;
  const out: ObjFact = {};
  if (a.cls && a.cls === b.cls) out.cls = a.cls;
  const mode = joinMode(a.mode, b.mode);
  if (mode) out.mode = mode;
  if (a.prepared && b.prepared) out.prepared = union(a.prepared, b.prepared);
  if (a.converted && b.converted && a.converted.kind === b.converted.kind)
    out.converted = { kind: a.converted.kind, at: union(a.converted.at, b.converted.at) };
  if (a.exported && b.exported) out.exported = true;
  if (a.trainEvalAllowed || b.trainEvalAllowed) out.trainEvalAllowed = true;
  if (a.program && b.program) out.program = true;
  return out;
}

function joinVar(a: VarFact, b: VarFact): VarFact {
  if (a === b) return a;
  return { objs: unionOpt(a.objs, b.objs), kinds: unionOpt(a.kinds, b.kinds), defs: unionOpt(a.defs, b.defs) };
}

/** Joins two persistent maps; `one` says what a key present on one side only becomes (undefined: dropped). */
function joinMaps<V>(
  a: PMap<V>,
  b: PMap<V>,
  both: (x: V, y: V, key: string) => V,
  one: (x: V, key: string) => V | undefined,
): PMap<V> {
  if (a === b) return a;
  const d = PMap.divergence(a, b);
  if (d) {
    // siblings on one base: only the keys either side set since then can differ
    let out = d.root;
    for (const k of d.keys) {
      const x = a.get(k);
      const y = b.get(k);
      const v =
        x !== undefined && y !== undefined
          ? x === y
            ? x
            : both(x, y, k)
          : x !== undefined
            ? one(x, k)
            : y !== undefined
              ? one(y, k)
              : undefined;
      if (v !== d.root.get(k)) out = out.set(k, v);
    }
    return out;
  }
  const out = new Map<string, V>();
  for (const [k, x] of a) {
    const y = b.get(k);
    const v = y !== undefined ? (x === y ? x : both(x, y, k)) : one(x, k);
    if (v !== undefined) out.set(k, v);
  }
  for (const [k, y] of b)
    if (!a.has(k)) {
      const v = one(y, k);
      if (v !== undefined) out.set(k, v);
    }
  return PMap.of(out);
}

/** The state after either path; null is an unreachable path. */
export function join(a: State | null, b: State | null): State | null {
  if (!a) return b;
  if (!b || a === b) return a;
  // A variable unknown on one path is unknown. An object allocated on one path only keeps that path's facts:
  // on the other it does not exist. A global exists on both; a path that never looked at it knows nothing.
  const vars = joinMaps(a.vars, b.vars, joinVar, () => undefined);
  const dotted =
    a.dotted === b.dotted
      ? a.dotted
      : joinMaps(
          a.dotted,
          b.dotted,
          () => true as const,
          () => undefined,
        );
  const objs = joinMaps(a.objs, b.objs, joinObj, (x, k) => (k.startsWith('global:') ? joinObj(x, {}) : x));
  const calls = joinMaps(a.calls, b.calls, union, (x) => x);
  return { vars, dotted, objs, calls };
}

export function joinAll(states: Array<State | null>): State | null {
  // statements that change nothing leave the same state object: join each one once
  let acc: State | null = null;
  const seen = new Set<State>();
  for (const s of states) {
    if (!s || seen.has(s)) continue;
    seen.add(s);
    acc = join(acc, s);
  }
  return acc;
}

const sameList = <T>(a: T[] | undefined, b: T[] | undefined) =>
  a === b || (!!a && !!b && a.length === b.length && a.every((x) => b.includes(x)));

function sameObj(a: ObjFact, b: ObjFact): boolean {
  return (
    a.cls === b.cls &&
    !!a.mode === !!b.mode &&
    (!a.mode ||
      (sameList(a.mode.train, b.mode!.train) &&
        sameList(a.mode.eval, b.mode!.eval) &&
        a.mode.unknown === b.mode!.unknown)) &&
    sameList(a.prepared, b.prepared) &&
    a.converted?.kind === b.converted?.kind &&
    sameList(a.converted?.at, b.converted?.at) &&
    !!a.exported === !!b.exported &&
    !!a.trainEvalAllowed === !!b.trainEvalAllowed &&
    !!a.program === !!b.program
  );
}

/** Used to find a loop's fixpoint. */
export function equalState(a: State | null, b: State | null): boolean {
  if (a === b) return true;
  if (!a || !b) return false;
  if (a.vars.size !== b.vars.size || a.objs.size !== b.objs.size || a.calls.size !== b.calls.size) return false;
  for (const [k, v] of a.vars) {
    const w = b.vars.get(k);
    if (!w || !sameList(v.objs, w.objs) || !sameList(v.kinds, w.kinds) || !sameList(v.defs, w.defs)) return false;
  }
  for (const [k, v] of a.objs) {
    const w = b.objs.get(k);
    if (!w || !sameObj(v, w)) return false;
  }
  for (const [k, v] of a.calls) if (!sameList(v, b.calls.get(k))) return false;
  return true;
}

// ---- Updates (each returns a new state; states are shared between events, never mutated).

export function setVar(s: State, name: string, fact: VarFact | undefined): State {
  let vars = s.vars.set(name, fact);
  let dotted = s.dotted;
  if (name.includes('.')) dotted = dotted.set(name, fact ? true : undefined);
  // `a = ...` also forgets what was known about a.b, a.b.c.
  if (dotted.size)
    for (const k of [...dotted.keys()])
      if (k.startsWith(name + '.')) {
        vars = vars.set(k, undefined);
        dotted = dotted.set(k, undefined);
      }
  return vars === s.vars && dotted === s.dotted ? s : { ...s, vars, dotted };
}

export function setObj(s: State, id: string, fact: ObjFact): State {
  return { ...s, objs: s.objs.set(id, fact) };
}

export function updateObjs(s: State, ids: string[], update: (o: ObjFact, strong: boolean) => ObjFact): State {
  let objs = s.objs;
  // One object: it is that object (strong update); several: it is one of them (weak: join with the old).
  const strong = ids.length === 1;
  for (const id of ids) {
    const old = objs.get(id) ?? {};
    const next = update(old, strong);
    objs = objs.set(id, strong ? next : joinObj(old, next));
  }
  return { ...s, objs };
}

export function addCall(s: State, attr: string, site: number): State {
  const old = s.calls.get(attr) ?? [];
  return old.includes(site) ? s : { ...s, calls: s.calls.set(attr, [...old, site]) };
}

// ---- Queries the rules use.

/** The objects a variable points to, when known. */
export const objsOf = (s: State | null, name: string): string[] | undefined => s?.vars.get(name)?.objs;

/** The joined facts of every object a variable may point to; undefined when any is unknown. */
export function factsOf(s: State | null, name: string): ObjFact[] | undefined {
  const ids = objsOf(s, name);
  if (!s || !ids?.length) return undefined;
  const out: ObjFact[] = [];
  for (const id of ids) {
    const f = s.objs.get(id);
    if (!f) return undefined;
    out.push(f);
  }
  return out;
}

/** The mode a variable's object is in on every path, with the offsets that set it; else undefined. */
export function mustMode(s: State | null, name: string): { mode: Mode; at: number[] } | undefined {
  const facts = factsOf(s, name);
  if (!facts) return undefined;
  let mode: Mode | undefined;
  let at: number[] = [];
  for (const f of facts) {
    const m = f.mode;
    if (!m || m.unknown) return undefined;
    const only: Mode | undefined =
      m.train.length && !m.eval.length ? 'train' : m.eval.length && !m.train.length ? 'eval' : undefined;
    if (!only || (mode && mode !== only)) return undefined;
    mode = only;
    at = union(at, m[only]);
  }
  return mode ? { mode, at } : undefined;
}

/** A fact every object of the variable has. */
export function mustAll(s: State | null, name: string, test: (f: ObjFact) => boolean): ObjFact[] | undefined {
  const facts = factsOf(s, name);
  return facts && facts.every(test) ? facts : undefined;
}

/** The facts all of `ids` share (their join), for a copy made from one of them; {} when any is unknown. */
export function mergedFact(s: State, ids: string[] | undefined): ObjFact {
  if (!ids?.length) return {};
  let out: ObjFact | undefined;
  for (const id of ids) {
    const f = s.objs.get(id);
    if (!f) return {};
    out = out ? joinObj(out, f) : f;
  }
  return out ?? {};
}
