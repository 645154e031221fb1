#!/usr/bin/env bash
# setup.sh -- installs fathom's dependencies (Debian 12) and builds it.
#   scripts/setup.sh [BUILD_DIR] [extra cmake args...]
# Run it as root; as another user it calls sudo for the package steps only.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shift || true

pkgs=(build-essential cmake pkg-config
      libopenblas-openmp-dev liblttng-ust-dev liblttng-ctl-dev lttng-tools
      libbabeltrace2-dev babeltrace2 libarchive-dev zstd libjansson-dev libcairo2-dev libcmocka-dev
      jq procps python3 chromium fonts-dejavu-core mandoc
      clang libclang-rt-14-dev   # the libFuzzer targets (fuzz/)
      clang-format               # the style check (tests/format_check.sh)
      qemu-user                  # other CPUs for the portable checks (tests/portable_qemu.sh)
      gcc-aarch64-linux-gnu)     # the arm64 cross build (scripts/cross-arm64.sh)
# apt-get and update-alternatives need root: sudo only when not root (a fresh
# Debian machine where the user is root has no sudo).
as_root=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup: not root and no sudo: run this as root" >&2; exit 1; }
  as_root=(sudo)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# OpenBLAS and the engine's kernels share one OpenMP pool: select Debian's
# OpenMP build of OpenBLAS when several are installed.
arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
for alt in libopenblas.so libopenblas.so.0; do
  target=/usr/lib/$arch/openblas-openmp/$alt
  if [ -e "$target" ] && update-alternatives --list "$alt-$arch" >/dev/null 2>&1 &&
     [ "$(readlink -f "/etc/alternatives/$alt-$arch")" != "$target" ]; then
    "${as_root[@]}" update-alternatives --set "$alt-$arch" "$target" >/dev/null
  fi
done

cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build "$build" -j"$(nproc)"
