// How a dataset's sizes and cells are written on the pages.
import { lang } from '../common/boot.js';

const UNITS = ['B', 'KB', 'MB', 'GB'];
const CELL_CHARS = 160;

/** 1536 → "1.5 KB". */
export function fmtBytes(bytes) {
  let value = Number(bytes) || 0;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toLocaleString(lang === 'zh' ? 'zh-CN' : 'en', { maximumFractionDigits: unit ? 1 : 0 })} ${UNITS[unit]}`;
}

/** A cell's text: strings as they are, other values as JSON; the whole (for a tooltip) and the
 * shown part, cut at CELL_CHARS characters. Always text: the caller puts it in a text node. */
export function cellText(value) {
  if (value === undefined || value === null) return { whole: '', shown: '' };
  const whole = typeof value === 'string' ? value : JSON.stringify(value);
  return { whole, shown: whole.length > CELL_CHARS ? `${whole.slice(0, CELL_CHARS)}…` : whole };
}
