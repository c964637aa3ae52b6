// Posting to a webview panel the user closed: VS Code throws "Webview is disposed". The panel's life drops such
// posts, waiting for a page that never loads ends when the panel closes, and the results view of the last
// comparison opens again with the same content when something asks for it after its tab was closed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PanelLife, ReopeningPanel, type ContentPanel } from '../../client/editors/panelLife';

/** A webview as VS Code's extension host has it: postMessage throws once the panel is disposed. */
class FakeWebview {
  disposed = false;
  sent: string[] = [];
  postMessage(m: string): Promise<boolean> {
    if (this.disposed) throw new Error('Webview is disposed');
    this.sent.push(m);
    return Promise.resolve(true);
  }
}

test('a post waits for the page, and one after the panel closed is dropped instead of throwing', async () => {
  const webview = new FakeWebview();
  const life = new PanelLife<string>((m) => webview.postMessage(m));
  const early = life.post('early');
  await Promise.resolve();
  assert.deepEqual(webview.sent, [], 'posted before the page was ready');
  life.pageReady();
  assert.equal(await early, true);
  assert.deepEqual(webview.sent, ['early']);
  webview.disposed = true;
  life.disposedNow();
  assert.equal(life.disposed, true);
  assert.equal(await life.post('late'), false);
  assert.deepEqual(webview.sent, ['early']);
});

test('closed between the check and the post (VS Code disposed it first): false, and the panel counts as gone', async () => {
  const webview = new FakeWebview();
  const life = new PanelLife<string>((m) => webview.postMessage(m));
  life.pageReady();
  webview.disposed = true;
  assert.equal(await life.post('x'), false);
  assert.equal(life.disposed, true);
  // Any other failure is not hidden.
  const broken = new PanelLife<string>(() => Promise.reject(new Error('out of memory')));
  broken.pageReady();
  await assert.rejects(broken.post('x'), /out of memory/);
});

test('a panel closed before its page loaded: waiting for it ends (no hang), posts are dropped', async () => {
  const webview = new FakeWebview();
  const life = new PanelLife<string>((m) => webview.postMessage(m));
  const pending = life.post('graph');
  let closed = 0;
  life.onDisposed(() => closed++);
  life.disposedNow();
  life.disposedNow();
  assert.equal(await life.ready, false);
  assert.equal(await pending, false);
  assert.equal(closed, 1);
  life.onDisposed(() => closed++);
  assert.equal(closed, 2, 'a listener added after the close runs at once');
});

/** A results panel over a fake webview: draws what it is shown at once. */
class FakePanel implements ContentPanel<string, string> {
  readonly webview = new FakeWebview();
  readonly life = new PanelLife<string>((m) => this.webview.postMessage(m));
  shown: string[] = [];
  revealed = 0;
  private waiters: Array<(ok: boolean) => void> = [];
  constructor() {
    this.life.pageReady();
  }
  get disposed() {
    return this.life.disposed;
  }
  async show(content: string) {
    this.shown.push(content);
    await this.life.post(`show ${content}`);
    // The page draws a moment later.
    setTimeout(() => this.waiters.splice(0).forEach((w) => w(!this.disposed)), 5);
  }
  drawn() {
    return new Promise<boolean>((resolve) => this.waiters.push(resolve));
  }
  post(m: string) {
    return this.life.post(m);
  }
  reveal() {
    this.revealed++;
  }
  close() {
    this.webview.disposed = true;
    this.life.disposedNow();
    this.waiters.splice(0).forEach((w) => w(false));
  }
}

test('the results reopen with the same content when asked for after their tab was closed', async () => {
  const opened: FakePanel[] = [];
  const results = new ReopeningPanel<string, string>(() => {
    const p = new FakePanel();
    opened.push(p);
    return p;
  });
  assert.equal(await results.post('select conv1'), false, 'nothing shown yet: nothing to open');
  assert.equal(opened.length, 0);
  await results.show('digits results');
  assert.equal(await results.post('select conv1'), true);
  assert.equal(opened.length, 1);
  assert.equal(opened[0].revealed, 1, 'the open panel is brought to the front');
  assert.deepEqual(opened[0].webview.sent, ['show digits results', 'select conv1']);
  opened[0].close();
  // A layer clicked in the Layers view now: a new panel shows the same results, drawn before the selection.
  assert.equal(await results.post('select fc2'), true);
  assert.equal(opened.length, 2);
  assert.deepEqual(opened[1].webview.sent, ['show digits results', 'select fc2']);
  assert.deepEqual(opened[0].webview.sent, ['show digits results', 'select conv1'], 'posted to the closed panel');
  assert.equal(results.current, opened[1]);
});

test('a panel opened ahead of its content is the one shown in, and a panel closed while drawing gets no post', async () => {
  const first = new FakePanel();
  const opened: FakePanel[] = [];
  const results = new ReopeningPanel<string, string>(() => {
    const p = new FakePanel();
    opened.push(p);
    return p;
  }, first);
  await results.show('r');
  assert.deepEqual(first.shown, ['r']);
  assert.equal(opened.length, 0);
  first.close();
  const selecting = results.post('select');
  await new Promise((r) => setTimeout(r, 0));
  opened[0].close();
  assert.equal(await selecting, false);
  assert.deepEqual(opened[0].webview.sent, ['show r']);
});
