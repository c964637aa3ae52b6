"""The text of Python's own documentation topics (`pydoc_data.topics`, shipped with every Python: no download),
tokenized with a byte-level BPE trained on it, as (train, val) batches for next-token prediction.

The topics are split by name, every tenth one (sorted) held out for validation, so the validation perplexity is
measured on text the model never saw. The tokenizer is trained on the training topics the first time and cached
in out/ (delete the file to train it again)."""

from __future__ import annotations

import sys
from pathlib import Path
from pydoc_data.topics import topics

import torch
from tokenizers import Tokenizer
from tokenizers.implementations import ByteLevelBPETokenizer

VOCAB_SIZE = 1024
BLOCK = 64  # tokens per training sequence
SEPARATOR = "<|endoftext|>"  # between topics
OUT = Path(__file__).resolve().parent / "out"


def split() -> tuple[list[str], list[str]]:
    """(train, val) topic texts: every tenth topic name, sorted, is held out."""
    names = sorted(topics)
    held_out = set(names[::10])
    return [topics[n] for n in names if n not in held_out], [topics[n] for n in names if n in held_out]


def tokenizer() -> Tokenizer:
    """The byte-level BPE, trained on the training topics once and cached (per Python version: its topics differ)."""
    path = OUT / f"tokenizer-py{sys.version_info[0]}{sys.version_info[1]}-{VOCAB_SIZE}.json"
    if path.is_file():
        return Tokenizer.from_file(str(path))
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(
        split()[0], vocab_size=VOCAB_SIZE, min_frequency=2, special_tokens=[SEPARATOR], show_progress=False
    )
    OUT.mkdir(exist_ok=True)
    partial = path.with_suffix(".tmp")
    bpe.save(str(partial))
    partial.replace(path)  # never a half-written cache
    return Tokenizer.from_file(str(path))


def _blocks(texts: list[str], tok: Tokenizer, block: int) -> torch.Tensor:
    """The texts' tokens, one separator after each, cut into rows of `block` tokens (the tail dropped)."""
    sep = tok.token_to_id(SEPARATOR)
    ids: list[int] = []
    for encoding in tok.encode_batch(texts):
        ids += [*encoding.ids, sep]
    rows = len(ids) // block
    return torch.tensor(ids[: rows * block]).view(rows, block)


def loaders(batch_size: int = 16, block: int = BLOCK) -> tuple[list[dict], list[dict]]:
    """(train, val): lists of {input_ids, labels} batches (Hugging Face style; labels are the input ids, the model
    shifts them), the training rows shuffled once with a fixed seed."""
    tok = tokenizer()
    train_texts, val_texts = split()
    train, val = _blocks(train_texts, tok, block), _blocks(val_texts, tok, block)
    train = train[torch.randperm(len(train), generator=torch.Generator().manual_seed(0))]

    def batches(rows: torch.Tensor) -> list[dict]:
        return [{"input_ids": b, "labels": b} for b in rows.split(batch_size)]

    return batches(train), batches(val)
