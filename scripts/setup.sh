#!/usr/bin/env bash
# Installs the Debian packages visalign needs to build, test and run its demo.
# Idempotent: runs `apt-get update` only when a package is missing; fails loudly naming the package.
# `setup.sh --fuzz` adds what `make fuzz` needs: clang 14, its libFuzzer/sanitizer runtimes and OpenMP.
set -euo pipefail

PACKAGES=(
  build-essential cmake pkg-config ccache
  libopencv-core-dev libopencv-imgproc-dev libopencv-imgcodecs-dev
  libeigen3-dev libboost-math-dev libdnnl-dev ocl-icd-opencl-dev opencl-c-headers opencl-clhpp-headers
  nlohmann-json3-dev libcli11-dev libfmt-dev libspdlog-dev
  libsqlite3-dev libpq-dev postgresql
  libcurl4-openssl-dev libcpp-httplib-dev libssl-dev zlib1g-dev libpng-dev libdeflate-dev libspng-dev libturbojpeg0-dev libwebp-dev libfftw3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libutf8proc-dev libre2-dev libsentencepiece-dev libtomlplusplus-dev
  python3-numpy python3-pil
  nodejs chromium fonts-dejavu-core clang-format-14
)
# npm (the report's build step): part of some nodejs builds (NodeSource), a package of its own in Debian.
if ! command -v npm >/dev/null 2>&1; then PACKAGES+=(npm); fi
if [ "${1:-}" = "--fuzz" ]; then PACKAGES+=(clang-14 libclang-rt-14-dev libomp-14-dev); fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PACKAGES[@]} packages present"
  exit 0
fi

echo "setup: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq || { echo "setup: error: apt-get update failed" >&2; exit 1; }
for p in "${missing[@]}"; do
  if ! $SUDO apt-get install -y -qq --no-install-recommends "$p" >/dev/null; then
    echo "setup: error: could not install Debian package '$p'" >&2
    exit 1
  fi
done
echo "setup: done"
