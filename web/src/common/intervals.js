// How a rate, a difference and a p-value are written beside their 95% intervals (as the CLI).
import { t } from './boot.js';

/** [lo, hi] of a rate as "[61.2, 74.6]" (percent); '' without one. */
export const fmtCi = (ci) => (ci ? `[${(ci[0] * 100).toFixed(1)}, ${(ci[1] * 100).toFixed(1)}]` : '');

/** [lo, hi] of a mean score as "[0.650, 0.771]"; '' without one. */
export const fmtScoreCi = (ci) => (ci ? `[${ci[0].toFixed(3)}, ${ci[1].toFixed(3)}]` : '');

/** A difference of rates in percentage points with its interval: "+4.9 pts [-1.2, 11.0]". */
export function fmtDelta(delta, ci, percent = true) {
  if (delta === null || delta === undefined) return t('common.none');
  const sign = (x, digits) => `${x >= 0 ? '+' : ''}${x.toFixed(digits)}`;
  if (!percent) return `${sign(delta, 3)}${ci ? ` [${sign(ci[0], 3)}, ${sign(ci[1], 3)}]` : ''}`;
  const interval = ci ? ` [${sign(ci[0] * 100, 1)}, ${sign(ci[1] * 100, 1)}]` : '';
  return `${sign(delta * 100, 1)} ${t('compare.points')}${interval}`;
}

export const fmtP = (p) => (p === null || p === undefined ? t('common.none') : p < 0.001 ? '<0.001' : p.toFixed(3));
