# expect: QAT003@10 QAT003@11 QAT003@49 QAT003@137 QAT003@138 QAT003@140 QAT003@163 QAT004@157
"""Post-training static quantization and QAT of a MobileNetV2-style model, in the style of the (older)
PyTorch static quantization tutorial: ConvBNReLU as an nn.Sequential, fuse_model over every module,
per-tensor then per-channel calibration, then QAT on a fresh copy."""
import os
import time

import torch
import torch.nn as nn
import torch.quantization
from torch.quantization import DeQuantStub, QuantStub


def _make_divisible(v, divisor, min_value=None):
    if min_value is None:
        min_value = divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v


class ConvBNReLU(nn.Sequential):
    def __init__(self, in_planes, out_planes, kernel_size=3, stride=1, groups=1):
        padding = (kernel_size - 1) // 2
        super(ConvBNReLU, self).__init__(
            nn.Conv2d(in_planes, out_planes, kernel_size, stride, padding, groups=groups, bias=False),
            nn.BatchNorm2d(out_planes, momentum=0.1),
            nn.ReLU(inplace=False),
        )


class InvertedResidual(nn.Module):
    def __init__(self, inp, oup, stride, expand_ratio):
        super(InvertedResidual, self).__init__()
        hidden_dim = int(round(inp * expand_ratio))
        self.use_res_connect = stride == 1 and inp == oup
        layers = []
        if expand_ratio != 1:
            layers.append(ConvBNReLU(inp, hidden_dim, kernel_size=1))
        layers.extend(
            [
                ConvBNReLU(hidden_dim, hidden_dim, stride=stride, groups=hidden_dim),
                nn.Conv2d(hidden_dim, oup, 1, 1, 0, bias=False),
                nn.BatchNorm2d(oup, momentum=0.1),
            ]
        )
        self.conv = nn.Sequential(*layers)
        self.skip_add = nn.quantized.FloatFunctional()

    def forward(self, x):
        if self.use_res_connect:
            return self.skip_add.add(x, self.conv(x))
        else:
            return self.conv(x)


class MobileNetV2(nn.Module):
    def __init__(self, num_classes=1000, width_mult=1.0):
        super(MobileNetV2, self).__init__()
        input_channel = _make_divisible(32 * width_mult, 8)
        self.last_channel = _make_divisible(1280 * max(1.0, width_mult), 8)
        features = [ConvBNReLU(3, input_channel, stride=2)]
        for t, c, n, s in [[1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 3, 2]]:
            output_channel = _make_divisible(c * width_mult, 8)
            for i in range(n):
                features.append(InvertedResidual(input_channel, output_channel, s if i == 0 else 1, t))
                input_channel = output_channel
        features.append(ConvBNReLU(input_channel, self.last_channel, kernel_size=1))
        self.features = nn.Sequential(*features)
        self.quant = QuantStub()
        self.dequant = DeQuantStub()
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(self.last_channel, num_classes))

    def forward(self, x):
        x = self.quant(x)
        x = self.features(x)
        x = x.mean([2, 3])
        x = self.classifier(x)
        x = self.dequant(x)
        return x

    def fuse_model(self, is_qat=False):
        fuse_modules = torch.ao.quantization.fuse_modules_qat if is_qat else torch.ao.quantization.fuse_modules
        for m in self.modules():
            if type(m) == ConvBNReLU:
                fuse_modules(m, ["0", "1", "2"], inplace=True)
            if type(m) == InvertedResidual:
                for idx in range(len(m.conv)):
                    if type(m.conv[idx]) == nn.Conv2d:
                        fuse_modules(m.conv, [str(idx), str(idx + 1)], inplace=True)


def evaluate(model, criterion, data_loader, neval_batches):
    model.eval()
    cnt = 0
    with torch.no_grad():
        for image, target in data_loader:
            output = model(image)
            criterion(output, target)
            cnt += 1
            if cnt >= neval_batches:
                return


def load_model(model_file):
    model = MobileNetV2()
    state_dict = torch.load(model_file, weights_only=True)
    model.load_state_dict(state_dict)
    model.to("cpu")
    return model


def print_size_of_model(model):
    torch.save(model.state_dict(), "temp.p")
    print("Size (MB):", os.path.getsize("temp.p") / 1e6)
    os.remove("temp.p")


def train_one_epoch(model, criterion, optimizer, data_loader, device, ntrain_batches):
    model.train()
    for cnt, (image, target) in enumerate(data_loader):
        start_time = time.time()
        loss = criterion(model(image.to(device)), target.to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if cnt >= ntrain_batches:
            return
        print(time.time() - start_time)


def ptq(saved_model_dir, float_model_file, criterion, data_loader, num_calibration_batches):
    myModel = load_model(saved_model_dir + float_model_file).to("cpu")
    myModel.eval()
    myModel.fuse_model()
    myModel.qconfig = torch.quantization.default_qconfig
    torch.quantization.prepare(myModel, inplace=True)
    evaluate(myModel, criterion, data_loader, neval_batches=num_calibration_batches)
    torch.quantization.convert(myModel, inplace=True)
    print_size_of_model(myModel)
    per_channel_quantized_model = load_model(saved_model_dir + float_model_file)
    per_channel_quantized_model.eval()
    per_channel_quantized_model.fuse_model()
    per_channel_quantized_model.qconfig = torch.ao.quantization.get_default_qconfig("x86")
    torch.ao.quantization.prepare(per_channel_quantized_model, inplace=True)
    evaluate(per_channel_quantized_model, criterion, data_loader, num_calibration_batches)
    torch.ao.quantization.convert(per_channel_quantized_model, inplace=True)
    return myModel, per_channel_quantized_model


def qat(saved_model_dir, float_model_file, criterion, data_loader, data_loader_test, num_train_batches):
    qat_model = load_model(saved_model_dir + float_model_file)
    qat_model.fuse_model(is_qat=True)
    optimizer = torch.optim.SGD(qat_model.parameters(), lr=0.0001)
    qat_model.qconfig = torch.ao.quantization.get_default_qat_qconfig("x86")
    torch.ao.quantization.prepare_qat(qat_model, inplace=True)
    for nepoch in range(8):
        train_one_epoch(qat_model, criterion, optimizer, data_loader, torch.device("cpu"), num_train_batches)
        if nepoch > 3:
            qat_model.apply(torch.ao.quantization.disable_observer)
        if nepoch > 2:
            qat_model.apply(torch.nn.intrinsic.qat.freeze_bn_stats)
        quantized_model = torch.ao.quantization.convert(qat_model.eval(), inplace=False)
        quantized_model.eval()
        evaluate(quantized_model, criterion, data_loader_test, neval_batches=50)
    return qat_model
