#!/bin/sh
# seeds.sh REFERENCE_DIR OUT -- the seed corpora, made from the reference
# traces: OUT/manifest (their MANIFESTs), OUT/archive (the .tar.zst archives
# as shipped, and the small ones as plain tar too, so that mutations reach
# the tar headers), OUT/trace (the archives up to 256 KiB decompressed to
# plain tar, so that mutations reach the CTF metadata and streams rather
# than the zstd frames).  Rewrites OUT's three folders.
set -eu
ref=$1 out=$2
rm -rf "$out/manifest" "$out/archive" "$out/trace"
mkdir -p "$out/manifest" "$out/archive" "$out/trace"
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
