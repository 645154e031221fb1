#!/bin/sh
# reference_traces.sh DIR PLUGIN_DIR -- the archives shipped in traces/reference/
# read on a machine that never recorded them: every workload in both
# modes, intact, analyzable without warnings, the analyses consistent, and
# Fathom's qualitative findings still what docs/benchmarks.md reports.
# Env: FATHOM (the fathom binary), TEST_TMP (scratch).
set -u
REF=$1
PLUGINS=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
note() { echo "-- $*" >&2; }
command -v jq >/dev/null || { echo "SKIP: jq is not installed" >&2; exit 77; }
T=$TEST_TMP
rm -rf "$T" && mkdir -p "$T" || fail "cannot create $T"

# the set: every workload of `fathom list`, train and infer, once each
set -- "$REF"/*.tar.zst
"$FATHOM" list --format json >"$T/list.json" || fail "fathom list"
nmodels=$(jq length "$T/list.json")
[ "$#" = $((2 * nmodels)) ] || fail "$# archives in $REF, want $((2 * nmodels)) (the $nmodels workloads, train and infer)"
want=$(jq -r '.[].name' "$T/list.json" | sort | while read -r m; do echo "$m/infer"; echo "$m/train"; done)

# each archive: the manifest agrees with the name, nothing was discarded
for a in "$@"; do
    "$FATHOM" info "$a" >"$T/info.txt" 2>&1 || fail "fathom info $a: $(head -2 "$T/info.txt")"
    grep -Eq '^  discarded +0$' "$T/info.txt" || fail "$a: events were discarded"
    m=$(sed -n 's/^  model  *//p' "$T/info.txt")
    mo=$(sed -n 's/^  mode  *//p' "$T/info.txt")
    case "$(basename "$a")" in "$m-$mo-"*) ;; *) fail "$a: its manifest says $m/$mo" ;; esac
done

# breakdown of them all: no warning, shares sum to 1, the set is complete
"$FATHOM" analyze breakdown --format json --skip-first 1 --skip-last 1 "$@" >"$T/b.json" 2>"$T/b.err" \
    || fail "analyze breakdown: $(head -3 "$T/b.err")"
[ ! -s "$T/b.err" ] || fail "warnings on the reference traces: $(head -3 "$T/b.err")"
got=$(jq -r '.traces[] | .model + "/" + .mode' "$T/b.json" | sort)
[ "$got" = "$want" ] || fail "the traces hold $(echo $got), want $(echo $want)"
bad=$(jq -r '.traces[] | select(([.op_types[].share] | add) - 1 | fabs > 1e-9) | .model + "/" + .mode' "$T/b.json")
[ -z "$bad" ] || fail "op-type shares do not sum to 1: $bad"
bad=$(jq -r '.traces[] | select(([.classes[].share] | add) - 1 | fabs > 1e-9) | .model + "/" + .mode' "$T/b.json")
[ -z "$bad" ] || fail "class shares do not sum to 1: $bad"
bad=$(jq -r '.traces[] | select(.steps != 4) | .model + "/" + .mode' "$T/b.json")
[ -z "$bad" ] || fail "not 4 steps left after skipping the first and last: $bad"

# finding: a few op types make most of the time: 90% of every trace's op
# time within at most 12 op types (of the 6 to 30 each one runs)
jq -r '.traces[] | .model + "/" + .mode + " " + (.op_types | length | tostring) + " " +
    ([foreach (.op_types | sort_by(-.share))[].share as $s (0; . + $s; .)] | map(select(. < 0.9)) | length + 1 | tostring)' \
    "$T/b.json" >"$T/n90.txt"
while read -r mm n k; do
    [ "$k" -le 12 ] || fail "$mm needs $k of its $n op types for 90% of its time"
done <"$T/n90.txt"
note "op types making 90% of the time (of all): $(awk '{printf "%s %d/%d, ", $1, $3, $2}' "$T/n90.txt")"

# compare: every pair found from the metadata; training costs more than
# inference for Fathom's eight (the Transformer's inference decodes greedily,
# one token a decoder pass: it may cost more than a teacher-forced step)
"$FATHOM" analyze compare --format json --skip-first 1 --skip-last 1 "$@" >"$T/c.json" 2>"$T/c.err" \
    || fail "analyze compare: $(head -3 "$T/c.err")"
[ "$(jq '.pairs | length' "$T/c.json")" = "$nmodels" ] || fail "compare paired $(jq '.pairs | length' "$T/c.json") models, want $nmodels"
bad=$(jq -r '.pairs[] | select(.step_ratio <= 1 and .model != "transformer") | .model' "$T/c.json")
[ -z "$bad" ] || fail "a training step is not slower than an inference step: $bad"
note "train/infer step ratios: $(jq -r '[.pairs[] | .model + " " + (.step_ratio * 100 | round / 100 | tostring)] | join(", ")' "$T/c.json")"

# similarity of the training traces: a symmetric matrix with a unit diagonal,
# and the convolutional models cluster apart from the others
set -- "$REF"/*-train-*.tar.zst
"$FATHOM" analyze similarity --format json --skip-first 1 --skip-last 1 "$@" >"$T/s.json" 2>"$T/s.err" \
    || fail "analyze similarity: $(head -3 "$T/s.json")"
[ "$(jq '[.cosine | keys[] as $i | .[$i][$i]] | map(. - 1 | fabs < 1e-9) | all' "$T/s.json")" = true ] || fail "diagonal is not 1"
[ "$(jq '.cosine as $c | [range($c|length) as $i | range($c|length) as $j | ($c[$i][$j] - $c[$j][$i]) | fabs < 1e-12] | all' "$T/s.json")" = true ] \
    || fail "the similarity matrix is not symmetric"
clusters=$(jq -c '.labels as $l | reduce .merges[] as $m ([$l[] | [.]]; . + [.[$m.a] + .[$m.b]]) | .[($l|length):] | map(sort)' "$T/s.json")
conv='["alexnet/train","deepq/train","residual/train","vgg/train"]'
[ "$(echo "$clusters" | jq --argjson c "$conv" 'any(. == $c)')" = true ] \
    || fail "the convolutional models do not form a cluster of their own: $clusters"
note "clusters (in merge order): $clusters"

# the Babeltrace2 plugin reads a shipped trace as the CLI does
a=$(ls "$REF"/residual-infer-*.tar.zst)
mkdir -p "$T/x" && tar -C "$T/x" -xf "$a" || fail "cannot extract $a"
"$FATHOM" analyze breakdown --format json "$a" >"$T/cli.json" || fail "analyze $a"
babeltrace2 --plugin-path="$PLUGINS" "$T/x/trace" -c sink.fathom.breakdown -p 'format="json"' >"$T/bt.json" 2>"$T/bt.err" \
    || fail "babeltrace2 -c sink.fathom.breakdown: $(head -3 "$T/bt.err")"
[ "$(jq -c '.traces[0].op_types' "$T/cli.json")" = "$(jq -c '.traces[0].op_types' "$T/bt.json")" ] \
    || fail "the plugin and the CLI disagree on $a"
echo PASS
