#!/bin/sh
# man_lint.sh FATHOM SOURCE_DIR VERSION -- the man pages: `mandoc -T lint`
# has nothing to say about any of them, and every page's title line names
# the same date and this version of fathom, the one `fathom version` prints.
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
[ $fails -eq 0 ] && echo "all man page checks passed"
exit $fails
