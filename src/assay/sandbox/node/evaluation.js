'use strict';
/**
 * One evaluation in a fresh context of a reused isolated-vm Isolate (worker.js runs them one
 * at a time: a `batch` request is many in turn, a `check` is one without arguments).
 *
 * Each evaluation gets a new context: the harness (bootstrap.js), the libraries the source
 * names and the user's source run in it, the function is driven to a result, and the context
 * is released with everything the evaluation left in it. What is reused between evaluations
 * is only what user code cannot change: the isolate (its heap, capped by `memoryLimit`) and
 * the compiled Scripts of the harness, the libraries and the user's source. The isolate is
 * replaced when it is disposed (memory limit, watchdog) or its heap stays large.
 *
 * Where a sample's time goes (2 cores, Node 20): creating the context ~0.6 ms, the harness
 * 0.07 ms, the calls into it ~0.1 ms; a `require('lodash')` instantiates lodash in the
 * context, ~5.5 ms (its 300 methods on fresh objects, and the garbage collection of it).
 * Every call into the isolate is synchronous: an asynchronous one costs a thread hop each
 * way. Every handle taken on the isolate is released at once: a handle the worker's own
 * garbage collector would release later keeps the whole context alive until then, and the
 * isolate fills up with dead contexts. (A script's completion value is such a handle when it
 * is a function, as `module.exports = () => ...` is.)
 */
const bootstrapSource = require('./bootstrap.js');
const { ENTRIES, packLibrary } = require('./libraries.js');

const MAX_USER_SCRIPTS = 32; // compiled evaluator scripts kept per isolate (same source, many samples)
const MAX_STACK_CHARS = 16384; // characters of a stack passed on (sandbox/results.py: HOST_MAX_TRACEBACK_CHARS)
const MAX_REASON = 4096; // core/untrusted.py: MAX_REASON
const ENTRY_POINTS = ['__assayStart', '__assayPoll', '__assayFire', '__assayFind', '__assayOutput'];

/** As cap_message in sandbox/results.py: cut to fit a reason, noting the full length. */
function capMessage(text) {
  if (text.length <= MAX_REASON) return text;
  const note = `… [${text.length} characters in all]`;
  return text.slice(0, MAX_REASON - note.length) + note;
}

class Failure extends Error {
  constructor(status, message, stack) {
    super(message);
    this.status = status;
    this.userStack = stack;
  }
}

/** Keep the header and the frames of evaluator.js: the worker's and the harness's are noise. */
function userFrames(stack) {
  const lines = String(stack).split('\n');
  const kept = lines.filter((l) => !/^\s+at /.test(l) || l.includes('evaluator.js'));
  return kept.join('\n').slice(0, MAX_STACK_CHARS);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A context with the harness's entry points, taken before user code runs (so it cannot swap them). */
class Run {
  constructor(context) {
    this.context = context;
    this.entry = Object.create(null);
  }

  take() {
    for (const name of ENTRY_POINTS) this.entry[name] = this.context.global.getSync(name, { reference: true });
  }

  /** What the evaluation wrote to console (capped in the isolate); '' when it cannot be read. */
  printed() {
    try {
      const text = this.entry.__assayOutput.applySync(undefined, [], { timeout: 50, result: { copy: true } });
      return typeof text === 'string' ? text.slice(0, 8192) : '';
    } catch (_) {
      return ''; // a disposed isolate (memory) or a poisoned harness: the verdict matters more
    }
  }

  /** Release the handles and the context: timers and everything else the evaluation left go with it. */
  close() {
    for (const name of Object.keys(this.entry)) {
      try { this.entry[name].release(); } catch (_) { /* the isolate is gone */ }
    }
    try { this.context.release(); } catch (_) { /* the isolate is gone */ }
  }
}

/** Drive __assayStart/__assayPoll/__assayFire until the evaluation settles. */
async function drive(entry, fn, argsJson, left) {
  const opts = () => ({ timeout: left(), arguments: { copy: true }, result: { copy: true } });
  let state = entry.__assayStart.applySync(undefined, [fn, argsJson], opts());
  for (;;) {
    if (typeof state !== 'string' || state.length === 0) throw new Failure('invalid_output', 'the harness state was corrupted');
    const tag = state[0];
    const rest = state.slice(1);
    if (tag === 'D') return rest; // JSON text, parsed by the host
    if (tag === 'I') throw new Failure('invalid_output', rest);
    if (tag === 'E') {
      let err;
      try { err = JSON.parse(rest); } catch (_) { err = {}; }
      const header = `${err.name || 'Error'}: ${err.message || ''}`;
      throw new Failure('error', header, err.stack ? userFrames(err.stack) : header);
    }
    if (tag === 'S') {
      throw new Failure('error', 'evaluate() returned a promise that can never settle (nothing left to run)');
    }
    if (tag === 'W') {
      const wait = Number(rest);
      if (wait > 0) {
        if (wait >= left()) throw new Failure('timeout', 'a timer is due after the deadline');
        await sleep(wait);
      }
      await entry.__assayFire.apply(undefined, [], opts());
    }
    // Asynchronous from here on (each call a turn of the worker's event loop): a timer that
    // re-arms itself (setTimeout(again, 0)) driven by synchronous calls until the isolate's own
    // timeout ended one crashed the worker now and then (SIGSEGV). The first call, which
    // settles most evaluations, stays synchronous.
    state = await entry.__assayPoll.apply(undefined, [], opts());
  }
}

/** Evaluations in one isolate at a time, with what was compiled for it. */
class Engine {
  /** `ivm`: the isolated-vm module; `nodeModules`: where the libraries are read from. */
  constructor(ivm, nodeModules) {
    this.ivm = ivm;
    this.nodeModules = nodeModules;
    this.packed = Object.create(null); // library name -> script text (packed lazily, once)
    this.current = null;
  }

  /**
   * Call `fn` of `source` with the arguments in `argsJson` under the limits, in a fresh context.
   * Never throws: {status: 'ok', json, ms} or {status, message, stack?, ms}, and `output` when
   * the evaluation printed something.
   */
  async evaluate(source, fn, argsJson, timeoutMs, memoryMb) {
    let output = '';
    const res = await this.withIsolate(timeoutMs, memoryMb, async (slot, left) => {
      const run = this.prepare(slot, source, left);
      try {
        return await drive(run.entry, fn, argsJson, left);
      } finally {
        output = run.printed();
        run.close();
      }
    });
    if (res.status === 'ok') {
      res.json = res.value;
      delete res.value;
    }
    if (output) res.output = output;
    return res;
  }

  /** Compile, run the top level (bounded), and look for the function: no arguments are passed. */
  async check(source, fn, timeoutMs, memoryMb) {
    const out = await this.withIsolate(timeoutMs, memoryMb, async (slot, left) => {
      const run = this.prepare(slot, source, left);
      try {
        return run.entry.__assayFind.applySync(undefined, [fn], { timeout: left(), arguments: { copy: true }, result: { copy: true } });
      } finally {
        run.close();
      }
    });
    if (out.status === 'ok') {
      if (out.value === 'ok') return { status: 'ok' };
      return { status: 'error', message: `evaluator.js does not export a function '${fn}' (module.exports = async function ${fn}(input, output, expected, metadata) {...})` };
    }
    if (out.status === 'error' && out.stack) out.message = out.stack;
    return out;
  }

  /** Stop using the current isolate (disposing it) and forget what was compiled for it. */
  retire() {
    if (this.current && !this.current.isolate.isDisposed) {
      try { this.current.isolate.dispose(); } catch (_) { /* already gone */ }
    }
    this.current = null;
  }

  isolateFor(memoryMb) {
    const slot = this.current;
    if (slot && !slot.isolate.isDisposed && slot.memoryMb === memoryMb) return slot;
    this.retire();
    const isolate = new this.ivm.Isolate({ memoryLimit: memoryMb });
    this.current = {
      isolate,
      memoryMb,
      boot: isolate.compileScriptSync(bootstrapSource, { filename: 'assay-bootstrap.js' }),
      libs: Object.create(null),
      scripts: new Map(),
    };
    return this.current;
  }

  libraryScript(slot, name) {
    if (!(name in slot.libs)) {
      if (!(name in this.packed)) this.packed[name] = packLibrary(name, this.nodeModules);
      slot.libs[name] = slot.isolate.compileScriptSync(this.packed[name], { filename: `lib/${name}.js` });
    }
    return slot.libs[name];
  }

  /** Compile the user's source as `evaluator.js`, caching the Script per isolate. */
  userScript(slot, source) {
    let script = slot.scripts.get(source);
    if (script === undefined) {
      script = slot.isolate.compileScriptSync(source, { filename: 'evaluator.js' });
      if (slot.scripts.size >= MAX_USER_SCRIPTS) slot.scripts.delete(slot.scripts.keys().next().value);
      slot.scripts.set(source, script);
    }
    return script;
  }

  /**
   * Create a context, run the harness, the libraries the source names, and the source itself.
   * Libraries are preloaded when their name appears in the source (a packed library only
   * defines factories; it is instantiated on the first `require`).
   */
  prepare(slot, source, left) {
    const run = new Run(slot.isolate.createContextSync());
    try {
      slot.boot.runSync(run.context, { timeout: left() });
      run.take();
      for (const name of Object.keys(ENTRIES)) {
        if (source.includes(name)) this.libraryScript(slot, name).runSync(run.context, { timeout: left() });
      }
      let script;
      try {
        script = this.userScript(slot, source);
      } catch (e) {
        throw new Failure('syntax', e.message);
      }
      try {
        script.runSync(run.context, { timeout: left(), reference: true }).release();
      } catch (e) {
        // An exception thrown by the module's top level: keep its evaluator.js frames.
        if (slot.isolate.isDisposed || /timed out/i.test(String(e && e.message))) throw e;
        const header = `${e.name || 'Error'}: ${e.message}`;
        throw new Failure('error', header, userFrames(e.stack || header));
      }
      return run;
    } catch (e) {
      run.close();
      throw e;
    }
  }

  /** Run `body` against the isolate under `timeoutMs`, turning every failure into a status. */
  async withIsolate(timeoutMs, memoryMb, body) {
    timeoutMs = Math.max(1, Math.floor(timeoutMs || 5000));
    memoryMb = Math.max(8, Math.floor(memoryMb || 128));
    const started = process.hrtime.bigint();
    const elapsed = () => Number(process.hrtime.bigint() - started) / 1e6;
    const left = () => {
      const ms = Math.floor(timeoutMs - elapsed());
      if (ms <= 0) throw new Failure('timeout', `the evaluation ran past ${timeoutMs} ms`);
      return ms;
    };
    const slot = this.isolateFor(memoryMb);
    // Belt and braces: isolated-vm's timeout covers running code; this covers the waits between.
    let watchdogFired = false;
    const watchdog = setTimeout(() => { watchdogFired = true; this.retire(); }, timeoutMs + 100);
    try {
      const value = await body(slot, left);
      return { status: 'ok', value, ms: elapsed() };
    } catch (e) {
      const disposed = slot.isolate.isDisposed;
      if (disposed && slot === this.current) this.current = null;
      let status;
      let message = e && e.message ? String(e.message) : String(e);
      if (e instanceof Failure) status = e.status;
      else if (watchdogFired || /timed out/i.test(message)) status = 'timeout';
      else if (disposed) status = 'memory';
      else status = 'error';
      if (status === 'timeout') message = `the evaluation ran past ${timeoutMs} ms`;
      if (status === 'memory') message = `the evaluation exceeded the ${memoryMb} MB memory limit`;
      const out = { status, message: capMessage(message), ms: elapsed() };
      if (e instanceof Failure && e.userStack) out.stack = e.userStack;
      return out;
    } finally {
      clearTimeout(watchdog);
      const current = this.current;
      if (current && !current.isolate.isDisposed) {
        // A heap that stays large after the context is gone would make later evaluations fail.
        const heap = current.isolate.getHeapStatisticsSync();
        if (heap.used_heap_size > (current.memoryMb << 20) / 2) this.retire();
      }
    }
  }
}

module.exports = { Engine };
