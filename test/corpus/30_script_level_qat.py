# expect: QAT003@9 QAT004@33
"""A flat script, everything at module level as blog posts write them: legacy torch.quantization alias
imported once, a model trained in float, fused in train mode with fuse_modules_qat, QAT, eval, convert."""
import copy

import torch
import torch.nn as nn
import torch.optim as optim
import torch.quantization as tq

from model_eager import QuantNet
from data import loaders

train_loader, val_loader = loaders()
model = QuantNet()
criterion = nn.CrossEntropyLoss()
optimizer = optim.Adam(model.parameters(), lr=1e-3)

model.train()
for epoch in range(3):
    for x, y in train_loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch} loss {loss.item():.3f}")

float_model = copy.deepcopy(model)
torch.backends.quantized.engine = "x86"
model.qconfig = tq.get_default_qat_qconfig("x86")
model = tq.fuse_modules_qat(model, [["conv1", "bn1", "relu1"], ["conv2", "bn2", "relu2"]])
model.train()
model = tq.prepare_qat(model)
optimizer = optim.Adam(model.parameters(), lr=1e-4)
for x, y in train_loader:
    optimizer.zero_grad()
    criterion(model(x), y).backward()
    optimizer.step()

model.eval()
int8 = tq.convert(model)
with torch.no_grad():
    correct = sum((int8(x).argmax(1) == y).sum().item() for x, y in val_loader)
print(f"int8 accuracy: {correct / len(val_loader.dataset):.4f}")
torch.save(int8.state_dict(), "int8.pt")
