// Readable text on coloured boxes in every theme: the chart colours that mark Q/DQ nodes and cosine bands are
// made to stand out against the editor background, so the editor foreground on them is often unreadable
// (#333 on Light Modern's #652d90 purple is 1.9:1). Text on a fill takes the first theme colour that reaches
// WCAG's 4.5:1 there, else black or white, whichever contrasts more.
export type Rgba = [number, number, number, number];

/** Parses what getComputedStyle returns for a colour: rgb(r, g, b) or rgba(r, g, b, a). */
export function parseRgb(css: string): Rgba | undefined {
  const m = /^rgba?\(\s*([\d.]+)[,\s]+([\d.]+)[,\s]+([\d.]+)(?:\s*[,/]\s*([\d.]+%?))?\s*\)$/.exec(css.trim());
  if (!m) return undefined;
  const a = m[4] === undefined ? 1 : m[4].endsWith('%') ? parseFloat(m[4]) / 100 : parseFloat(m[4]);
  return [Number(m[1]), Number(m[2]), Number(m[3]), a];
}

/** `top` painted over an opaque `bottom`. */
export function over(top: Rgba, bottom: Rgba): Rgba {
  const a = top[3];
  return [top[0] * a + bottom[0] * (1 - a), top[1] * a + bottom[1] * (1 - a), top[2] * a + bottom[2] * (1 - a), 1];
}

/** WCAG 2 relative luminance. */
export function luminance([r, g, b]: Rgba): number {
  const lin = (c: number) => {
    const s = c / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
}

export function contrast(a: Rgba, b: Rgba): number {
  const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p);
  return (x + 0.05) / (y + 0.05);
}

export const AA = 4.5;
const BLACK: Rgba = [0, 0, 0, 1];
const WHITE: Rgba = [255, 255, 255, 1];
const css = ([r, g, b]: Rgba) => `rgb(${Math.round(r)}, ${Math.round(g)}, ${Math.round(b)})`;

/**
 * A text colour for a fill, all as resolved CSS colours: the first candidate with 4.5:1 against the fill (painted
 * over `background` when translucent), else black or white. Unparseable input gives the first candidate.
 */
export function readableOn(fill: string, candidates: string[], background: string): string {
  const bg = parseRgb(background);
  const top = parseRgb(fill);
  if (!top || !bg) return candidates[0];
  const base = over(top, over(bg, WHITE));
  for (const c of candidates) {
    const rgb = parseRgb(c);
    if (rgb && contrast(over(rgb, base), base) >= AA) return c;
  }
  return contrast(BLACK, base) >= contrast(WHITE, base) ? css(BLACK) : css(WHITE);
}

/** readableOn with a cache per fill, for one render. */
export function textColours(candidates: string[], background: string): (fill: string) => string {
  const cache = new Map<string, string>();
  return (fill) => {
    let c = cache.get(fill);
    if (!c) cache.set(fill, (c = readableOn(fill, candidates, background)));
    return c;
  };
}
