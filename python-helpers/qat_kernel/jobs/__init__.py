"""One module per kernel method, named after it (analyze/sensitivity -> jobs/analyze_sensitivity.py): the
request run from its opening (jobs/opening.py: the config, the trained model) to its result, composing
pipeline/, analysis/ and the runtimes. A job imports no other job; what two jobs share lives in a lower
layer, or in one of the helpers here that import no job (opening.py, tvm_vs_ort.py)."""
