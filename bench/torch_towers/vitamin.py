"""timm's ViTamin (vitamin.py): conv stem, MbConv-LN stages, ViT with GeGLU MLPs, with OpenCLIP's
linear head.
"""
from collections import OrderedDict

import torch
import torch.nn.functional as F
from torch import nn

from torch_towers.common import LayerNorm2d

TIMM_VITAMIN = {  # name: (stem width, stage widths, ViT width, depth, heads, pos_embed)
    "vitamin_small_224": (64, (64, 128), 384, 14, 6, True),
    "vitamin_base_224": (128, (128, 256), 768, 14, 12, True),
    "vitamin_large_224": (160, (160, 320), 1024, 31, 16, True),
    "vitamin_xlarge_256": (192, (192, 384), 1152, 32, 16, False),
}


def ln2d(c):
    return LayerNorm2d(c, eps=1e-6)


class VitaminStem(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = nn.Conv2d(3, c, 3, stride=2, padding=1)
        self.norm1 = ln2d(c)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1)

    def forward(self, x):
        return self.conv2(F.gelu(self.norm1(self.conv1(x))))


class Downsample(nn.Module):
    def __init__(self, c_in, c):
        super().__init__()
        self.pool = nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False)
        self.expand = nn.Conv2d(c_in, c, 1) if c_in != c else nn.Identity()

    def forward(self, x):
        return self.expand(self.pool(x))


class MbConvLN(nn.Module):
    def __init__(self, c_in, c, stride):
        super().__init__()
        mid = 4 * c
        self.shortcut = Downsample(c_in, c) if stride == 2 else nn.Identity()
        self.pre_norm = ln2d(c_in)
        self.conv1_1x1 = nn.Conv2d(c_in, mid, 1)
        self.conv2_kxk = nn.Conv2d(mid, mid, 3, stride=stride, padding=1, groups=mid)
        self.conv3_1x1 = nn.Conv2d(mid, c, 1)

    def forward(self, x):
        y = F.gelu(self.conv2_kxk(F.gelu(self.conv1_1x1(self.pre_norm(x)))))
        return self.conv3_1x1(y) + self.shortcut(x)


class StridedConv(nn.Module):
    def __init__(self, c_in, c):
        super().__init__()
        self.proj = nn.Conv2d(c_in, c, 3, stride=2, padding=1)
        self.norm = ln2d(c_in)

    def forward(self, x):
        return self.proj(self.norm(x))


class Backbone(nn.Module):
    def __init__(self, stem, stages, width):
        super().__init__()
        self.stem = VitaminStem(stem)
        ins = [stem, stages[0]]
        self.stages = nn.Sequential(*[nn.Sequential(*[MbConvLN(ins[s] if j == 0 else stages[s], stages[s], 2 if j == 0 else 1)
                                                      for j in range(depth)]) for s, depth in enumerate((2, 4))])
        self.pool = StridedConv(stages[1], width)

    def forward(self, x):
        return self.pool(self.stages(self.stem(x)))


class PatchEmbed(nn.Module):
    def __init__(self, backbone):
        super().__init__()
        self.backbone = backbone


class Attention(nn.Module):
    def __init__(self, w, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(w, 3 * w)
        self.proj = nn.Linear(w, w)

    def forward(self, x):
        b, n, w = x.shape
        q, k, v = self.qkv(x).reshape(b, n, 3, self.heads, w // self.heads).permute(2, 0, 3, 1, 4)
        a = ((q * (w // self.heads) ** -0.5) @ k.transpose(-2, -1)).softmax(-1)
        return self.proj((a @ v).transpose(1, 2).reshape(b, n, w))


class GeGluMlp(nn.Module):
    def __init__(self, w, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(w, eps=1e-6)
        self.w0 = nn.Linear(w, hidden)
        self.w1 = nn.Linear(w, hidden)
        self.w2 = nn.Linear(hidden, w)

    def forward(self, x):
        x = self.norm(x)
        return self.w2(F.gelu(self.w0(x)) * self.w1(x))


class VitBlock(nn.Module):
    def __init__(self, w, heads, hidden):
        super().__init__()
        self.norm1 = nn.LayerNorm(w, eps=1e-6)
        self.attn = Attention(w, heads)
        self.norm2 = nn.LayerNorm(w, eps=1e-6)
        self.mlp = GeGluMlp(w, hidden)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class VitaminTrunk(nn.Module):
    def __init__(self, stem, stages, width, depth, heads, hidden, tokens, pos_embed):
        super().__init__()
        self.patch_embed = PatchEmbed(Backbone(stem, stages, width))
        self.pos_embed = nn.Parameter(torch.zeros(1, tokens, width)) if pos_embed else None
        self.blocks = nn.Sequential(*[VitBlock(width, heads, hidden) for _ in range(depth)])
        self.fc_norm = nn.LayerNorm(width, eps=1e-6)

    def forward(self, x):
        x = self.patch_embed.backbone(x).flatten(2).transpose(1, 2)
        if self.pos_embed is not None:
            x = x + self.pos_embed
        return self.fc_norm(self.blocks(x).mean(dim=1))


class VitaminTower(nn.Module):
    def __init__(self, name, kwargs, image_size, embed_dim):
        super().__init__()
        stem, stages, width, depth, heads, pos_embed = TIMM_VITAMIN[name]
        depth = kwargs.get("depth", depth)
        heads = kwargs.get("num_heads", heads)
        hidden = int(width * kwargs.get("mlp_ratio", 2.0))
        grid = image_size
        for _ in range(4):
            grid = (grid - 1) // 2 + 1
        self.trunk = VitaminTrunk(stem, stages, width, depth, heads, hidden, grid * grid, pos_embed)
        self.head = nn.Sequential(OrderedDict([("proj", nn.Linear(width, embed_dim, bias=False))]))

    def forward(self, x):
        return self.head(self.trunk(x))
