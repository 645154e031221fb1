# lib.sh -- shared by the tracer's shell tests (run by ctest).
# Env: FATHOM (the driver), TRACE_MLP (tests/trace_mlp), TEST_TMP (a scratch
# folder for this test). Every test creates uniquely named sessions only
# (the recorder does), starts a session daemon only if none answers, and
# stops what it started.
set -u
fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }
note() { echo "-- $*" >&2; }

[ -x "$FATHOM" ] || fail "no fathom at $FATHOM"
[ -x "$TRACE_MLP" ] || fail "no trace_mlp at $TRACE_MLP"
command -v babeltrace2 >/dev/null || fail "babeltrace2 (CLI) is not installed"

rm -rf "$TEST_TMP"
mkdir -p "$TEST_TMP/tmp" || fail "cannot create $TEST_TMP"
export TMPDIR="$TEST_TMP/tmp"
T="$TEST_TMP"

OWN_PIDS=""
cleanup() {
    for p in $OWN_PIDS; do
        kill "$p" 2>/dev/null
        wait "$p" 2>/dev/null
    done
}
trap cleanup EXIT

sessiond_alive() { [ "$("$TRACE_MLP" alive)" = 1 ]; }

# Starts our own session daemon if none answers; OWN_SESSIOND=1 if so.
OWN_SESSIOND=0
ensure_sessiond() {
    sessiond_alive && return 0
    lttng-sessiond --no-kernel >"$T/sessiond.log" 2>&1 &
    local pid=$!
    OWN_PIDS="$OWN_PIDS $pid"
    OWN_SESSIOND_PID=$pid
    OWN_SESSIOND=1
    for _ in $(seq 200); do
        sessiond_alive && return 0
        kill -0 "$pid" 2>/dev/null || fail "lttng-sessiond exited: $(tail -3 "$T/sessiond.log")"
        sleep 0.05
    done
    fail "lttng-sessiond did not answer"
}

# No fathom-PID-* session may outlive its recorder (PID): one whose
# recorder is gone was leaked.  (Other recorders may run concurrently.)
check_no_session_left() {
    local s pid
    for s in $("$TRACE_MLP" sessions); do
        pid=$(echo "$s" | cut -d- -f2)
        kill -0 "$pid" 2>/dev/null || fail "session $s outlived its recorder"
    done
}

# Extracts archive $1 into a new folder $2 (with the helper's libarchive).
extract() {
    mkdir -p "$2" && "$TRACE_MLP" extract "$1" "$2" || fail "cannot extract $1"
    [ -f "$2/MANIFEST" ] || fail "$1 has no MANIFEST"
    [ -d "$2/trace" ] || fail "$1 has no trace/"
}

# Decodes CTF folder $1 with the babeltrace2 CLI into $2.txt and proves:
# it decodes; op_begin == op_end == run_end.ops > 0; every op_begin has
# inputs, outputs and attrs; nothing was discarded; $3 steps.
check_trace() {
    local dir=$1 out=$2 steps=$3
    babeltrace2 "$dir" >"$out.txt" 2>"$out.err" || fail "babeltrace2 cannot decode $dir: $(head -3 "$out.err")"
    if grep -qi "discarded" "$out.err" "$out.txt"; then fail "events were discarded: $(grep -i discarded "$out.err" | head -2)"; fi
    local nb ne ops nfull nrb nre nsteps
    nb=$(grep -c ' fathom:op_begin: ' "$out.txt")
    ne=$(grep -c ' fathom:op_end: ' "$out.txt")
    nrb=$(grep -c ' fathom:run_begin: ' "$out.txt")
    nre=$(grep -c ' fathom:run_end: ' "$out.txt")
    nsteps=$(grep -c ' fathom:step_end: ' "$out.txt")
    ops=$(sed -n 's/.* fathom:run_end: .*[{,] ops = \([0-9]*\).*/\1/p' "$out.txt")
    nfull=$(grep ' fathom:op_begin: ' "$out.txt" | grep ' inputs = \[' | grep ' outputs = \[ \[0\] = ' | grep -c ' attrs = \[')
    note "$dir: op_begin $nb, op_end $ne, run_end.ops $ops, complete op_begin $nfull, steps $nsteps"
    [ "$nrb" = 1 ] && [ "$nre" = 1 ] || fail "want one run_begin and one run_end, got $nrb and $nre"
    [ "$nb" -gt 0 ] || fail "no op_begin events"
    [ "$nb" = "$ne" ] || fail "op_begin $nb != op_end $ne"
    [ "$nb" = "$ops" ] || fail "op_begin $nb != run_end.ops $ops"
    [ "$nfull" = "$nb" ] || fail "only $nfull of $nb op_begin events carry inputs, outputs and attrs"
    [ "$nsteps" = "$steps" ] || fail "want $steps step_end events, got $nsteps"
    grep -q 'vpid = [0-9]*, vtid = [0-9]*, procname = "' "$out.txt" || fail "vpid/vtid/procname contexts missing"
    # every seq: one op_begin and one op_end
    local dup
    dup=$(grep -o ' fathom:op_\(begin\|end\): .*seq = [0-9]*' "$out.txt" | sed 's/.*fathom:\(op_[a-z]*\):.*seq = \([0-9]*\)/\2 \1/' |
        sort | uniq -c | awk '$1 != 1' | head -3)
    [ -z "$dup" ] || fail "a seq appears more than once: $dup"
}
