'use strict';
/**
 * Evaluations in a reused isolated-vm Isolate (worker.js runs them one at a time: a `batch`
 * request is many in turn, a `check` is one without arguments).
 *
 * Each isolate has one context, locked down by SES once (the `ses` package, then the harness,
 * bootstrap.js); each evaluation runs in a new Compartment of it with its own globals, and the
 * libraries it names are instantiated once per isolate and shared hardened (bootstrap.js says
 * what is shared and why no evaluation can change what another sees). A compartment costs a
 * few tens of microseconds where a fresh context cost ~0.6 ms and a fresh lodash 5.5 ms.
 *
 * Every call into the isolate is synchronous but the polls after a timer: an asynchronous one
 * costs a thread hop each way. The isolate is replaced when it is disposed (memory limit,
 * watchdog), after a timeout (code stopped half-way must not meet the next evaluation), or
 * when its heap stays large.
 */
const fs = require('fs');
const path = require('path');
const bootstrapSource = require('./bootstrap.js');
const { ENTRIES, packLibrary } = require('./libraries.js');

const DEFAULT_MEMORY_MB = 128;
const MAX_CHECKED_SOURCES = 32; // sources whose syntax was checked, kept per isolate
const MAX_STACK_CHARS = 16384; // characters of a stack passed on (sandbox/results.py: HOST_MAX_TRACEBACK_CHARS)
const MAX_REASON = 4096; // core/untrusted.py: MAX_REASON
const ENTRY_POINTS = ['__assayLoad', '__assayRun', '__assayPoll', '__assayFire', '__assayEnd', '__assayFind'];
// isolated-vm's contexts name Math.E "'" (a non-configurable property SES cannot remove): the
// realm gets a copy of Math with it under its own name before SES takes the intrinsics.
const REPAIR_MATH = `{ const M = {}; for (const k of Reflect.ownKeys(Math))
  Object.defineProperty(M, k === "'" ? 'E' : k, Object.getOwnPropertyDescriptor(Math, k)); globalThis.Math = M; }`;

/** As cap_message in sandbox/results.py: cut to fit a reason, noting the full length. */
function capMessage(text) {
  if (text.length <= MAX_REASON) return text;
  const note = `… [${text.length} characters in all]`;
  return text.slice(0, MAX_REASON - note.length) + note;
}

class Failure extends Error {
  constructor(status, message, stack, phrase) {
    super(message);
    this.status = status;
    this.userStack = stack;
    this.phrase = phrase; // {code, args}: the host's phrase (assay.core.messages) that says message
  }
}

/** Keep the header and the frames of evaluator.js: the worker's and the harness's are noise. */
function userFrames(stack) {
  const lines = String(stack).split('\n');
  const kept = lines.filter((l) => !/^\s+at /.test(l) || l.includes('evaluator.js'));
  return kept.join('\n').slice(0, MAX_STACK_CHARS);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const COPY = { arguments: { copy: true }, result: { copy: true } };

/** Drive the running evaluation from its first state until it settles. */
async function drive(entry, state, left, timeoutMs) {
  let fired = false;
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
        const remaining = left();
        if (wait >= remaining) {
          // Wait out the deadline for real: the reason then says what the code was doing.
          await sleep(remaining);
          throw new Failure('timeout', `the evaluation was still waiting on a timer (due ${Math.round(wait)} ms ` +
                                       `later) when its ${timeoutMs} ms ran out`, undefined,
                            { code: 'sandbox.node_timer', args: { due: Math.round(wait), ms: timeoutMs } });
        }
        await sleep(wait);
      }
      await entry.__assayFire.apply(undefined, [], { ...COPY, timeout: left() });
      fired = true;
    }
    // Asynchronous after a timer: a timer that re-arms itself (setTimeout(again, 0)) driven by
    // synchronous calls until the isolate's own timeout ended one crashed the worker now and
    // then (SIGSEGV). The first poll after the start, which settles most evaluations, is synchronous.
    state = fired
      ? await entry.__assayPoll.apply(undefined, [], { ...COPY, timeout: left() })
      : entry.__assayPoll.applySync(undefined, [], { ...COPY, timeout: left() });
  }
}

/** Evaluations in one isolate at a time, with what was prepared for it. */
class Engine {
  /** `ivm`: the isolated-vm module; `nodeModules`: where `ses` and the libraries are read from. */
  constructor(ivm, nodeModules) {
    this.ivm = ivm;
    this.nodeModules = nodeModules;
    this.ses = fs.readFileSync(path.join(nodeModules, 'ses', 'dist', 'ses.umd.min.js'), 'utf8');
    this.sesCache = undefined; // V8's code cache of the SES script, made by the first isolate
    this.packed = Object.create(null); // library name -> packed table text (packed lazily, once)
    this.current = null;
  }

  /**
   * Call `fn` of `source` with the arguments in `argsJson` under the limits, in a compartment of
   * its own. Never throws: {status: 'ok', json, ms} or {status, message, stack?, ms}, `output`
   * when the evaluation printed something and `timers` when it left timers pending.
   */
  async evaluate(source, fn, argsJson, timeoutMs, memoryMb) {
    let end = null;
    const res = await this.withIsolate(timeoutMs, memoryMb, async (slot, left) => {
      this.prepare(slot, source, left);
      try {
        const first = slot.entry.__assayRun.applySync(undefined, [source, fn, argsJson], { ...COPY, timeout: left() });
        return await drive(slot.entry, first, left, timeoutMs);
      } finally {
        end = this.end(slot);
      }
    });
    if (res.status === 'ok') {
      res.json = res.value;
      delete res.value;
    }
    if (end && end.output) res.output = String(end.output).slice(0, 8192);
    if (end && end.timers > 0) res.timers = Number(end.timers);
    return res;
  }

  /** Run the top level (bounded) and look for the function: no arguments are passed. */
  async check(source, fn, timeoutMs, memoryMb) {
    const out = await this.withIsolate(timeoutMs, memoryMb, async (slot, left) => {
      this.prepare(slot, source, left);
      try {
        const found = slot.entry.__assayFind.applySync(undefined, [source, fn], { ...COPY, timeout: left() });
        if (found === 'ok' || found === 'missing') return found;
        return drive(slot.entry, found, left, timeoutMs); // the top level threw: report it
      } finally {
        this.end(slot);
      }
    });
    if (out.status === 'ok') {
      if (out.value === 'ok') return { status: 'ok' };
      return { status: 'error', message: `evaluator.js does not export a function '${fn}' (module.exports = async function ${fn}(input, output, expected, metadata) {...})` };
    }
    if (out.status === 'error' && out.stack) out.message = out.stack;
    return out;
  }

  /** What the evaluation printed and left, and the harness forgets it; null when unreadable. */
  end(slot) {
    try {
      return JSON.parse(slot.entry.__assayEnd.applySync(undefined, [], { ...COPY, timeout: 50 }));
    } catch (_) {
      return null; // a disposed isolate (memory) or a timeout: the verdict matters more
    }
  }

  /** Make the default isolate now (at start-up), so that the first evaluation does not wait for it. */
  warm() {
    this.isolateFor(DEFAULT_MEMORY_MB);
  }

  /** Stop using the current isolate (disposing it) and forget what was prepared for it. */
  retire() {
    if (this.current && !this.current.isolate.isDisposed) {
      try { this.current.isolate.dispose(); } catch (_) { /* already gone */ }
    }
    this.current = null;
  }

  /** The isolate for `memoryMb`: its realm locked down by SES, with the harness's entry points. */
  isolateFor(memoryMb) {
    const slot = this.current;
    if (slot && !slot.isolate.isDisposed && slot.memoryMb === memoryMb) return slot;
    this.retire();
    const isolate = new this.ivm.Isolate({ memoryLimit: memoryMb });
    const context = isolate.createContextSync();
    isolate.compileScriptSync(REPAIR_MATH).runSync(context);
    const ses = isolate.compileScriptSync(this.ses, { filename: 'ses.js', cachedData: this.sesCache, produceCachedData: !this.sesCache });
    if (!this.sesCache && ses.cachedData) this.sesCache = ses.cachedData;
    ses.runSync(context);
    isolate.compileScriptSync(bootstrapSource, { filename: 'assay-bootstrap.js' }).runSync(context);
    const entry = Object.create(null);
    for (const name of ENTRY_POINTS) entry[name] = context.global.getSync(name, { reference: true });
    this.current = { isolate, context, memoryMb, entry, libs: new Set(), checked: new Map() };
    return this.current;
  }

  /**
   * Before an evaluation: the libraries the source names are instantiated (once per isolate),
   * and the source's syntax is checked as strict code with its line (the compartment would
   * say only that it is wrong).
   */
  prepare(slot, source, left) {
    for (const name of Object.keys(ENTRIES)) {
      if (!source.includes(name) || slot.libs.has(name)) continue;
      if (!(name in this.packed)) this.packed[name] = packLibrary(name, this.nodeModules);
      slot.entry.__assayLoad.applySync(undefined, [name, this.packed[name]], { ...COPY, timeout: left() });
      slot.libs.add(name);
    }
    if (!slot.checked.has(source)) {
      try {
        // On line 1 so that every line keeps its number.
        slot.isolate.compileScriptSync("'use strict';" + source, { filename: 'evaluator.js' });
      } catch (e) {
        throw new Failure('syntax', e.message);
      }
      if (slot.checked.size >= MAX_CHECKED_SOURCES) slot.checked.delete(slot.checked.keys().next().value);
      slot.checked.set(source, true);
    }
  }

  /** Run `body` against the isolate under `timeoutMs`, turning every failure into a status. */
  async withIsolate(timeoutMs, memoryMb, body) {
    timeoutMs = Math.max(1, Math.floor(timeoutMs || 5000));
    memoryMb = Math.max(8, Math.floor(memoryMb || DEFAULT_MEMORY_MB));
    let slot;
    try {
      slot = this.isolateFor(memoryMb); // a new realm (SES) is not the evaluation's time
    } catch (e) {
      this.retire();
      return { status: 'error', message: capMessage('the sandbox could not start: ' + String(e && e.message)), ms: 0 };
    }
    const started = process.hrtime.bigint();
    const elapsed = () => Number(process.hrtime.bigint() - started) / 1e6;
    const left = () => {
      const ms = Math.floor(timeoutMs - elapsed());
      if (ms <= 0) {
        throw new Failure('timeout', `the evaluation was between steps when its ${timeoutMs} ms ran out`, undefined,
                          { code: 'sandbox.node_between_steps', args: { ms: timeoutMs } });
      }
      return ms;
    };
    // Belt and braces: isolated-vm's timeout covers running code; this covers the waits between.
    let watchdogFired = false;
    const watchdog = setTimeout(() => { watchdogFired = true; this.retire(); }, timeoutMs + 100);
    let failed = false;
    try {
      const value = await body(slot, left);
      return { status: 'ok', value, ms: elapsed() };
    } catch (e) {
      failed = true;
      const disposed = slot.isolate.isDisposed;
      let status;
      let phrase;
      let message = e && e.message ? String(e.message) : String(e);
      if (e instanceof Failure) {
        status = e.status;
        phrase = e.phrase;
      } else if (watchdogFired) {
        status = 'timeout';
        message = `the evaluation was stopped by the watchdog ${timeoutMs + 100} ms after it started`;
        phrase = { code: 'sandbox.node_watchdog', args: { ms: timeoutMs + 100 } };
      } else if (/timed out/i.test(message)) {
        status = 'timeout';
        message = `the evaluation was still running (its code had the isolate) when its ${timeoutMs} ms ran out`;
        phrase = { code: 'sandbox.node_running', args: { ms: timeoutMs } };
      } else if (disposed) status = 'memory';
      else status = 'error';
      if (status === 'memory') {
        message = `the evaluation exceeded the ${memoryMb} MB memory limit`;
        phrase = { code: 'sandbox.node_memory', args: { mb: memoryMb } };
      }
      const out = { status, message: capMessage(message), ms: elapsed() };
      if (phrase) out.phrase = phrase;
      if (e instanceof Failure && e.userStack) out.stack = e.userStack;
      // Code stopped half-way (a timeout, a lost isolate) must not meet the next evaluation.
      if (status === 'timeout' || status === 'memory' || disposed) this.retire();
      return out;
    } finally {
      clearTimeout(watchdog);
      const current = this.current;
      if (current && !failed && !current.isolate.isDisposed) {
        // A heap that stays large after the evaluation would make later ones fail.
        const heap = current.isolate.getHeapStatisticsSync();
        if (heap.used_heap_size > (current.memoryMb << 20) / 2) this.retire();
      }
    }
  }
}

module.exports = { Engine };
