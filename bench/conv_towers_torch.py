#!/usr/bin/python3
"""Plain-PyTorch reference for the convolutional CLIP image towers (docs/performance.md).

Builds OpenCLIP's ModifiedResNet and timm's ConvNeXt, ViTamin, FastViT MCi (MobileCLIP-S, in the un-fused
training-time form OpenCLIP runs it) and MCi ViT (MobileCLIP-B) as OpenCLIP's TimmModel wraps them,
from torch.nn building blocks, loads the `visual.*` tensors of a visalign model directory (for example
`visalign clip random-model --arch RN50`), checks that its image embeddings match
`visalign clip embed` on a few PNGs, then times batch-32 image embeddings on N threads (wall
clock and process CPU time: on a shared machine images per CPU-second is the comparable figure).
Needs Debian's python3-torch, python3-numpy and python3-pil (bench/setup_torch.sh); not run by the tests.

  bench/conv_towers_torch.py --visalign build/src/cli/visalign --model models/RN50 [--threads 2]
"""
import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile
import time
from collections import OrderedDict

import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image
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


# ---- ModifiedResNet -----------------------------------------------------------------------------

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


# ---- timm ConvNeXt + OpenCLIP head --------------------------------------------------------------

TIMM_CONVNEXT = {
    "convnext_tiny": ([3, 3, 9, 3], [96, 192, 384, 768]),
    "convnext_small": ([3, 3, 27, 3], [96, 192, 384, 768]),
    "convnext_base": ([3, 3, 27, 3], [128, 256, 512, 1024]),
    "convnext_large": ([3, 3, 27, 3], [192, 384, 768, 1536]),
    "convnext_xlarge": ([3, 3, 27, 3], [256, 512, 1024, 2048]),
}


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


# ---- ViTamin (timm vitamin.py: conv stem, MbConv-LN stages, ViT with GeGLU MLPs) ----------------

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


# ---- timm FastViT MCi (fastvit.py), un-fused as OpenCLIP runs it, and the MCi ViT ----------------

FASTVIT_MCI = {  # layers, embed_dims, mlp_ratio, attention stages (the last N), SE downsamples, large (mci3/4)
    "fastvit_mci0": ([2, 6, 10, 2], [64, 128, 256, 512], 3, 1, True, False),
    "fastvit_mci1": ([4, 12, 20, 4], [64, 128, 256, 512], 3, 1, True, False),
    "fastvit_mci2": ([4, 12, 24, 4], [80, 160, 320, 640], 3, 1, True, False),
    "fastvit_mci3": ([2, 12, 24, 4, 2], [96, 192, 384, 768, 1536], 4, 2, False, True),
    "fastvit_mci4": ([2, 12, 24, 4, 4], [128, 256, 512, 1024, 2048], 4, 2, False, True),
}


class ConvBn(nn.Module):
    def __init__(self, cin, cout, k, stride, groups):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False)
        self.bn = nn.BatchNorm2d(cout)

    def forward(self, x):
        return self.bn(self.conv(x))


class SE(nn.Module):
    def __init__(self, c, rd):
        super().__init__()
        self.fc1 = nn.Conv2d(c, rd, 1)
        self.fc2 = nn.Conv2d(rd, c, 1)

    def forward(self, x):
        return x * torch.sigmoid(self.fc2(F.relu(self.fc1(x.mean((2, 3), keepdim=True)))))


class MobileOne(nn.Module):
    def __init__(self, cin, cout, k, stride=1, groups=1, scale=True, branches=1, se=False, act=True):
        super().__init__()
        self.identity = nn.BatchNorm2d(cin) if cin == cout and stride == 1 else None
        self.conv_scale = ConvBn(cin, cout, 1, stride, groups) if k > 1 and scale else None
        self.conv_kxk = nn.ModuleList([ConvBn(cin, cout, k, stride, groups) for _ in range(branches)])
        self.se = SE(cout, max(1, int(cout / 16 + 0.5))) if se else None
        self.act = act

    def forward(self, x):
        out = 0
        if self.identity is not None:
            out = self.identity(x)
        if self.conv_scale is not None:
            out = out + self.conv_scale(x)
        for c in self.conv_kxk:
            out = out + c(x)
        if self.se is not None:
            out = self.se(out)
        return F.gelu(out) if self.act else out


class LargeKernel(nn.Module):
    def __init__(self, cin, cout, se):
        super().__init__()
        self.large_conv = ConvBn(cin, cout, 7, 2, cin)
        self.small_conv = ConvBn(cin, cout, 3, 2, cin)
        self.se = SE(cout, max(8, int(cout * 0.25 + 4) // 8 * 8)) if se else None

    def forward(self, x):
        out = self.large_conv(x) + self.small_conv(x)
        return F.gelu(self.se(out) if self.se is not None else out)


class Gamma(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.gamma = nn.Parameter(torch.ones(c, 1, 1))


class ConvFfn(nn.Module):
    def __init__(self, c, hidden):
        super().__init__()
        self.conv = ConvBn(c, c, 7, 1, c)
        self.fc1 = nn.Conv2d(c, hidden, 1)
        self.fc2 = nn.Conv2d(hidden, c, 1)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(self.conv(x))))


class RepMixer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.norm = MobileOne(c, c, 3, groups=c, scale=False, branches=0, act=False)
        self.mixer = MobileOne(c, c, 3, groups=c, act=False)
        self.layer_scale = Gamma(c)

    def forward(self, x):
        return x + self.layer_scale.gamma * (self.mixer(x) - self.norm(x))


class RepMixerBlock(nn.Module):
    def __init__(self, c, ratio):
        super().__init__()
        self.token_mixer = RepMixer(c)
        self.mlp = ConvFfn(c, int(c * ratio))
        self.layer_scale = Gamma(c)

    def forward(self, x):
        x = self.token_mixer(x)
        return x + self.layer_scale.gamma * self.mlp(x)


class SpatialAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.qkv = nn.Linear(c, 3 * c, bias=False)
        self.proj = nn.Linear(c, c)
        self.heads = c // 32

    def forward(self, x):
        b, c, h, w = x.shape
        t = x.flatten(2).transpose(1, 2)
        q, k, v = self.qkv(t).reshape(b, h * w, 3, self.heads, 32).permute(2, 0, 3, 1, 4)
        y = (torch.softmax((q * 32 ** -0.5) @ k.transpose(-2, -1), dim=-1) @ v).transpose(1, 2).reshape(b, h * w, c)
        return self.proj(y).transpose(1, 2).reshape(b, c, h, w)


class AttentionBlock(nn.Module):
    def __init__(self, c, ratio, layer_norm):
        super().__init__()
        self.norm = LayerNorm2d(c, eps=1e-5) if layer_norm else nn.BatchNorm2d(c)
        self.token_mixer = SpatialAttention(c)
        self.layer_scale_1 = Gamma(c)
        self.mlp = ConvFfn(c, int(c * ratio))
        self.layer_scale_2 = Gamma(c)

    def forward(self, x):
        x = x + self.layer_scale_1.gamma * self.token_mixer(self.norm(x))
        return x + self.layer_scale_2.gamma * self.mlp(x)


class PosEnc(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.pos_enc = nn.Conv2d(c, c, 7, 1, 3, groups=c)

    def forward(self, x):
        return x + self.pos_enc(x)


class FastVitStage(nn.Module):
    def __init__(self, prev, c, depth, ratio, attention, se, large):
        super().__init__()
        self.downsample = (nn.Sequential(OrderedDict([("proj", nn.Sequential(LargeKernel(prev, c, se), MobileOne(c, c, 1)))]))
                           if prev else nn.Identity())
        self.pos_emb = PosEnc(c) if attention else nn.Identity()
        self.blocks = nn.Sequential(*[AttentionBlock(c, ratio, large) if attention else RepMixerBlock(c, ratio)
                                      for _ in range(depth)])

    def forward(self, x):
        return self.blocks(self.pos_emb(self.downsample(x)))


class FastVitHead(nn.Module):
    def __init__(self, c, embed_dim):
        super().__init__()
        self.fc = nn.Linear(c, embed_dim)


class FastVitTrunk(nn.Module):
    def __init__(self, name, kwargs, embed_dim):
        super().__init__()
        layers, dims, ratio, attention_stages, se, large = FASTVIT_MCI[name]
        layers, dims = kwargs.get("layers", layers), kwargs.get("embed_dims", dims)
        c0 = dims[0]
        self.stem = nn.Sequential(MobileOne(3, c0, 3, 2, scale=not large), MobileOne(c0, c0, 3, 2, c0, scale=not large),
                                  MobileOne(c0, c0, 1))
        n = len(layers)
        self.stages = nn.Sequential(*[FastVitStage(dims[i - 1] if i else 0, dims[i], layers[i], ratio,
                                                   i >= n - attention_stages, se and i >= 2, large) for i in range(n)])
        self.final_conv = MobileOne(dims[-1], 2 * dims[-1], 3, groups=dims[-1], se=True)
        self.head = FastVitHead(2 * dims[-1], embed_dim)

    def forward(self, x):
        return self.head.fc(self.final_conv(self.stages(self.stem(x))).mean((2, 3)))


class VitBlock(nn.Module):
    def __init__(self, c, heads, hidden):
        super().__init__()
        self.norm1 = nn.LayerNorm(c, eps=1e-6)
        self.attn = nn.Module()
        self.attn.qkv = nn.Linear(c, 3 * c)
        self.attn.proj = nn.Linear(c, c)
        self.norm2 = nn.LayerNorm(c, eps=1e-6)
        self.mlp = Mlp(c, hidden)
        self.heads = heads

    def forward(self, x):
        b, n, c = x.shape
        q, k, v = self.attn.qkv(self.norm1(x)).reshape(b, n, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        a = torch.softmax((q * (c // self.heads) ** -0.5) @ k.transpose(-2, -1), dim=-1) @ v
        x = x + self.attn.proj(a.transpose(1, 2).reshape(b, n, c))
        return x + self.mlp(self.norm2(x))


class ConvNormGelu(nn.Module):
    def __init__(self, cin, cout, k, last):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, k, k, bias=last)
        self.bn = nn.Identity() if last else nn.BatchNorm2d(cout)
        self.last = last

    def forward(self, x):
        x = self.bn(self.conv(x))
        return x if self.last else F.gelu(x)


class MciVitTrunk(nn.Module):
    def __init__(self, kwargs, embed_dim):
        super().__init__()
        size, depth = kwargs.get("img_size", 224), kwargs.get("depth", 12)
        heads, ratio = kwargs.get("num_heads", 12), kwargs.get("mlp_ratio", 4.0)
        self.patch_embed = nn.Module()
        self.patch_embed.backbone = nn.Sequential(ConvNormGelu(3, 192, 4, False), ConvNormGelu(192, 192, 2, False),
                                                  ConvNormGelu(192, 768, 2, True))
        self.cls_token = nn.Parameter(torch.zeros(1, 1, 768))
        self.pos_embed = nn.Parameter(torch.zeros(1, (size // 16) ** 2, 768))
        self.blocks = nn.Sequential(*[VitBlock(768, heads, int(768 * ratio)) for _ in range(depth)])
        self.norm = nn.LayerNorm(768, eps=1e-6)
        self.head = nn.Linear(768, embed_dim)

    def forward(self, x):
        x = self.patch_embed.backbone(x).flatten(2).transpose(1, 2) + self.pos_embed
        x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], dim=1)
        return self.head(self.norm(self.blocks(x))[:, 0])


class TimmTower(nn.Module):
    def __init__(self, trunk):
        super().__init__()
        self.trunk = trunk

    def forward(self, x):
        return self.trunk(x)


def build_tower(model_dir):
    cfg = json.load(open(os.path.join(model_dir, "open_clip_config.json")))
    m, v = cfg["model_cfg"], cfg["model_cfg"]["vision_cfg"]
    kwargs = v.get("timm_model_kwargs") or {}
    if v.get("timm_model_name", "").startswith("fastvit_mci"):
        tower = TimmTower(FastVitTrunk(v["timm_model_name"], kwargs, m["embed_dim"]))
    elif v.get("timm_model_name") == "vit_base_mci_224":
        tower = TimmTower(MciVitTrunk(kwargs, m["embed_dim"]))
    elif v.get("timm_model_name", "").startswith("vitamin"):
        tower = VitaminTower(v["timm_model_name"], v.get("timm_model_kwargs") or {}, v["image_size"], m["embed_dim"])
    elif "timm_model_name" in v:
        depths, dims = TIMM_CONVNEXT[v["timm_model_name"]]
        if v.get("timm_proj", "linear") != "linear" or v.get("timm_proj_bias"):
            sys.exit("only timm_proj linear without bias is built here")
        tower = ConvNeXtTower(kwargs.get("depths", depths), kwargs.get("dims", dims), 1e-6, m["embed_dim"])
    else:
        width = v.get("width", 64)
        tower = ModifiedResNet(v["layers"], width, width * 32 // v.get("head_width", 64), v["image_size"], m["embed_dim"])
    weights = [f for f in ("open_clip_model.safetensors", "model.safetensors") if os.path.exists(os.path.join(model_dir, f))][0]
    state = read_safetensors(os.path.join(model_dir, weights), "visual.")
    tower.load_state_dict(state, strict=True)
    return tower.eval(), cfg


def check_against_native(tower, cfg, visalign, model_dir, images=4):
    size = cfg["preprocess_cfg"]["size"]
    pre = cfg["preprocess_cfg"]
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        paths, pixels = [], []
        for i in range(images):
            rgb = rng.integers(0, 256, size=(size, size, 3), dtype=np.uint8)
            paths.append(os.path.join(tmp, f"img{i}.png"))
            Image.fromarray(rgb).save(paths[-1])
            x = (rgb.astype(np.float32) / 255.0 - np.array(pre["mean"], np.float32)) / np.array(pre["std"], np.float32)
            pixels.append(x.transpose(2, 0, 1))
        cmd = [visalign, "clip", "embed", "--clip-model", model_dir, "--json"]
        for p in paths:
            cmd += ["--image", p]
        native = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    ours = np.array([im["embedding"] for im in native["images"]], np.float32)
    with torch.no_grad():
        ref = tower(torch.from_numpy(np.stack(pixels))).numpy()
    unit = lambda a: a / np.linalg.norm(a, axis=1, keepdims=True)
    return float(np.abs(unit(ours) - unit(ref)).max()), float(np.abs(ours - ref).max() / np.abs(ref).max())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True, help="visalign model directory (OpenCLIP layout)")
    ap.add_argument("--visalign", required=True, help="the visalign binary, for the parity check")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    tower, cfg = build_tower(a.model)
    normalized, relative = check_against_native(tower, cfg, a.visalign, a.model)
    size = cfg["preprocess_cfg"]["size"]
    x = torch.randn(a.batch, 3, size, size, generator=torch.Generator().manual_seed(1))
    times, cpu = [], []
    with torch.no_grad():
        tower(x)  # warm-up
        for _ in range(a.repeats):
            start, start_cpu = time.perf_counter(), time.process_time()
            tower(x)
            times.append(time.perf_counter() - start)
            cpu.append(time.process_time() - start_cpu)
    best = min(times)
    print(json.dumps({"model": a.model, "torch": torch.__version__, "threads": a.threads, "batch": a.batch,
                      "parity_max_abs_normalized": normalized, "parity_max_rel_unnormalized": relative,
                      "seconds_per_batch": times, "cpu_seconds_per_batch": cpu, "images_per_s_best": a.batch / best,
                      "images_per_s_mean": a.batch * len(times) / sum(times)}, indent=2))
    if normalized > 1e-4:
        sys.exit(f"native and PyTorch embeddings differ (max |normalised difference| {normalized:.2e})")


if __name__ == "__main__":
    main()
