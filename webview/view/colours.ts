// Theme colours written as `var(--vscode-x, fallback)` resolved to concrete ones, for the canvas and for
// exports that must render outside VS Code. One hidden probe element serves every resolver.
let probe: HTMLElement | undefined;

/** A resolver with its own cache: make a new one per render, so a theme change is picked up next time. */
export function colourResolver(): (css: string) => string {
  if (!probe?.isConnected) {
    probe = document.createElement('span');
    probe.style.display = 'none';
    document.body.append(probe);
  }
  const el = probe;
  const cache = new Map<string, string>();
  return (css) => {
    let c = cache.get(css);
    if (!c) {
      el.style.color = css;
      c = getComputedStyle(el).color;
      cache.set(css, c);
    }
    return c;
  };
}
