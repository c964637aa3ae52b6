// Layouts of graph views by file content, so a model opened again is drawn without laying it out again: the
// webview reports each layout it computes (per view options) and gets them back with the same bytes. Kept in
// memory for the session, least recently used first out past a byte budget.
import { createHash } from 'node:crypto';
import type { CachedLayout } from '../../protocol/webview';

/** About 26 layouts of a 100k-node flat view (3.2 MB of boxes each). */
export const LAYOUT_CACHE_BYTES = 80 * 2 ** 20;

/** Names the content of the bytes the webview gets (the slimmed model). */
export function contentKey(bytes: Uint8Array): string {
  return createHash('sha1').update(bytes).digest('hex');
}

export class LayoutCache {
  /** By content key, then by view options; a Map keeps insertion order, which is the use order here. */
  private readonly entries = new Map<string, Map<string, CachedLayout>>();
  private bytes = 0;

  constructor(private readonly budget = LAYOUT_CACHE_BYTES) {}

  get(key: string): CachedLayout[] {
    const layouts = this.entries.get(key);
    if (!layouts) return [];
    this.entries.delete(key);
    this.entries.set(key, layouts);
    return [...layouts.values()];
  }

  put(key: string, layout: CachedLayout): void {
    if (!(layout.boxes instanceof Float64Array) || layout.boxes.byteLength > this.budget) return;
    const layouts = this.entries.get(key) ?? new Map<string, CachedLayout>();
    const old = layouts.get(layout.options);
    if (old) this.bytes -= old.boxes.byteLength;
    layouts.set(layout.options, {
      options: layout.options,
      boxes: layout.boxes,
      width: layout.width,
      height: layout.height,
    });
    this.bytes += layout.boxes.byteLength;
    this.entries.delete(key);
    this.entries.set(key, layouts);
    for (const [k, v] of this.entries) {
      if (this.bytes <= this.budget) break;
      for (const l of v.values()) this.bytes -= l.boxes.byteLength;
      this.entries.delete(k);
    }
  }

  get size(): number {
    return this.bytes;
  }
}

/** One cache for every graph view of the session. */
export const layoutCache = new LayoutCache();
