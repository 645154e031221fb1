#!/bin/sh
# hostile_cli.sh FATHOM ZBOMB_TOOL REFERENCE_DIR TMP -- the driver as an
# attacker or an impatient user meets it: readers interrupted mid-extraction
# (128 + the signal, no temporary tree left), an extraction bound from the
# environment, outputs aimed at their input, MANIFESTs with bad typed values
# (warnings naming the key; errors with --strict) or control bytes (shown
# as '?'), numeric arguments that overflow or carry spaces, a batch past the machine's memory, libraries
# planted in the current directory.
set -u
FATHOM=$1 ZB=$2 REF=$3
. "$(dirname "$0")/cli_lib.sh"
cli_begin hostile-cli "$4"
export TMPDIR="$T/tmp"
mkdir "$TMPDIR"
ref=$(ls "$REF"/alexnet-train-*.tar.zst | head -n 1)
[ -f "$ref" ] || { echo "no reference trace in $REF"; exit 1; }

# a reader stopped by SIGINT or SIGTERM mid-extraction: 128 + N, nothing left
"$ZB" "$T/big.tar.zst" MANIFEST=0 trace/=0 trace/metadata=10 trace/chan_0=3221225472 || exit 1
# (a shell starts background jobs with SIGINT ignored: env gives it back)
for s in INT:130 TERM:143 HUP:129; do
    env --default-signal=INT "$FATHOM" info "$T/big.tar.zst" >/dev/null 2>&1 &
    pid=$!
    i=0
    while [ $i -lt 2000 ] && [ -z "$(ls "$TMPDIR")" ]; do sleep 0.01; i=$((i + 1)); done
    [ -n "$(ls "$TMPDIR")" ] || fail "SIG${s%:*}: extraction never started"
    sleep 0.1
    kill -"${s%:*}" $pid
    wait $pid
    rc=$?
    [ $rc -eq "${s#*:}" ] || fail "SIG${s%:*}: exit status $rc, want ${s#*:}"
    [ -z "$(ls -A "$TMPDIR")" ] || fail "SIG${s%:*}: left $(ls -A "$TMPDIR")"
done
# SIGKILL: the next reader removes the dead one's tree
"$FATHOM" info "$T/big.tar.zst" >/dev/null 2>&1 &
pid=$!
i=0
while [ $i -lt 2000 ] && [ -z "$(ls "$TMPDIR")" ]; do sleep 0.01; i=$((i + 1)); done
kill -KILL $pid
wait $pid
[ -n "$(ls -A "$TMPDIR")" ] || fail "SIGKILL: no tree left to clean (the test proves nothing)"
"$FATHOM" info "$ref" >/dev/null 2>"$T/err" || { fail "info after SIGKILL"; cat "$T/err"; }
[ -z "$(ls -A "$TMPDIR")" ] || fail "SIGKILL: the next reader left $(ls -A "$TMPDIR")"

# the extraction bound from the environment
FATHOM_MAX_EXTRACT=1K "$FATHOM" info "$ref" >/dev/null 2>"$T/err"; rc=$?
[ $rc -eq 1 ] && grep -q "FATHOM_MAX_EXTRACT" "$T/err" && [ "$(wc -l <"$T/err")" -eq 1 ] \
    || { fail "FATHOM_MAX_EXTRACT=1K: rc $rc"; cat "$T/err"; }
FATHOM_MAX_EXTRACT=lots "$FATHOM" info "$ref" >/dev/null 2>"$T/err"; rc=$?
[ $rc -eq 1 ] && grep -q "FATHOM_MAX_EXTRACT='lots'" "$T/err" || { fail "FATHOM_MAX_EXTRACT=lots: rc $rc"; cat "$T/err"; }
[ -z "$(ls -A "$TMPDIR")" ] || fail "bound: left $(ls -A "$TMPDIR")"

# outputs never alias their input
cp "$ref" "$T/in.tar.zst"
before=$(cksum <"$T/in.tar.zst")
"$FATHOM" export --perfetto -o "$T/in.tar.zst" "$T/in.tar.zst" >/dev/null 2>"$T/err"; rc=$?
[ $rc -eq 1 ] && grep -q "is the input" "$T/err" || { fail "export onto its input: rc $rc"; cat "$T/err"; }
"$FATHOM" replay --iterations 1 --dump-ops "$T/in.tar.zst" "$T/in.tar.zst" >/dev/null 2>"$T/err"; rc=$?
[ $rc -eq 1 ] && grep -q "is the input" "$T/err" || { fail "replay --dump-ops onto its input: rc $rc"; cat "$T/err"; }
[ "$(cksum <"$T/in.tar.zst")" = "$before" ] || fail "an output changed its input"
[ -z "$(ls -A "$T" | grep fathom-tmp)" ] || fail "temporary outputs left"

# MANIFEST typed values: a warning naming each bad key; an error with --strict
mkdir "$T/x"
tar --zstd -xf "$ref" -C "$T/x" || exit 1
"$FATHOM" info --strict "$T/x" >/dev/null 2>"$T/err" || { fail "info --strict on a sound trace"; cat "$T/err"; }
sed -i -e 's/^steps=.*/steps=1e23/' -e 's/^batch=.*/batch=-5/' -e 's/^threads=.*/threads=18446744073709551615/' \
    -e 's/^schema=.*/schema=1/' -e 's/^created=.*/created=2026-02-30T10:00:00Z/' -e '/^mode=/d' "$T/x/MANIFEST"
"$FATHOM" info "$T/x" >/dev/null 2>"$T/err" || { fail "info with warnings failed"; cat "$T/err"; }
for k in steps batch threads created mode; do
    grep -q "warning: .*MANIFEST key '$k'" "$T/err" || fail "no warning naming '$k': $(cat "$T/err")"
done
grep -q "MANIFEST says schema 1 but the trace's run_begin says schema 2" "$T/err" \
    || fail "schema disagreement not reported: $(cat "$T/err")"
"$FATHOM" info --strict "$T/x" >"$T/out" 2>"$T/err"; rc=$?
[ $rc -eq 1 ] && grep -q "error: .*key 'steps'" "$T/err" && grep -q "giving up" "$T/err" && [ ! -s "$T/out" ] \
    || { fail "info --strict: rc $rc"; cat "$T/err"; }

# control bytes in MANIFEST values (escaped there as \xHH, and so legal) reach no terminal: `info` prints
# each as '?' (an ESC sequence would recolour or retitle the user's terminal, a BEL ring it)
mkdir "$T/esc"
tar --zstd -xf "$ref" -C "$T/esc" || exit 1
sed -i -e 's/^model=.*/model=evil\\x1b[31mRED\\x07/' -e 's/^cpu=.*/cpu=\\x1b]0;pwned\\x07/' "$T/esc/MANIFEST"
grep -q '^model=evil\\x1b' "$T/esc/MANIFEST" || fail "the MANIFEST edit did not take: $(grep '^model=' "$T/esc/MANIFEST")"
"$FATHOM" info "$T/esc" >"$T/out" 2>"$T/err" || { fail "info with control bytes in MANIFEST values"; cat "$T/err"; }
if tr -d '\n' <"$T/out" | LC_ALL=C grep -q '[[:cntrl:]]'; then fail "info printed a control byte: $(cat -A "$T/out" | grep -a '\^')"; fi
grep -q '^  model        evil?\[31mRED?$' "$T/out" || fail "info: the model not shown with '?': $(grep -a model "$T/out")"

# numeric arguments: no overflow, no surrounding spaces
for args in "run alexnet --seed 99999999999999999999999" "run alexnet --steps ' 5'" "run alexnet --steps '5 '" \
    "run alexnet --steps +5" "record alexnet --seed ' 7'" "record alexnet --seed 18446744073709551616" \
    "replay $ref --steps ' 5'" "replay $ref --seed 99999999999999999999999" "analyze breakdown --skip-first ' 1' $ref"; do
    eval "\"\$FATHOM\" $args" >/dev/null 2>"$T/err"; rc=$?
    [ $rc -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] || { fail "fathom $args: rc $rc"; cat "$T/err"; }
done

# unknown engine settings: one line naming every value the option takes
"$FATHOM" run alexnet --conv-algo fft >/dev/null 2>"$T/err"; rc=$?
[ $rc -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q "auto, im2col, direct or winograd" "$T/err" \
    || { fail "run --conv-algo fft: rc $rc"; cat "$T/err"; }
"$FATHOM" run alexnet --bind tight >/dev/null 2>"$T/err"; rc=$?
[ $rc -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q "none, close or spread" "$T/err" \
    || { fail "run --bind tight: rc $rc"; cat "$T/err"; }

# --dir too long for the file system: refused before anything is created
long=$T/long
i=0
while [ $i -lt 20 ]; do long=$long/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa; i=$((i + 1)); done
comp=$T/$(printf 'b%.0s' $(seq 300))
for d in "$long" "$comp"; do
    for cmd in "record alexnet" "replay $ref --record"; do
        $FATHOM $cmd --dir "$d" >/dev/null 2>"$T/err"; rc=$?
        [ $rc -eq 2 ] && grep -q "too long" "$T/err" && [ "$(wc -l <"$T/err")" -eq 1 ] \
            || { fail "$cmd --dir (${#d} bytes): rc $rc"; cat "$T/err"; }
    done
done
[ ! -e "$T/long" ] || fail "--dir: folders created for a path that cannot be used"

# a batch whose tensors cannot fit in this machine's memory and swap (any
# machine's: alexnet full at the largest batch needs about 7.7 TiB): a
# one-line error before anything is allocated, not the OOM killer
"$FATHOM" run alexnet --preset full --batch 1048576 --steps 1 >/dev/null 2>"$T/err"; rc=$?
[ $rc -eq 1 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q "the tensors need .* more than the process's memory limit" "$T/err" \
    || { fail "run over the machine's memory: rc $rc"; cat "$T/err"; }

# a library planted in the current directory is not loaded: the driver's
# run path names no empty entry (CMake pads a build tree's with one, the
# current directory, unless it is built with its install run path)
mkdir "$T/planted"
for lib in $(ldd "$FATHOM" | awk '$2 == "=>" { print $1 }'); do
    echo "not a library" >"$T/planted/$lib"
done
[ -n "$(ls "$T/planted")" ] || fail "planted: ldd named no library (the check proves nothing)"
(cd "$T/planted" && "$FATHOM" version >/dev/null 2>"$T/err") \
    || { fail "a library planted in the current directory was loaded"; head -n 3 "$T/err"; }

cli_end "hostile"
