// `npm run bench reliability`: 10,000 mutated ONNX files plus the hostile shapes (test/reliability/onnxRun.ts).
import { describe, runOnnxReliability } from '../reliability/onnxRun';

export async function benchReliability(): Promise<void> {
  const stats = await runOnnxReliability(10_000, 20261204, true);
  console.log(`\n## reliability (onnx)\n${describe(stats)}`);
  for (const c of stats.crashes.slice(0, 5)) console.log(`  crash: ${c}`);
  for (const h of stats.hangs.slice(0, 5)) console.log(`  hang: ${h}`);
}
