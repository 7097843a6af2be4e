// Two small SVG charts: a histogram of scores and a line of pass rates over runs.
const NS = 'http://www.w3.org/2000/svg';

function svg(tag, attrs = {}, text) {
  const el = document.createElementNS(NS, tag);
  for (const [key, value] of Object.entries(attrs)) el.setAttribute(key, value);
  if (text !== undefined) el.textContent = text;
  return el;
}

const W = 560;
const H = 200;
const PAD = { left: 36, right: 12, top: 12, bottom: 28 };

function frame(label) {
  const root = svg('svg', { viewBox: `0 0 ${W} ${H}`, class: 'chart', role: 'img', 'aria-label': label });
  root.append(svg('line', { x1: PAD.left, y1: H - PAD.bottom, x2: W - PAD.right, y2: H - PAD.bottom, class: 'axis' }));
  root.append(svg('line', { x1: PAD.left, y1: PAD.top, x2: PAD.left, y2: H - PAD.bottom, class: 'axis' }));
  return root;
}

/** bins: [{from, to, count}] over [0, 1]. */
export function histogram(bins, label) {
  const root = frame(label);
  const max = Math.max(1, ...bins.map((b) => b.count));
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const barW = plotW / bins.length;
  bins.forEach((bin, i) => {
    const barH = (bin.count / max) * plotH;
    const x = PAD.left + i * barW;
    const bar = svg('rect', { x: x + 2, y: H - PAD.bottom - barH, width: Math.max(barW - 4, 1), height: barH,
      class: 'bar', 'data-count': bin.count });
    bar.append(svg('title', {}, `${bin.from.toFixed(1)}–${bin.to.toFixed(1)}: ${bin.count}`));
    root.append(bar);
    if (bin.count > 0) {
      root.append(svg('text', { x: x + barW / 2, y: H - PAD.bottom - barH - 3, class: 'value' }, String(bin.count)));
    }
    root.append(svg('text', { x, y: H - PAD.bottom + 16, class: 'tick' }, bin.from.toFixed(1)));
  });
  root.append(svg('text', { x: W - PAD.right, y: H - PAD.bottom + 16, class: 'tick end' }, '1.0'));
  root.append(svg('text', { x: PAD.left - 6, y: PAD.top + 8, class: 'tick end' }, String(max)));
  return root;
}

/** points: [{label, value in [0, 1], ci?: [lo, hi]}], oldest first; each interval a vertical bar. */
export function trend(points, label) {
  const root = frame(label);
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const x = (i) => PAD.left + (points.length === 1 ? plotW / 2 : (i / (points.length - 1)) * plotW);
  const y = (v) => H - PAD.bottom - v * plotH;
  for (const v of [0, 0.5, 1]) {
    root.append(svg('line', { x1: PAD.left, y1: y(v), x2: W - PAD.right, y2: y(v), class: 'grid' }));
    root.append(svg('text', { x: PAD.left - 6, y: y(v) + 4, class: 'tick end' }, `${v * 100}%`));
  }
  if (points.length > 1) {
    root.append(svg('polyline', { points: points.map((p, i) => `${x(i)},${y(p.value)}`).join(' '), class: 'line' }));
  }
  points.forEach((p, i) => {
    if (p.ci) {
      const [lo, hi] = p.ci.map(y);
      root.append(svg('path', { d: `M${x(i)},${lo}V${hi}M${x(i) - 4},${lo}h8M${x(i) - 4},${hi}h8`, class: 'ci' }));
    }
    const dot = svg('circle', { cx: x(i), cy: y(p.value), r: 4, class: 'dot' });
    const ci = p.ci ? ` [${(p.ci[0] * 100).toFixed(1)}, ${(p.ci[1] * 100).toFixed(1)}]` : '';
    dot.append(svg('title', {}, `${p.label}: ${(p.value * 100).toFixed(1)}%${ci}`));
    root.append(dot);
  });
  return root;
}
