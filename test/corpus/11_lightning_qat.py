# expect: QAT004@35
"""QAT with PyTorch Lightning in the style of its QuantizationAwareTraining examples: a LightningModule that
holds the float model, eager QAT prepared in setup, evaluated under torch.no_grad."""
import lightning.pytorch as pl
import torch
import torch.ao.quantization as tq
from torch import nn
from torch.nn import functional as F


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.quant = tq.QuantStub()
        self.fc1 = nn.Linear(64, 32)
        self.relu = nn.ReLU()
        self.fc2 = nn.Linear(32, 10)
        self.dequant = tq.DeQuantStub()

    def forward(self, x):
        return self.dequant(self.fc2(self.relu(self.fc1(self.quant(x)))))


class LitQAT(pl.LightningModule):
    def __init__(self, lr=1e-3):
        super().__init__()
        self.model = Classifier()
        self.lr = lr

    def setup(self, stage):
        if stage == "fit":
            self.model.train()
            self.model.qconfig = tq.get_default_qat_qconfig("x86")
            tq.fuse_modules_qat(self.model, [["fc1", "relu"]], inplace=True)
            tq.prepare_qat(self.model, inplace=True)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self.model(x), y)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        with torch.no_grad():
            self.log("val_acc", (self.model(x).argmax(1) == y).float().mean())

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.lr)

    def export_int8(self):
        self.model.eval()
        return tq.convert(self.model)


if __name__ == "__main__":
    trainer = pl.Trainer(max_epochs=3)
    lit = LitQAT()
    trainer.fit(lit)
    torch.save(lit.export_int8().state_dict(), "int8.pt")
