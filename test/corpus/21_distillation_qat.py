# expect: QAT004@32
"""QAT with knowledge distillation: the float teacher stays in eval mode, the quantized student trains; each
epoch the student is evaluated in eval mode and put back in train mode."""
import copy

import torch
import torch.ao.quantization as tq
import torch.nn.functional as F

from models import student_net, teacher_net


def kd_loss(student_logits, teacher_logits, target, t=4.0, alpha=0.7):
    soft = F.kl_div(F.log_softmax(student_logits / t, 1), F.softmax(teacher_logits / t, 1), reduction="batchmean")
    return alpha * soft * t * t + (1 - alpha) * F.cross_entropy(student_logits, target)


def evaluate(model, loader):
    model.eval()
    with torch.no_grad():
        return sum((model(x).argmax(1) == y).sum().item() for x, y in loader)


def main(train_loader, val_loader, epochs=5):
    teacher = teacher_net()
    teacher.load_state_dict(torch.load("teacher.pt", weights_only=True))
    teacher.eval()
    student = student_net()
    student.train()
    student.qconfig = tq.get_default_qat_qconfig("x86")
    student = tq.fuse_modules_qat(student, [["conv1", "bn1", "relu1"]])
    student = tq.prepare_qat(student)
    opt = torch.optim.SGD(student.parameters(), lr=1e-3, momentum=0.9)
    for epoch in range(epochs):
        student.train()
        for x, y in train_loader:
            with torch.no_grad():
                t_logits = teacher(x)
            loss = kd_loss(student(x), t_logits, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(epoch, evaluate(student, val_loader))
    int8 = tq.convert(copy.deepcopy(student).eval())
    torch.save(int8.state_dict(), "student_int8.pt")
