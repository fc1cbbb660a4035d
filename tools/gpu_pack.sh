#!/usr/bin/env bash
# Packs what tools/gpu_check.sh needs on a GPU machine that has none of pijit's build: the built
# GoogleTest binary, the GPU bench, pijit._C for Python 3.9, that Python itself (stdlib without its
# tests) and the shared libraries they load (oneDNN, abseil, OpenCL, OpenMP), stripped, in one
# .gpu/pack.tar.xz (about 20 MB). Run after tools/build.sh, from the repository root:
#
#   bash tools/gpu_pack.sh            # here
#   tar -xJf .gpu/pack.tar.xz -C .gpu && bash tools/gpu_check.sh --pack   # there
#
# .gpu/ is kept out of git (.git/info/exclude); the device tool carries it when asked to.
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/find_python.sh
py=$(find_python 3.9)
prefix=$("$py" -c 'import sys; print(sys.prefix)')
ver=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
so=(pyscripts/pijit/_C.cpython-${ver/./}*.so)
bins=(build/tests/cpp/pijit_cpp_tests build/bench_gpu_kernels)
for f in "${so[0]}" "${bins[@]}"; do
  [ -f "$f" ] || { echo "gpu_pack: $f is not built (bash tools/build.sh)" >&2; exit 1; }
done
grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo '/.gpu/' >> .git/info/exclude

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/lib" "$stage/bin" "$stage/python/bin" "$stage/python/lib"
cp "${so[0]}" "$stage/bin/"
cp "${bins[@]}" "$stage/bin/"
# the libraries the loader finds here outside the C and C++ runtimes every Linux has
for lib in $(ldd "${so[0]}" "${bins[@]}" | awk '/=>/ {print $3}' | sort -u); do
  case $(basename "$lib") in
    libc.so*|libm.so*|libstdc++.so*|libgcc_s.so*|ld-linux*|libpthread*|libdl.so*|librt.so*) ;;
    *) cp -L "$lib" "$stage/lib/" ;;
  esac
done
cp "$py" "$stage/python/bin/python$ver"
cp -L "$prefix/lib/libpython$ver.so.1.0" "$stage/python/lib/"
(cd "$prefix/lib" && tar -cf - --exclude="python$ver/test" --exclude="python$ver/*/tests" \
   --exclude="python$ver/idlelib" --exclude="python$ver/tkinter" --exclude="python$ver/ensurepip" \
   --exclude="python$ver/site-packages" --exclude="python$ver/lib2to3" --exclude='__pycache__' "python$ver") |
  tar -xf - -C "$stage/python/lib"
find "$stage" -type f \( -name '*.so*' -o -perm -u+x \) -exec strip --strip-unneeded {} + 2>/dev/null || true
mkdir -p .gpu
tar -cJf .gpu/pack.tar.xz -C "$stage" .
echo "gpu_pack: .gpu/pack.tar.xz ($(du -h .gpu/pack.tar.xz | cut -f1)): $(cd "$stage" && ls bin lib | tr '\n' ' ')"
