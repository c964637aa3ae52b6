"""CIFAR-shaped data with no download: scikit-learn's bundled digits (1,797 real 8x8 images), upsampled
to 32x32 and repeated over 3 channels, normalised, as (train, val) batches. The models see CIFAR-10's
input layout (N, 3, 32, 32) on real images; the task itself is the 10 digits."""

import torch
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split


def tensors():
    """(x_train, y_train, x_val, y_val): 1,257 training and 540 validation images, 3x32x32."""
    digits = load_digits()
    x = torch.tensor(digits.images, dtype=torch.float32).unsqueeze(1) / 16.0
    x = torch.nn.functional.interpolate(x, size=(32, 32), mode="bilinear", align_corners=False)
    x = ((x - 0.3) / 0.4).repeat(1, 3, 1, 1)
    y = torch.tensor(digits.target, dtype=torch.long)
    x_tr, x_va, y_tr, y_va = train_test_split(x, y, test_size=0.3, random_state=0, stratify=y)
    order = torch.randperm(len(x_tr), generator=torch.Generator().manual_seed(0))
    return x_tr[order], y_tr[order], x_va, y_va


def loaders(batch_size: int = 32):
    x_tr, y_tr, x_va, y_va = tensors()
    train = [(x_tr[i : i + batch_size], y_tr[i : i + batch_size]) for i in range(0, len(x_tr), batch_size)]
    val = [(x_va[i : i + batch_size], y_va[i : i + batch_size]) for i in range(0, len(x_va), batch_size)]
    return train, val
