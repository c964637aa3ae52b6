"""The zoo suite runs in the zoo environment (torch 2.14.1, torchvision, timm, transformers): one real kernel process
per model, the stages in the order a user meets them (later stages reuse the model trained by the first)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
HELPERS = REPO / "python-helpers"
sys.path[:0] = [str(HELPERS), str(HELPERS / "tests")]

from rpc_client import KernelClient  # noqa: E402

TABLE = REPO / ".test-artifacts" / "zoo.json"


class Kernels:
    """One kernel at a time: the next model's first stage closes the previous model's kernel (and its memory)."""

    def __init__(self):
        self.model: str | None = None
        self.client: KernelClient | None = None

    def for_model(self, model: str) -> KernelClient:
        if model != self.model:
            self.close()
            self.model, self.client = model, KernelClient()
        return self.client

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
        self.model = self.client = None


@pytest.fixture(scope="session")
def kernels():
    k = Kernels()
    yield k
    k.close()


@pytest.fixture(scope="session")
def table():
    """{model: {stage: {ok, seconds, kind?, message?}}}, written to .test-artifacts/zoo.json at the end."""
    rows: dict = {}
    yield rows
    TABLE.parent.mkdir(parents=True, exist_ok=True)
    TABLE.write_text(json.dumps(rows, indent=1), encoding="utf-8")
