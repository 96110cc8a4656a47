#!/usr/bin/env bash
# Installs Debian's PyTorch for /usr/bin/python3 and makes OpenBLAS the system BLAS, used only by the
# PyTorch comparisons in bench/ (clip_vs_pytorch.py, siglip_torch_benchmark.py, conv_towers_torch.py); `make test` never
# needs it. Debian's torch calls the libblas.so.3 alternative, which is the reference BLAS (~50x
# slower) unless OpenBLAS is installed and selected. Idempotent.
set -euo pipefail
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
PACKAGES=(python3-torch python3-numpy python3-pil libopenblas0-pthread)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq || { echo "setup_torch: error: apt-get update failed" >&2; exit 1; }
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
    { echo "setup_torch: error: could not install Debian packages ${missing[*]}" >&2; exit 1; }
fi
triplet=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
openblas=/usr/lib/${triplet}/openblas-pthread/libblas.so.3
[ -e "$openblas" ] || { echo "setup_torch: error: $openblas missing after installing libopenblas0-pthread" >&2; exit 1; }
$SUDO update-alternatives --set "libblas.so.3-${triplet}" "$openblas" >/dev/null
echo "setup_torch: python3-torch present; libblas.so.3 -> $(readlink -f /usr/lib/${triplet}/libblas.so.3)"
