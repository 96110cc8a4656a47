#!/usr/bin/env python3
"""Writes the file `visalign hues run --embeddings FILE` reads, for any open_clip model (EVA, CoCa, ...).
Usage: visalign hues board --json > board.json
       python3 hues_embeddings_open_clip.py ARCH PRETRAINED WORDS.txt OUT.safetensors ["{}" template]
Needs open_clip_torch and safetensors (pip). Not run by the tests; the layout is in docs/hues.md."""
import json, sys
import numpy as np, open_clip, torch
from PIL import Image
from safetensors.numpy import save_file

arch, pretrained, words_file, out = sys.argv[1:5]
template = sys.argv[5] if len(sys.argv) > 5 else "{}"
model, _, preprocess = open_clip.create_model_and_transforms(arch, pretrained=pretrained)
model.eval()
size = model.visual.image_size if isinstance(model.visual.image_size, int) else model.visual.image_size[0]
cells = json.load(open("board.json"))["cells"]  # the 480 cells in board order
words = [w.strip() for w in open(words_file, encoding="utf-8") if w.strip()]
with torch.no_grad():
    patches = torch.stack([preprocess(Image.new("RGB", (size, size), tuple(c["rgb"]))) for c in cells])
    board = model.encode_image(patches).float().numpy()
    texts = model.encode_text(open_clip.get_tokenizer(arch)([template.format(w) for w in words])).float().numpy()
save_file({"board": np.ascontiguousarray(board), "words": np.ascontiguousarray(texts)}, out,
          metadata={"format": "visalign-hues-embeddings v1", "words": json.dumps(words),
                    "prompt_template": template, "model": f"{arch} {pretrained}"})
