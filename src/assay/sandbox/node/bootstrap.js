'use strict';
/**
 * The harness of an isolate's one context (the realm), run once per isolate after SES
 * (evaluation.js loads `ses` first): it locks the realm down and runs every evaluation in a
 * Compartment of its own.
 *
 * What is shared between evaluations, and why no evaluation can change what another sees:
 * - the intrinsics (Object, Array, Function, Promise, Date, Math, JSON, their prototypes, ...):
 *   `lockdown()` freezes them all, so a write throws (evaluations run as strict code) and
 *   `Function.prototype.constructor` cannot reach an unconfined evaluator;
 * - the libraries (lodash, dayjs, validator, ajv): instantiated once per isolate in a library
 *   compartment whose own globals are frozen, then `harden`ed (every object reachable from
 *   them frozen), so `_.mixin`, `_.templateSettings.x = ...` or `dayjs.Ls.x = ...` throw or do
 *   nothing. The state they keep in closures is made per evaluation or reset before each one:
 *   lodash's `uniqueId` counter is the evaluation's own (libraries.js), dayjs's global locale
 *   is set back to `en`. Code that `_.template` compiles runs in the library compartment, whose
 *   globals are frozen. An Ajv instance is the evaluation's own (`new Ajv()`), with its caches.
 * Each evaluation gets its own global object (its `module`, `exports`, `require`, `console`
 * and timers), no `FinalizationRegistry` or `WeakRef` (their callbacks could run during a
 * later evaluation), and nothing of the realm's. The worker retires the isolate after a
 * timeout or a memory failure, so that no half-run code or queued job survives into the next.
 *
 * Entry points (the worker calls them with string arguments only, one evaluation at a time):
 *   __assayLoad(name, packedTable)    instantiate a library (libraries.js) -> ''
 *   __assayRun(source, name, argsJson) -> state   start an evaluation
 *   __assayPoll() -> state,  __assayFire() -> state
 *   __assayEnd() -> JSON {output, timers}   what it printed, the timers it left; drops it
 *   __assayFind(source, name) -> 'ok' | 'missing' | state   for `check` (no arguments passed)
 * A state is a string: 'D'+json (done), 'E'+json {name,message,stack} (thrown),
 * 'I'+message (invalid output), 'W'+ms (pending, a timer is due in ms), 'P' (pending,
 * microtasks may still settle it), 'S' (stuck: pending with no timer that could settle it).
 * The returned value is written as JSON the way the Python sandbox writes it: NaN and the
 * infinities as their names in text, a BigInt as a number when it is safe and as its decimal
 * text otherwise (the host then normalises both languages' values alike: sandbox/results.py).
 */
module.exports = String.raw`
(function (g) {
  'use strict';
  // Nothing here may reach outside the isolate; drop what evaluators never need and what
  // escapes the heap accounting (WebAssembly memories) or only serves to block a thread.
  delete g.WebAssembly;
  delete g.SharedArrayBuffer;
  if (typeof Atomics === 'object') { delete Atomics.wait; delete Atomics.waitAsync; }
  // Locale methods keep the engine's behaviour (localeCompare, toLocaleString); errors keep
  // their stacks (the user's evaluator.js frames are reported).
  lockdown({ errorTaming: 'unsafe', localeTaming: 'unsafe', consoleTaming: 'unsafe', overrideTaming: 'moderate' });

  const stringify = JSON.stringify, parse = JSON.parse, isFinite_ = Number.isFinite, apply = Reflect.apply;
  const PromiseResolve = Promise.resolve.bind(Promise), then = Promise.prototype.then;
  const now = Date.now, freeze = Object.freeze, toNumber = Number, toText = String, create = Object.create;
  const join = Array.prototype.join, map = Array.prototype.map, slice = Array.prototype.slice;
  const RealDate = Date, RealMath = Math; // working clock and random (frozen by lockdown)
  const MAX_RETURNED_JSON_CHARS = 1 << 20; // sandbox/results.py: MAX_RETURNED_JSON_CHARS
  const MAX_PRINTED_CHARS = 4096; // sandbox/results.py: MAX_PRINTED_CHARS
  const MAX_SAFE = 9007199254740991n;
  const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

  let current = null; // the evaluation running now
  function active() {
    if (current === null) throw new Error('no evaluation is running');
    return current;
  }

  // Timers are queued per evaluation and fired by the worker while it runs; whatever is left
  // when it ends is dropped with it (and counted: __assayEnd).
  function timerApi(ev) {
    function setTimeout_(fn, ms) {
      if (typeof fn !== 'function') throw new TypeError('setTimeout needs a function');
      const args = apply(slice, arguments, [2]);
      const delay = isFinite_(+ms) && +ms > 0 ? +ms : 0;
      ev.timers.push({ id: ++ev.seq, at: now() + delay, fn: fn, args: args });
      return ev.seq;
    }
    function clearTimeout_(id) { ev.timers = ev.timers.filter(function (t) { return t.id !== id; }); }
    function setImmediate_(fn) { return apply(setTimeout_, undefined, [fn, 0].concat(apply(slice, arguments, [1]))); }
    return { setTimeout: setTimeout_, clearTimeout: clearTimeout_, setImmediate: setImmediate_, clearImmediate: clearTimeout_ };
  }

  // The library compartment: its globals are frozen; its timers and lodash's uniqueId are the
  // running evaluation's.
  const libraryGlobals = {
    Date: RealDate, Math: RealMath,
    setTimeout: function () { return apply(active().api.setTimeout, undefined, arguments); },
    clearTimeout: function (id) { return active().api.clearTimeout(id); },
    __assayNextId: function () { return ++active().ids; },
  };
  const libraries = new Compartment({ globals: libraryGlobals, __options__: true });
  libraries.globalThis.global = libraries.globalThis; // how lodash finds its root
  harden(libraries.globalThis);
  const loaded = create(null);

  function instantiate(table) {
    const mods = [];
    function load(i, spec) {
      if (i === undefined || i < 0) throw notAvailable(spec);
      if (mods[i]) return mods[i].exports;
      const m = { exports: {} };
      mods[i] = m;
      const deps = table[i][1];
      apply(table[i][0], m.exports, [m, m.exports, function (s) { return load(deps[s], s); }]);
      return m.exports;
    }
    return load(0, '');
  }
  function notAvailable(name) { return new Error("module '" + name + "' is not available"); }

  g.__assayLoad = function (name, packed) {
    // The import test would reject the JSDoc comments of fast-uri (ajv): the libraries are ours.
    if (!(name in loaded)) loaded[name] = harden(instantiate(libraries.evaluate(packed, { __evadeImportExpressionTest__: true })));
    return '';
  };

  /** State closures keep that a frozen object cannot: set back before each evaluation. */
  function resetLibraries() {
    if ('dayjs' in loaded) loaded.dayjs.locale('en');
  }

  function describe(e) {
    const out = { name: 'Error', message: '', stack: '' };
    try {
      if (e !== null && (typeof e === 'object' || typeof e === 'function')) {
        if (typeof e.name === 'string') out.name = e.name;
        if (typeof e.message === 'string') out.message = e.message;
        else out.message = stringify(e) || '' + e;
        if (typeof e.stack === 'string') out.stack = e.stack;
      } else {
        out.name = 'thrown value';
        out.message = '' + e;
      }
    } catch (_) {
      out.message = out.message || 'an exception that could not be described';
    }
    return 'E' + stringify(out);
  }

  function replacer(key, v) {
    const t = typeof v;
    if (t === 'number') return isFinite_(v) ? v : v !== v ? 'NaN' : v > 0 ? 'Infinity' : '-Infinity';
    if (t === 'bigint') return v <= MAX_SAFE && v >= -MAX_SAFE ? toNumber(v) : '' + v;
    if (t === 'function' || t === 'symbol')
      throw new TypeError('a ' + t + ' is not JSON' + (key ? " (at key '" + key + "')" : ''));
    return v;
  }

  // The messages match the Python sandbox's (python/child.py) word for word.
  function encode(v) {
    if (v === undefined) return 'I' + 'evaluate() returned undefined; return {passed, score?, reason?}';
    let text;
    try { text = stringify(v, replacer); } catch (e) {
      const why = e && typeof e.message === 'string' ? e.message : 'error';
      if (e instanceof TypeError && /circular/i.test(why))
        return 'I' + 'the returned value contains a reference cycle (a circular structure)';
      if (e instanceof RangeError && /call stack/i.test(why))
        return 'I' + 'the returned value is nested more than 100 levels deep';  // core.untrusted.MAX_DEPTH
      return 'I' + 'the returned value is not JSON data: ' + why;
    }
    if (typeof text !== 'string') return 'I' + 'the returned value is not JSON data';
    if (text.length > MAX_RETURNED_JSON_CHARS)
      return 'I' + 'the returned value is too large: ' + text.length + ' characters of JSON, more than the limit of ' + MAX_RETURNED_JSON_CHARS;
    return 'D' + text;
  }

  // console writes into the evaluation's capped buffer, read by __assayEnd: the user's
  // print-debugging comes back in the result's details, and nothing leaves the isolate.
  function consoleFor(ev) {
    function show(v) {
      try {
        if (typeof v === 'string') return v;
        const json = stringify(v);
        return json === undefined ? toText(v) : json;
      } catch (_) {
        return '[unprintable]';
      }
    }
    function print() {
      const line = apply(join, apply(map, arguments, [show]), [' ']) + '\n';
      ev.printedTotal += line.length;
      if (ev.printed.length < MAX_PRINTED_CHARS) ev.printed += line.slice(0, MAX_PRINTED_CHARS - ev.printed.length);
    }
    return freeze({ log: print, info: print, warn: print, error: print, debug: print, trace: print });
  }

  /** A new evaluation: its compartment has run the source; ev.found is what it defines as name. */
  function begin(source, name) {
    resetLibraries();
    const ev = { timers: [], seq: 0, ids: 0, printed: '', printedTotal: 0, outcome: null, api: null, module: null, found: undefined };
    ev.api = timerApi(ev);
    current = ev;
    const module = { exports: {} };
    ev.module = module;
    function require(spec) {
      spec = '' + spec;
      if (!(spec in loaded)) throw notAvailable(spec);
      return loaded[spec];
    }
    const globals = {
      module: module, exports: module.exports, require: require, console: consoleFor(ev),
      setTimeout: ev.api.setTimeout, clearTimeout: ev.api.clearTimeout,
      setImmediate: ev.api.setImmediate, clearImmediate: ev.api.clearImmediate,
      Date: RealDate, Math: RealMath, FinalizationRegistry: undefined, WeakRef: undefined,
    };
    const compartment = new Compartment({ globals: globals, __options__: true });
    // A top-level function declaration stays in the evaluated code's scope: the trailer hands it back.
    const trailer = IDENTIFIER.test(name) ? "\n;(typeof " + name + " === 'function' ? " + name + ' : undefined)' : '\n;undefined';
    ev.found = compartment.evaluate(source + trailer + '\n//# sourceURL=evaluator.js\n');
    ev.exports = compartment.globalThis.exports;
    return ev;
  }

  function pick(ev, name) {
    const ex = ev.module.exports;
    if (ex !== null && (typeof ex === 'object' || typeof ex === 'function') && typeof ex[name] === 'function') return ex[name];
    if (typeof ex === 'function') return ex;
    const exp = ev.exports;
    if (typeof exp === 'object' && exp !== null && typeof exp[name] === 'function') return exp[name];
    if (typeof ev.found === 'function') return ev.found;
    return null;
  }

  function state() {
    const ev = active();
    if (ev.outcome !== null) return 'error' in ev.outcome ? describe(ev.outcome.error) : encode(ev.outcome.value);
    if (ev.timers.length === 0) return 'S';
    let next = ev.timers[0];
    for (const t of ev.timers) if (t.at < next.at) next = t;
    return 'W' + Math.max(0, next.at - now());
  }

  g.__assayRun = function (source, name, argsJson) {
    let ev;
    try { ev = begin(source, name); } catch (e) { return describe(e); }
    const fn = pick(ev, name);
    if (fn === null) {
      return describe(new TypeError("evaluator.js does not export a function '" + name +
        "' (write module.exports = async function " + name + '(input, output, expected, metadata) {...})'));
    }
    let result;
    try { result = apply(fn, undefined, parse(argsJson)); } catch (e) { return describe(e); }
    if (result !== null && (typeof result === 'object' || typeof result === 'function') && 'then' in result) {
      try {
        apply(then, PromiseResolve(result), [function (v) { ev.outcome = { value: v }; }, function (e) { ev.outcome = { error: e }; }]);
      } catch (e) { return describe(e); }
      return 'P';
    }
    return encode(result);
  };

  g.__assayPoll = state;

  g.__assayFire = function () {
    const ev = active();
    const due = now();
    let i = -1;
    for (let k = 0; k < ev.timers.length; k++) if (ev.timers[k].at <= due && (i < 0 || ev.timers[k].at < ev.timers[i].at)) i = k;
    if (i >= 0) {
      const t = ev.timers.splice(i, 1)[0];
      // An exception in a timer callback would crash a Node process; here it fails the evaluation.
      try { apply(t.fn, undefined, t.args); } catch (e) { if (ev.outcome === null) ev.outcome = { error: e }; }
    }
    return 'P';
  };

  g.__assayEnd = function () {
    const ev = current;
    current = null;
    if (ev === null) return stringify({ output: '', timers: 0 });
    let output = ev.printed;
    if (ev.printedTotal > ev.printed.length) output += '\n[... first ' + MAX_PRINTED_CHARS + ' of ' + ev.printedTotal + ' characters]';
    return stringify({ output: output, timers: ev.timers.length });
  };

  g.__assayFind = function (source, name) {
    let ev;
    try { ev = begin(source, name); } catch (e) { return describe(e); }
    return pick(ev, name) === null ? 'missing' : 'ok';
  };
})(globalThis);
`;
