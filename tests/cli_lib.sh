# cli_lib.sh -- what the CLI tests (analyze_cli, report_cli, export_cli)
# share, sourced after `set -u`: cli_begin NAME TMP makes the private
# folder $T (removed at exit); fail records a failure and goes on;
# cli_end SUBJECT reports and exits with the number of failures.
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
cli_begin() { # name, parent folder
    T=$(mktemp -d "$2/$1-XXXXXX") || exit 1
    trap 'rm -rf "$T"' EXIT
}
cli_end() { # subject
    [ $fails -eq 0 ] && echo "all $1 checks passed"
    exit $fails
}
