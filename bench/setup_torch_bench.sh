#!/bin/sh
# Installs what bench/conv_towers_torch.py needs for /usr/bin/python3, from Debian: PyTorch (CPU),
# NumPy and Pillow. Not part of `make test`; run once before the PyTorch comparison.
set -eu
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
$SUDO apt-get install -y --no-install-recommends python3-torch python3-numpy python3-pil
/usr/bin/python3 -c 'import torch; print("torch", torch.__version__)'
