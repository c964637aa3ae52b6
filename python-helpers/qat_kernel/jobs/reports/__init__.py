"""Every job's report, rendered in one place: the `summary` lines a task prints and, where a job writes a report
file, its Markdown. The client shows what these return as they are; it renders nothing.

  tables.py    what the reports share: Markdown tables and cells, number formats, the latency table, parity
               with its thresholds, ONNX Runtime's precision as executed
  analysis.py  qat/train, eval/accuracy, qat/convert, analyze/histograms, export/onnx, compare/layers,
               analyze/sensitivity, kernel/info
  ort.py       build/ort (summary, build-report.md, its Q/DQ re-placement section)
  tvm.py       build/tvm (summary, build-report.md)
  deploy_c.py  deploy/c-artifact

Helpers of the jobs, like opening.py: they import no job, and take the results as the jobs return them."""
