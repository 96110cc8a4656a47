#!/usr/bin/env bash
# Set-up of bench/clip_vs_pytorch.py (not of `make test`): Debian's PyTorch for /usr/bin/python3 and
# OpenBLAS as the system BLAS. Debian's torch calls the libblas.so.3 alternative, which is the
# reference BLAS (~50x slower) unless OpenBLAS is installed and selected. Idempotent.
set -euo pipefail

PACKAGES=(python3-torch python3-numpy libopenblas0-pthread)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup_pytorch: installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
fi

arch_triplet=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
openblas=/usr/lib/${arch_triplet}/openblas-pthread/libblas.so.3
if [ ! -e "$openblas" ]; then
  echo "setup_pytorch: $openblas missing after installing libopenblas0-pthread" >&2
  exit 1
fi
update-alternatives --set "libblas.so.3-${arch_triplet}" "$openblas" >/dev/null
echo "setup_pytorch: libblas.so.3 -> $(readlink -f /usr/lib/${arch_triplet}/libblas.so.3)"
/usr/bin/python3 -c "import torch; print('setup_pytorch: torch', torch.__version__)"
