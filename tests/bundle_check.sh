#!/bin/sh
# bundle_check.sh SOURCE_DIR FATHOM TMP -- scripts/bundle.sh makes a folder
# whose fathom runs on its own loader and libraries: a tiny model runs
# through bin/fathom, every library the process initializes comes from the
# folder (but the trace probe's lttng-ust, which the target provides or
# lacks), the bundled jq answers, and bad arguments or an existing folder
# are one-line errors that leave it as it was.
set -u
src=$1 fathom=$2 tmp=$3
fail() { echo "FAIL: $*" >&2; exit 1; }
# a sanitizer build: its loader, run as a program, keeps a dlopen's scope
# array until exit, which LeakSanitizer reports (leaks are other tests' job)
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
rm -rf "$tmp" && mkdir -p "$tmp" || fail "cannot create $tmp"
b=$tmp/bundle
sh "$src/scripts/bundle.sh" "$fathom" "$b" jq >"$tmp/out" 2>&1 || fail "bundle.sh: $(cat "$tmp/out")"
for f in bin/fathom bin/jq lib/fathom.bin lib/jq.bin; do [ -x "$b/$f" ] || fail "$f is not in the bundle"; done
ls "$b"/lib/ld-linux*.so* >/dev/null 2>&1 || fail "the loader is not in the bundle"
LTTNG_UST_REGISTER_TIMEOUT=0 "$b/bin/fathom" run memnet --preset tiny --steps 2 >"$tmp/run" 2>&1 \
    || fail "the bundled fathom does not run: $(tail -2 "$tmp/run")"
grep -q "mean step" "$tmp/run" || fail "the bundled fathom's run printed no step time: $(cat "$tmp/run")"
[ "$("$b/bin/jq" -n '1 + 2')" = 3 ] || fail "the bundled jq does not answer"
# one process (the loader, run directly): what it initializes, and from where
loader=$(ls "$b"/lib/ld-linux*.so* | head -1)
LD_DEBUG=files LTTNG_UST_REGISTER_TIMEOUT=0 "$loader" --library-path "$b/lib" "$b/lib/fathom.bin" version \
    >/dev/null 2>"$tmp/ld"
grep -q "calling init: $b/lib/libc.so" "$tmp/ld" || fail "the bundled C library was not used: $(grep 'calling init' "$tmp/ld" | head -3)"
outside=$(grep "calling init:" "$tmp/ld" | sed 's/.*calling init: //' | grep -v "^$b/lib/" | grep -v "liblttng-ust")
[ -z "$outside" ] || fail "libraries from outside the bundle: $outside"
echo "bundle: $(ls "$b/lib" | wc -l) files, $(grep -c "calling init: $b/lib/" "$tmp/ld") libraries initialized from it"
# a replay reads the trace with the bundle's Babeltrace2 plugins, which a
# machine without babeltrace2 lacks (in the reader's own process: each
# process's loader log in ld-replay.PID)
trace=$(ls "$src"/traces/reference/memnet-infer-small-*.tar.zst | head -1)
LD_DEBUG=files LD_DEBUG_OUTPUT="$tmp/ld-replay" LTTNG_UST_REGISTER_TIMEOUT=0 "$b/bin/fathom" replay "$trace" \
    --steps 1 --iterations 1 --warmup 0 --threads 1 >"$tmp/replay" 2>&1 ||
    fail "the bundled fathom does not replay: $(tail -2 "$tmp/replay")"
for p in ctf utils; do
    cat "$tmp"/ld-replay.* | grep -q "calling init: $b/.*/babeltrace2/plugins/babeltrace-plugin-$p.so" ||
        fail "the replay did not load the bundle's $p plugin: $(cat "$tmp"/ld-replay.* | grep -m1 "plugin-$p")"
done
# bad use: an existing folder, a missing program, no arguments
: >"$tmp/keep"
sh "$src/scripts/bundle.sh" "$fathom" "$b" >"$tmp/err" 2>&1 && fail "an existing folder was accepted"
grep -q "exists" "$tmp/err" || fail "no error naming the existing folder: $(cat "$tmp/err")"
[ -x "$b/bin/fathom" ] || fail "a refused bundle changed the existing one"
sh "$src/scripts/bundle.sh" "$fathom" "$tmp/b2" no-such-program-here >"$tmp/err" 2>&1 && fail "a missing program was accepted"
grep -q "no-such-program-here is not installed" "$tmp/err" || fail "no error naming the missing program: $(cat "$tmp/err")"
sh "$src/scripts/bundle.sh" >"$tmp/err" 2>&1
[ $? -eq 2 ] && grep -q usage "$tmp/err" || fail "no arguments: not a usage error"
echo "bundle_check: ok"
