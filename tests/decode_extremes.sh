#!/bin/sh
# decode_extremes.sh FATHOM CTF_EXTREMES TMP -- fathom reads a trace at the
# edges of its schema (ctf_extremes.c: op labels of 1 byte to 64 KiB, 5000
# labels, every role and dtype, a node of 100000 inputs, an ops event of
# 70000 records, schema 1 and 2) with the event counts babeltrace2's own text
# output gives, every record and every label whole.
set -u
FATHOM=$1 GEN=$2
. "$(dirname "$0")/cli_lib.sh"
cli_begin decode-extremes "$3"
command -v babeltrace2 >/dev/null || { echo "SKIP: no babeltrace2"; exit 0; }

for schema in 2 1; do
    d="$T/s$schema"
    "$GEN" "$d" $schema || { fail "schema $schema: the generator failed"; continue; }
    # babeltrace2's counts: events per name, and the records (ops nodes or op_end)
    babeltrace2 "$d" >"$T/bt.txt" 2>"$T/bt.err" || { fail "schema $schema: babeltrace2: $(head -c 300 "$T/bt.err")"; continue; }
    awk '{ for (i = 1; i <= 4; i++) if ($i ~ /^[a-z]+:[a-z_]+:$/) { print substr($i, 1, length($i) - 1); break } }' \
        "$T/bt.txt" | sort | uniq -c | awk '{print $2, $1}' >"$T/bt.counts"
    if [ $schema = 2 ]; then
        bt_records=$(grep -oE '_nodes_len(gth)? = [0-9]+' "$T/bt.txt" | awk '{s += $3} END {print s + 0}')
    else
        bt_records=$(grep -c 'fathom:op_end:' "$T/bt.txt")
    fi
    "$FATHOM" info --format json "$d" >"$T/info.json" 2>"$T/err" || { fail "schema $schema: info: $(cat "$T/err")"; continue; }
    python3 - "$T/info.json" >"$T/fathom.counts" <<'EOF' || fail "schema $schema: info's JSON"
import json, sys
j = json.load(open(sys.argv[1]))
for k, v in sorted(j["events"].items()):
    print(k, v)
ops = j["ops"]
print("records", ops["records"] if "records" in ops else ops["pairs"])
print("malformed", ops.get("malformed_events", ops.get("unmatched")))
EOF
    echo "records $bt_records" >>"$T/bt.counts"
    echo "malformed 0" >>"$T/bt.counts"
    sort "$T/bt.counts" >"$T/a" && sort "$T/fathom.counts" >"$T/b"
    cmp -s "$T/a" "$T/b" || fail "schema $schema: fathom and babeltrace2 count differently: $(diff "$T/a" "$T/b" | tr '\n' ' ')"
    [ "$bt_records" -ge 5000 ] || fail "schema $schema: only $bt_records records"

    # every label whole through the analyses: the 64 KiB one and the UTF-8 ones
    "$FATHOM" analyze breakdown --format json "$d" >"$T/bd.json" 2>"$T/err" ||
        { fail "schema $schema: breakdown: $(head -c 300 "$T/err")"; continue; }
    python3 - "$T/bd.json" "$bt_records" <<'EOF' || fail "schema $schema: breakdown's op types"
import json, sys
j = json.load(open(sys.argv[1]))
want = int(sys.argv[2])
names, count = set(), 0
def walk(x):
    global count
    if isinstance(x, dict):
        if "op_types" in x:
            for t in x["op_types"]:
                names.add(t.get("op", t.get("name", "")))
        for v in x.values():
            walk(v)
    elif isinstance(x, list):
        for v in x:
            walk(v)
walk(j)
lengths = sorted(len(n.encode()) for n in names)
assert lengths and lengths[-1] >= 65536, "the longest label is %d bytes" % (lengths[-1] if lengths else 0)
assert any("\u00e9\u2192" in n for n in names), "no UTF-8 label whole"
assert any('"q" \\' in n for n in names), "no label with its quotes and backslash"
EOF
done
cli_end "decode-extremes"
