#!/bin/sh
# report_chromium.sh FATHOM REFERENCE_DIR TMP CTFGEN [SHOTS] -- `fathom report`
# of the reference traces (with ceilings, so every chart but scaling) and of
# a thread sweep written by the fixture generator (scaling), each chart
# rendered by headless Chromium: its screenshot is not blank, every text of
# it lies inside the chart and overlaps no other text (the boxes as the
# browser lays them out, rotation included: tests/chart_check.js), no text
# covers a roofline point, and its marks carry hover titles.  The page
# itself renders, with no chart wider than its box.  SHOTS: a folder to
# keep the screenshots in.
set -u
FATHOM=$1 REF=$2 GEN=$4
. "$(dirname "$0")/cli_lib.sh"
CHECK=$(dirname "$0")/chart_check.js
browser=$(command -v chromium || command -v chromium-browser) || { echo "SKIP: chromium is not installed"; exit 77; }
cli_begin report-chromium "$3"
shots=${5:-$T/shots}
mkdir -p "$shots" "$T/home"
# as root Chromium runs only without its sandbox
sandbox=""
[ "$(id -u)" = 0 ] && sandbox=--no-sandbox
chrome() { HOME=$T/home timeout 120 "$browser" --headless $sandbox --disable-gpu --hide-scrollbars \
    --user-data-dir="$T/home/profile" "$@" 2>>"$T/chrome.err"; }

"$FATHOM" report --skip-first 1 --gflops 186.9 --gbs 32.4 -o "$T/r" "$REF"/*.tar.zst >/dev/null 2>"$T/err" \
  || { fail "report of the reference traces: $(cat "$T/err")"; cli_end "chromium"; }

# a blank page of a size: what an empty screenshot weighs
blank_size() {
    echo '<!DOCTYPE html><html><body style="margin:0;background:#fff"></body></html>' >"$T/blank.html"
    chrome --screenshot="$T/blank.png" --window-size="$1,$2" "file://$T/blank.html" >/dev/null
    wc -c <"$T/blank.png"
}

# the check itself finds an overlap, a cut and a text over a point
cat >"$T/bad.html" <<BAD
<!DOCTYPE html><html><body style="margin:0"><svg xmlns="http://www.w3.org/2000/svg" width="200pt" height="100pt"
viewBox="0 0 200 100"><text x="10" y="30" font-size="11">overlapping</text><text x="40" y="34" font-size="11">text</text>
<text x="180" y="60" font-size="11">cut at the edge</text><circle cx="20" cy="80" r="8"><title>a point</title></circle>
<text x="14" y="84" font-size="9">on it</text></svg><script>$(cat "$CHECK")</script></body></html>
BAD
chrome --dump-dom "file://$T/bad.html" >"$T/dom-bad.html"
grep -q 'OVERLAP "overlapping" "text"' "$T/dom-bad.html" && grep -q 'CUT "cut at the edge"' "$T/dom-bad.html" &&
  grep -q 'OVER A MARK "on it"' "$T/dom-bad.html" || fail "chart_check.js misses a known overlap, cut or covered point"

"$GEN" "$T/t1" conv alexnet train 3 threads=1 seed=8 && "$GEN" "$T/t2" conv alexnet train 3 threads=2 scale_pct=60 seed=9 &&
  "$GEN" "$T/t4" conv alexnet train 3 threads=4 scale_pct=40 seed=10 || { fail "ctfgen"; cli_end "chromium"; }
"$FATHOM" report -o "$T/s" "$T/t1" "$T/t2" "$T/t4" >/dev/null 2>"$T/err" || fail "report of a thread sweep: $(cat "$T/err")"
cp "$T/s/scaling-alexnet-train.svg" "$T/r/" || fail "no scaling chart"

n=0
for f in "$T"/r/*.svg; do
    name=$(basename "$f" .svg)
    n=$((n + 1))
    w=$(sed -n 's/.*<svg[^>]* width="\([0-9.]*\)pt".*/\1/p' "$f" | head -1)
    h=$(sed -n 's/.*<svg[^>]* height="\([0-9.]*\)pt".*/\1/p' "$f" | head -1)
    [ -n "$w" ] && [ -n "$h" ] || { fail "$name.svg: no size in pt"; continue; }
    W=$(awk -v v="$w" 'BEGIN { print int(v * 4 / 3 + 1) }') H=$(awk -v v="$h" 'BEGIN { print int(v * 4 / 3 + 1) }')
    # the screenshot, against a blank one of the same size
    chrome --screenshot="$shots/$name.png" --window-size="$W,$H" "file://$f" >/dev/null
    [ -s "$shots/$name.png" ] || { fail "$name: no screenshot ($(tail -2 "$T/chrome.err"))"; continue; }
    size=$(wc -c <"$shots/$name.png") blank=$(blank_size "$W" "$H")
    [ "$size" -gt $((blank * 4)) ] || fail "$name: the screenshot looks blank ($size bytes, a blank one $blank)"
    # the layout, measured by the browser
    { echo '<!DOCTYPE html><html><head><meta charset="utf-8"></head><body style="margin:0">'
      sed 1d "$f"; echo '<script>'; cat "$CHECK"; echo '</script></body></html>'; } >"$T/check-$name.html"
    chrome --dump-dom "file://$T/check-$name.html" >"$T/dom-$name.html"
    verdict=$(sed -n '/^<pre id="verdict">/,/<\/pre>/p; /<\/script><pre id="verdict">/,/<\/pre>/p' "$T/dom-$name.html" |
              sed 's/.*<pre id="verdict">//; s/<\/pre>.*//')
    case "$verdict" in
    OK*) ;;
    "") fail "$name: Chromium gave no verdict ($(tail -2 "$T/chrome.err"))"; continue ;;
    *) fail "$name: $(echo "$verdict" | sed -n '2,6p' | tr '\n' ';')" ;;
    esac
    texts=$(echo "$verdict" | sed -n 's/^texts \([0-9]*\) titles \([0-9]*\)$/\1/p')
    titles=$(echo "$verdict" | sed -n 's/^texts \([0-9]*\) titles \([0-9]*\)$/\2/p')
    [ "${texts:-0}" -gt 5 ] || fail "$name: only ${texts:-0} text elements (text drawn as outlines?)"
    [ "${titles:-0}" -gt 0 ] || fail "$name: no hover titles on its marks"
    echo "-- $name: ${W}x${H} px, $size bytes (blank $blank), $texts texts, $titles titles"
done
[ "$n" -eq 8 ] || fail "want 8 charts (classes optypes compare similarity roofline memory parallelism scaling), got $n: $(ls "$T/r")"

# the page: it renders, and no chart is cut at its box's edge
chrome --screenshot="$shots/page.png" --window-size=1200,6000 "file://$T/r/index.html" >/dev/null
size=$(wc -c <"$shots/page.png" 2>/dev/null || echo 0) blank=$(blank_size 1200 6000)
[ "$size" -gt $((blank * 4)) ] || fail "index.html: the screenshot looks blank ($size bytes)"
{ sed '/<\/body>/,$d' "$T/r/index.html"
  echo '<script>(function () { const bad = [];'
  echo ' for (const e of document.querySelectorAll("figure")) if (e.scrollWidth > e.clientWidth + 1) bad.push(e.getAttribute("aria-label"));'
  echo ' const p = document.createElement("pre"); p.id = "verdict"; p.textContent = bad.length ? "CUT " + bad.join(", ") : "OK";'
  echo ' document.body.appendChild(p); })();</script></body></html>'; } >"$T/page-check.html"
chrome --dump-dom "file://$T/page-check.html" >"$T/dom-page.html"
grep -q '<pre id="verdict">OK</pre>' "$T/dom-page.html" || fail "index.html: $(grep -o '<pre id="verdict">[^<]*' "$T/dom-page.html")"
cli_end "chromium"
