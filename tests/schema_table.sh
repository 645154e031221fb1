#!/bin/sh
# schema_table.sh -- every writer of the trace schema writes the fields of
# tracer/schema.def, no more, no fewer, of the same types, in the same
# order: the provider (a trace recorded with LTTng through tracer/tp.h),
# the importer (`fathom import`, analyze/import_source.c) and the test
# generator (tests/fixtures/ctfgen.c); the decoder reads each of them
# without a malformed event.  The event classes are read back by
# Babeltrace2 (sink.text.details), the table by tests/schema_dump.
# Env as tests/trace/lib.sh, plus SCHEMA_DUMP, CTFGEN_TOOL, PYTORCH (a
# PyTorch trace to import) and KINETO_GEN (tests/fixtures/kineto_gen.py).
. "$(dirname "$0")/trace/lib.sh"
: "${SCHEMA_DUMP:?}" "${CTFGEN_TOOL:?}" "${PYTORCH:?}" "${KINETO_GEN:?}"

# The payload fields of every fathom event class of trace DIR, one line a
# field as schema_dump prints them (length fields, "_..._length", left out).
fields() {
    babeltrace2 "$1" -c sink.text.details -p with-data=false >"$T/details" 2>"$T/details.err" ||
        fail "babeltrace2 on $1: $(head -3 "$T/details.err")"
    awk '
    function num(s, b) { b = s; sub(/^[^(]*\(/, "", b); sub(/-bit.*/, "", b); return b }
    function type(s) {
        if (s ~ /^Unsigned integer/) return "u" num(s)
        if (s ~ /^Signed integer/) return "s" num(s)
        if (s ~ /^Unsigned enumeration/) return "enum u" num(s)
        if (s ~ /^Signed enumeration/) return "enum s" num(s)
        if (s ~ /^String/) return "string"
        if (s ~ /^Double-precision real/) return "double"
        return "other(" s ")"
    }
    /^    Event class `/ { ev = $3; gsub(/`/, "", ev); pay = 0; next }
    /^      Payload field class:/ { pay = (ev ~ /^fathom:/); next }
    /^      [^ ]/ { pay = 0; next }
    pay && /^        [^ ]/ {
        name = $1; sub(/:$/, "", name); t = $0; sub(/^ *[^ ]*: /, "", t)
        arr = (t ~ /^Dynamic array/)
        if (name ~ /^_/) { arr = 0; next }
        if (!arr) print ev, name, type(t)
        next
    }
    pay && arr && /^          Element: / { t = $0; sub(/^ *Element: /, "", t); print ev, name, "array " type(t); arr = 0 }
    ' "$T/details" | sort -s -k1,1
}

# compare WHO FILE EVENTS...: FILE holds exactly the table's rows of EVENTS
compare() {
    who=$1 file=$2
    shift 2
    : >"$T/want"
    for e in "$@"; do grep "^fathom:$e " "${TABLE:-$T/table}" >>"$T/want"; done
    sort -s -k1,1 "$T/want" -o "$T/want"
    diff "$T/want" "$file" >"$T/diff" ||
        fail "$who writes other fields than tracer/schema.def (< the table, > $who):
$(head -20 "$T/diff")"
    note "$who: $(wc -l <"$file") fields of $# events as the table"
}

# the rows every writer of schema 2 writes, those of `fathom import` alone
# (where the trace has them: launches, calls and the runtime event, in a
# GPU trace), and those of a writer of schema 3 (the packed op records)
"$SCHEMA_DUMP" >"$T/all" || fail "schema_dump"
grep -v ' (import)$\| (packed)$' "$T/all" >"$T/table"
grep -v ' (packed)$' "$T/all" | sed 's/ (import)$//' >"$T/table.import"
grep -v ' (import)$' "$T/all" | sed 's/ (packed)$//' >"$T/table.packed"
[ "$(wc -l <"$T/table")" -gt 60 ] || fail "schema_dump printed $(wc -l <"$T/table") rows"
[ "$(grep -c '^fathom:ops .* (packed)$' "$T/all")" = 3 ] || fail "schema_dump: not the 3 packed rows of ops"

# the comparison sees a row the writer lacks, and one it adds
"$CTFGEN_TOOL" "$T/gen" conv mlp train 2 schema=2 || fail "ctfgen_tool"
fields "$T/gen" >"$T/gen.fields"
grep -v '^fathom:ops ends ' "$T/gen.fields" >"$T/less"
(compare self "$T/less" run_begin run_end step_begin step_end node_def ops op_begin op_end tensor_alloc \
    tensor_free) 2>/dev/null && fail "a missing row went unseen"
{ cat "$T/gen.fields"; echo "fathom:ops extra u32"; } | sort -s -k1,1 >"$T/more"
(compare self "$T/more" run_begin run_end step_begin step_end node_def ops op_begin op_end tensor_alloc \
    tensor_free) 2>/dev/null && fail "an extra row went unseen"

# the test generator: every event but the statedump's, in schema 2 and 3
compare ctfgen "$T/gen.fields" run_begin run_end step_begin step_end node_def ops op_begin op_end tensor_alloc \
    tensor_free
"$FATHOM" info "$T/gen" >"$T/gen.info" 2>&1 || fail "fathom info on the generated trace: $(tail -3 "$T/gen.info")"
! grep -qi malformed "$T/gen.info" || fail "the decoder finds malformed events: $(grep -i malformed "$T/gen.info")"
"$CTFGEN_TOOL" "$T/gen3" conv mlp train 2 schema=3 || fail "ctfgen_tool schema=3"
fields "$T/gen3" >"$T/gen3.fields"
TABLE=$T/table.packed compare "ctfgen (schema 3)" "$T/gen3.fields" run_begin run_end step_begin step_end node_def ops \
    op_begin op_end tensor_alloc tensor_free
"$FATHOM" info "$T/gen3" >"$T/gen3.info" 2>&1 || fail "fathom info on the schema-3 trace: $(tail -3 "$T/gen3.info")"
! grep -qi malformed "$T/gen3.info" || fail "the decoder finds malformed events in schema 3: $(grep -i malformed "$T/gen3.info")"

# the importer: the events of a run without its tensors' frees
"$FATHOM" import -o "$T/imp.tar.zst" "$PYTORCH" >/dev/null 2>"$T/imp.err" || fail "import: $(cat "$T/imp.err")"
mkdir -p "$T/imp" && tar -C "$T/imp" -xf "$T/imp.tar.zst" || fail "extract the import"
fields "$(dirname "$(find "$T/imp" -name metadata | head -1)")" >"$T/imp.fields"
compare importer "$T/imp.fields" run_begin run_end step_begin step_end node_def ops tensor_alloc
"$FATHOM" info "$T/imp.tar.zst" >"$T/imp.info" 2>&1 || fail "fathom info on the import: $(tail -3 "$T/imp.info")"
! grep -qi malformed "$T/imp.info" || fail "the decoder finds malformed events in the import"
# a GPU trace: its ops carry the launch links and runtime calls too
python3 "$KINETO_GEN" "$T/k" >/dev/null || fail "kineto_gen.py"
gpu=$(grep -l '"cat": *"kernel"' "$T"/k/*.json | head -1)
[ -n "$gpu" ] || fail "kineto_gen.py wrote no GPU trace"
"$FATHOM" import -o "$T/gpu.tar.zst" "$gpu" >/dev/null 2>"$T/gpu.err" || fail "import $gpu: $(cat "$T/gpu.err")"
mkdir -p "$T/gpu" && tar -C "$T/gpu" -xf "$T/gpu.tar.zst" || fail "extract the GPU import"
fields "$(dirname "$(find "$T/gpu" -name metadata | head -1)")" >"$T/gpu.fields"
TABLE=$T/table.import compare "importer (GPU)" "$T/gpu.fields" run_begin run_end step_begin step_end node_def ops runtime \
    tensor_alloc

# the provider: a trace recorded with LTTng holds every event class of
# schema 2, with the packed rows of schema 3
ensure_sessiond
arch=$("$TRACE_MLP" record --dir "$T/rec" 1 1 2>"$T/rec.err" | tail -1) || fail "record: $(cat "$T/rec.err")"
mkdir -p "$T/rec/x" && tar -C "$T/rec/x" -xf "$arch" || fail "extract the recording"
fields "$(dirname "$(find "$T/rec/x" -name metadata | head -1)")" >"$T/rec.fields"
TABLE=$T/table.packed compare provider "$T/rec.fields" $("$SCHEMA_DUMP" 2 | cut -d' ' -f1 | uniq | sed 's/^fathom://')
"$FATHOM" info "$arch" >"$T/rec.info" 2>&1 || fail "fathom info on the recording: $(tail -3 "$T/rec.info")"
! grep -qi malformed "$T/rec.info" || fail "the decoder finds malformed events in the recording"
echo "PASS: schema_table"
