#!/bin/sh
# `cmake --install` into a private prefix: the driver (which still finds the
# OpenMP OpenBLAS and runs), the trace probe, the Babeltrace2 plugin, and
# every man page of man/ in its section's folder.  Then the installed tree is
# moved elsewhere and, with the build folder out of reach (a private mount
# namespace hides it under an empty tmpfs; where that cannot be made, the
# probe that `fathom version` reports must still be the moved one), it
# records a tiny run, analyzes it (also through babeltrace2 --plugin-path and
# BABELTRACE_PLUGIN_PATH) and replays it.
#   install.sh BUILD_DIR SOURCE_DIR TMP
# Env as tests/trace/lib.sh: FATHOM, TRACE_MLP, TEST_TMP (= TMP).
build=$1 src=$2
. "$(dirname "$0")/trace/lib.sh"
command -v jq >/dev/null || fail "jq is not installed"
tmp=$T
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
note "the driver, the probe, the plugin and $n man pages installed"

# the tree moved to a folder outside the build folder
m=$(mktemp -d /tmp/fathom-moved.XXXXXX) || fail "mktemp"
trap 'cleanup; rm -rf "$m"' EXIT
mv "$p" "$m/fathom" || fail "cannot move the installed tree"
P=$m/fathom
probe=$(ls "$P"/lib*/fathom/libfathom-tp.so)
plugins=$(dirname "$(ls "$P"/lib*/babeltrace2/plugins/fathom-bt2.so)")
"$P/bin/fathom" version >"$tmp/version.txt" 2>&1 || fail "fathom version: $(cat "$tmp/version.txt")"
grep -qx "probe: $probe" "$tmp/version.txt" || fail "the moved fathom does not name its own probe: $(grep probe "$tmp/version.txt")"
grep -qx "plugin: $plugins/fathom-bt2.so (babeltrace2 --plugin-path=$plugins)" "$tmp/version.txt" \
    || fail "the moved fathom does not name its own plugin: $(grep plugin "$tmp/version.txt")"

ensure_sessiond
# the steps run from the moved copy; the build folder (and the source tree)
# hidden when a mount namespace can be made
cat >"$m/steps.sh" <<'STEPS'
set -u
P=$1 plugins=$2 w=$3
fail() { echo "FAIL: $*" >&2; exit 1; }
export TMPDIR=$w/tmp PATH=$P/bin:$PATH
mkdir -p "$TMPDIR"
unset FATHOM_TP_LIB
fathom record autoenc --preset tiny --steps 3 --quiet -o "$w/a.tar.zst" >"$w/rec.out" 2>"$w/rec.err" \
    || fail "record from the moved install: $(tail -3 "$w/rec.err")"
fathom analyze breakdown --format json "$w/a.tar.zst" >"$w/a.json" 2>"$w/a.err" || fail "analyze: $(cat "$w/a.err")"
jq -e '.traces[0].model == "autoenc" and .traces[0].steps == 3 and (.traces[0].op_types | length) > 0' "$w/a.json" \
    >/dev/null || fail "analyze: not the 3-step autoenc trace: $(head -c 200 "$w/a.json")"
mkdir -p "$w/x" && tar -C "$w/x" --zstd -xf "$w/a.tar.zst" || fail "cannot extract the archive"
babeltrace2 --plugin-path="$plugins" "$w/x/trace" -c sink.fathom.breakdown -p 'format="json"' >"$w/bt.json" 2>"$w/bt.err" \
    || fail "babeltrace2 --plugin-path -c sink.fathom.breakdown: $(head -3 "$w/bt.err")"
BABELTRACE_PLUGIN_PATH=$plugins babeltrace2 "$w/x/trace" -c sink.fathom.breakdown -p 'format="json"' >"$w/env.json" \
    2>"$w/env.err" || fail "BABELTRACE_PLUGIN_PATH babeltrace2 -c sink.fathom.breakdown: $(head -3 "$w/env.err")"
fathom analyze breakdown --format json "$w/x" >"$w/dir.json" || fail "analyze of the extracted folder"
cmp -s "$w/dir.json" "$w/bt.json" || fail "the installed plugin and fathom analyze disagree"
cmp -s "$w/dir.json" "$w/env.json" || fail "the plugin through BABELTRACE_PLUGIN_PATH and fathom analyze disagree"
fathom replay --iterations 1 --warmup 0 --format json "$w/a.tar.zst" >"$w/replay.json" 2>"$w/replay.err" \
    || fail "replay from the moved install: $(tail -3 "$w/replay.err")"
jq -e '.model == "autoenc" and .predicted_step_ns > 0 and .ops_executed > 0' "$w/replay.json" >/dev/null \
    || fail "replay printed no prediction: $(head -c 200 "$w/replay.json")"
STEPS
hide=""
if [ "$(id -u)" = 0 ] && unshare --mount true 2>/dev/null; then
    hide="mount -t tmpfs fathom-hidden '$build' && mount -t tmpfs fathom-hidden '$src' && "
    note "build folder and source tree hidden in a private mount namespace"
    unshare --mount sh -c "$hide sh '$m/steps.sh' '$P' '$plugins' '$m'" || fail "from the moved install (build folder hidden)"
else
    note "no mount namespace here: the build folder stays reachable, the moved probe is checked by path"
    sh "$m/steps.sh" "$P" "$plugins" "$m" || fail "from the moved install"
fi
note "recorded $(jq '.traces[0].op_types | length' "$m/a.json") op types; analyzed (CLI, --plugin-path, BABELTRACE_PLUGIN_PATH) and replayed from $P"
echo "PASS: installed, moved, and recorded, analyzed and replayed from the moved copy"
