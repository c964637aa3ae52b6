"""Benchmarks that `npm run bench` runs from python-helpers/ (`python -m benchmarks.<name>`); not shipped."""
