#!/bin/sh
# fathom info on a recorded archive and on its CTF folder (text and JSON);
# hostile or missing input: a one-line error and a non-zero exit.
. "$(dirname "$0")/lib.sh"
ensure_sessiond
arch=$("$TRACE_MLP" record --dir "$T/out" 4) || fail "record failed"
extract "$arch" "$T/x"
check_trace "$T/x/trace" "$T/bt" 4
nd=$(grep -c ' fathom:node_def: ' "$T/bt.txt")
no=$(grep -c ' fathom:ops: ' "$T/bt.txt")
nb=$(sed -n 's/.* fathom:run_end: .*[{,] ops = \([0-9]*\).*/\1/p' "$T/bt.txt")
nev=$(wc -l <"$T/bt.txt")

"$FATHOM" info "$arch" >"$T/info.txt" 2>"$T/info.err" || fail "fathom info failed: $(cat "$T/info.err")"
cat "$T/info.txt" >&2
grep -Eq "^  fathom:node_def +$nd\$" "$T/info.txt" || fail "info: node_def count is not $nd"
grep -Eq "^  fathom:ops +$no\$" "$T/info.txt" || fail "info: ops count is not $no"
grep -Eq "^run: mlp .* schema 3, status 0\$" "$T/info.txt" || fail "info: the schema"
grep -Eq "^  total +$nev\$" "$T/info.txt" || fail "info: total is not $nev"
grep -q '^discarded events: 0$' "$T/info.txt" || fail "info: discarded events"
grep -q '^steps: 4$' "$T/info.txt" || fail "info: steps"
grep -q "^ops: $nb records in $no ops events, $nd nodes defined; run_end says $nb\$" "$T/info.txt" || fail "info: ops line"
grep -Eq '^total op time: [0-9]+\.[0-9]{6} s$' "$T/info.txt" || fail "info: op time"
grep -Eq '^  model +mlp$' "$T/info.txt" || fail "info: manifest model"
[ ! -s "$T/info.err" ] || fail "info wrote to stderr: $(cat "$T/info.err")"

"$FATHOM" info --format json "$arch" >"$T/info.json" || fail "fathom info --format json failed"
grep -q "\"fathom:ops\": $no" "$T/info.json" || fail "json: ops events"
grep -q '"discarded_events": 0' "$T/info.json" || fail "json: discarded"
grep -q '"steps": 4' "$T/info.json" || fail "json: steps"
grep -q "\"records\": $nb" "$T/info.json" || fail "json: records"
if command -v python3 >/dev/null && python3 -c 'import json' 2>/dev/null; then
    python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$T/info.json" || fail "invalid JSON"
fi
# the CTF folder itself (with the MANIFEST beside trace/)
"$FATHOM" info "$T/x/trace" >"$T/dir.txt" || fail "fathom info DIR failed"
grep -q "^ops: $nb records" "$T/dir.txt" || fail "info DIR: ops"
grep -q "(directory)" "$T/dir.txt" || fail "info DIR: kind"

# bad input: one line on stderr, non-zero exit, nothing on stdout
bad() {
    "$FATHOM" info "$@" >"$T/bad.out" 2>"$T/bad.err"
    rc=$?
    [ $rc -ne 0 ] || fail "info $* succeeded"
    [ "$(wc -l <"$T/bad.err")" = 1 ] || fail "info $*: want one line of error, got: $(cat "$T/bad.err")"
    [ ! -s "$T/bad.out" ] || fail "info $*: wrote to stdout"
    note "info $*: $(cat "$T/bad.err") (exit $rc)"
}
bad "$T/missing.tar.zst"
head -c 65536 /dev/urandom >"$T/random.bin"; bad "$T/random.bin"
: >"$T/empty"; bad "$T/empty"
head -c 3000 "$arch" >"$T/cut.tar.zst"; bad "$T/cut.tar.zst"
mkdir -p "$T/corrupt"; cp -r "$T/x/trace" "$T/corrupt/"
for f in "$T"/corrupt/trace/ust/uid/*/64-bit/fathom_[0-9]*; do
    sz=$(wc -c <"$f"); head -c $((sz / 2)) /dev/urandom | dd of="$f" bs=1 conv=notrunc 2>/dev/null
done
bad "$T/corrupt/trace"
# a trace whose ops never end (cut short, or hostile): every begin counted
# as unmatched, in time linear in the events (the pending-op map is bounded)
"$CTFGEN" "$T/noend" conv mlp train 10000 drop_end_every=1 || fail "ctfgen_tool"
"$FATHOM" info "$T/noend" >"$T/noend.txt" 2>&1 || fail "info on unended ops failed: $(cat "$T/noend.txt")"
grep -q '^ops: 120000 begun, 0 ended, 0 matched, 120000 unmatched; run_end says 120000$' "$T/noend.txt" ||
    fail "info on unended ops: $(grep '^ops' "$T/noend.txt")"
bad --format xml "$arch"
bad --bogus "$arch"
bad
[ -z "$(ls -A "$TMPDIR")" ] || fail "temporary files left: $(ls -A "$TMPDIR")"
echo PASS
