#!/bin/sh
# decode_hostile.sh FATHOM CTFGEN_TOOL REFERENCE_DIR TMP -- a corrupt trace
# never takes fathom down: CTF that crashes Babeltrace2's decoder (an ops
# sequence whose length is negative as a C int) and CTF that makes it spin
# (LTTng metadata truncated mid-packet), both made here by generators, give
# every reader a one-line error naming the trace and a non-zero exit within
# seconds, and leave no temporary tree behind.
set -u
FATHOM=$1 GEN=$2 REF=$3
. "$(dirname "$0")/cli_lib.sh"
cli_begin decode-hostile "$4"
# the decoder's default limits: they follow the trace's size (tracer/isolate.h);
# under ASan they are four times as long, and a spinning decoder starved on
# the loaded 2-core VM took 16-18 s of wall time: the stall watchdog stops it
# sooner there
export TMPDIR="$T/tmp"
[ "${FATHOM_TEST_SANITIZED:-0}" != 1 ] || export FATHOM_DECODE_STALL=2
mkdir -p "$TMPDIR"

# 1. a negative sequence length (Babeltrace2 2.0.4 crashes on it)
"$GEN" "$T/neg" conv alexnet train 3 schema=2 lying_length=2147483649 >/dev/null || exit 1
#    and in schema 3, its ops records packed
"$GEN" "$T/neg3" conv alexnet train 3 schema=3 lying_length=2147483649 >/dev/null || exit 1
# 2. truncated metadata: a reference archive's LTTng (packetized) metadata cut
#    at sizes where the ctf plugin spins, then archived again
ref=$(ls "$REF"/memnet-train-*.tar.zst | head -1)
mkdir "$T/x" && tar -C "$T/x" -xf "$ref" || exit 1
md=$(find "$T/x" -name metadata | head -1)
[ -n "$md" ] || { fail "no metadata in $ref"; cli_end "decode-hostile"; }
full=$(wc -c <"$md")
cuts=""
for n in 3000; do
    [ "$n" -lt "$full" ] || continue
    rm -rf "$T/cut$n" && cp -r "$T/x" "$T/cut$n" && truncate -s $n "$(find "$T/cut$n" -name metadata | head -1)"
    tar -C "$T/cut$n" --zstd -cf "$T/cut$n.tar.zst" MANIFEST trace || exit 1
    cuts="$cuts $T/cut$n/trace $T/cut$n.tar.zst"
done

for src in "$T/neg" "$T/neg3" $cuts; do
    for cmd in "info" "analyze breakdown" "analyze memory" "export --perfetto -o $T/out.json" "replay --iterations 1" \
               "report -o $T/rep"; do
        start=$(date +%s)
        # shellcheck disable=SC2086
        timeout 60 "$FATHOM" $cmd "$src" >"$T/out" 2>"$T/err"
        rc=$? took=$(($(date +%s) - start))
        [ $rc -ne 0 ] && [ $rc -ne 124 ] || { fail "$cmd $src: exit $rc"; continue; }
        [ "$(wc -l <"$T/err")" -eq 1 ] || { fail "$cmd $src: stderr is not one line: $(head -c 400 "$T/err")"; continue; }
        grep -q "$src" "$T/err" || fail "$cmd $src: the error does not name the trace: $(cat "$T/err")"
        [ $took -le 15 ] || fail "$cmd $src: took $took s"
        [ ! -e "$T/out.json" ] && [ ! -e "$T/rep" ] || fail "$cmd $src: left an output"
        rm -rf "$T/out.json" "$T/rep"
    done
    grep -q "crashed\|stopped making progress\|Cannot create trace\|cannot\|Failed\|corrupt" "$T/err" ||
        fail "$src: unexpected message $(cat "$T/err")"
done
grep -q "crashed" "$T/err" 2>/dev/null || true

# 3. 4 KiB zeroed in the middle of an event stream (a disk's or a copy's
#    damage): zeroed bytes decode as run_begin events of schema version 0,
#    then the decoder stops where the zeros end mid-event; every reader
#    says the trace is damaged, not that its schema is unknown, and names
#    no addresses of Babeltrace2's objects
rm -rf "$T/z" && cp -r "$T/x" "$T/z" || exit 1
big=$(find "$T/z" -type f -path '*/64-bit/*' ! -name metadata ! -name '*.idx' -exec ls -S {} + | head -1)
size=$(wc -c <"$big")
dd if=/dev/zero of="$big" bs=1 seek=$((size / 2)) count=4096 conv=notrunc 2>/dev/null || exit 1
tar -C "$T/z" --zstd -cf "$T/zeroed.tar.zst" MANIFEST trace || exit 1
# 4. that stream cut short of its last packet: the stream file is named by
#    its path in the archive, not in the private folder it was extracted to
rm -rf "$T/tr" && cp -r "$T/x" "$T/tr" || exit 1
big=$(find "$T/tr" -type f -path '*/64-bit/*' ! -name metadata ! -name '*.idx' -exec ls -S {} + | head -1)
truncate -s $(($(wc -c <"$big") / 2 + 123)) "$big" || exit 1
tar -C "$T/tr" --zstd -cf "$T/cut-stream.tar.zst" MANIFEST trace || exit 1
for src in "$T/zeroed.tar.zst" "$T/cut-stream.tar.zst"; do
    for cmd in "info" "analyze breakdown" "export --perfetto -o $T/out.json" "replay --iterations 1" "tune --budget 5"; do
        # shellcheck disable=SC2086
        timeout 60 "$FATHOM" $cmd "$src" >"$T/out" 2>"$T/err"
        rc=$?
        [ $rc -ne 0 ] && [ $rc -ne 124 ] || { fail "$cmd $src: exit $rc"; continue; }
        [ "$(wc -l <"$T/err")" -eq 1 ] || { fail "$cmd $src: stderr is not one line: $(head -c 400 "$T/err")"; continue; }
        grep -q "$src: .*damaged trace" "$T/err" || fail "$cmd $src: not named damaged: $(cat "$T/err")"
        ! grep -q "schema version\|addr=0x\|fathom-trace-" "$T/err" || fail "$cmd $src: $(cat "$T/err")"
        [ ! -e "$T/out.json" ] || fail "$cmd $src: left an output"
        rm -f "$T/out.json"
    done
done
grep -q "'trace/ust/uid/[0-9]*/64-bit/" "$T/err" || fail "the cut stream is not named by its path in the archive: $(cat "$T/err")"

# 5. a misspelt keyword in the metadata text ("integer" -> "intXger"; the
#    packet headers stand): Babeltrace2 makes no error cause of the parser's
#    reason, only logs it; every reader gives that line and its number
# metadata_edit DIR FROM TO: a copy of the reference trace in DIR whose
# metadata has its first FROM past byte 3000 (in the text, past the first
# packet's header) replaced by TO, of the same length
metadata_edit() {
    rm -rf "$1" && cp -r "$T/x" "$1" || exit 1
    python3 - "$(find "$1" -name metadata | head -1)" "$2" "$3" <<'PY' || exit 1
import sys
path, old, new = sys.argv[1], sys.argv[2].encode(), sys.argv[3].encode()
b = bytearray(open(path, "rb").read())
i = b.find(old, 3000)
assert i > 0 and len(old) == len(new)
b[i:i + len(old)] = new
open(path, "wb").write(b)
PY
}
metadata_edit "$T/kw" integer intXger
tar -C "$T/kw" --zstd -cf "$T/keyword.tar.zst" MANIFEST trace || exit 1
for src in "$T/keyword.tar.zst" "$T/kw/trace"; do
    for cmd in "info" "analyze breakdown" "replay --iterations 1" "tune --budget 5"; do
        # shellcheck disable=SC2086
        timeout 60 "$FATHOM" $cmd "$src" >"$T/out" 2>"$T/err"
        rc=$?
        [ $rc -ne 0 ] && [ $rc -ne 124 ] || { fail "$cmd $src: exit $rc"; continue; }
        [ "$(wc -l <"$T/err")" -eq 1 ] || { fail "$cmd $src: stderr is not one line: $(head -c 400 "$T/err")"; continue; }
        grep -q "$src: cannot read the trace: metadata line [0-9]*: syntax error.*intXger.*damaged trace" "$T/err" ||
            fail "$cmd $src: not the parser's reason: $(cat "$T/err")"
    done
done
# and a declaration that parses but means nothing (an integer of size 0):
# the ctf source's own reason, with its line
metadata_edit "$T/sz" "size = 32" "size = 0 "
"$FATHOM" info "$T/sz/trace" >/dev/null 2>"$T/err"
grep -q "$T/sz/trace: cannot read the trace: metadata line [0-9]*: Invalid .size. attribute.*size=0 (a damaged trace?)" "$T/err" ||
    fail "an integer of size 0: $(cat "$T/err")"
# 6. a sequence length of 40 million in a 24 KB trace: Babeltrace2 makes a
#    field for each element (4 GB, 11 s to a partial result where the
#    decoder had 16 GiB); the decoder's address space and CPU time follow
#    the trace's size (2 GiB and 64 bytes a byte; 1 s and a second per 4
#    MiB), so it stops at the first it reaches and says which.  Not under
#    ASan, where no address-space limit is set.
if [ "${FATHOM_TEST_SANITIZED:-0}" != 1 ]; then
    "$GEN" "$T/long" conv alexnet train 3 schema=2 lying_length=40000000 >/dev/null || exit 1
    for cmd in "info" "analyze breakdown"; do
        # shellcheck disable=SC2086
        FATHOM_DECODE_STALL=60 timeout 120 "$FATHOM" $cmd "$T/long" >"$T/out" 2>"$T/err" # seconds to fill 2 GiB
        rc=$?
        [ $rc -eq 1 ] && [ "$(wc -l <"$T/err")" -eq 1 ] &&
          grep -q "$T/long: the CTF decoder crashed (signal [0-9]*, .*more than the decoder's 2.0 GiB (FATHOM_DECODE_MEMORY)\|$T/long: the CTF decoder ran out of its CPU time ([0-9]* s for [0-9]* bytes of CTF).*FATHOM_DECODE_CPU=SECONDS raises" "$T/err" ||
          fail "$cmd: a 40-million-element sequence: exit $rc, $(head -c 400 "$T/err")"
    done
fi
"$FATHOM" analyze breakdown "$T/neg" 2>"$T/err" >/dev/null
grep -q "the CTF decoder crashed" "$T/err" || fail "the negative length: $(cat "$T/err")"
[ -z "$(ls -A "$TMPDIR")" ] || fail "temporary files left: $(ls -A "$TMPDIR")"
cli_end "decode-hostile"
