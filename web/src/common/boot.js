// What the server hands every page: language, message catalogue, CSRF token, page parameters.
const boot = JSON.parse(document.getElementById('assay-boot').textContent);

export const lang = boot.lang;
export const csrf = boot.csrf;
export const params = boot.params || {};
/** Who is signed in: {id, name, isAdmin} (null on the sign-in page). */
export const me = boot.me || { id: null, name: '', isAdmin: false };

/** The catalogue's message for `key`, with `{name}` placeholders filled from `vars`. */
export function t(key, vars = {}) {
  let text = boot.messages[key];
  if (text === undefined) return key;
  for (const [name, value] of Object.entries(vars)) text = text.split(`{${name}}`).join(String(value));
  return text;
}

const LANG_COOKIE = 'assay_lang';
const ONE_YEAR_S = 365 * 24 * 3600;

const langSwitch = document.getElementById('lang-switch');
if (langSwitch) {
  langSwitch.addEventListener('change', () => {
    document.cookie = `${LANG_COOKIE}=${langSwitch.value}; path=/; max-age=${ONE_YEAR_S}; samesite=lax`;
    window.location.reload();
  });
}
