#!/bin/sh
# man_lint.sh FATHOM SOURCE_DIR VERSION -- the man pages: `mandoc -T lint`
# has nothing to say about any of them, and every page's title line names
# the same date and this version of fathom, the one `fathom version` prints;
# every flag a command's --help names (each analysis's too) is in its page
# (fathom-CMD.1, else fathom.1).
set -u
FATHOM=$1 src=$2 version=$3
command -v mandoc >/dev/null || { echo "SKIP: mandoc is not installed"; exit 77; }
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
out=$(mandoc -T lint "$src"/man/*.[0-9] 2>&1)
[ -z "$out" ] || fail "mandoc -T lint: $out"
[ "$("$FATHOM" version | head -1)" = "fathom $version" ] || fail "fathom version prints '$("$FATHOM" version | head -1)', not fathom $version"
dates=""
for page in "$src"/man/*.[0-9]; do
    th=$(head -1 "$page")
    echo "$th" | grep -Eq "^\.TH [A-Z0-9-]+ [0-9] [0-9]{4}-[0-9]{2}-[0-9]{2} \"fathom $version\" \"fathom manual\"$" \
        || fail "$(basename "$page"): title line '$th' (want .TH NAME SECTION YYYY-MM-DD \"fathom $version\" \"fathom manual\")"
    dates="$dates $(echo "$th" | cut -d' ' -f4)"
done
[ "$(echo "$dates" | tr ' ' '\n' | sed '/^$/d' | sort -u | wc -l)" = 1 ] || fail "the pages carry different dates:$dates"
# the flags of `fathom CMD --help` (the commands `fathom --help` lists) in man/fathom-CMD.1, else fathom.1
flags_in() { # PAGE: the long options a page names, one a line (roff's \- and font escapes undone)
    sed 's/\\-/-/g; s/\\f[BIRP]//g' "$1" | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u
}
help_checked() { # WHAT PAGE: the --help text on stdin against PAGE
    grep -oE -- '--[a-z][a-z0-9-]*' | sort -u | grep -vx -- --help >"$tmp.help"
    flags_in "$2" >"$tmp.man"
    missing=$(comm -23 "$tmp.help" "$tmp.man" | tr '\n' ' ')
    [ -z "$missing" ] || fail "$1 --help names ${missing}but $(basename "$2") does not"
    [ -s "$tmp.help" ] && checked=$((checked + 1))
}
tmp=$(mktemp)
checked=0
cmds=$("$FATHOM" --help | sed -n '/^commands:/,/^$/s/^  \([a-z][a-z]*\) .*/\1/p')
[ -n "$cmds" ] || fail "fathom --help lists no commands"
for c in $cmds; do
    [ "$c" = help ] && continue
    page="$src/man/fathom-$c.1"
    [ -f "$page" ] || page="$src/man/fathom.1"
    "$FATHOM" "$c" --help >"$tmp.out" 2>&1
    help_checked "fathom $c" "$page" <"$tmp.out" # not a pipe: its counts stay in this shell
done
for a in $("$FATHOM" --help | sed -n 's/^  analyze  *analyze traces offline: //p' | tr -d ','); do
    "$FATHOM" analyze "$a" --help >"$tmp.out" 2>&1
    help_checked "fathom analyze $a" "$src/man/fathom-analyze.1" <"$tmp.out"
done
rm -f "$tmp" "$tmp.help" "$tmp.man" "$tmp.out"
[ "$checked" -ge 10 ] || fail "only $checked commands' --help named flags"
[ $fails -eq 0 ] && echo "all man page checks passed"
exit $fails
