#!/bin/sh
# foreign_ctf.sh FATHOM CTFGEN_TOOL TMP -- any CTF trace a user points
# fathom at gets a clear answer in seconds, never a hang: the traces of
# other tools that tests/fixtures/foreign_ctf.py writes (an LTTng kernel
# trace, userspace traces, session folders, rotation chunks, empty
# payloads, no packet context, big-endian, clock offsets, metadata only,
# CTF 2) are answered from their metadata, "not a fathom trace: ...", and
# the damaged ones (fathom's names over streams of events of no size) are
# stopped by the decoder's limits; each is exit 1 and one line on stderr
# naming the trace, for `info` and `analyze breakdown`.  A fathom trace in
# an LTTng session folder beside a kernel trace is analyzed, the kernel
# trace named as skipped.  `timeout` guards against a hang (the times
# measured on the 2-core VM are in the commit message: a speed target
# belongs in a benchmark).
set -u
FATHOM=$1 GEN=$2
. "$(dirname "$0")/cli_lib.sh"
cli_begin foreign-ctf "$3"
export TMPDIR="$T/tmp"
mkdir -p "$TMPDIR"
python3 "$(dirname "$0")/fixtures/foreign_ctf.py" "$T/c" || exit 1

# run CMD SRC LIMIT: exit 1, one line naming SRC, within LIMIT seconds
run() {
    # shellcheck disable=SC2086
    timeout "$3" "$FATHOM" $1 "$2" >"$T/out" 2>"$T/err"
    rc=$?
    [ $rc -eq 1 ] || { fail "$1 $2: exit $rc (124: over $3 s), $(head -c 300 "$T/err")"; return 1; }
    [ "$(wc -l <"$T/err")" -eq 1 ] || { fail "$1 $2: stderr is not one line: $(head -c 400 "$T/err")"; return 1; }
    grep -q "^fathom [a-z]*: $2: " "$T/err" || { fail "$1 $2: does not name the trace: $(cat "$T/err")"; return 1; }
    [ ! -s "$T/out" ] || fail "$1 $2: wrote to stdout: $(head -c 200 "$T/out")"
}

while read -r name kind dir; do
    for cmd in "info" "analyze breakdown"; do
        case $kind in
        foreign)
            run "$cmd" "$dir" 20 || continue
            grep -q "not a fathom trace: .*; fathom reads traces that .fathom record. writes" "$T/err" ||
                fail "$cmd $name: $(cat "$T/err")"
            ;;
        newschema)
            run "$cmd" "$dir" 20 || continue
            grep -q "fathom events of a schema this fathom does not read (fathom:run_begin_v9" "$T/err" ||
                fail "$cmd $name: $(cat "$T/err")"
            ;;
        damaged)
            run "$cmd" "$dir" 30 || continue
            grep -q "FATHOM_DECODE_[A-Z_]*=[A-Z]* raises" "$T/err" || fail "$cmd $name: no limit named: $(cat "$T/err")"
            ;;
        esac
    done
done <"$T/c/CASES"

# what the answers say, case by case
fathom_err() { "$FATHOM" info "$T/c/$1" 2>&1 >/dev/null; }
fathom_err kernel | grep -q "not a fathom trace: an LTTng kernel trace (lttng-modules 2.13, 12 event classes, 8 streams);" ||
    fail "kernel: $(fathom_err kernel)"
fathom_err ust | grep -q "an LTTng userspace trace (lttng-ust 2.13, 3 event classes, 2 streams)" || fail "ust: $(fathom_err ust)"
fathom_err session | grep -q "2 CTF traces, none of them fathom's: .*kernel trace.* in kernel, .*userspace trace.* in ust/uid/0/64-bit" ||
    fail "session: $(fathom_err session)"
fathom_err rotation | grep -q "4 CTF traces, none of them fathom's" || fail "rotation: $(fathom_err rotation)"
fathom_err barectf | grep -q "a barectf trace (barectf 3.1, 1 event class, 1 stream)" || fail "barectf: $(fathom_err barectf)"
fathom_err ctf2 | grep -q "a CTF 2 trace" || fail "ctf2: $(fathom_err ctf2)"
fathom_err metadata-only | grep -q "3 event classes, 0 streams" || fail "metadata-only: $(fathom_err metadata-only)"
fathom_err empty-payload | grep -q "not a fathom trace: a CTF trace (1 event class, 1 stream)" ||
    fail "empty-payload: $(fathom_err empty-payload)"
fathom_err empty-fathom | grep -q "past its limit of 8 a byte .*FATHOM_DECODE_EVENTS_PER_BYTE=N raises it" ||
    fail "empty-fathom: $(fathom_err empty-fathom)"
# the same trace, archived: named as the user wrote it
(cd "$T/c/kernel" && tar --zstd -cf "$T/kernel.tar.zst" -- *) || exit 1
run info "$T/kernel.tar.zst" 20 && grep -q "not a fathom trace: an LTTng kernel trace" "$T/err" || fail "kernel archive: $(cat "$T/err")"

# a fathom trace in an LTTng session folder beside a kernel trace: analyzed,
# the kernel trace skipped by name; so is the folder archived
mkdir -p "$T/s/ust/uid/1000" && "$GEN" "$T/s/ust/uid/1000/64-bit" conv alexnet train 3 >/dev/null || exit 1
cp -r "$T/c/kernel" "$T/s/kernel" || exit 1
(cd "$T/s" && tar --zstd -cf "$T/session.tar.zst" -- *) || exit 1
for src in "$T/s" "$T/session.tar.zst"; do
    for cmd in "info" "analyze breakdown"; do
        # shellcheck disable=SC2086
        timeout 60 "$FATHOM" $cmd "$src" >"$T/out" 2>"$T/err"
        rc=$?
        [ $rc -eq 0 ] || { fail "$cmd $src: exit $rc, $(head -c 300 "$T/err")"; continue; }
        grep -q "$src: skipped kernel (not a fathom trace: an LTTng kernel trace (lttng-modules 2.13" "$T/err" "$T/out" ||
            fail "$cmd $src: the kernel trace is not named skipped: $(cat "$T/err")"
    done
done
grep -q "Conv2D" "$T/out" || fail "analyze breakdown of the session: $(head -c 400 "$T/out")"
[ -z "$(ls -A "$TMPDIR")" ] || fail "temporary files left: $(ls -A "$TMPDIR")"
cli_end "foreign-ctf"
