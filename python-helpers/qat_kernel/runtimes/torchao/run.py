"""Timing and memory of a language model's deployment: next-token generation (greedy, KV cache through
transformers' generate where the model has it, else a plain forward loop over the whole sequence), one prefill
forward, and the process's resident memory sampled while a model is built and run."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

RSS_SAMPLE_S = 0.001


def rss_bytes() -> int:
    """The process's resident set size now (/proc/self/statm; 0 where it cannot be read)."""
    import os

    try:
        pages = int(Path("/proc/self/statm").read_text(encoding="ascii").split()[1])
    except (OSError, ValueError, IndexError):
        return 0
    return pages * os.sysconf("SC_PAGE_SIZE")


class PeakRss:
    """Resident memory while inside, sampled every millisecond by a thread (torch's kernels release the GIL):
    `delta` is the highest sample minus the resident size on entry. The allocator may keep pages another model
    freed, so a row measured after a larger one can read low: a figure per row, not an exact accounting."""

    def __init__(self) -> None:
        self.start = 0
        self.peak = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _sample(self) -> None:
        while not self._stop.wait(RSS_SAMPLE_S):
            self.peak = max(self.peak, rss_bytes())

    def __enter__(self) -> PeakRss:
        import gc

        gc.collect()
        self.start = self.peak = rss_bytes()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.peak = max(self.peak, rss_bytes())

    @property
    def delta(self) -> int:
        return max(0, self.peak - self.start)


def is_generator(model: Any) -> bool:
    """A transformers model with generate (and so a KV cache)."""
    return callable(getattr(model, "generate", None)) and hasattr(model, "generation_config")


def logits_of(out: Any) -> Any:
    return out.logits if hasattr(out, "logits") else (out[0] if isinstance(out, (tuple, list)) else out)


def greedy(model: Any, new_tokens: int) -> Callable[[np.ndarray], Any]:
    """prompt ids (batch, length) -> the prompt and `new_tokens` greedy tokens after it."""
    import torch

    if is_generator(model):

        def generate(ids: np.ndarray) -> Any:
            x = torch.from_numpy(np.ascontiguousarray(ids))
            # the kernel binds a positional forward(*inputs) -> prediction on the instance (model_io.bind); generate
            # calls the class's forward with keywords and reads its output object: unbound while it runs
            bound = model.__dict__.pop("forward", None)
            try:
                with torch.no_grad():
                    return model.generate(
                        x,
                        attention_mask=torch.ones_like(x),
                        max_new_tokens=new_tokens,
                        min_new_tokens=new_tokens,
                        do_sample=False,
                        use_cache=True,
                        pad_token_id=0,
                    )
            finally:
                if bound is not None:
                    model.forward = bound

        return generate

    def loop(ids: np.ndarray) -> Any:
        x = torch.from_numpy(np.ascontiguousarray(ids))
        with torch.no_grad():
            for _ in range(new_tokens):
                step = logits_of(model(x))[:, -1].argmax(-1, keepdim=True)
                x = torch.cat([x, step], 1)
        return x

    return loop


def prefill(model: Any) -> Callable[[np.ndarray], Any]:
    """prompt ids (batch, length) -> the logits of one forward over the prompt."""
    import torch

    def forward(ids: np.ndarray) -> Any:
        with torch.no_grad():
            return logits_of(model(torch.from_numpy(np.ascontiguousarray(ids))))

    return forward


def timed_once(fn: Callable[[np.ndarray], Any], ids: np.ndarray) -> tuple[Any, float]:
    t0 = time.perf_counter()
    out = fn(ids)
    return out, time.perf_counter() - t0
