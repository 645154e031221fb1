#!/usr/bin/env bash
# build-matrix.sh [DIR] -- builds fathom the ways users' habits do: the four
# CMake build types (Debug, Release, RelWithDebInfo, MinSizeRel) with gcc and
# clang, warnings as errors, each in DIR/COMPILER-TYPE (default
# build-matrix/). To keep CI short each builds the libraries and the driver
# (target fathom: every line a user's build compiles) and clang's Debug build
# the whole tree (tests, fuzz targets) too; MATRIX_TARGETS="all" builds the
# whole tree everywhere. Prints one line a build with its time; stops at the
# first failure with the compiler's first error. MATRIX_ONLY="clang-Debug
# gcc-Release" builds only those.
set -euo pipefail
cd "$(dirname "$0")/.."
root=${1:-build-matrix}
jobs=$(nproc)
start=$(date +%s)
mkdir -p "$root"
for cc in gcc clang; do
    command -v $cc >/dev/null || { echo "build-matrix: $cc is not installed" >&2; exit 1; }
    for type in Debug Release RelWithDebInfo MinSizeRel; do
        case " ${MATRIX_ONLY:-$cc-$type} " in *" $cc-$type "*) ;; *) continue ;; esac
        dir=$root/$cc-$type
        targets=${MATRIX_TARGETS:-fathom}
        [ "$cc-$type" = clang-Debug ] && targets=all
        t=$(date +%s)
        CC=$cc cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=$type -DFATHOM_WERROR=ON >"$dir.log" 2>&1 ||
            { echo "build-matrix: $cc $type: cmake failed:" >&2; tail -5 "$dir.log" >&2; exit 1; }
        if ! cmake --build "$dir" -j"$jobs" --target $targets >>"$dir.log" 2>&1; then
            echo "build-matrix: $cc $type ($targets) failed:" >&2
            grep -m5 -E "error|Error" "$dir.log" >&2 || tail -5 "$dir.log" >&2
            exit 1
        fi
        echo "build-matrix: $cc $type ($targets): ok in $(($(date +%s) - t)) s"
    done
done
echo "build-matrix: ok in $(($(date +%s) - start)) s"
