#!/bin/sh
# include_floors.sh -- the floors of the source tree, checked from every
# #include "..." and every CMake link between fathom's libraries.
#
# usage: include_floors.sh SOURCE_DIR
#        include_floors.sh --selftest SOURCE_DIR TMPDIR
#
# The floors, lowest first (docs/design.md, "Floors"):
#   base/     below everything: the accounting, fault-injectable allocator
#             (alloc.h) and the subcommands' CLI helpers (cli.h); the C
#             library alone, no project header (libfathom-base).
#   exec/     the ground floor, the engine: base/ alone.
#   tracer/   exec/, base/.  Never models/: the recorder runs any program.
#   models/   exec/, base/.
#   replay/   exec/, tracer/, base/.
#   analyze/  tracer/'s reader, archive library and data tables
#             (TRACER_READER below) and base/; nothing of exec/, models/ or
#             replay/: analyzers read traces, whatever engine wrote them.
#   driver/   the top floor: anything.  Nothing outside driver/ includes it.
# tests/ and fuzz/ may include any floor but driver/.  Between folders there
# are no include loops.  Outside tracer/ no file opens a trace with a
# Babeltrace2 source of its own: traces are read through tracer/reader.h.
#
# --selftest copies the floors to TMPDIR, checks that the copy passes, then
# adds one forbidden include or link at a time and checks that each is
# reported.
set -u

FLOORS="base exec tracer models replay analyze driver"
BASE_HELPERS="base/alloc.h base/cli.h base/clock.h base/hash.h"
TRACER_READER="tracer/reader.h tracer/live.h tracer/decode.h tracer/fields.h tracer/isolate.h tracer/opmatch.h tracer/tp_enums.h tracer/archive.h tracer/output.h tracer/critpath.h tracer/import_ops.def tracer/import_costs.def tracer/schema.def"

# The folders each floor may include or link (itself always).
allowed_folders() {
    case $1 in
    base) echo "" ;;
    exec) echo "base" ;;
    tracer) echo "base exec" ;;
    models) echo "base exec" ;;
    replay) echo "base exec tracer" ;;
    analyze) echo "base tracer" ;;
    driver) echo "base exec tracer models replay analyze" ;;
    tests | fuzz) echo "base exec tracer models replay analyze tests fuzz" ;;
    *) echo "" ;;
    esac
}

# check SRC: prints one line per violation; exit status 1 if any.
check() {
    src=$1
    work=$(mktemp -d "${TMPDIR:-/tmp}/floors.XXXXXX") || exit 1
    # every file of the tree, for resolving quoted includes as cpp does: the
    # including file's folder first, then the source root
    (cd "$src" && find . -path ./.git -prune -o -path './build*' -prune -o -type f -print | sed 's|^\./||') \
        >"$work/files"
    (cd "$src" && grep -rn --include='*.c' --include='*.h' --include='*.def' --include='*.cases' \
        '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' $FLOORS tests fuzz 2>/dev/null | sort -t: -k1,1 -k2,2n) \
        >"$work/includes"
    awk -v floors="$FLOORS" -v base="$BASE_HELPERS" -v reader="$TRACER_READER" '
        function norm(p,    n, i, parts, out, k) {
            n = split(p, parts, "/"); k = 0
            for (i = 1; i <= n; i++) {
                if (parts[i] == "." || parts[i] == "") continue
                if (parts[i] == ".." && k > 0) { k--; continue }
                out[++k] = parts[i]
            }
            p = ""
            for (i = 1; i <= k; i++) p = p (i > 1 ? "/" : "") out[i]
            return p
        }
        function dir(p) { sub(/\/[^\/]*$/, "", p); return p }
        function top(p) { sub(/\/.*$/, "", p); return p }
        BEGIN { n = split(floors " tests fuzz", f, " "); for (i = 1; i <= n; i++) known[f[i]] = 1 }
        FNR == NR { have[$0] = 1; next }
        {
            # FILE:LINE:#include "PATH"
            file = $0; sub(/:.*/, "", file)
            line = $0; sub(/^[^:]*:/, "", line); sub(/:.*/, "", line)
            path = $0; sub(/^[^"]*"/, "", path); sub(/".*/, "", path)
            rel = norm(dir(file) "/" path)
            if (rel in have) target = rel
            else target = norm(path)
            from = top(file); to = top(target)
            # a path under no folder of the tree: on the include path of
            # the including folder (tests/fixtures/...)
            if (from == to || !((to in known) || (target in have))) next
            print file ":" line ":" from ":" to ":" target
        }' "$work/files" "$work/includes" >"$work/edges"

    bad=0
    while IFS=: read -r file line from to target; do
        ok=0
        for a in $(allowed_folders "$from"); do
            [ "$a" = "$to" ] && ok=1
        done
        if [ "$from" = analyze ] && [ "$to" = tracer ]; then
            ok=0
            for h in $TRACER_READER; do [ "$h" = "$target" ] && ok=1; done
        fi
        if ! echo " $FLOORS tests fuzz " | grep -q " $to "; then
            echo "$file:$line: $from/ includes $target ($to/ has no floor: add it to tests/include_floors.sh and the floors table of docs/design.md)"
            bad=1
            continue
        fi
        if [ $ok = 0 ]; then
            echo "$file:$line: $from/ includes $target (not a floor $from/ stands on)"
            bad=1
        fi
    done <"$work/edges"

    # the base helpers include no project header but base/'s own data
    # tables (run_options.def: rows, no includes)
    for h in $BASE_HELPERS; do
        if [ -f "$src/$h" ] && grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$src/$h" |
            grep -v '"base/[a-z_]*\.def"' >"$work/h"; then
            sed "s|^|$h:|; s|\$| (a base helper includes the C library alone)|" "$work/h"
            bad=1
        fi
    done

    # the links between fathom's libraries: which folder defines each target
    # (add_library/add_executable), then each target_link_libraries of a
    # folder against the same floors
    : >"$work/targets"
    for d in $FLOORS; do
        for c in "$src/$d/CMakeLists.txt" "$src/$d"/*.cmake; do
            [ -f "$c" ] || continue
            sed 's/#.*//' "$c" | tr '\n' ' ' | grep -o 'add_\(library\|executable\)([[:space:]]*[A-Za-z0-9_-]*' |
                sed "s/.*(\s*//; s/\$/ $d/" >>"$work/targets"
        done
    done
    for d in $FLOORS; do
        for c in "$src/$d/CMakeLists.txt" "$src/$d"/*.cmake; do
            [ -f "$c" ] || continue
            sed 's/#.*//' "$c" | tr '\n' ' ' | grep -o 'target_link_libraries([^)]*)' |
                sed 's/target_link_libraries(//; s/)$//' | while read -r self rest; do
                for lib in $rest; do
                    to=$(awk -v t="$lib" '$1 == t { print $2 }' "$work/targets")
                    [ -n "$to" ] && [ "$to" != "$d" ] || continue
                    ok=0
                    for a in $(allowed_folders "$d"); do [ "$a" = "$to" ] && ok=1; done
                    if [ $ok = 0 ]; then
                        echo "${c#$src/}: $self links $lib ($to/ is not a floor $d/ stands on)"
                    fi
                    echo "$d $to" >>"$work/linkedges"
                done
            done
        done
    done >"$work/linkbad"
    if [ -s "$work/linkbad" ]; then
        cat "$work/linkbad"
        bad=1
    fi

    # no loops between folders, over includes and links together
    { awk -F: '{ print $3, $4 }' "$work/edges"; cat "$work/linkedges" 2>/dev/null; } | sort -u >"$work/graph"
    if ! tsort "$work/graph" >/dev/null 2>"$work/loop"; then
        echo "include loop between folders: $(sed -n 's/^tsort: \([a-z]*\)$/\1/p' "$work/loop" | tr '\n' ' ')"
        bad=1
    fi

    # traces are read through tracer/'s reader: no Babeltrace2 source over a
    # trace anywhere else
    for d in $FLOORS; do
        [ "$d" = tracer ] && continue
        (cd "$src" && grep -rn 'bt_plugin_borrow_source_component_class_by_name' "$d" --include='*.c' --include='*.h') |
            sed 's/$/ (opens a trace with its own Babeltrace2 source: use tracer\/reader.h)/'
    done >"$work/readers"
    if [ -s "$work/readers" ]; then
        cat "$work/readers"
        bad=1
    fi

    rm -rf "$work"
    return $bad
}

# selftest SRC TMP: the checker passes on a copy of SRC, and fails, naming
# the problem, on each forbidden change.
selftest() {
    src=$1
    tmp=$2/include_floors_selftest
    fails=0
    rm -rf "$tmp"
    mkdir -p "$tmp/tests"
    (cd "$src" && cp -r $FLOORS "$tmp/")
    touched=""
    add() { # LINE FILE: appends LINE to the copy's FILE (restored by fresh)
        touched="$touched $2"
        printf '%s\n' "$1" >>"$tmp/$2"
    }
    fresh() { # the copy as SRC again
        for f in $touched; do
            if [ -f "$src/$f" ]; then cp "$src/$f" "$tmp/$f"; else rm -f "$tmp/$f"; fi
        done
        touched=""
    }
    expect() { # NAME WANTED-TEXT: the check of $tmp fails and says WANTED-TEXT
        if out=$(check "$tmp"); then
            echo "selftest $1: the checker passed a forbidden change"
            fails=1
        elif ! printf '%s\n' "$out" | grep -q -- "$2"; then
            echo "selftest $1: expected '$2' in:"
            printf '%s\n' "$out"
            fails=1
        else
            echo "selftest $1: reported: $(printf '%s\n' "$out" | grep -- "$2" | head -1)"
        fi
    }
    if ! out=$(check "$tmp"); then
        echo "selftest: the unchanged copy fails:"
        printf '%s\n' "$out"
        return 1
    fi
    fresh
    add '#include "tracer/hooks.h"' exec/graph.c
    expect exec-above "exec/graph.c:[0-9]*: exec/ includes tracer/hooks.h"
    fresh
    kernel=$(cd "$tmp" && ls exec/ops/*.c | head -n 1)
    add '#include "../../tracer/hooks.h"' $kernel
    expect exec-relative "$kernel:[0-9]*: exec/ includes tracer/hooks.h"
    fresh
    add '#include "exec/exec.h"' analyze/profile.c
    expect analyze-engine "analyze/profile.c:[0-9]*: analyze/ includes exec/exec.h"
    fresh
    add '#include "models/model.h"' analyze/profile.c
    expect analyze-models "analyze/ includes models/model.h"
    fresh
    add '#include "tracer/record.h"' analyze/profile.c
    expect analyze-recorder "analyze/ includes tracer/record.h"
    fresh
    add '#include "models/model.h"' tracer/hooks.c
    expect tracer-models "tracer/hooks.c:[0-9]*: tracer/ includes models/model.h"
    fresh
    add '#include "exec/exec.h"' base/alloc.h
    expect base-helper "base/alloc.h:.*a base helper"
    fresh
    add '#include "exec/exec.h"' base/cli.c
    expect base-above "base/cli.c:[0-9]*: base/ includes exec/exec.h"
    fresh
    add '#include "driver/driver_cmds.h"' tests/t.c
    expect driver-included "tests/t.c:1: tests/ includes driver/driver_cmds.h"
    fresh
    add '#include "replay/run.h"' models/model.c
    add '#include "models/model.h"' replay/run.c
    expect loop "include loop between folders"
    fresh
    add 'target_link_libraries(fathom-exec PUBLIC fathom-models)' exec/CMakeLists.txt
    expect exec-links "exec/CMakeLists.txt: fathom-exec links fathom-models"
    fresh
    add 'target_link_libraries(fathom-analyze PUBLIC fathom-exec)' analyze/CMakeLists.txt
    expect analyze-links "fathom-analyze links fathom-exec"
    fresh
    add 'static void f(void) { bt_plugin_borrow_source_component_class_by_name_const(0, "fs"); }' replay/load.c
    expect own-reader "replay/load.c:.*its own Babeltrace2 source"
    fresh
    mkdir -p "$tmp/util"
    add '/* a new folder */' util/x.h
    add '#include "util/x.h"' exec/graph.c
    expect new-folder "exec/graph.c:[0-9]*: exec/ includes util/x.h (util/ has no floor"
    rm -rf "$tmp"
    return $fails
}

if [ "${1:-}" = --selftest ]; then
    [ $# -eq 3 ] || { echo "usage: include_floors.sh --selftest SOURCE_DIR TMPDIR" >&2; exit 2; }
    selftest "$2" "$3"
    exit $?
fi
[ $# -eq 1 ] || { echo "usage: include_floors.sh SOURCE_DIR" >&2; exit 2; }
if check "$1"; then
    echo "include_floors: every include and link stands on a lower floor; no loops"
    exit 0
fi
exit 1
