#!/bin/sh
# fathom record with bad input: a one-line error, a non-zero exit, and no
# session or archive left.
. "$(dirname "$0")/lib.sh"
cd "$T" || fail "cd"
bad() {
    "$FATHOM" record "$@" >"$T/bad.out" 2>"$T/bad.err"
    rc=$?
    [ $rc -ne 0 ] || fail "record $* succeeded"
    [ "$(wc -l <"$T/bad.err")" = 1 ] || fail "record $*: want one line of error, got: $(cat "$T/bad.err")"
    note "record $*: $(cat "$T/bad.err") (exit $rc)"
}
bad no-such-model
bad no-such-model --steps 2
bad --steps 0 x
bad --mode sideways x
bad --preset huge x
bad --relay http://example.org x
bad --all -o a.tar.zst
bad --all somemodel
bad --bogus
bad -o
bad x y
m=$("$FATHOM" record --help | sed -n 's/^workloads: //p' | cut -d' ' -f1)
bad "$m" --conv-algo fastest
bad "$m" --bind tight
bad "$m" --denormals no
grep -q "use flush or keep" "$T/bad.err" || fail "--denormals no: $(cat "$T/bad.err")"
# where the archive cannot go: said before the run, which would be lost
# after it (the workload's summary line never printed)
: >"$T/afile"
bad "$m" --preset tiny -o "$T/no-such-folder/a.tar.zst"
grep -q "cannot write in .*no-such-folder: No such file or directory" "$T/bad.err" || fail "-o in a missing folder: $(cat "$T/bad.err")"
bad "$m" --preset tiny --dir "$T/afile/sub"
grep -q "cannot write in .*afile: Not a directory" "$T/bad.err" || fail "--dir under a file: $(cat "$T/bad.err")"
bad --all --preset tiny --dir "$T/afile"
grep -q "events" "$T/bad.out" "$T/bad.err" && fail "--dir a file: a workload ran first"
[ ! -e "$T/traces" ] || fail "a traces/ folder was created"
check_no_session_left
echo PASS
