# bt_ops.awk -- the op invocations of a fathom trace (schema 2: each record
# of the ops events, described by its node_def; schema 1: each op_begin),
# read from the text the babeltrace2 CLI prints (not through fathom's own
# decoder), one line each in the format of `fathom replay --dump-ops`:
#     OP PHASE IN_SHAPES -> OUT_SHAPES : ATTRS
# Shapes come from the trace's tensor_alloc events (DxDxD, "scalar" for none).
# Only ops inside steps (step_begin .. step_end), from step `first` (a recorded
# step number, default 0) on, at most `nsteps` steps (default: all). Records
# are printed in the order of the ops events (one executing thread).
# Usage: awk -v first=N -v nsteps=K -f bt_ops.awk BT.txt
BEGIN { if (first == "") first = 0; if (nsteps == "") nsteps = -1; instep = 0; seen = 0 }

# the values of integer array field `name` ("name = [ [0] = 4, [1] = 1 ]")
function values(name,    i, s, e, n, parts, k, out) {
    i = index($0, " " name " = [")
    if (!i) { print "bt_ops.awk: no field " name " in: " $0 > "/dev/stderr"; exit 2 }
    s = substr($0, i + length(name) + 5)
    e = index(s, " ]")
    s = substr(s, 1, e - 1)
    out = ""
    n = split(s, parts, ", ")
    for (k = 1; k <= n; k++) {
        sub(/^ *\[[0-9]+\] = /, "", parts[k])
        if (parts[k] != "") out = out (out == "" ? "" : " ") parts[k]
    }
    return out
}
function scalar(name,    i, s) {
    i = index($0, " " name " = ")
    s = substr($0, i + length(name) + 4)
    sub(/[,} ].*/, "", s)
    return s
}
function label(name,    i, s) {
    i = index($0, " " name " = ( \"")
    s = substr($0, i + length(name) + 7)
    sub(/".*/, "", s)
    return s
}
function shapes(ids,    n, parts, k, out) {
    out = ""
    n = split(ids, parts, " ")
    for (k = 1; k <= n; k++) {
        if (!(parts[k] in shape)) { print "bt_ops.awk: tensor " parts[k] " was never allocated" > "/dev/stderr"; exit 2 }
        out = out " " shape[parts[k]]
    }
    return out
}
/ fathom:tensor_alloc: / {
    d = values("shape"); gsub(/ /, "x", d)
    shape[scalar("id")] = d == "" ? "scalar" : d
    next
}
/ fathom:step_begin: / {
    st = scalar("step") + 0
    instep = st >= first && (nsteps < 0 || seen < nsteps)
    if (instep) seen++
    next
}
/ fathom:step_end: / { instep = 0; next }
/ fathom:node_def: / {
    key = scalar("vpid") ":" scalar("graph") ":" scalar("node")
    desc_op[key] = label("op") " " label("phase"); desc_in[key] = values("inputs")
    desc_out[key] = values("outputs"); desc_at[key] = values("attrs")
    next
}
/ fathom:ops: / && instep {
    n = split(values("nodes"), nodes, " ")
    pre = scalar("vpid") ":" scalar("graph") ":"
    for (k = 1; k <= n; k++) {
        key = pre nodes[k]
        if (!(key in desc_op)) { print "bt_ops.awk: node " key " has no node_def" > "/dev/stderr"; exit 2 }
        a = desc_at[key]
        print desc_op[key] shapes(desc_in[key]) " ->" shapes(desc_out[key]) " :" (a == "" ? "" : " " a)
    }
    next
}
/ fathom:op_begin: / && instep {
    line = label("op") " " label("phase") shapes(values("inputs")) " ->" shapes(values("outputs")) " :"
    a = values("attrs")
    print line (a == "" ? "" : " " a)
}
