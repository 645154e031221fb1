// chart_check.js -- run by headless Chromium on a page holding one chart
// (an inline <svg>, see report_chromium.sh): every <text> box, rotated as
// drawn, must lie inside the chart and overlap no other text box.  The
// verdict goes into a pre element of id "verdict" that --dump-dom prints.
(function () {
  const svg = document.querySelector('svg');
  const out = [];
  const vb = svg.viewBox.baseVal;
  const W = vb && vb.width ? vb.width : svg.width.baseVal.value;
  const H = vb && vb.height ? vb.height : svg.height.baseVal.value;
  const boxes = [];
  const toChart = svg.getScreenCTM().inverse(); // screen pixels to the chart's own units
  for (const t of svg.querySelectorAll('text')) {
    const b = t.getBBox(), m = toChart.multiply(t.getScreenCTM());
    if (!m || b.width === 0)
      continue;
    const pts = [[b.x, b.y], [b.x + b.width, b.y], [b.x + b.width, b.y + b.height], [b.x, b.y + b.height]]
      .map(([x, y]) => [m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f]);
    boxes.push({ s: t.textContent, pts });
    for (const [x, y] of pts)
      if (x < -0.5 || y < -0.5 || x > W + 0.5 || y > H + 0.5) {
        out.push('CUT "' + t.textContent + '" at ' + x.toFixed(1) + ',' + y.toFixed(1) + ' outside ' + W + 'x' + H);
        break;
      }
  }
  // no text over a disc that carries a title (the roofline's points)
  for (const c of svg.querySelectorAll('circle')) {
    if (!c.querySelector('title'))
      continue;
    const m = toChart.multiply(c.getScreenCTM());
    const cx = m.a * c.cx.baseVal.value + m.e, cy = m.d * c.cy.baseVal.value + m.f, r = c.r.baseVal.value * m.a;
    for (const b of boxes) {
      const xs = b.pts.map(p => p[0]), ys = b.pts.map(p => p[1]);
      const dx = Math.max(Math.min(...xs) - cx, 0, cx - Math.max(...xs));
      const dy = Math.max(Math.min(...ys) - cy, 0, cy - Math.max(...ys));
      if (Math.hypot(dx, dy) < r - 0.5)
        out.push('OVER A MARK "' + b.s + '" at ' + cx.toFixed(1) + ',' + cy.toFixed(1));
    }
  }
  // separating axis test on two convex quadrilaterals, 0.5 px of slack
  function separated(a, b) {
    for (const poly of [a, b])
      for (let i = 0; i < 4; i++) {
        const p = poly[i], q = poly[(i + 1) % 4];
        const nx = q[1] - p[1], ny = p[0] - q[0], len = Math.hypot(nx, ny) || 1;
        let amin = Infinity, amax = -Infinity, bmin = Infinity, bmax = -Infinity;
        for (const [x, y] of a) { const v = (x * nx + y * ny) / len; amin = Math.min(amin, v); amax = Math.max(amax, v); }
        for (const [x, y] of b) { const v = (x * nx + y * ny) / len; bmin = Math.min(bmin, v); bmax = Math.max(bmax, v); }
        if (amax - 0.5 <= bmin || bmax - 0.5 <= amin)
          return true;
      }
    return false;
  }
  for (let i = 0; i < boxes.length; i++)
    for (let j = i + 1; j < boxes.length; j++)
      if (!separated(boxes[i].pts, boxes[j].pts))
        out.push('OVERLAP "' + boxes[i].s + '" "' + boxes[j].s + '"');
  const pre = document.createElement('pre');
  pre.id = 'verdict';
  pre.textContent = (out.length ? 'BAD\n' + out.join('\n') : 'OK') + '\ntexts ' + boxes.length +
    ' titles ' + svg.querySelectorAll('title').length + '\n';
  document.body.appendChild(pre);
})();
