#!/bin/sh
# format_check.sh -- the files listed in tests/format_files.txt are as
# clang-format writes them with the tree's .clang-format.
# usage: format_check.sh SOURCE_DIR
# Exit 0: all formatted; 1: a file is not (its first differences shown) or a
# line of the list matches no file; 77 (skipped): no clang-format.
set -u
src=${1:?usage: format_check.sh SOURCE_DIR}
cf=
for c in clang-format clang-format-14 clang-format-15 clang-format-16; do
    if command -v "$c" >/dev/null 2>&1; then
        cf=$c
        break
    fi
done
if [ -z "$cf" ]; then
    echo "format_check: skipped: clang-format is not installed (Debian: apt-get install clang-format)"
    exit 77
fi
cd "$src" || exit 1
[ -f .clang-format ] || { echo "format_check: no .clang-format in $src"; exit 1; }
bad=0
n=0
while read -r pattern; do
    case $pattern in '' | '#'*) continue ;; esac
    matched=0
    for f in $pattern; do
        [ -f "$f" ] || continue
        matched=1
        n=$((n + 1))
        if ! "$cf" --style=file "$f" | diff -u "$f" - >"${TMPDIR:-/tmp}/format_check.$$" 2>&1; then
            echo "$f: not formatted (clang-format -i $f); the first differences:"
            sed -n '3,20p' "${TMPDIR:-/tmp}/format_check.$$"
            bad=1
        fi
    done
    if [ $matched = 0 ]; then
        echo "tests/format_files.txt: '$pattern' matches no file"
        bad=1
    fi
done <tests/format_files.txt
rm -f "${TMPDIR:-/tmp}/format_check.$$"
[ $bad = 0 ] && echo "format_check: $n files as $("$cf" --version | sed 's/.*version //') formats them"
exit $bad
