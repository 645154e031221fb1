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
        kill "$p" 2>/dev/null || continue
        for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$p" 2>/dev/null
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

# Starts our own lttng-relayd on loopback at random free ports: control $c,
# data $d = c + 1, live $l = c + 2 (lttng-relayd's own spacing), output in
# $T/relay; its pid in $rpid (stopped at exit).
start_relayd() {
    command -v lttng-relayd >/dev/null || fail "lttng-relayd is not installed"
    local started=0 up
    for _ in 1 2 3 4 5 6 7 8; do
        base=$(( 20000 + $(od -An -N2 -tu2 /dev/urandom) % 30000 ))
        c=$base; d=$((base + 1)); l=$((base + 2))
        rm -rf "$T/relay"
        lttng-relayd -C "tcp://127.0.0.1:$c" -D "tcp://127.0.0.1:$d" -L "tcp://127.0.0.1:$l" -o "$T/relay" \
            >"$T/relayd.log" 2>&1 &
        rpid=$!
        OWN_PIDS="$OWN_PIDS $rpid"
        up=0
        for _ in $(seq 40); do
            kill -0 "$rpid" 2>/dev/null || break
            if ss -ltn 2>/dev/null | grep -q "127.0.0.1:$l " && ss -ltn | grep -q "127.0.0.1:$c " &&
               ss -ltn | grep -q "127.0.0.1:$d "; then up=1; break; fi
            sleep 0.05
        done
        if [ $up = 1 ]; then started=1; break; fi
        kill "$rpid" 2>/dev/null; wait "$rpid" 2>/dev/null
    done
    [ $started = 1 ] || fail "cannot start lttng-relayd: $(tail -3 "$T/relayd.log")"
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

# Decodes CTF folder $1 with the babeltrace2 CLI into $2.txt (times in
# clock cycles, the unit of the ops records) and proves, without fathom's
# decoder (check_ops.awk): it decodes; the records of the ops events sum to
# run_end.ops > 0; every record's node has a node_def before it; each
# thread's records are ordered and do not overlap; records of a step lie
# after its step_begin and before its step_end; nothing was discarded;
# $3 steps; the vpid/vtid/procname contexts.
check_trace() {
    local dir=$1 out=$2 steps=$3
    babeltrace2 --clock-cycles "$dir" >"$out.txt" 2>"$out.err" || fail "babeltrace2 cannot decode $dir: $(head -3 "$out.err")"
    if grep -qi "discarded" "$out.err" "$out.txt"; then fail "events were discarded: $(grep -i discarded "$out.err" | head -2)"; fi
    local nrb nre nsteps res
    nrb=$(grep -c ' fathom:run_begin: ' "$out.txt")
    nre=$(grep -c ' fathom:run_end: ' "$out.txt")
    nsteps=$(grep -c ' fathom:step_end: ' "$out.txt")
    [ "$nrb" = 1 ] && [ "$nre" = 1 ] || fail "want one run_begin and one run_end, got $nrb and $nre"
    grep -q ' schema = 3,' "$out.txt" || fail "run_begin does not say schema 3"
    res=$(awk -f "$(dirname "$0")/check_ops.awk" "$out.txt") || fail "$dir: the ops records fail the lossless checks"
    note "$dir: $res, steps $nsteps"
    case "$res" in "records 0 "*) fail "no op records" ;; esac
    [ "$nsteps" = "$steps" ] || fail "want $steps step_end events, got $nsteps"
    grep -q 'vpid = [0-9]*, vtid = [0-9]*, procname = "' "$out.txt" || fail "vpid/vtid/procname contexts missing"
}
