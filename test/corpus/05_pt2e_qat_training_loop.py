# expect: none
"""PT2E QAT with a full training loop, in the style of torchao's pt2e_quant_qat tutorial: export in train
mode, prepare_qat_pt2e, switch modes with the torchao helpers (an exported model refuses .train()/.eval()),
freeze observers and BN late, checkpoint, convert."""
import torch
import torch.nn as nn
import torchao.quantization.pt2e as pt2e
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_qat_pt2e
from torchao.quantization.pt2e.quantizer.x86_inductor_quantizer import (
    X86InductorQuantizer,
    get_default_x86_inductor_quantization_config,
)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(16)
        self.act1 = nn.ReLU()
        self.conv2 = nn.Conv2d(16, 16, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(16)
        self.act2 = nn.ReLU()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.drop = nn.Dropout(0.1)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = self.act1(self.bn1(self.conv1(x)))
        x = self.act2(self.bn2(self.conv2(x)))
        return self.fc(self.drop(torch.flatten(self.pool(x), 1)))


def train_one_epoch(model, criterion, optimizer, data_loader, device, ntrain_batches):
    pt2e.move_exported_model_to_train(model)
    for i, (image, target) in enumerate(data_loader):
        loss = criterion(model(image.to(device)), target.to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if i >= ntrain_batches:
            break


def evaluate(model, criterion, data_loader):
    pt2e.move_exported_model_to_eval(model)
    correct = 0
    with torch.no_grad():
        for image, target in data_loader:
            correct += (model(image).argmax(1) == target).sum().item()
    return correct


def main(data_loader, data_loader_test, num_epochs=10):
    example_inputs = (torch.rand(2, 3, 32, 32),)
    model = Net()
    exported_model = torch.export.export(model, example_inputs).module()
    quantizer = X86InductorQuantizer()
    quantizer.set_global(get_default_x86_inductor_quantization_config(is_qat=True))
    prepared_model = prepare_qat_pt2e(exported_model, quantizer)
    optimizer = torch.optim.SGD(prepared_model.parameters(), lr=0.0001)
    criterion = nn.CrossEntropyLoss()
    for epoch in range(num_epochs):
        train_one_epoch(prepared_model, criterion, optimizer, data_loader, "cpu", 20)
        if epoch >= 3:
            prepared_model.apply(torch.ao.quantization.disable_observer)
        if epoch >= 2:
            for n in prepared_model.graph.nodes:
                if n.target in (torch.ops.aten._native_batch_norm_legit.default, torch.ops.aten.cudnn_batch_norm.default):
                    n.args[0].meta["freeze_bn"] = True
        quantized_model = convert_pt2e(prepared_model)
        print(epoch, evaluate(quantized_model, criterion, data_loader_test))
        torch.save(prepared_model.state_dict(), f"qat_epoch_{epoch}.pt")
    return quantized_model
