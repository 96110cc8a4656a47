"""MobileCLIP's image towers: timm's FastViT MCi (fastvit.py), un-fused as OpenCLIP runs it
(MobileCLIP-S), and the MCi ViT vit_base_mci_224 (MobileCLIP-B).
"""
from collections import OrderedDict

import torch
import torch.nn.functional as F
from torch import nn

from torch_towers.common import LayerNorm2d, Mlp

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
