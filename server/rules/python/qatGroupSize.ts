// QAT018: a QAT prepare whose weight group size does not divide the in_features of a Linear the model has.
// Read from the Python source only: the model's class is defined in this file and assigns
// `self.x = nn.Linear(<int literal>, ...)` in __init__ (directly or inside nn.Sequential / nn.ModuleList), and
// the group size is a literal: Int4WeightOnlyConfig(group_size=N), Int8DynamicActivationIntxWeightConfig(
// weight_granularity=PerGroup(N)), IntxWeightOnlyConfig(granularity=PerGroup(N)) or
// weight_config=IntxFakeQuantizeConfig(..., group_size=N). No filter_fn (which could leave that Linear out).
// What torchao 0.18 does (test/rule-claims/test_qat018_group_size.py): the Intx configs make quantize_ raise
// ValueError "in_features (K) % group_size (N) must be == 0"; Int4WeightOnlyConfig prepares and the first
// forward raises RuntimeError "shape '[out, -1, N]' is invalid for input of size ...".
import type { RuleInput } from '../../analysis/document';
import type { StoredFinding } from '../../analysis/findings';
import { groupSize, lastName, modulesOf, qatUses } from './torchaoQat';

export function qatGroupSize(input: RuleInput): StoredFinding[] {
  const findings: StoredFinding[] = [];
  for (const use of qatUses(input)) {
    if (use.step !== 'prepare' || use.filtered) continue;
    const n = groupSize(input, use);
    if (!n || n <= 0) continue;
    const mods = modulesOf(input, use);
    const bad = mods?.leaves.find((l) => l.m === 'Linear' && l.in !== undefined && l.in % n !== 0);
    if (!mods || !bad) continue;
    const k = bad.in!;
    const int4 = use.base && lastName(use.base) === 'Int4WeightOnlyConfig';
    findings.push({
      code: 'QAT018',
      severity: 'error',
      start: use.config.from,
      end: use.config.to,
      message: int4
        ? `group_size ${n} does not divide the in_features (${k}) of an nn.Linear in ${mods.cls}: this prepare succeeds, then ` +
          `the first forward raises RuntimeError "shape '[out_features, -1, ${n}]' is invalid". Use a group size that divides ${k}.`
        : `group_size ${n} does not divide the in_features (${k}) of an nn.Linear in ${mods.cls}: quantize_ raises ValueError ` +
          `"in_features (${k}) % group_size (${n}) must be == 0". Use a group size that divides ${k}.`,
    });
  }
  return findings;
}
