#!/bin/sh
# bundle.sh FATHOM OUT [PROGRAM ...] -- a folder that runs this build of
# fathom on another x86-64 Linux without Debian's packages (a lent machine,
# new hardware to replay or tune on): OUT/lib holds the binary, every
# library it links (as ldd resolves them here) and this system's dynamic
# loader, and OUT/bin/fathom runs it through that loader, so the target's
# own C library, of any version, is never used. Each PROGRAM named (jq and
# awk for tests/bench/bench_tune.sh) is bundled the same way, as OUT/bin/NAME.
# The trace probe is not bundled: a bundled fathom runs, tunes, replays and
# analyzes; recording wants LTTng on the target. Copy OUT (or a tar of it)
# anywhere and put OUT/bin first in PATH.
set -eu
usage() { echo "usage: bundle.sh FATHOM OUT [PROGRAM ...]" >&2; exit 2; }
[ $# -ge 2 ] || usage
fathom=$1 out=$2
shift 2
[ -x "$fathom" ] || { echo "bundle.sh: $fathom is not an executable" >&2; exit 1; }
[ ! -e "$out" ] || { echo "bundle.sh: $out exists: name a new folder" >&2; exit 1; }
mkdir -p "$out/lib" "$out/bin"
add() { # add PATH NAME: the program as lib/NAME.bin, its libraries, bin/NAME
    ldd "$1" >"$out/ldd.txt" 2>&1 || { echo "bundle.sh: ldd $1: $(head -1 "$out/ldd.txt")" >&2; exit 1; }
    if grep -q "not found" "$out/ldd.txt"; then
        echo "bundle.sh: $1 lacks a library here: $(grep "not found" "$out/ldd.txt" | head -1)" >&2
        exit 1
    fi
    awk '/=> \// { print $3 } /^[ \t]*\/[^ ]*ld-linux/ { print $1 }' "$out/ldd.txt" | while read -r lib; do
        [ -e "$out/lib/$(basename "$lib")" ] || cp -L "$lib" "$out/lib/"
    done
    cp -L "$1" "$out/lib/$2.bin"
    cat >"$out/bin/$2" <<WRAP
#!/bin/sh
d=\$(dirname "\$(readlink -f "\$0")")/../lib
exec "\$d/$(basename "$(ls "$out"/lib/ld-linux*.so* | head -1)")" --library-path "\$d" "\$d/$2.bin" "\$@"
WRAP
    chmod +x "$out/bin/$2"
}
add "$fathom" fathom
for p in "$@"; do
    path=$(command -v "$p") || { echo "bundle.sh: $p is not installed here" >&2; exit 1; }
    add "$(readlink -f "$path")" "$(basename "$p")"
done
rm -f "$out/ldd.txt"
echo "$out: $(ls "$out/bin" | tr '\n' ' ')($(du -sh "$out" | cut -f1))"
