// Overview of the whole laid-out graph in a corner, with the visible part outlined; pressing or dragging on it
// pans the main view. The nodes are drawn once per layout (one path per colour, so 100k nodes take one pass);
// panning only moves the outline, an element positioned over that picture.
import type { Layout } from '../graph/layout';

/** The part of the graph on screen, in layout units. */
export interface Viewport {
  x: number;
  y: number;
  w: number;
  h: number;
}

const MAX = 180;
const MIN = 36;

export interface Minimap {
  /** The main view moved: outline what it shows now. */
  show(v: Viewport): void;
  /** Pans the main view so (x, y), in layout units, is at its centre. */
  onPan?: (x: number, y: number) => void;
}

/** `room`: the size of the view it sits on; the minimap takes at most a quarter of its smaller side. */
export function createMinimap(
  host: HTMLElement,
  layout: Layout,
  fillOf: (id: string) => string,
  room?: { width: number; height: number },
): Minimap {
  const W = layout.width || 1,
    H = layout.height || 1;
  const max =
    room?.width && room.height ? Math.max(2 * MIN, Math.min(MAX, Math.min(room.width, room.height) / 4)) : MAX;
  const k = Math.min(max / W, max / H);
  // A long narrow graph still gets a strip wide enough to hit; the picture sits centred in it.
  const cssW = Math.max(MIN, Math.ceil(W * k)),
    cssH = Math.max(MIN, Math.ceil(H * k));
  const ox = (cssW - W * k) / 2,
    oy = (cssH - H * k) / 2;
  const dpr = window.devicePixelRatio || 1;
  const canvas = document.createElement('canvas');
  canvas.width = Math.round(cssW * dpr);
  canvas.height = Math.round(cssH * dpr);
  canvas.style.width = `${cssW}px`;
  canvas.style.height = `${cssH}px`;
  const ctx = canvas.getContext('2d')!;
  ctx.setTransform(dpr, 0, 0, dpr, ox * dpr, oy * dpr);
  const byFill = new Map<string, Path2D>();
  const px = 1 / dpr;
  for (const p of layout.nodes.values()) {
    const fill = fillOf(p.id);
    let path = byFill.get(fill);
    if (!path) byFill.set(fill, (path = new Path2D()));
    path.rect((p.x - p.width / 2) * k, (p.y - p.height / 2) * k, Math.max(px, p.width * k), Math.max(px, p.height * k));
  }
  for (const [fill, path] of byFill) {
    ctx.fillStyle = fill;
    ctx.fill(path);
  }
  const outline = document.createElement('div');
  outline.className = 'viewport';
  host.replaceChildren(canvas, outline);
  host.hidden = false;
  host.dataset.draws = String(Number(host.dataset.draws ?? 0) + 1);

  const mini: Minimap = {
    show(v) {
      // Clipped to the picture, so the outline stays visible when the view is larger than the graph.
      const x0 = Math.max(0, ox + v.x * k),
        y0 = Math.max(0, oy + v.y * k);
      const x1 = Math.min(cssW, ox + (v.x + v.w) * k),
        y1 = Math.min(cssH, oy + (v.y + v.h) * k);
      outline.style.left = `${x0}px`;
      outline.style.top = `${y0}px`;
      outline.style.width = `${Math.max(4, x1 - x0)}px`;
      outline.style.height = `${Math.max(4, y1 - y0)}px`;
    },
  };
  const pan = (ev: PointerEvent) => {
    const r = canvas.getBoundingClientRect();
    mini.onPan?.((ev.clientX - r.left - ox) / k, (ev.clientY - r.top - oy) / k);
  };
  let dragging = false;
  host.onpointerdown = (ev) => {
    dragging = true;
    host.setPointerCapture(ev.pointerId);
    pan(ev);
    ev.preventDefault();
  };
  host.onpointermove = (ev) => {
    if (dragging) pan(ev);
  };
  host.onpointerup = host.onpointercancel = (ev) => {
    dragging = false;
    if (host.hasPointerCapture(ev.pointerId)) host.releasePointerCapture(ev.pointerId);
  };
  return mini;
}
