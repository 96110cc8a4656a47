"""OpenCLIP's ModifiedResNet (modified_resnet.py): Bottlenecks with anti-aliased strides and the
attention pool.
"""
from collections import OrderedDict

import torch
import torch.nn.functional as F
from torch import nn

class Bottleneck(nn.Module):
    def __init__(self, inplanes, planes, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.pool = nn.AvgPool2d(stride) if stride > 1 else nn.Identity()
        self.conv3 = nn.Conv2d(planes, 4 * planes, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(4 * planes)
        self.downsample = None
        if stride > 1 or inplanes != 4 * planes:
            layers = [("-1", nn.AvgPool2d(stride))] if stride > 1 else []
            layers += [("0", nn.Conv2d(inplanes, 4 * planes, 1, bias=False)), ("1", nn.BatchNorm2d(4 * planes))]
            self.downsample = nn.Sequential(OrderedDict(layers))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.pool(F.relu(self.bn2(self.conv2(out))))
        out = self.bn3(self.conv3(out))
        identity = x if self.downsample is None else self.downsample(x)
        return F.relu(out + identity)


class AttentionPool(nn.Module):
    def __init__(self, grid, channels, heads, out_dim):
        super().__init__()
        self.positional_embedding = nn.Parameter(torch.zeros(grid * grid + 1, channels))
        self.q_proj = nn.Linear(channels, channels)
        self.k_proj = nn.Linear(channels, channels)
        self.v_proj = nn.Linear(channels, channels)
        self.c_proj = nn.Linear(channels, out_dim)
        self.heads = heads

    def forward(self, x):
        n, c = x.shape[0], x.shape[1]
        x = x.flatten(2).transpose(1, 2)                      # [n, hw, c], token = row * w + col
        x = torch.cat([x.mean(dim=1, keepdim=True), x], dim=1) + self.positional_embedding
        hd = c // self.heads
        split = lambda t: t.reshape(n, -1, self.heads, hd).transpose(1, 2)
        q, k, v = split(self.q_proj(x)), split(self.k_proj(x)), split(self.v_proj(x))
        attn = torch.softmax((q * hd ** -0.5) @ k.transpose(-2, -1), dim=-1) @ v
        return self.c_proj(attn.transpose(1, 2).reshape(n, -1, c))[:, 0]


class ModifiedResNet(nn.Module):
    def __init__(self, layers, width, heads, image_size, embed_dim):
        super().__init__()
        half = width // 2
        self.conv1 = nn.Conv2d(3, half, 3, stride=2, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(half)
        self.conv2 = nn.Conv2d(half, half, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(half)
        self.conv3 = nn.Conv2d(half, width, 3, padding=1, bias=False)
        self.bn3 = nn.BatchNorm2d(width)
        inplanes = width
        for s, blocks in enumerate(layers):
            planes = width << s
            stage = []
            for i in range(blocks):
                stage.append(Bottleneck(inplanes, planes, 2 if (s > 0 and i == 0) else 1))
                inplanes = 4 * planes
            setattr(self, f"layer{s + 1}", nn.Sequential(*stage))
        self.attnpool = AttentionPool(image_size // 32, width * 32, heads, embed_dim)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.relu(self.bn2(self.conv2(x)))
        x = F.avg_pool2d(F.relu(self.bn3(self.conv3(x))), 2)
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.attnpool(x)
