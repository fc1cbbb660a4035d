#!/usr/bin/env bash
# Installs pijit's build and test dependencies from Debian's repositories (idempotent: does
# nothing when they are already present).
set -euo pipefail
pkgs=(cmake g++ make ccache libdnnl-dev libasmjit-dev libabsl-dev libgtest-dev python3-numpy python3-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "pijit: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
