#!/bin/sh
# run_options.sh FATHOM SOURCE_DIR -- the numeric run flags that run, record,
# replay and tune share have one set of bounds (base/run_options.def): each
# command that takes a flag accepts it at both its bounds and refuses one
# past each, with a one-line usage error naming the flag and the bounds.
# A value at a bound gets past the parser to the next error (an unknown
# model, a missing trace), so nothing runs.
set -u
FATHOM=$1 src=$2
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/run_options.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# the table's rows: NAME FLAG LO HI
sed -n 's/^X(\([a-z_]*\), "\(--[a-z-]*\)", \([0-9]*\), \([0-9]*\)).*/\1 \2 \3 \4/p' "$src/base/run_options.def" >"$tmp/rows"
[ "$(wc -l <"$tmp/rows")" -ge 5 ] || fail "run_options.def: $(wc -l <"$tmp/rows") rows read"

# check CMD... -- FLAG: the command (its flag and value last) at each bound
# and one past; `compare` puts FLAG VALUE inside tune's --compare setting.
check() {
    how=$1 name=$2 flag=$3 lo=$4 hi=$5
    shift 5
    for v in "$lo" "$hi" $((lo - 1)) $((hi + 1)); do
        if [ "$how" = compare ]; then
            "$FATHOM" "$@" "$flag $v" >"$tmp/out" 2>"$tmp/err"
        else
            "$FATHOM" "$@" "$flag" "$v" >"$tmp/out" 2>"$tmp/err"
        fi
        rc=$?
        said="wants an integer in \[$lo, $hi\]"
        [ "$how" = compare ] && said="wants a number from $lo to $hi"
        if [ "$v" -ge "$lo" ] && [ "$v" -le "$hi" ]; then
            grep -q -- "$flag wants" "$tmp/err" && fail "$* $flag $v refused at its bound: $(cat "$tmp/err")"
        else
            [ "$rc" -ne 0 ] || fail "$* $flag $v: exit 0"
            grep -q -- "$flag $said, not '$v'" "$tmp/err" ||
                fail "$* $flag $v: no error naming $flag and [$lo, $hi]: $(cat "$tmp/err")"
            [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "$* $flag $v: not one line: $(cat "$tmp/err")"
        fi
    done
}

while read -r name flag lo hi; do
    takes() { case " $2 " in *" $name "*) return 0 ;; esac; return 1; }
    takes run "threads inter batch steps depth" && check plain "$name" "$flag" "$lo" "$hi" run no_such_model
    takes record "threads inter batch steps depth" && check plain "$name" "$flag" "$lo" "$hi" record no_such_model
    takes replay "threads inter steps" && check plain "$name" "$flag" "$lo" "$hi" replay "$tmp/no_such_trace.tar.zst"
    takes tune "batch steps depth" && check plain "$name" "$flag" "$lo" "$hi" tune no_such_model
    takes compare "threads inter batch" && check compare "$name" "$flag" "$lo" "$hi" tune no_such_model --compare
done <"$tmp/rows"

[ "$fails" -eq 0 ] || exit 1
echo "run_options: every shared flag at its bounds and one past them, in run, record, replay and tune"
