#!/bin/sh
# bundle.sh FATHOM OUT [PROGRAM ...] -- a folder that runs this build of
# fathom on another x86-64 Linux without Debian's packages (a lent machine,
# new hardware to replay or tune on): OUT/lib holds the binary, every
# library it links (as ldd resolves them here) and this system's dynamic
# loader, and OUT/bin/fathom runs it through that loader, so the target's
# own C library, of any version, is never used. Each PROGRAM named (jq and
# awk for tests/bench/bench_tune.sh) is bundled the same way, as OUT/bin/NAME.
# The trace probe is not bundled: a bundled fathom runs, tunes, replays and
# analyzes (Babeltrace2's plugins are bundled); recording wants LTTng on
# the target. Copy OUT (or a tar of it)
# anywhere and put OUT/bin first in PATH.
# FATHOM_SYSROOT=DIR: FATHOM was built for another CPU against the
# libraries in DIR (scripts/cross-arm64.sh: build-arm64/build/fathom and
# build-arm64/sysroot); DIR's loader lists them, run by qemu-user
# (qemu-aarch64), they are copied from DIR, and each PROGRAM is DIR's.
set -eu
usage() { echo "usage: bundle.sh FATHOM OUT [PROGRAM ...]" >&2; exit 2; }
[ $# -ge 2 ] || usage
fathom=$1 out=$2
shift 2
[ -x "$fathom" ] || { echo "bundle.sh: $fathom is not an executable" >&2; exit 1; }
[ ! -e "$out" ] || { echo "bundle.sh: $out exists: name a new folder" >&2; exit 1; }
sysroot=${FATHOM_SYSROOT:-}
if [ -n "$sysroot" ]; then
    loader=$(ls "$sysroot"/lib/ld-linux*.so* 2>/dev/null | head -1)
    [ -n "$loader" ] || { echo "bundle.sh: $sysroot has no lib/ld-linux*.so*: not a sysroot" >&2; exit 1; }
    # ld-linux-aarch64.so.1: qemu-aarch64
    qemu=qemu-$(basename "$loader" | sed 's/^ld-linux-//; s/[.]so.*//; s/-/_/g')
    command -v "$qemu" >/dev/null || { echo "bundle.sh: no $qemu (Debian's qemu-user) to list the libraries" >&2; exit 1; }
fi
mkdir -p "$out/lib" "$out/bin"
ldd_() { # what ldd prints, by the sysroot's loader where there is one
    if [ -n "$sysroot" ]; then "$qemu" -L "$sysroot" "$loader" --list "$1"; else ldd "$1"; fi
}
libs() { # libs PATH: the libraries PATH links, into lib/ (ldd's lines in ldd.txt)
    ldd_ "$1" >"$out/ldd.txt" 2>&1 || { echo "bundle.sh: ldd $1: $(head -1 "$out/ldd.txt")" >&2; exit 1; }
    if grep -q "not found" "$out/ldd.txt"; then
        echo "bundle.sh: $1 lacks a library here: $(grep "not found" "$out/ldd.txt" | head -1)" >&2
        exit 1
    fi
    awk '/=> \// { print $3 } /^[ \t]*\/[^ ]*ld-linux/ { print $1 }' "$out/ldd.txt" | while read -r lib; do
        case $lib in
        "$sysroot"/*) ;;
        *) lib=$sysroot$lib ;; # a path on the target, in the sysroot here
        esac
        [ -e "$out/lib/$(basename "$lib")" ] || cp -L "$lib" "$out/lib/"
    done
}
add() { # add PATH NAME: the program as lib/NAME.bin, its libraries, bin/NAME
    libs "$1"
    cp -L "$1" "$out/lib/$2.bin"
    cat >"$out/bin/$2" <<WRAP
#!/bin/sh
d=\$(dirname "\$(readlink -f "\$0")")/../lib
export BABELTRACE_PLUGIN_PATH="\$d/babeltrace2/plugins\${BABELTRACE_PLUGIN_PATH:+:\$BABELTRACE_PLUGIN_PATH}"
exec "\$d/$(basename "$(ls "$out"/lib/ld-linux*.so* | head -1)")" --library-path "\$d" "\$d/$2.bin" "\$@"
WRAP
    chmod +x "$out/bin/$2"
}
add "$fathom" fathom
# Babeltrace2's plugins, which reading a trace (replay, analyze) loads (ctf,
# utils): from beside the libbabeltrace2 fathom links, into
# lib/babeltrace2/plugins, which the wrappers name in BABELTRACE_PLUGIN_PATH
bt=$(awk '/libbabeltrace2[.]so/ && /=> \// { print $3 }' "$out/ldd.txt")
case $bt in "$sysroot"/*) ;; *) bt=$sysroot$bt ;; esac
plugins=$(dirname "$bt")/babeltrace2/plugins
[ -f "$plugins/babeltrace-plugin-ctf.so" ] || { echo "bundle.sh: no Babeltrace2 ctf plugin in $plugins" >&2; exit 1; }
mkdir -p "$out/lib/babeltrace2/plugins"
for plugin in "$plugins"/babeltrace-plugin-*.so; do
    libs "$plugin"
    cp -L "$plugin" "$out/lib/babeltrace2/plugins/"
done
for p in "$@"; do
    if [ -n "$sysroot" ]; then
        path=$sysroot/usr/bin/$p
        [ -x "$path" ] || { echo "bundle.sh: $p is not in $sysroot/usr/bin" >&2; exit 1; }
    else
        path=$(command -v "$p") || { echo "bundle.sh: $p is not installed here" >&2; exit 1; }
    fi
    add "$(readlink -f "$path")" "$(basename "$p")"
done
rm -f "$out/ldd.txt"
echo "$out: $(ls "$out/bin" | tr '\n' ' ')($(du -sh "$out" | cut -f1))"
