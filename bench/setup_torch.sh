#!/usr/bin/env bash
# Installs Debian's PyTorch for /usr/bin/python3, used only by the PyTorch comparisons in bench/
# (e.g. bench/siglip_torch_benchmark.py); `make test` never needs it. Idempotent.
set -euo pipefail
if /usr/bin/python3 -c "import torch" 2>/dev/null; then
  echo "setup_torch: python3-torch present"
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq || { echo "setup_torch: error: apt-get update failed" >&2; exit 1; }
$SUDO apt-get install -y -qq --no-install-recommends python3-torch python3-numpy >/dev/null ||
  { echo "setup_torch: error: could not install Debian package python3-torch" >&2; exit 1; }
echo "setup_torch: done"
