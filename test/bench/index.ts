// `npm run bench`: every benchmark, each printing ratios against a baseline measured in the same run.
import { benchBuild } from './build';
import { benchCompare } from './compare';
import { benchGraph } from './graph';
import { benchLanguageServer } from './languageServer';
import { benchReliability } from './reliability';
import { benchSearch } from './search';
import { benchTrain } from './train';
import { benchTvmKernels } from './tvmKernels';
import { benchZoo } from './zoo';

async function main(): Promise<void> {
  const only = process.argv.slice(2);
  const benches: Record<string, () => Promise<void>> = {
    graph: benchGraph,
    languageServer: benchLanguageServer,
    compare: benchCompare,
    search: benchSearch,
    train: benchTrain,
    build: benchBuild,
    tvmKernels: benchTvmKernels,
    reliability: benchReliability,
    zoo: benchZoo,
  };
  for (const [name, run] of Object.entries(benches)) if (!only.length || only.includes(name)) await run();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
