// `npm run bench`: every benchmark, each printing ratios against a baseline measured in the same run; what they
// recorded is written to docs/benchmarks.md (test/bench/results.ts), also when an area fails part-way.
import { repoRoot } from '../support/paths';
import { benchBuild } from './build';
import { benchCompare } from './compare';
import { benchGraph } from './graph';
import { benchLanguageServer } from './languageServer';
import { benchReliability } from './reliability';
import { recordedBenches, writeBenchmarks } from './results';
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
  try {
    for (const [name, run] of Object.entries(benches)) if (!only.length || only.includes(name)) await run();
  } finally {
    if (recordedBenches().length)
      console.log(`\nwritten: ${writeBenchmarks(repoRoot, recordedBenches(), Object.keys(benches))}`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
