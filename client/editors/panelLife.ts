// A webview panel's life as its owner sees it. VS Code throws "Webview is disposed" when something posts to a
// panel the user has closed, and a page that never loaded never says it is ready; whoever holds a panel (the
// Layers view, the selection sync, a command that finishes after the user closed its results) may post late.
// Posts go through here: dropped once the panel is gone (false, never a throw), and waiting for the page ends
// when the panel goes. Kept free of the vscode module so it can be tested on its own.

export class PanelLife<M> {
  private gone = false;
  private markReady!: (ready: boolean) => void;
  private readonly goneListeners: Array<() => void> = [];
  /** True once the page said it is ready; false when the panel closed first. */
  readonly ready: Promise<boolean>;

  constructor(private readonly send: (message: M) => PromiseLike<boolean>) {
    this.ready = new Promise((resolve) => (this.markReady = resolve));
  }

  get disposed(): boolean {
    return this.gone;
  }

  /** The page posted `ready`. */
  pageReady(): void {
    this.markReady(true);
  }

  /** The panel closed (its onDidDispose). */
  disposedNow(): void {
    if (this.gone) return;
    this.gone = true;
    this.markReady(false);
    for (const l of this.goneListeners.splice(0)) l();
  }

  /** Runs `listener` when the panel closes (at once when it has). */
  onDisposed(listener: () => void): void {
    if (this.gone) listener();
    else this.goneListeners.push(listener);
  }

  /** Posts once the page is ready; false when the panel closed before or meanwhile. */
  async post(message: M): Promise<boolean> {
    if (!(await this.ready) || this.gone) return false;
    try {
      return await this.send(message);
    } catch (err) {
      // Closed between the check and the post (VS Code marks the webview disposed before telling us).
      if (this.gone || /disposed/i.test(String((err as Error)?.message ?? err))) {
        this.disposedNow();
        return false;
      }
      throw err;
    }
  }
}

/** What the results owner needs of a panel (GraphPanel; a fake in the unit tests). */
export interface ContentPanel<C, M> {
  readonly disposed: boolean;
  /** Sends the content; resolves when it is sent. */
  show(content: C): Promise<void>;
  /** Resolves true when the page has drawn what it was last sent, false when it failed or the panel closed. */
  drawn(): Promise<boolean>;
  post(message: M): Promise<boolean>;
  /** Brings the panel to the front without taking focus. */
  reveal(): void;
}

/**
 * A results view that outlives its panel: it keeps what it showed, and when something asks for it after the
 * user closed the panel, it opens a new one with the same content instead of posting to the closed one.
 */
export class ReopeningPanel<C, M> {
  private content?: C;
  private drawing?: Promise<boolean>;

  /** `panel`: one opened already (shown while the content is still being made). */
  constructor(
    private readonly open: () => ContentPanel<C, M>,
    private panel?: ContentPanel<C, M>,
  ) {}

  /** The panel showing the content now, if it is still open. */
  get current(): ContentPanel<C, M> | undefined {
    return this.panel && !this.panel.disposed ? this.panel : undefined;
  }

  /** Shows `content` (in a new panel when there is none open); resolves once it is sent. */
  async show(content: C): Promise<void> {
    this.content = content;
    const panel = this.current ?? (this.panel = this.open());
    this.drawing = panel.drawn();
    await panel.show(content);
  }

  /**
   * Posts `message` to the results once they are drawn: to the open panel, brought to the front, or to a new one
   * showing the same content when the user closed it. False when there is nothing to show or it did not draw.
   */
  async post(message: M): Promise<boolean> {
    if (this.content === undefined) return false;
    let panel = this.current;
    if (panel) panel.reveal();
    else {
      panel = this.panel = this.open();
      this.drawing = panel.drawn();
      await panel.show(this.content);
    }
    if (!(await this.drawing)) return false;
    return panel.post(message);
  }
}
