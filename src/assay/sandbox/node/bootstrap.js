'use strict';
/**
 * The harness that runs inside every fresh isolate context, before the user's evaluator.js.
 *
 * It is plain text for the isolate, never executed in the worker's own realm (evaluation.js
 * compiles it once per isolate). It gives the user's script CommonJS-like globals
 * (`module`, `exports`, `require`), a `setTimeout` whose timers live and die with the context,
 * and three entry points the worker calls by reference with string arguments only:
 *   __assayStart(functionName, argsJson) -> state
 *   __assayPoll() -> state
 *   __assayFire() -> state
 * A state is a string: 'D'+json (done), 'E'+json {name,message,stack} (thrown),
 * 'I'+message (invalid output), 'W'+ms (pending, a timer is due in ms), 'P' (pending,
 * microtasks may still settle it), 'S' (stuck: pending with no timer that could settle it).
 * The returned value is written as JSON the way the Python sandbox writes it: NaN and the
 * infinities as their names in text, a BigInt as a number when it is safe and as its decimal
 * text otherwise (the host then normalises both languages' values alike: sandbox/results.py).
 * Builtins are captured before user code runs, so that a user who poisons JSON or Array in
 * the context spoils only their own result; the worker treats every state as hostile text.
 */
module.exports = String.raw`
(function (g) {
  'use strict';
  const stringify = JSON.stringify, isFinite_ = Number.isFinite, apply = Reflect.apply;
  const PromiseResolve = Promise.resolve.bind(Promise), then = Promise.prototype.then;
  const now = Date.now, freeze = Object.freeze, toNumber = Number;
  const MAX_RETURNED_JSON_CHARS = 1 << 20; // sandbox/results.py: MAX_RETURNED_JSON_CHARS
  const MAX_SAFE = 9007199254740991n;

  // Libraries: tables of [factory, {spec: index}] registered by the packed library scripts.
  const tables = Object.create(null), loaded = Object.create(null);
  g.__assayDefine = function (name, table) { tables[name] = table; };
  function notAvailable(name) { return new Error("module '" + name + "' is not available"); }
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
  function require(name) {
    name = '' + name;
    if (name in loaded) return loaded[name];
    if (!(name in tables)) throw notAvailable(name);
    return (loaded[name] = instantiate(tables[name]));
  }
  g.require = require;
  g.module = { exports: {} };
  g.exports = g.module.exports;

  // Nothing here may reach outside the isolate; drop what evaluators never need and what
  // escapes the heap accounting (WebAssembly memories) or only serves to block a thread.
  delete g.WebAssembly;
  delete g.SharedArrayBuffer;
  if (typeof Atomics === 'object') { delete Atomics.wait; delete Atomics.waitAsync; }
  // console writes into a capped buffer the worker reads after the evaluation: the user's
  // print-debugging comes back in the result's details, and nothing leaves the isolate.
  const MAX_PRINTED_CHARS = 4096 /* sandbox/results.py: MAX_PRINTED_CHARS */, join = Array.prototype.join, map = Array.prototype.map, toText = String;
  let printed = '', printedTotal = 0;
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
    printedTotal += line.length;
    if (printed.length < MAX_PRINTED_CHARS) printed += line.slice(0, MAX_PRINTED_CHARS - printed.length);
  }
  g.console = freeze({ log: print, info: print, warn: print, error: print, debug: print, trace: print });
  g.__assayOutput = function () {
    if (printedTotal <= printed.length) return printed;
    return printed + '\n[... first ' + MAX_PRINTED_CHARS + ' of ' + printedTotal + ' characters]';
  };

  // Timers are queued here and fired by the worker while the evaluation runs; when the
  // context is released at the end of the evaluation, whatever is left is gone with it.
  let timers = [], seq = 0;
  g.setTimeout = function (fn, ms) {
    if (typeof fn !== 'function') throw new TypeError('setTimeout needs a function');
    const args = Array.prototype.slice.call(arguments, 2);
    const delay = isFinite_(+ms) && +ms > 0 ? +ms : 0;
    timers.push({ id: ++seq, at: now() + delay, fn: fn, args: args });
    return seq;
  };
  g.clearTimeout = function (id) { timers = timers.filter(function (t) { return t.id !== id; }); };
  g.setImmediate = function (fn) { return g.setTimeout.apply(null, [fn, 0].concat(Array.prototype.slice.call(arguments, 1))); };
  g.clearImmediate = g.clearTimeout;

  let outcome = null; // {value} or {error}

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

  function state() {
    if (outcome !== null) return 'error' in outcome ? describe(outcome.error) : encode(outcome.value);
    if (timers.length === 0) return 'S';
    let next = timers[0];
    for (const t of timers) if (t.at < next.at) next = t;
    return 'W' + Math.max(0, next.at - now());
  }

  function pick(name) {
    const ex = g.module.exports;
    if (ex !== null && (typeof ex === 'object' || typeof ex === 'function') && typeof ex[name] === 'function') return ex[name];
    if (typeof ex === 'function') return ex;
    if (typeof g.exports === 'object' && g.exports !== null && typeof g.exports[name] === 'function') return g.exports[name];
    if (typeof g[name] === 'function') return g[name];
    return null;
  }

  g.__assayFind = function (name) { return pick(name) === null ? 'missing' : 'ok'; };

  g.__assayStart = function (name, argsJson) {
    const fn = pick(name);
    if (fn === null) {
      return describe(new TypeError("evaluator.js does not export a function '" + name +
        "' (write module.exports = async function " + name + '(input, output, expected, metadata) {...})'));
    }
    let result;
    try { result = apply(fn, undefined, JSON.parse(argsJson)); } catch (e) { return describe(e); }
    if (result !== null && (typeof result === 'object' || typeof result === 'function') && 'then' in result) {
      try {
        apply(then, PromiseResolve(result), [function (v) { outcome = { value: v }; }, function (e) { outcome = { error: e }; }]);
      } catch (e) { return describe(e); }
      return 'P';
    }
    return encode(result);
  };

  g.__assayPoll = state;

  g.__assayFire = function () {
    const due = now();
    let i = -1;
    for (let k = 0; k < timers.length; k++) if (timers[k].at <= due && (i < 0 || timers[k].at < timers[i].at)) i = k;
    if (i >= 0) {
      const t = timers.splice(i, 1)[0];
      // An exception in a timer callback would crash a Node process; here it fails the evaluation.
      try { apply(t.fn, undefined, t.args); } catch (e) { if (outcome === null) outcome = { error: e }; }
    }
    return 'P';
  };
})(globalThis);
`;
