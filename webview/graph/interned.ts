// A table of distinct strings, each named by its index: what crosses from the layout worker to the page as a
// short list and an index per use (tensor names of the edges, the scene's fills and labels).
export class Interned {
  readonly list: string[] = [];
  private readonly index = new Map<string, number>();

  /** The index of `s`, added at the end the first time. */
  id(s: string): number {
    let k = this.index.get(s);
    if (k === undefined) {
      k = this.list.length;
      this.list.push(s);
      this.index.set(s, k);
    }
    return k;
  }
}
