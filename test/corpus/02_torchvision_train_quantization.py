# expect: QAT003@40 QAT004@28
"""Training entry point in the style of torchvision's references/classification/train_quantization.py:
post-training quantization or QAT chosen by a flag, observers frozen after some epochs."""
import copy
import datetime
import time

import torch
import torch.ao.quantization
import torch.utils.data
import torchvision
from torch import nn

from train import evaluate, load_data, train_one_epoch


def main(args):
    device = torch.device(args.device)
    torch.backends.quantized.engine = args.backend
    dataset, dataset_test, train_sampler, test_sampler = load_data(args.data_path, args.cache_dataset)
    data_loader = torch.utils.data.DataLoader(dataset, batch_size=args.batch_size, sampler=train_sampler)
    data_loader_test = torch.utils.data.DataLoader(dataset_test, batch_size=args.eval_batch_size)
    model = torchvision.models.get_model(args.model, weights=args.weights, quantize=False)
    model.to(device)
    if not (args.test_only or args.post_training_quantize):
        model.fuse_model(is_qat=True)
        model.qconfig = torch.ao.quantization.get_default_qat_qconfig(args.backend)
        torch.ao.quantization.prepare_qat(model, inplace=True)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
    criterion = nn.CrossEntropyLoss()
    if args.post_training_quantize:
        model.eval()
        model.fuse_model(is_qat=False)
        model.qconfig = torch.ao.quantization.get_default_qconfig(args.backend)
        torch.ao.quantization.prepare(model, inplace=True)
        evaluate(model, criterion, data_loader, neval_batches=args.num_calibration_batches)
        torch.ao.quantization.convert(model, inplace=True)
        return
    model.apply(torch.ao.quantization.enable_observer)
    model.apply(torch.nn.intrinsic.qat.freeze_bn_stats)
    start_time = time.time()
    for epoch in range(args.epochs):
        train_one_epoch(model, criterion, optimizer, data_loader, device, epoch, args.print_freq)
        with torch.inference_mode():
            if epoch >= args.num_observer_update_epochs:
                model.apply(torch.ao.quantization.disable_observer)
            quantized_eval_model = copy.deepcopy(model)
            quantized_eval_model.eval()
            quantized_eval_model.to(torch.device("cpu"))
            torch.ao.quantization.convert(quantized_eval_model, inplace=True)
            evaluate(quantized_eval_model, criterion, data_loader_test, device=torch.device("cpu"))
        torch.save({"model": quantized_eval_model.state_dict(), "epoch": epoch}, f"model_{epoch}.pth")
    print(f"Training time {datetime.timedelta(seconds=int(time.time() - start_time))}")
