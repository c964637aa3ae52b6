// The kernel RPC contract as TypeScript: method names, error codes and the types generated from
// kernel-rpc.schema.json (the one declaration both sides check against).
import type {
  BuildTvmParams,
  BuildTvmResult,
  CompareLayersParams,
  CompareLayersResult,
  EvalAccuracyParams,
  EvalAccuracyResult,
  ExportOnnxParams,
  ExportOnnxResult,
  KernelErrorData,
  KernelInfoParams,
  KernelInfoResult,
  LayerResult,
  LogParams,
  ProgressParams,
  QatTrainParams,
  QatTrainResult,
  SensitivityLayer,
  SensitivityParams,
  SensitivityResult,
} from '../build/generated/kernel-rpc';
import type {
  BenchRunParams,
  BenchRunResult,
  BuildOrtParams,
  BuildOrtResult,
  DeployCParams,
  DeployCResult,
  VerifyParityParams,
  VerifyParityResult,
} from '../build/generated/kernel-rpc';

export type {
  BuildTvmParams,
  BuildTvmResult,
  CompareLayersParams,
  CompareLayersResult,
  EvalAccuracyParams,
  EvalAccuracyResult,
  ExportOnnxParams,
  ExportOnnxResult,
  KernelErrorData,
  KernelInfoParams,
  KernelInfoResult,
  LayerResult,
  LogParams,
  ProgressParams,
  QatTrainParams,
  QatTrainResult,
  SensitivityLayer,
  SensitivityParams,
  SensitivityResult,
};
export type {
  BenchRunParams,
  BenchRunResult,
  BuildOrtParams,
  BuildOrtResult,
  DeployCParams,
  DeployCResult,
  VerifyParityParams,
  VerifyParityResult,
};

import type {
  GraphExportParams,
  GraphExportResult,
  GraphModule,
  GraphNodeJson,
  ModelGraph,
  QatConvertParams,
  QatConvertResult,
} from '../build/generated/kernel-rpc';
export type {
  GraphExportParams,
  GraphExportResult,
  GraphModule,
  GraphNodeJson,
  ModelGraph,
  QatConvertParams,
  QatConvertResult,
};
import type { Histogram, HistogramsParams, HistogramsResult, LayerHistograms } from '../build/generated/kernel-rpc';
export type { Histogram, HistogramsParams, HistogramsResult, LayerHistograms };
import type { QdqInsertion, QdqReplacement, QdqReplacementSide } from '../build/generated/kernel-rpc';
export type { QdqInsertion, QdqReplacement, QdqReplacementSide };
import type { BuildInductorParams, BuildInductorResult } from '../build/generated/kernel-rpc';
export type { BuildInductorParams, BuildInductorResult };

export interface KernelMethods {
  'kernel/info': { params: KernelInfoParams; result: KernelInfoResult };
  'compare/layers': { params: CompareLayersParams; result: CompareLayersResult };
  'qat/train': { params: QatTrainParams; result: QatTrainResult };
  'eval/accuracy': { params: EvalAccuracyParams; result: EvalAccuracyResult };
  'export/onnx': { params: ExportOnnxParams; result: ExportOnnxResult };
  'analyze/sensitivity': { params: SensitivityParams; result: SensitivityResult };
  'build/tvm': { params: BuildTvmParams; result: BuildTvmResult };
  'build/ort': { params: BuildOrtParams; result: BuildOrtResult };
  'build/inductor': { params: BuildInductorParams; result: BuildInductorResult };
  'verify/parity': { params: VerifyParityParams; result: VerifyParityResult };
  'deploy/c-artifact': { params: DeployCParams; result: DeployCResult };
  'bench/run': { params: BenchRunParams; result: BenchRunResult };
  'graph/export': { params: GraphExportParams; result: GraphExportResult };
  'qat/convert': { params: QatConvertParams; result: QatConvertResult };
  'analyze/histograms': { params: HistogramsParams; result: HistogramsResult };
}
export type KernelMethod = keyof KernelMethods;

export const KernelNotifications = {
  progress: '$/progress',
  log: 'kernel/log',
} as const;

/** error.code of a failed kernel request; error.data is a KernelErrorData. */
export const KernelErrorCode = {
  cancelled: -32800,
  configInvalid: -32001,
  userCode: -32002,
  packageMissing: -32003,
  outOfMemory: -32004,
  internal: -32603,
} as const;
import type { ObserverDrift } from '../build/generated/kernel-rpc';
export type { ObserverDrift };
