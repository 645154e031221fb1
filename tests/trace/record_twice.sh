#!/bin/sh
# Recording twice gives two archives; -o never overwrites.
. "$(dirname "$0")/lib.sh"
ensure_sessiond
a1=$("$TRACE_MLP" record --dir "$T/out" 2) || fail "first record failed"
a2=$("$TRACE_MLP" record --dir "$T/out" 2) || fail "second record failed"
[ "$a1" != "$a2" ] || fail "both recordings wrote $a1"
[ -f "$a1" ] && [ -f "$a2" ] || fail "an archive is missing"
[ "$(ls "$T/out" | wc -l)" = 2 ] || fail "want 2 archives in $T/out: $(ls "$T/out")"
sum=$(cksum <"$a1")
if "$TRACE_MLP" record -o "$a1" 2 2>"$T/err"; then fail "-o overwrote an existing archive"; fi
[ "$(cksum <"$a1")" = "$sum" ] || fail "$a1 changed"
grep -qi "exist" "$T/err" || fail "no clear error for an existing -o path: $(cat "$T/err")"
"$TRACE_MLP" record -o "$T/explicit.tar.zst" 2 >/dev/null || fail "-o to a new path failed"
[ -f "$T/explicit.tar.zst" ] || fail "-o path not written"
check_no_session_left
echo PASS
