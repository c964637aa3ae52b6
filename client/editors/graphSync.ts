// Graph views of one model follow each other's selection: with its FP32, fake-quant and INT8 graphs and what ONNX
// Runtime and TVM run side by side, selecting a node in one selects its counterpart (same node name, else same
// module; a runtime's fused kernel stands for every module it covers) in the others.
// Kept free of the vscode module so it can be tested on its own.
import type { FromWebview, ToWebview } from '../../protocol/webview';

/**
 * Files of one model: the same folder and the same name up to the first dot, as the kernel writes them
 * (out/digits.fp32.qatgraph.json, out/digits.converted.qatgraph.json, out/digits.qdq.onnx).
 */
export function syncKey(fsPath: string): string {
  const cut = Math.max(fsPath.lastIndexOf('/'), fsPath.lastIndexOf('\\'));
  const base = fsPath.slice(cut + 1);
  return `${fsPath.slice(0, cut + 1)}${base.split('.')[0] || base}`;
}

export interface SyncPeer {
  post(message: ToWebview): unknown;
}

export class SelectionSync {
  private readonly peers = new Map<SyncPeer, string>();

  join(peer: SyncPeer, key: string): { dispose(): void } {
    this.peers.set(peer, key);
    return {
      dispose: () => {
        this.peers.delete(peer);
      },
    };
  }

  /** A node selected by the user in `from`: the other views of its model select the counterpart. */
  relay(from: SyncPeer, selected: Extract<FromWebview, { type: 'selected' }>): number {
    const key = this.peers.get(from);
    if (key === undefined) return 0;
    let sent = 0;
    for (const [peer, k] of this.peers) {
      if (peer === from || k !== key) continue;
      peer.post({
        type: 'selectCounterpart',
        name: selected.name,
        op: selected.op,
        ...(selected.module ? { module: selected.module } : {}),
        ...(selected.modules?.length ? { modules: selected.modules } : {}),
      });
      sent++;
    }
    return sent;
  }
}

/** One for the extension: every graph view joins it. */
export const selectionSync = new SelectionSync();

/** The stages in the order their panes open: PyTorch's FP32, fake-quant and INT8, then what the runtimes run. */
const STAGE_ORDER = ['fp32', 'prepared', 'converted', 'ort', 'tvm'];

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The stage of one of a model's graph files, or undefined for another file: <stem>.<stage>.qatgraph.json
 * (graph/export's fp32, prepared and converted, build/tvm's tvm) or <stem>.ort.onnx (graph/export's ort: the
 * graph ONNX Runtime runs). The QDQ export (<stem>.qdq.onnx) is what the runtimes start from, not a stage.
 */
export function stageOf(name: string, stem = name.split('.')[0]): string | undefined {
  const m = new RegExp(`^${escape(stem)}\\.(?:(\\w+)\\.qatgraph\\.json|(ort)\\.onnx)$`, 'i').exec(name);
  return m ? (m[1] ?? m[2]).toLowerCase() : undefined;
}

/** The graph files of one model among a folder's file names, in stage order: FP32, fake-quant, INT8, ONNX
 * Runtime, TVM (other stages after them, by name). */
export function stageFiles(names: string[], anyOfThem: string): string[] {
  const stem = anyOfThem.split('.')[0];
  const rank = (n: string) => STAGE_ORDER.indexOf(stageOf(n, stem)!) + 1 || 99;
  return names.filter((n) => stageOf(n, stem) !== undefined).sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}
