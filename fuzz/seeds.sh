#!/bin/sh
# seeds.sh REFERENCE_DIR OUT -- the seed corpora, made from the reference
# traces: OUT/manifest (their MANIFESTs), OUT/archive (the .tar.zst archives
# as shipped, and the small ones as plain tar too, so that mutations reach
# the tar headers), OUT/trace (the archives up to 256 KiB decompressed to
# plain tar, so that mutations reach the CTF metadata and streams rather
# than the zstd frames); and OUT/import from the PyTorch fixtures of
# tests/fixtures/pytorch (as shipped, and the gzip ones up to 300,000 bytes
# decompressed too, so that mutations reach the JSON).  OUT/trace holds
# too, as plain tar, the small foreign and damaged CTF traces of
# tests/fixtures/foreign_ctf.py (an LTTng kernel trace, session folders,
# rotation chunks, empty payloads, big-endian...), and a reference trace in
# an LTTng session folder beside a kernel trace.  Rewrites OUT's four
# folders.
set -eu
ref=$1 out=$2
pytorch=$(dirname "$0")/../tests/fixtures/pytorch
foreign=$(dirname "$0")/../tests/fixtures/foreign_ctf.py
rm -rf "$out/manifest" "$out/archive" "$out/trace" "$out/import"
mkdir -p "$out/manifest" "$out/archive" "$out/trace" "$out/import"
for f in "$pytorch"/*.json "$pytorch"/*.json.gz; do
    cp "$f" "$out/import/"
    case $f in
    *.gz)
        b=$(basename "$f" .gz)
        gzip -dc "$f" >"$out/import/$b"
        [ "$(wc -c <"$out/import/$b")" -le 300000 ] || rm "$out/import/$b"
        ;;
    esac
done
for a in "$ref"/*.tar.zst; do
    b=$(basename "$a" .tar.zst)
    cp "$a" "$out/archive/$b.tar.zst"
    tar --zstd -xOf "$a" MANIFEST >"$out/manifest/$b"
    zstd -qdc "$a" >"$out/trace/$b.tar"
    if [ "$(wc -c <"$out/trace/$b.tar")" -le 262144 ]; then
        cp "$out/trace/$b.tar" "$out/archive/$b.tar"
    else
        rm "$out/trace/$b.tar"
    fi
done
out=$(cd "$out" && pwd)
gen=$(mktemp -d)
trap 'rm -rf "$gen"' EXIT
python3 "$foreign" "$gen/f"
while read -r name kind dir; do
    (cd "$dir" && tar -cf "$out/trace/foreign-$name.tar" -- *)
done <"$gen/f/CASES"
small=$(ls "$ref"/*-infer-*.tar.zst | head -1)
mkdir -p "$gen/s" && tar --zstd -C "$gen/s" -xf "$small" && cp -r "$gen/f/kernel" "$gen/s/trace/kernel"
(cd "$gen/s" && tar -cf "$out/trace/session-fathom-kernel.tar" -- *)
