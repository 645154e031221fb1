#!/bin/sh
# `cmake --install` into a private prefix: the driver (which still finds the
# OpenMP OpenBLAS and runs), the trace probe, the Babeltrace2 plugin, and
# every man page of man/ in its section's folder.
#   install.sh BUILD_DIR SOURCE_DIR TMP
set -u
build=$1 src=$2 tmp=$3
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$tmp/prefix"
mkdir -p "$tmp"
cmake --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log" 2>&1 || fail "cmake --install: $(tail -3 "$tmp/install.log")"
p=$tmp/prefix
[ -x "$p/bin/fathom" ] || fail "bin/fathom not installed"
"$p/bin/fathom" --help >"$tmp/help.txt" 2>&1 || fail "the installed fathom does not run: $(cat "$tmp/help.txt")"
grep -q "replay" "$tmp/help.txt" || fail "the installed fathom's help lacks its commands"
"$p/bin/fathom" version | grep -q "USE_OPENMP" || fail "the installed fathom does not use the OpenMP OpenBLAS"
ls "$p"/lib*/fathom/libfathom-tp.so >/dev/null 2>&1 || fail "the trace probe is not installed"
ls "$p"/lib*/babeltrace2/plugins/fathom-bt2.so >/dev/null 2>&1 || fail "the Babeltrace2 plugin is not installed"
n=0
for page in "$src"/man/*.[0-9]; do
    name=$(basename "$page")
    sec=${name##*.}
    cmp -s "$page" "$p/share/man/man$sec/$name" || fail "man page $name not installed in man$sec"
    n=$((n + 1))
done
[ "$n" -ge 9 ] || fail "only $n man pages in man/"
echo "PASS: the driver, the probe, the plugin and $n man pages installed"
rm -rf "$p"
