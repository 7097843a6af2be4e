// Two small SVG charts: a histogram of scores and a line of pass rates over runs or over time.
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

const DIGIT_W = 7; // a tick label's digit, wide enough at the charts' font size

function frame(label, pad = PAD) {
  const root = svg('svg', { viewBox: `0 0 ${W} ${H}`, class: 'chart', role: 'img', 'aria-label': label });
  root.append(svg('line', { x1: pad.left, y1: H - pad.bottom, x2: W - pad.right, y2: H - pad.bottom, class: 'axis' }));
  root.append(svg('line', { x1: pad.left, y1: pad.top, x2: pad.left, y2: H - pad.bottom, class: 'axis' }));
  return root;
}

/** bins: [{from, to, count}] over [0, 1]. */
export function histogram(bins, label) {
  const max = Math.max(1, ...bins.map((b) => b.count));
  // The axis moves right as far as its top label needs (11856 is not clipped to 1856), and the
  // tallest bar leaves room above it for its count.
  const pad = { ...PAD, left: Math.max(PAD.left, 12 + DIGIT_W * String(max).length), top: PAD.top + 8 };
  const root = frame(label, pad);
  const plotW = W - pad.left - pad.right;
  const plotH = H - pad.top - pad.bottom;
  const barW = plotW / bins.length;
  bins.forEach((bin, i) => {
    const barH = (bin.count / max) * plotH;
    const x = pad.left + i * barW;
    const bar = svg('rect', { x: x + 2, y: H - pad.bottom - barH, width: Math.max(barW - 4, 1), height: barH,
      class: 'bar', 'data-count': bin.count });
    bar.append(svg('title', {}, `${bin.from.toFixed(1)}–${bin.to.toFixed(1)}: ${bin.count}`));
    root.append(bar);
    if (bin.count > 0) {
      root.append(svg('text', { x: x + barW / 2, y: H - pad.bottom - barH - 3, class: 'value' }, String(bin.count)));
    }
    root.append(svg('text', { x, y: H - pad.bottom + 16, class: 'tick' }, bin.from.toFixed(1)));
  });
  root.append(svg('text', { x: W - pad.right, y: H - pad.bottom + 16, class: 'tick end' }, '1.0'));
  root.append(svg('text', { x: pad.left - 6, y: pad.top + 4, class: 'tick end' }, String(max)));
  return root;
}

/**
 * points: [{label, value in [0, 1], ci?: [lo, hi], at?}], oldest first; each interval a vertical
 * bar, and with `band` (and several points) a shaded band joining them. With `domain` ([from, to], epoch ms)
 * each point stands at its time `at` (epoch ms) on that span, which `ends` ([first, last] texts)
 * label; without it, the points are spaced evenly.
 */
export function trend(points, label, { domain = null, ends = null, band = false } = {}) {
  const root = frame(label);
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const even = (i) => PAD.left + (points.length === 1 ? plotW / 2 : (i / (points.length - 1)) * plotW);
  const x = domain ? (i) => PAD.left + ((points[i].at - domain[0]) / (domain[1] - domain[0] || 1)) * plotW : even;
  const y = (v) => H - PAD.bottom - v * plotH;
  for (const v of [0, 0.5, 1]) {
    root.append(svg('line', { x1: PAD.left, y1: y(v), x2: W - PAD.right, y2: y(v), class: 'grid' }));
    root.append(svg('text', { x: PAD.left - 6, y: y(v) + 4, class: 'tick end' }, `${v * 100}%`));
  }
  if (ends) {
    root.append(svg('text', { x: PAD.left, y: H - PAD.bottom + 16, class: 'tick' }, ends[0]));
    root.append(svg('text', { x: W - PAD.right, y: H - PAD.bottom + 16, class: 'tick end' }, ends[1]));
  }
  const banded = band && points.filter((p) => p.ci).length > 1 ? points.map((p, i) => [p, i]).filter(([p]) => p.ci) : [];
  if (banded.length) {
    const upper = banded.map(([p, i]) => `${x(i)},${y(p.ci[1])}`);
    const lower = banded.map(([p, i]) => `${x(i)},${y(p.ci[0])}`).reverse();
    root.append(svg('path', { d: `M${upper.join('L')}L${lower.join('L')}Z`, class: 'band' }));
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
