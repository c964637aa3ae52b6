// worker_threads entry (out/server/graphWorker.js): reads and indexes a big *.qatgraph.json off the language
// server's thread, so no request waits on JSON.parse of a graph with a million modules (services/graphLoader.ts).
import { parentPort } from 'node:worker_threads';
import { readGraphSummary, type GraphSummary } from './services/graphFile';

export interface GraphRequest {
  id: number;
  file: string;
}
export interface GraphReply {
  id: number;
  graph?: GraphSummary;
}

parentPort?.on('message', (req: GraphRequest) => {
  parentPort!.postMessage({ id: req.id, graph: readGraphSummary(req.file) } satisfies GraphReply);
});
