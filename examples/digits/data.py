"""scikit-learn's bundled digits (1,797 real 8x8 images; no download), as (train, val) batches."""
import torch
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split


def loaders(batch_size: int = 64):
    digits = load_digits()
    x = torch.tensor(digits.images, dtype=torch.float32).unsqueeze(1) / 16.0
    y = torch.tensor(digits.target, dtype=torch.long)
    x_tr, x_va, y_tr, y_va = train_test_split(x, y, test_size=0.3, random_state=0, stratify=y)
    gen = torch.Generator().manual_seed(0)
    order = torch.randperm(len(x_tr), generator=gen)
    x_tr, y_tr = x_tr[order], y_tr[order]
    train = [(x_tr[i:i + batch_size], y_tr[i:i + batch_size]) for i in range(0, len(x_tr), batch_size)]
    val = [(x_va[i:i + batch_size], y_va[i:i + batch_size]) for i in range(0, len(x_va), batch_size)]
    return train, val
