// JSON typed into the pages (a config field, the JSON Schema, a test's metadata), parsed with a
// problem said in the page's language: where it is (line and column), not the browser's English
// ("Expected ',' or '}' after property value in JSON at position 12").
import { t } from './boot.js';

/** The place of a JSON.parse error in `text`: {line, column} from the position the browser
 * names (or its own line and column), null when it names none. */
function placeOf(text, message) {
  const at = /line (\d+) column (\d+)/.exec(message);
  if (at) return { line: Number(at[1]), column: Number(at[2]) };
  const position = /position (\d+)/.exec(message);
  if (!position) return null;
  const before = text.slice(0, Number(position[1]));
  const lines = before.split('\n');
  return { line: lines.length, column: lines[lines.length - 1].length + 1 };
}

/** `text` parsed; an Error whose message says, in the page's language, what and where it is not JSON. */
export function parseJson(text) {
  try {
    return JSON.parse(text);
  } catch (err) {
    const place = text.trim() === '' ? null : placeOf(text, String(err.message));
    const message = text.trim() === '' ? t('json.empty') : place ? t('json.at', place)
      : t('json.unreadable');
    throw new Error(message);
  }
}
