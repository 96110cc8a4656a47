"""What the tower families share: reading a safetensors file's tensors, and the blocks several
families use (timm's LayerNorm2d, the GELU MLP).
"""
import json
import struct

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

def read_safetensors(path, prefix):
    with open(path, "rb") as f:
        header_len = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(header_len))
        base = 8 + header_len
        out = {}
        for name, info in header.items():
            if name == "__metadata__" or not name.startswith(prefix):
                continue
            if info["dtype"] != "F32":
                continue  # num_batches_tracked (I64) is not a parameter of the forward pass
            start, end = info["data_offsets"]
            f.seek(base + start)
            values = np.frombuffer(f.read(end - start), dtype="<f4").reshape(info["shape"])
            out[name[len(prefix):]] = torch.from_numpy(values.copy())
        return out


class LayerNorm2d(nn.LayerNorm):
    def forward(self, x):
        return F.layer_norm(x.permute(0, 2, 3, 1), self.normalized_shape, self.weight, self.bias, self.eps).permute(0, 3, 1, 2)


class Mlp(nn.Module):
    def __init__(self, c, hidden):
        super().__init__()
        self.fc1 = nn.Linear(c, hidden)
        self.fc2 = nn.Linear(hidden, c)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))
