"""The convolutional CLIP image towers in plain PyTorch, one module per tower family, for
bench/conv_towers_torch.py (docs/performance.md): OpenCLIP's ModifiedResNet (resnet), timm's ConvNeXt
(convnext), ViTamin (vitamin) and MobileCLIP's FastViT MCi and MCi ViT (mobileclip), built from
torch.nn blocks with the parameter names of the `visual.*` tensors OpenCLIP stores.
"""
