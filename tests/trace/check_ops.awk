# check_ops.awk -- the lossless checks of a fathom trace of schema 2 or 3,
# on the text the babeltrace2 CLI prints with --clock-cycles (event times in
# the clock's cycles, the unit of the ops records' begins and ends),
# independent of fathom's own decoder:
#   - every node an ops record names has a node_def (same vpid and graph)
#     before that record;
#   - the sequences of an ops event agree: nodes, begins and ends of the
#     same length; or (schema 3, packed) nodes, gaps and durations, its
#     begins and ends empty, each record's begin the end of the one before
#     (the first's: base) + its gap, and its end begin + duration;
#   - each thread's records are in order and do not overlap, and each lies
#     inside the ops event's own time (it was emitted after they ended);
#   - every record of a step lies between the step's step_begin and
#     step_end (those of the same process);
#   - the records of all ops events sum to run_end.ops.
# Prints "records N ops_events E node_defs D run_end_ops R packed P" (P:
# the ops events of packed records) and exits 1 with a message on the
# first violation.
function arr(name,    i, s, e, n, parts, k, out) {
    i = index($0, " " name " = [")
    if (!i) { print "check_ops.awk: no field " name " in: " substr($0, 1, 200) > "/dev/stderr"; bad = 1; exit 1 }
    s = substr($0, i + length(name) + 5)
    e = index(s, " ]")
    s = substr(s, 1, e - 1)
    n = split(s, parts, ", ")
    out = 0
    for (k = 1; k <= n; k++) {
        sub(/^ *\[[0-9]+\] = /, "", parts[k])
        if (parts[k] != "") A[++out] = parts[k] + 0
    }
    return out
}
function scalar(name,    i, s) {
    i = index($0, " " name " = ")
    s = substr($0, i + length(name) + 4)
    sub(/[,} ].*/, "", s)
    return s
}
function ts(    s) { s = $0; sub(/^\[/, "", s); sub(/\].*/, "", s); return s + 0 }
function die(msg) { print "check_ops.awk: " msg > "/dev/stderr"; bad = 1; exit 1 }
/ fathom:node_def: / { defined[scalar("vpid") ":" scalar("graph") ":" scalar("node")] = 1; ndefs++; next }
/ fathom:step_begin: / { p = scalar("vpid"); stepb[p] = ts(); instep[p] = 1; next }
/ fathom:step_end: / { p = scalar("vpid"); instep[p] = 0; next }
/ fathom:run_end: / { runops += scalar("ops"); next }
/ fathom:ops: / {
    p = scalar("vpid"); t = scalar("vtid"); g = scalar("graph"); now = ts()
    nn = arr("nodes"); for (k = 1; k <= nn; k++) node[k] = A[k]
    nb = arr("begins"); for (k = 1; k <= nb; k++) b[k] = A[k]
    ne = arr("ends"); for (k = 1; k <= ne; k++) e[k] = A[k]
    no = nd = 0
    if (index($0, " gaps = [")) {
        no = arr("gaps"); for (k = 1; k <= no; k++) o[k] = A[k]
        nd = arr("durations"); for (k = 1; k <= nd; k++) du[k] = A[k]
    }
    if (no || nd) {
        if (nb || ne || no != nn || nd != nn) die("a packed ops event with sequences of unequal lengths " nn "/" no "/" nd "/" nb "/" ne)
        at = scalar("base") + 0
        for (k = 1; k <= nn; k++) { b[k] = at + o[k]; e[k] = b[k] + du[k]; at = e[k] }
        npacked++
    } else if (nn != nb || nn != ne) die("an ops event with sequences of unequal lengths " nn "/" nb "/" ne)
    nev++
    for (k = 1; k <= nn; k++) {
        if (!((p ":" g ":" node[k]) in defined)) die("a record of node " node[k] " of graph " g " before its node_def")
        if (e[k] < b[k]) die("a record ends before it begins")
        if ((t in lastend) && b[k] < lastend[t]) die("records of thread " t " overlap or go back")
        if (e[k] > now) die("a record ends after its ops event")
        if (instep[p] && b[k] < stepb[p]) die("a record of a step begins before its step_begin")
        lastend[t] = e[k]
    }
    records += nn
    next
}
END {
    if (bad) exit 1
    printf "records %d ops_events %d node_defs %d run_end_ops %d packed %d\n", records, nev, ndefs, runops, npacked
    if (records != runops) { print "check_ops.awk: records " records " != run_end.ops " runops > "/dev/stderr"; exit 1 }
}
