"""TVM (Relax, 0.27) build of a QDQ ONNX model with real int8 kernels, parity and latency.

Modules (plain functions, JSON-serialisable dict results; `progress(stage, message, fraction)` and
`check_cancelled()` callbacks where a call has stages):
  build     build_tvm(onnx_path, target, out_dir, fold_int8=True, progress=None, check_cancelled=None,
            batch=None, schedule=True, fp16=None, workspace=None), import_onnx, tvm_version
  run       run_tvm(artifact, inputs), load_tvm(artifact), verify_parity(onnx_path, artifact, inputs,
            reference_int8_outputs=None), run_ort, strip_qdq(onnx_path, out_path)
  bench     backend_rows(onnx_path, work_dir, target, rows): the comparison rows, built; compare_backends timed
  targets   resolve_target(target), PRESETS, elf_machine(path), host_arch
  fold      fold_qdq(mod, provenance=None), count_ops(func);  schedule: the packed CPU schedule
  guard     the schedule rules applied kernel by kernel (a rule that raises falls back for that kernel)
  failures  BuildFailure: what cannot be built, with the stage, ONNX node, module and source line
  mixed     convert_fp16_layers(model, match), pattern_matcher(patterns), widen_accumulators(mod)
  rpc       a library run and timed on a board over TVM RPC
  job       the build/tvm job: config -> trained model -> QDQ export -> build -> parity -> latency
"""
