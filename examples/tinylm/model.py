"""A small decoder-only transformer in the Llama architecture (transformers' LlamaConfig: RMSNorm, rotary
positions, SwiGLU MLP), trained from scratch on data.py's text: 2 layers of width 64, 4 heads, a 1,024-token
vocabulary, 0.24 M parameters. Its nn.Linear projections (q, k, v, o, gate, up, down and the lm_head) are what
the torchao flow quantizes.

make_model returns the FP32 model *trained*: the first call pre-trains it (a few minutes on a CPU; progress on
stderr, which the kernel's output channel shows) and caches the weights in out/; later calls load them
(torch.load(weights_only=True)), so the config says fp32_epochs: 0 and QAT fine-tunes a trained model.
`python model.py` (re)writes the cache; delete out/ to pre-train again."""

from __future__ import annotations

import sys
from pathlib import Path

import torch
from data import BLOCK, OUT, VOCAB_SIZE, loaders
from transformers import LlamaConfig, LlamaForCausalLM

FP32_EPOCHS = 4


def build(hidden: int = 64, layers: int = 2, heads: int = 4, block: int = BLOCK) -> LlamaForCausalLM:
    """The untrained model."""
    config = LlamaConfig(
        vocab_size=VOCAB_SIZE,
        hidden_size=hidden,
        intermediate_size=3 * hidden,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=heads,
        max_position_embeddings=block,
        tie_word_embeddings=False,
    )
    return LlamaForCausalLM(config)


def pretrain(model: LlamaForCausalLM, train: list[dict], epochs: int, lr: float = 3e-3) -> LlamaForCausalLM:
    """Next-token training from scratch (the model's own loss), AdamW with a one-cycle schedule."""
    steps = epochs * len(train)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=steps, pct_start=0.1)
    model.train()
    step = 0
    for epoch in range(epochs):
        for batch in train:
            opt.zero_grad()
            loss = model(**batch).loss
            loss.backward()
            opt.step()
            sched.step()
            step += 1
            if step % 25 == 0 or step == steps:
                print(
                    f"tinylm FP32 pre-training: epoch {epoch + 1}/{epochs}, step {step}/{steps}, loss {loss:.3f}",
                    file=sys.stderr,
                    flush=True,
                )
    return model.eval()


def checkpoint() -> Path:
    # per Python version: the documentation text, and so the tokenizer, differ between versions
    return OUT / f"tinylm-py{sys.version_info[0]}{sys.version_info[1]}.fp32.pt"


def make_model() -> LlamaForCausalLM:
    model = build()
    path = checkpoint()
    if path.is_file():
        model.load_state_dict(torch.load(path, map_location="cpu", weights_only=True))
        return model.eval()
    torch.manual_seed(0)
    pretrain(model, loaders()[0], FP32_EPOCHS)
    OUT.mkdir(exist_ok=True)
    partial = path.with_suffix(".tmp")
    torch.save(model.state_dict(), partial)
    partial.replace(path)  # never a half-written cache
    return model


if __name__ == "__main__":
    checkpoint().unlink(missing_ok=True)
    make_model()
    print("wrote", checkpoint())
