"""What Node.js evaluations share (one SES realm per isolate: frozen intrinsics, hardened libraries)
cannot be changed by one of them for the next.

Every attack runs on a pool of one worker, so the reader that follows it runs in the same isolate;
the reader's fingerprint of everything shared must equal the one taken before the attack. An
attempt may throw in its own sample (frozen: the code is strict) or silently do nothing (the
libraries' own sloppy code); either way it must not reach the next sample: the tests read back.
"""

from __future__ import annotations

import pytest

from assay.core.interfaces import CodeCall
from assay.core.result import ErrorCode
from assay.sandbox.node import NodePool

pytestmark = pytest.mark.node_sandbox

READER = r"""
const _ = require('lodash'), dayjs = require('dayjs'), validator = require('validator'), Ajv = require('ajv');
module.exports = () => {
  const ajv = new Ajv();
  let stack = '';
  try { null.x; } catch (e) { stack = String(e.stack).includes('evaluator.js') ? 'user frames' : String(e.stack); }
  const weak = new WeakMap();
  return {
    lodash: [typeof _.zz, _.difference([1, 2], [1]), String(_.templateSettings.interpolate), _.template('<%= d.a %>|<%= typeof zz %>', { variable: 'd' })({ a: 1 }),
             _.uniqueId('u'), _.uniqueId('u'), _.VERSION, Object.keys(_).length, typeof _.prototype.zz, typeof _.memoize.Cache,
             _.get({ a: { b: 1 } }, 'a.b'), _.toPath('a.b'), _.isEqual({ a: [1] }, { a: [1] }), typeof _.delay],
    dayjs: [dayjs('2024-03-01').format('dddd MMMM YYYY'), dayjs.locale(), typeof dayjs.zz, typeof dayjs.prototype.zz,
            Object.keys(dayjs.Ls).join(), dayjs.Ls.en.weekdays[0], dayjs('2024-03-01').add(1, 'day').date()],
    validator: [validator.isEmail('a@b.co'), validator.isEmail('nope'), typeof validator.zz, validator.version,
                validator.isInt('12', { min: 10 }), validator.toInt('42')],
    ajv: [ajv.validate({ type: 'string' }, 'x'), ajv.validate({ type: 'string' }, 1), typeof ajv.getSchema('shared'),
          typeof Ajv.prototype.zz, typeof Ajv.zz, new Ajv().validate({ type: 'integer', minimum: 2 }, 3),
          new Ajv().compile({ $id: 'shared', type: 'number' })(5)],
    intrinsics: [Date.now() > 1.7e12, new Date(0).toISOString(), typeof Date.zz, Math.max(1, 2), Math.PI, typeof Math.zz,
                 Math.random() < 1, typeof Function.prototype.zz, Function.prototype.call.name, (function f() {}).toString(),
                 JSON.stringify({ a: [1] }), [3, 1, 2].sort().join(), ({}).zz, Object.getPrototypeOf(Object.prototype),
                 'abc'.includes('b'), typeof Symbol.zz, Symbol.for('assay').description, Symbol.keyFor(Symbol.for('k')),
                 typeof globalThis.zz, typeof WeakMap.prototype.zz, weak.has(_), typeof Promise.prototype.zz,
                 typeof Array.prototype.zz, [1, 2].map((x) => x * 2).join(), stack, typeof require.cache, typeof zz],
  };
};
"""

ATTACKS = {
    "lodash mixin, templateSettings, methods": r"""
      const _ = require('lodash');
      _.mixin({ zz: () => 'zz' });
      _.mixin(_, { zz: () => 'zz' }, { chain: true });
      try { _.templateSettings.interpolate = /\{\{(.+?)\}\}/g; } catch (e) {}
      try { _.templateSettings = { interpolate: /x/g }; } catch (e) {}
      try { _.difference = () => 'pwned'; } catch (e) {}
      try { Object.defineProperty(_, 'zz', { value: 1 }); } catch (e) {}
      try { _.prototype.zz = 1; } catch (e) {}
      try { _.memoize.Cache = Map; } catch (e) {}
      for (let i = 0; i < 100; i++) _.uniqueId();
      const path = _.toPath('a.b'); path.push('c');
      module.exports = () => ({ passed: _.difference([1, 2], [1]).length === 1 });""",
    "code compiled by _.template": r"""
      const _ = require('lodash');
      const steps = ['Object.prototype.zz = 1', 'globalThis.zz = 1', 'zz = 1', '_.zz = 1', 'Function.prototype.zz = 1',
                     'Date.now = () => 0', 'Math.random = () => 2'];
      // (The code runs as strict code: a template needs its `variable` option, `with` is not allowed.)
      const refused = steps.map((s) => { try { _.template('<% ' + s + ' %>', { variable: 'd' })({}); return false; } catch (e) { return e instanceof TypeError || e instanceof ReferenceError; } });
      module.exports = () => ({ passed: refused.every(Boolean), refused });""",
    "dayjs locale, plugins, locale table": r"""
      const dayjs = require('dayjs');
      const pwned = { name: 'zz', weekdays: Array(7).fill('PWNED'), months: Array(12).fill('PWNED') };
      try { dayjs.locale('zz', pwned); } catch (e) {}
      try { dayjs.locale(pwned); } catch (e) {}
      try { dayjs.extend((o, c) => { c.prototype.format = () => 'PWNED'; }); } catch (e) {}
      try { dayjs.extend((o, c, d) => { d.zz = 1; }); } catch (e) {}
      try { dayjs.Ls.en.weekdays[0] = 'PWNED'; } catch (e) {}
      try { dayjs.Ls.zz = pwned; } catch (e) {}
      try { dayjs.prototype.zz = 1; } catch (e) {}
      module.exports = () => ({ passed: true, now: dayjs('2024-03-01').format('dddd') });""",
    "validator and ajv objects, an Ajv instance's schema cache": r"""
      const validator = require('validator'), Ajv = require('ajv');
      for (const write of [() => { validator.isEmail = () => true; }, () => { validator.zz = 1; },
                           () => { Ajv.prototype.validate = () => true; }, () => { Ajv.zz = 1; },
                           () => { Ajv.prototype.zz = 1; }, () => { Object.getPrototypeOf(new Ajv()).compile = () => () => true; }]) {
        try { write(); } catch (e) {}
      }
      const ajv = new Ajv();
      ajv.addSchema({ type: 'string' }, 'shared');
      ajv.compile({ $id: 'shared-compiled', type: 'string' });
      try { ajv.opts.code.lines = true; ajv._cache.clear(); } catch (e) {}
      module.exports = () => ({ passed: typeof ajv.getSchema('shared') === 'function' });""",
    "Date and Math patching": r"""
      for (const write of [() => { Date.now = () => 0; }, () => { Date.prototype.toISOString = () => 'PWNED'; },
                           () => { Math.random = () => 2; }, () => { Math.max = () => -1; },
                           () => Object.defineProperty(Math, 'PI', { value: 3 }), () => { Date.zz = 1; }, () => { Math.zz = 1; },
                           () => { globalThis.Date = function () { return 'PWNED'; }; }]) {
        try { write(); } catch (e) {}
      }
      module.exports = () => ({ passed: true });""",
    "Function.prototype and other prototypes": r"""
      for (const write of [() => { Function.prototype.call = () => 'PWNED'; }, () => { Function.prototype.toString = () => 'PWNED'; },
                           () => { (() => {}).constructor.prototype.zz = 1; }, () => Object.setPrototypeOf(Function.prototype, null),
                           () => Reflect.setPrototypeOf(Object.prototype, { zz: 1 }), () => (function () {}).constructor('return globalThis')().zz = 1,
                           () => { Array.prototype.map = () => ['PWNED']; }, () => { Promise.prototype.zz = 1; },
                           () => { Object.prototype.__defineGetter__('zz', () => 1); }, () => { JSON.stringify = () => 'PWNED'; }]) {
        try { write(); } catch (e) {}
      }
      module.exports = () => ({ passed: true });""",
    "WeakMap-held state, Symbol registry, Error hooks": r"""
      const _ = require('lodash');
      const held = new WeakMap();
      held.set(_, { zz: 1 });
      globalThis.zz = held;
      for (const write of [() => { WeakMap.prototype.zz = 1; }, () => { WeakMap.prototype.has = () => true; },
                           () => { Symbol.zz = 1; }, () => Object.defineProperty(Symbol.prototype, 'description', { get: () => 'PWNED' }),
                           () => { Error.stackTraceLimit = 0; }, () => { Error.prepareStackTrace = () => 'PWNED'; },
                           () => { Error.captureStackTrace = () => {}; }]) {
        try { write(); } catch (e) {}
      }
      Symbol.for('zz'); Symbol.for('assay');
      module.exports = () => ({ passed: true });""",
    "timers, lodash's timers and microtasks left behind": r"""
      const _ = require('lodash');
      const pollute = () => { try { Object.prototype.zz = 1; } catch (e) {} try { globalThis.zz = 1; } catch (e) {} };
      module.exports = () => {
        setTimeout(pollute, 0); setTimeout(pollute, 5); setImmediate(pollute);
        _.delay(pollute, 1); _.debounce(pollute, 1)(); _.defer(pollute);
        Promise.resolve().then(() => new Promise(() => setTimeout(pollute, 50)));
        return { passed: true };
      };""",
    "a timeout after the writes": r"""
      const _ = require('lodash');
      try { _.mixin({ zz: () => 1 }); } catch (e) {}
      module.exports = () => { for (;;) { try { Object.prototype.zz = 1; } catch (e) {} } };""",
}


@pytest.fixture(scope="module")
def lone_worker():
    with NodePool(size=1) as pool:  # every call on the same worker, isolate and realm
        yield pool


def read(pool: NodePool) -> dict:
    out = pool.call(CodeCall("nodejs", READER, []))
    assert out.ok, out
    return out.value


def test_the_reader_sees_the_libraries_as_installed(lone_worker):
    seen = read(lone_worker)
    assert seen["lodash"][4:6] == ["u1", "u2"]  # uniqueId counts per evaluation
    assert seen["dayjs"][:2] == ["Friday March 2024", "en"]
    assert seen["intrinsics"][24] == "user frames" and seen["intrinsics"][-2:] == ["undefined", "undefined"]
    assert read(lone_worker) == seen


@pytest.mark.parametrize("name", list(ATTACKS))
def test_an_attack_on_what_is_shared_does_not_reach_the_next_sample(lone_worker, name):
    before = read(lone_worker)
    out = lone_worker.call(CodeCall("nodejs", ATTACKS[name], ["q", "o", "e", {}], timeout_ms=1000))
    assert out.ok or out.error in (ErrorCode.RUNTIME_ERROR, ErrorCode.TIMEOUT), out
    if out.ok:
        assert out.value["passed"] is True, out.value
    assert read(lone_worker) == before


def test_template_code_runs_with_frozen_globals(lone_worker):
    out = lone_worker.call(CodeCall("nodejs", ATTACKS["code compiled by _.template"], []))
    assert out.ok and out.value["refused"] == [True] * 7, out


def test_dayjs_global_locale_is_back_to_english_for_the_next_sample(lone_worker):
    out = lone_worker.call(CodeCall("nodejs", ATTACKS["dayjs locale, plugins, locale table"], []))
    assert out.ok, out
    again = lone_worker.call(CodeCall("nodejs", "const dayjs = require('dayjs');\n"
                                      "module.exports = () => [dayjs.locale(), dayjs('2024-03-01').format('dddd')]", []))
    assert again.value == ["en", "Friday"]
