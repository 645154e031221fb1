#!/bin/sh
# `fathom replay` on damaged and hostile traces: each is a one-line error
# with a non-zero exit and nothing on stdout, or (an op type this version
# does not know) a replay of the rest with the unknown type listed. Never a
# crash (the sanitizer build runs this too). Fixtures: replay_fixtures (whole
# op programs with one thing wrong), ctfgen_tool (the analyzers' scenarios),
# and a real recording, edited or cut.
. "$(dirname "$0")/lib.sh"
AWK="$(dirname "$0")/bt_ops.awk"
[ -x "${REPLAY_FIXTURES:-}" ] || fail "no replay_fixtures"
[ -x "${CTFGEN:-}" ] || fail "no ctfgen_tool"
cd "$T" || fail "cd"

# bad: one line on stderr naming $want, a non-zero exit, nothing on stdout
bad() {
    want=$1
    shift
    "$FATHOM" replay --iterations 1 "$@" >"$T/bad.out" 2>"$T/bad.err"
    rc=$?
    [ $rc -ne 0 ] || fail "replay $*: succeeded"
    [ $rc -lt 128 ] || fail "replay $*: killed by signal $((rc - 128)): $(cat "$T/bad.err")"
    [ "$(wc -l <"$T/bad.err")" = 1 ] || fail "replay $*: want one line of error, got: $(cat "$T/bad.err")"
    grep -q "^fathom replay: " "$T/bad.err" || fail "replay $*: not a fathom error: $(cat "$T/bad.err")"
    grep -qi -- "$want" "$T/bad.err" || fail "replay $*: the error does not say '$want': $(cat "$T/bad.err")"
    [ ! -s "$T/bad.out" ] || fail "replay $*: wrote to stdout"
    note "$(cat "$T/bad.err") (exit $rc)"
}

# ---- whole fixture programs ---------------------------------------------------
for k in ok newop attrs stride0 dangling nosteps shapes zerodim huge badio; do
    "$REPLAY_FIXTURES" "$T/fx-$k" $k || fail "replay_fixtures $k"
done
# the valid one replays op for op (the fixtures are sound: each case below has one fault)
"$FATHOM" replay "$T/fx-ok" --iterations 1 --dump-ops "$T/ok.ops" >"$T/ok.out" 2>"$T/ok.err" ||
    fail "replay of the valid fixture: $(cat "$T/ok.err")"
babeltrace2 "$T/fx-ok" >"$T/bt-ok.txt" || fail "babeltrace2 cannot read the fixture"
awk -f "$AWK" "$T/bt-ok.txt" >"$T/ok.want"
[ "$(wc -l <"$T/ok.want")" = 8 ] || fail "the valid fixture: want 8 ops in steps, got $(wc -l <"$T/ok.want")"
cmp -s "$T/ok.want" "$T/ok.ops" || fail "the valid fixture was not replayed op for op"

# an op type of a newer version: the rest is replayed, the type is listed
"$FATHOM" replay "$T/fx-newop" --iterations 1 --dump-ops "$T/newop.ops" --format json >"$T/newop.json" 2>"$T/newop.err" ||
    fail "replay with an unknown op type failed: $(cat "$T/newop.err")"
[ "$(wc -l <"$T/newop.err")" = 1 ] && grep -q "warning: 1 op type .*not replayed: FancyNewOp" "$T/newop.err" ||
    fail "unknown op type: want a one-line warning naming FancyNewOp, got: $(cat "$T/newop.err")"
grep -A3 '"not_replayed"' "$T/newop.json" | grep -q '"op": "FancyNewOp"' || fail "JSON not_replayed lacks FancyNewOp"
grep -q '"ops_executed": 6' "$T/newop.json" || fail "want 6 ops executed (2 steps x 3 known ops)"
babeltrace2 "$T/fx-newop" | awk -f "$AWK" | grep -v '^FancyNewOp ' >"$T/newop.want"
cmp -s "$T/newop.want" "$T/newop.ops" || fail "with an unknown op type, the other ops were not replayed op for op"
"$FATHOM" replay "$T/fx-newop" --iterations 1 2>/dev/null | grep -A1 "op types not replayed" | grep -q FancyNewOp ||
    fail "the text report does not list FancyNewOp"
note "an unknown op type: $(cat "$T/newop.err")"

bad "layout has 2" "$T/fx-attrs"
bad "stride" "$T/fx-stride0"
bad "tensor 77" "$T/fx-dangling"
bad "no complete step" "$T/fx-nosteps"
bad "shape" "$T/fx-shapes"
bad "dimension 1 is 0" "$T/fx-zerodim"
bad "GiB" "$T/fx-huge"
bad "outputs" "$T/fx-badio"

# ---- the analyzers' scenario traces ------------------------------------------
"$CTFGEN" "$T/sc-foreign" fc mlp train 2 only_foreign no_run_begin || fail "ctfgen_tool"
bad "no fathom events" "$T/sc-foreign"
"$CTFGEN" "$T/sc-nosteps" fc mlp train 0 || fail "ctfgen_tool"
bad "no complete step" "$T/sc-nosteps"
"$CTFGEN" "$T/sc-discard" fc mlp train 3 discard=5 || fail "ctfgen_tool"
bad "discarded" "$T/sc-discard"
"$CTFGEN" "$T/sc-schema" fc mlp train 2 schema=7 || fail "ctfgen_tool"
bad "schema" "$T/sc-schema"
"$CTFGEN" "$T/sc-noend" fc mlp train 3 drop_end_every=4 || fail "ctfgen_tool"
bad "truncated" "$T/sc-noend"
"$CTFGEN" "$T/sc-stray" fc mlp train 3 stray_ends=3 || fail "ctfgen_tool"
bad "3 op_end events have no op_begin" "$T/sc-stray"
"$CTFGEN" "$T/sc-norun" fc mlp train 2 no_run_begin || fail "ctfgen_tool"
bad "no fathom:run_begin" "$T/sc-norun"

# ---- a real recording, damaged ------------------------------------------------
ensure_sessiond
model=$("$FATHOM" record --help | sed -n 's/^workloads: //p' | tr ' ' '\n' | grep -x memnet)
[ -n "$model" ] || model=$("$FATHOM" record --help | sed -n 's/^workloads: \([^ ]*\).*/\1/p')
case "$model" in ""|"(none") skip "no workloads are built in" ;; esac
arch="$T/real.tar.zst"
"$FATHOM" record "$model" --preset tiny --steps 2 -o "$arch" --quiet >/dev/null 2>"$T/err" || fail "record: $(cat "$T/err")"
extract "$arch" "$T/x"
babeltrace2 "$T/x/trace" >"$T/bt-real.txt" || fail "babeltrace2"
# an op label this version does not know: the metadata's enum mapping of the
# most frequent op type renamed (same length, so the packets stay valid)
top=$(awk -f "$AWK" "$T/bt-real.txt" | awk '{print $1}' | sort | uniq -c | sort -rn | awk 'NR==1{print $2}')
new=$(echo "$top" | sed 's/.$/Z/')
[ "$new" != "$top" ] || fail "cannot rename $top"
cp -r "$T/x" "$T/renamed"
for md in "$T"/renamed/trace/ust/uid/*/64-bit/metadata; do
    perl -pi -e "s/\"$top\" = /\"$new\" = /" "$md" || fail "perl"
done
babeltrace2 "$T/renamed/trace" | grep -q "op = ( \"$new\"" || fail "the renamed label does not decode"
"$FATHOM" replay "$T/renamed/trace" --iterations 1 --dump-ops "$T/renamed.ops" --format json >"$T/renamed.json" \
    2>"$T/renamed.err" || fail "replay with $top renamed $new failed: $(cat "$T/renamed.err")"
grep -q "not replayed: $new\$" "$T/renamed.err" || fail "no warning naming $new: $(cat "$T/renamed.err")"
awk -f "$AWK" "$T/bt-real.txt" | grep -v "^$top " >"$T/renamed.want"
cmp -s "$T/renamed.want" "$T/renamed.ops" || fail "with $top unknown, the rest was not replayed op for op"
per=$(awk -f "$AWK" "$T/bt-real.txt" | grep -c "^$top ")
grep -A3 '"not_replayed"' "$T/renamed.json" | grep -q "\"count\": $((per / 2))" || fail "not_replayed: want $((per / 2)) $new per step"
note "$top renamed $new in the metadata: the other $(wc -l <"$T/renamed.ops") ops replayed, $new listed"

sz=$(wc -c <"$arch")
head -c $((sz / 2)) "$arch" >"$T/half.tar.zst"
bad "" "$T/half.tar.zst"
head -c 100 "$arch" >"$T/head.tar.zst"
bad "" "$T/head.tar.zst"
# the CTF streams cut in the middle of a packet
cp -r "$T/x" "$T/cut"
for f in "$T"/cut/trace/ust/uid/*/64-bit/fathom_[0-9]*; do
    s=$(wc -c <"$f")
    [ "$s" -gt 0 ] && truncate -s $((s / 2 + 7)) "$f"
done
bad "" "$T/cut/trace"
# streams overwritten with noise
cp -r "$T/x" "$T/noise"
for f in "$T"/noise/trace/ust/uid/*/64-bit/fathom_[0-9]*; do
    s=$(wc -c <"$f")
    head -c "$s" /dev/urandom >"$f"
done
bad "" "$T/noise/trace"
# a trace of another tool: every event class renamed to another provider,
# answered from its metadata
cp -r "$T/x" "$T/other"
for md in "$T"/other/trace/ust/uid/*/64-bit/metadata; do
    perl -pi -e 's/name = "fathom:/name = "mohtaf:/g' "$md" || fail "perl"
done
babeltrace2 "$T/other/trace" | grep -q ' mohtaf:ops: ' || fail "the renamed provider does not decode"
bad "not a fathom trace: an LTTng userspace trace (lttng-ust 2\.[0-9]*, [0-9]* event classes" "$T/other/trace"
# the metadata alone
mkdir -p "$T/meta-only"
cp "$T"/x/trace/ust/uid/*/64-bit/metadata "$T/meta-only/"
bad "" "$T/meta-only"
# not traces at all
head -c 65536 /dev/urandom >"$T/random.bin"
bad "" "$T/random.bin"
: >"$T/empty"
bad "" "$T/empty"
mkdir -p "$T/emptydir"
bad "" "$T/emptydir"
bad "" "$T/missing.tar.zst"
# usage
bad "cannot write" "$arch" --dump-ops "$T/no/such/dir/ops.txt"
# --dump-ops never writes over its input, any existing file or a symlink
cp "$arch" "$T/self.tar.zst"
sum_before=$(cksum <"$T/self.tar.zst")
bad "is the input" "$T/self.tar.zst" --dump-ops "$T/self.tar.zst"
bad "is the input" "$T/self.tar.zst" --dump-ops "$T/./self.tar.zst"
ln "$T/self.tar.zst" "$T/self-hardlink.tar.zst"
bad "is the input" "$T/self.tar.zst" --dump-ops "$T/self-hardlink.tar.zst"
ln -s "$T/self.tar.zst" "$T/self-symlink"
bad "is the input" "$T/self.tar.zst" --dump-ops "$T/self-symlink"
[ "$(cksum <"$T/self.tar.zst")" = "$sum_before" ] || fail "--dump-ops changed its input"
echo keep >"$T/exists.ops"
bad "exists: nothing is overwritten" "$arch" --dump-ops "$T/exists.ops"
[ "$(cat "$T/exists.ops")" = keep ] || fail "--dump-ops overwrote an existing file"
ln -s "$T/dangling-target" "$T/dangling.ops"
bad "symbolic link" "$arch" --dump-ops "$T/dangling.ops"
[ ! -e "$T/dangling-target" ] || fail "--dump-ops followed a symlink"
bad "inside the input" "$T/x/trace" --dump-ops "$T/x/trace/ops.txt"
[ ! -e "$T/x/trace/ops.txt" ] || fail "--dump-ops wrote into its input folder"
bad "is the input" "$arch" --record -o "$arch"
ls -A "$T" | grep -q fathom-tmp && fail "temporary output left: $(ls -A "$T")"
bad "with --record" "$arch" -o "$T/o.tar.zst"
bad "unknown option" "$arch" --bogus
bad "wants a value" "$arch" --dump-ops
bad "which trace" 
[ -z "$(ls -A "$TMPDIR")" ] || fail "temporary files left: $(ls -A "$TMPDIR")"
check_no_session_left
echo PASS
