"""TVM (Relax, 0.27) build of a QDQ ONNX model with real int8 kernels, run here or on a board.

Modules (plain functions, JSON-serialisable dict results; `progress(stage, message, fraction)` and
`check_cancelled()` callbacks where a call has stages):
  build     build_tvm(onnx_path, target, out_dir, fold_int8=True, progress=None, check_cancelled=None,
            batch=None, schedule=True, fp16=None, workspace=None), import_onnx, tvm_version
  run       run_tvm(artifact, inputs), load_tvm(artifact), load_tvm_outputs(artifact), forget_vms(folder)
  fold      fold_qdq(mod, provenance=None), count_ops(func);  schedule: the packed CPU schedule
  guard     the schedule rules applied kernel by kernel (a rule that raises falls back for that kernel)
  failures  BuildFailure: what cannot be built, with the stage, ONNX node, module and source line
  mixed     the config's fp16 layers for the build (fp16_matcher, fp16_layers), widen_accumulators(mod);
            the ONNX rewrite itself is runtimes/onnx/fp16.py
  rpc       a library run and timed on a board over TVM RPC
  c_backend TVM's C backend output (target c) for the deploy folder
  stage     compare/stages' TVM stage: the model tapped at its layers' outputs and its layers alone, built here
  job       the build/tvm job: config -> trained model -> QDQ export -> build -> parity -> latency
"""
