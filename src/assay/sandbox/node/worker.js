'use strict';
/**
 * assay's persistent Node.js evaluator worker (started and confined by handle.py for
 * NodePool in pool.py; one evaluation at a time).
 *
 * Protocol: newline-delimited JSON on stdin and stdout, one response line per request line.
 *   first line written:  {"ready": true, "node": "v20...", "modules": {name: version}}
 *                        or {"ready": false, "error": "..."} (then the worker exits)
 *   {"id", "op": "call", "source", "function", "args": [...], "timeout_ms", "memory_mb"}
 *     -> {"id", "status": "ok", "json": "<the returned value as JSON text>", "ms"}
 *     -> {"id", "status": "timeout" | "memory" | "error" | "invalid_output" | "syntax",
 *         "message", "stack"?, "ms"}
 *   {"id", "op": "check", "source", "function"} -> {"id", "status": "ok" | "syntax" | "error", "message"?}
 *   {"id", "op": "ping"} -> {"id", "status": "ok"}
 *
 * Each evaluation runs in a fresh context of a reused isolated-vm Isolate (heap capped by
 * `memoryLimit`), and everything crosses the boundary as strings: no reference from this realm
 * is ever handed to the isolate, so user code has nothing to climb out through. The isolate is
 * replaced when it is disposed (memory limit, watchdog) or its heap stays large.
 *
 * The returned value is passed on as the text the isolate wrote, unparsed: the host parses and
 * normalises it exactly as it does a Python evaluator's (sandbox/results.py). Stacks are cut
 * at MAX_STACK_CHARS characters and messages by capMessage, so no evaluation makes a response too large.
 */
const path = require('path');
const bootstrapSource = require('./bootstrap.js');
const { ENTRIES, packLibrary, versions } = require('./libraries.js');

// The modules' directory comes from the host (runtime.modules_dir(): this package's own, or where
// `assay sandbox setup` installed them); without it, the package's own.
const NODE_MODULES = process.argv[2] ? path.resolve(process.argv[2]) : path.join(__dirname, 'node_modules');
const MAX_USER_SCRIPTS = 32; // compiled evaluator scripts kept per isolate (same source, many samples)
const MAX_STACK_CHARS = 16384; // characters of a stack passed on (sandbox/results.py: HOST_MAX_TRACEBACK_CHARS)
const MAX_REASON = 4096; // core/untrusted.py: MAX_REASON

/** As cap_message in sandbox/results.py: cut to fit a reason, noting the full length. */
function capMessage(text) {
  if (text.length <= MAX_REASON) return text;
  const note = `… [${text.length} characters in all]`;
  return text.slice(0, MAX_REASON - note.length) + note;
}

let ivm;
try {
  ivm = require(path.join(NODE_MODULES, 'isolated-vm'));
} catch (e) {
  process.stdout.write(JSON.stringify({ ready: false, error: 'isolated-vm cannot be loaded: ' + e.message }) + '\n');
  process.exit(1);
}

const packed = Object.create(null); // library name -> script text (packed lazily, once)
function libraryText(name) {
  if (!(name in packed)) packed[name] = packLibrary(name, NODE_MODULES);
  return packed[name];
}

/** The current isolate with what was compiled for it. */
let current = null;

function isolateFor(memoryMb) {
  if (current && !current.isolate.isDisposed && current.memoryMb === memoryMb) return current;
  retire();
  const isolate = new ivm.Isolate({ memoryLimit: memoryMb });
  current = {
    isolate,
    memoryMb,
    boot: isolate.compileScriptSync(bootstrapSource, { filename: 'assay-bootstrap.js' }),
    libs: Object.create(null),
    scripts: new Map(),
  };
  return current;
}

function retire() {
  if (current && !current.isolate.isDisposed) {
    try { current.isolate.dispose(); } catch (_) { /* already gone */ }
  }
  current = null;
}

function libraryScript(slot, name) {
  if (!(name in slot.libs)) {
    slot.libs[name] = slot.isolate.compileScriptSync(libraryText(name), { filename: `lib/${name}.js` });
  }
  return slot.libs[name];
}

/** Compile the user's source as `evaluator.js`, caching the Script per isolate. */
function userScript(slot, source) {
  let script = slot.scripts.get(source);
  if (script === undefined) {
    script = slot.isolate.compileScriptSync(source, { filename: 'evaluator.js' });
    if (slot.scripts.size >= MAX_USER_SCRIPTS) slot.scripts.delete(slot.scripts.keys().next().value);
    slot.scripts.set(source, script);
  }
  return script;
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

/**
 * Create a context, run the harness, the libraries the source names, and the source itself.
 * Libraries are preloaded when their name appears in the source (a packed library only
 * defines factories; it is instantiated on the first `require`).
 */
async function prepare(slot, source, left) {
  const context = await slot.isolate.createContext();
  try {
    await slot.boot.run(context, { timeout: left() });
    const entry = {};
    for (const name of ['__assayStart', '__assayPoll', '__assayFire', '__assayFind', '__assayOutput']) {
      entry[name] = context.global.getSync(name, { reference: true });
    }
    for (const name of Object.keys(ENTRIES)) {
      if (source.includes(name)) await libraryScript(slot, name).run(context, { timeout: left() });
    }
    let script;
    try {
      script = userScript(slot, source);
    } catch (e) {
      throw new Failure('syntax', e.message);
    }
    try {
      await script.run(context, { timeout: left() });
    } catch (e) {
      // An exception thrown by the module's top level: keep its evaluator.js frames.
      if (slot.isolate.isDisposed || /timed out/i.test(String(e && e.message))) throw e;
      const header = `${e.name || 'Error'}: ${e.message}`;
      throw new Failure('error', header, userFrames(e.stack || header));
    }
    return { context, entry };
  } catch (e) {
    context.release();
    throw e;
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Drive __assayStart/__assayPoll/__assayFire until the evaluation settles. */
async function drive(entry, fn, argsJson, left) {
  const opts = () => ({ timeout: left(), arguments: { copy: true }, result: { copy: true } });
  let state = await entry.__assayStart.apply(undefined, [fn, argsJson], opts());
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
    state = await entry.__assayPoll.apply(undefined, [], opts());
  }
}

/** Run one request against the isolate under `timeout_ms`, turning every failure into a status. */
async function withIsolate(req, body) {
  const timeoutMs = Math.max(1, Math.floor(req.timeout_ms || 5000));
  const memoryMb = Math.max(8, Math.floor(req.memory_mb || 128));
  const started = process.hrtime.bigint();
  const elapsed = () => Number(process.hrtime.bigint() - started) / 1e6;
  const left = () => {
    const ms = Math.floor(timeoutMs - elapsed());
    if (ms <= 0) throw new Failure('timeout', `the evaluation ran past ${timeoutMs} ms`);
    return ms;
  };
  const slot = isolateFor(memoryMb);
  // Belt and braces: isolated-vm's timeout covers running code; this covers everything else.
  let watchdogFired = false;
  const watchdog = setTimeout(() => { watchdogFired = true; retire(); }, timeoutMs + 100);
  try {
    const value = await body(slot, left);
    return { status: 'ok', value, ms: elapsed() };
  } catch (e) {
    const disposed = slot.isolate.isDisposed;
    if (disposed && slot === current) current = null;
    let status;
    let message = e && e.message ? String(e.message) : String(e);
    if (e instanceof Failure) status = e.status;
    else if (watchdogFired || /timed out/i.test(message)) status = 'timeout';
    else if (disposed && /memory limit/i.test(message)) status = 'memory';
    else if (disposed) status = 'memory';
    else status = 'error';
    if (status === 'timeout') message = `the evaluation ran past ${timeoutMs} ms`;
    if (status === 'memory') message = `the evaluation exceeded the ${memoryMb} MB memory limit`;
    const out = { status, message: capMessage(message), ms: elapsed() };
    if (e instanceof Failure && e.userStack) out.stack = e.userStack;
    return out;
  } finally {
    clearTimeout(watchdog);
    if (current && !current.isolate.isDisposed) {
      // A heap that stays large after the context is gone would make later evaluations fail.
      const heap = current.isolate.getHeapStatisticsSync();
      if (heap.used_heap_size > (current.memoryMb << 20) / 2) retire();
    }
  }
}

async function handleCall(req) {
  const argsJson = JSON.stringify(Array.isArray(req.args) ? req.args : []);
  const fn = typeof req.function === 'string' ? req.function : 'evaluate';
  let output = '';
  const res = await withIsolate(req, async (slot, left) => {
    const { context, entry } = await prepare(slot, String(req.source), left);
    try {
      return await drive(entry, fn, argsJson, left);
    } finally {
      output = printedBy(entry);
      context.release(); // timers and everything else the evaluation left behind go with it
    }
  });
  if (res.status === 'ok') {
    res.json = res.value;
    delete res.value;
  }
  if (output) res.output = output;
  return res;
}

/** What the evaluation wrote to console (capped in the isolate); '' when it cannot be read. */
function printedBy(entry) {
  try {
    const text = entry.__assayOutput.applySync(undefined, [], { timeout: 50, result: { copy: true } });
    return typeof text === 'string' ? text.slice(0, 8192) : '';
  } catch (_) {
    return ''; // a disposed isolate (memory) or a poisoned harness: the verdict matters more
  }
}

/** Compile, run the top level (bounded), and look for the function: no arguments are passed. */
async function handleCheck(req) {
  const fn = typeof req.function === 'string' ? req.function : 'evaluate';
  const out = await withIsolate({ timeout_ms: req.timeout_ms || 2000, memory_mb: req.memory_mb }, async (slot, left) => {
    const { context, entry } = await prepare(slot, String(req.source), left);
    try {
      return await entry.__assayFind.apply(undefined, [fn], { timeout: left(), arguments: { copy: true }, result: { copy: true } });
    } finally {
      context.release();
    }
  });
  if (out.status === 'ok') {
    if (out.value === 'ok') return { status: 'ok' };
    return { status: 'error', message: `evaluator.js does not export a function '${fn}' (module.exports = async function ${fn}(input, output, expected, metadata) {...})` };
  }
  if (out.status === 'error' && out.stack) out.message = out.stack;
  return out;
}

async function handle(line) {
  let req;
  try {
    req = JSON.parse(line);
  } catch (_) {
    return { id: null, status: 'error', message: 'malformed request' };
  }
  let res;
  if (req.op === 'call') res = await handleCall(req);
  else if (req.op === 'check') res = await handleCheck(req);
  else if (req.op === 'ping') res = { status: 'ok' };
  else res = { status: 'error', message: `unknown op ${req.op}` };
  res.id = req.id;
  return res;
}

/** A response as one line; a response that cannot be written says so rather than killing the worker. */
function encodeResponse(res) {
  try {
    return JSON.stringify(res);
  } catch (e) {
    return JSON.stringify({ id: res.id, status: 'error', message: 'worker: the response cannot be written: ' + e.message });
  }
}

function main() {
  process.stdout.write(JSON.stringify({ ready: true, node: process.version, modules: versions(NODE_MODULES) }) + '\n');
  let buffer = '';
  let chain = Promise.resolve();
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (chunk) => {
    buffer += chunk;
    let nl;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      if (!line.trim()) continue;
      chain = chain.then(() => handle(line)).then(
        (res) => process.stdout.write(encodeResponse(res) + '\n'),
        (e) => process.stdout.write(JSON.stringify({ id: null, status: 'error', message: 'worker: ' + e.message }) + '\n'),
      );
    }
  });
  process.stdin.on('end', () => chain.then(() => { retire(); process.exit(0); }));
}

main();
