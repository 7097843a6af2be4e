// Messages the product writes under a code (assay.core.messages): a result's reason
// (reasonCode, reasonArgs) or an API error (messageCode, messageArgs), said in the page's
// language from the catalogue's phrase.<code>. A value may itself be a phrase ({code, args})
// or a list of them (joined by the language's separator). Without a code, or with one the
// catalogue does not know, the text is shown as written: user code's own reasons stay theirs.
import { t } from './boot.js';

const PLACEHOLDER = /\{(\w+)\}/g;

function fill(code, args) {
  const template = t(`phrase.${code}`);
  if (template === `phrase.${code}` || !args || typeof args !== 'object') return null;
  let whole = true;
  const text = template.replace(PLACEHOLDER, (found, name) => {
    const value = Object.hasOwn(args, name) ? valueText(args[name]) : null;
    if (value === null) whole = false;
    return value ?? found;
  });
  return whole ? text : null;
}

function valueText(value) {
  if (Array.isArray(value)) {
    const parts = value.map(valueText);
    return parts.includes(null) ? null : parts.join(t('phrase.separator'));
  }
  if (value && typeof value === 'object') return typeof value.code === 'string' ? fill(value.code, value.args) : null;
  return value === null || value === undefined ? 'null' : String(value);
}

/** `text` in the page's language when `code` names a phrase the catalogue has; else `text`. */
export function say(code, args, text) {
  return (typeof code === 'string' && fill(code, args)) || text;
}

/** An error code (`timeout`, `runtime_error`) as the page's language names it; the code itself
 * when the catalogue does not know it. */
export function errorName(code) {
  const name = t(`errorCode.${code}`);
  return name === `errorCode.${code}` ? code : name;
}

/** A result's reason (test result, run result) in the page's language. */
export const reasonOf = (result) => say(result.reasonCode, result.reasonArgs, result.reason);
