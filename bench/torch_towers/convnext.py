"""timm's ConvNeXt (convnext.py) with OpenCLIP's linear head.
"""
from collections import OrderedDict

import torch
from torch import nn

from torch_towers.common import LayerNorm2d, Mlp

TIMM_CONVNEXT = {
    "convnext_tiny": ([3, 3, 9, 3], [96, 192, 384, 768]),
    "convnext_small": ([3, 3, 27, 3], [96, 192, 384, 768]),
    "convnext_base": ([3, 3, 27, 3], [128, 256, 512, 1024]),
    "convnext_large": ([3, 3, 27, 3], [192, 384, 768, 1536]),
    "convnext_xlarge": ([3, 3, 27, 3], [256, 512, 1024, 2048]),
}


class ConvNeXtBlock(nn.Module):
    def __init__(self, c, eps):
        super().__init__()
        self.conv_dw = nn.Conv2d(c, c, 7, padding=3, groups=c)
        self.norm = nn.LayerNorm(c, eps=eps)
        self.mlp = Mlp(c, 4 * c)
        self.gamma = nn.Parameter(torch.ones(c))

    def forward(self, x):
        y = self.norm(self.conv_dw(x).permute(0, 2, 3, 1))
        return x + (self.mlp(y) * self.gamma).permute(0, 3, 1, 2)


class Stage(nn.Module):
    def __init__(self, c_in, c, depth, eps):
        super().__init__()
        self.downsample = nn.Sequential(LayerNorm2d(c_in, eps=eps), nn.Conv2d(c_in, c, 2, stride=2)) if c_in else nn.Identity()
        self.blocks = nn.Sequential(*[ConvNeXtBlock(c, eps) for _ in range(depth)])

    def forward(self, x):
        return self.blocks(self.downsample(x))


class Head(nn.Module):
    def __init__(self, c, eps):
        super().__init__()
        self.norm = nn.LayerNorm(c, eps=eps)

    def forward(self, x):
        return self.norm(x.mean(dim=(2, 3)))


class Trunk(nn.Module):
    def __init__(self, depths, dims, eps):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, dims[0], 4, stride=4), LayerNorm2d(dims[0], eps=eps))
        self.stages = nn.Sequential(*[Stage(dims[i - 1] if i else 0, dims[i], depths[i], eps) for i in range(4)])
        self.head = Head(dims[-1], eps)

    def forward(self, x):
        return self.head(self.stages(self.stem(x)))


class ConvNeXtTower(nn.Module):
    def __init__(self, depths, dims, eps, embed_dim):
        super().__init__()
        self.trunk = Trunk(depths, dims, eps)
        self.head = nn.Sequential(OrderedDict([("proj", nn.Linear(dims[-1], embed_dim, bias=False))]))

    def forward(self, x):
        return self.head(self.trunk(x))
