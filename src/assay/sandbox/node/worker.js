'use strict';
/**
 * assay's persistent Node.js evaluator worker (started and confined by handle.py for
 * NodePool in pool.py; one request at a time).
 *
 * Protocol: newline-delimited JSON on stdin and stdout.
 *   first line written:  {"ready": true, "node": "v20...", "modules": {name: version}}
 *                        or {"ready": false, "error": "..."} (then the worker exits)
 *   {"id", "op": "batch", "source", "function", "args_list": [[...], ...], "timeout_ms", "memory_mb"}
 *     -> one line per entry of args_list, in order, each written as soon as that sample is done:
 *        {"id", "index": k, "status": "ok", "json": "<the returned value as JSON text>", "output"?, "timers"?, "ms"}
 *        ("timers": how many timers the evaluation left pending; they were dropped with it)
 *        {"id", "index": k, "status": "timeout" | "memory" | "error" | "invalid_output" | "syntax",
 *         "message", "stack"?, "output"?, "ms"}
 *   {"id", "op": "check", "source", "function"} -> {"id", "status": "ok" | "syntax" | "error", "message"?}
 *   {"id", "op": "ping"} -> {"id", "status": "ok"}
 * (A single call is a batch of one.)
 *
 * Every sample of a batch is its own evaluation (evaluation.js): a Compartment of its own in the
 * isolate's SES-locked realm, its own `timeout_ms` (isolated-vm's timeout and a watchdog) and
 * its own `memory_mb` (the isolate's heap limit: a sample that passes it gets "memory", and the
 * next sample a new isolate). Within a batch, as between requests, samples share the isolate,
 * its frozen intrinsics and hardened libraries (bootstrap.js says why that is safe) and this
 * process, never a compartment's globals. Everything crosses the boundary as
 * strings: no reference from this realm is ever handed to the isolate, so user code has nothing
 * to climb out through.
 *
 * The returned value is passed on as the text the isolate wrote, unparsed: the host parses and
 * normalises it exactly as it does a Python evaluator's (sandbox/results.py). Stacks and
 * messages are cut (evaluation.js), so no evaluation makes a response too large. Should a
 * sample overrun its deadline on the host, the host kills this process and gives the rest of
 * the batch to another worker.
 */
const path = require('path');
const { versions } = require('./libraries.js');
const { Engine } = require('./evaluation.js');

// The modules' directory comes from the host (runtime.modules_dir(): this package's own, or where
// `assay sandbox setup` installed them); without it, the package's own.
const NODE_MODULES = process.argv[2] ? path.resolve(process.argv[2]) : path.join(__dirname, 'node_modules');
const CHECK_TIMEOUT_MS = 2000;

let ivm;
try {
  ivm = require(path.join(NODE_MODULES, 'isolated-vm'));
} catch (e) {
  process.stdout.write(JSON.stringify({ ready: false, error: 'isolated-vm cannot be loaded: ' + e.message }) + '\n');
  process.exit(1);
}
let engine;
try {
  engine = new Engine(ivm, NODE_MODULES);
  engine.warm();
} catch (e) {
  process.stdout.write(JSON.stringify({ ready: false, error: 'the sandbox cannot be set up (is `ses` installed?): ' + e.message }) + '\n');
  process.exit(1);
}

/** Each sample of the batch in turn, its answer written before the next one starts. */
async function handleBatch(req, write) {
  const fn = typeof req.function === 'string' ? req.function : 'evaluate';
  const source = String(req.source);
  const list = Array.isArray(req.args_list) ? req.args_list : [];
  for (let k = 0; k < list.length; k++) {
    const argsJson = JSON.stringify(Array.isArray(list[k]) ? list[k] : []);
    list[k] = null; // the sample's arguments are not needed past this point
    const res = await engine.evaluate(source, fn, argsJson, req.timeout_ms, req.memory_mb);
    res.id = req.id;
    res.index = k;
    write(res);
  }
}

async function handle(line, write) {
  let req;
  try {
    req = JSON.parse(line);
  } catch (_) {
    write({ id: null, status: 'error', message: 'malformed request' });
    return;
  }
  if (req.op === 'batch') {
    await handleBatch(req, write);
    return;
  }
  let res;
  if (req.op === 'check') {
    const fn = typeof req.function === 'string' ? req.function : 'evaluate';
    res = await engine.check(String(req.source), fn, req.timeout_ms || CHECK_TIMEOUT_MS, req.memory_mb);
  } else if (req.op === 'ping') res = { status: 'ok' };
  else res = { status: 'error', message: `unknown op ${req.op}` };
  res.id = req.id;
  write(res);
}

/** A response as one line; a response that cannot be written says so rather than killing the worker. */
function encodeResponse(res) {
  try {
    return JSON.stringify(res);
  } catch (e) {
    const out = { id: res.id, status: 'error', message: 'worker: the response cannot be written: ' + e.message };
    if (res.index !== undefined) out.index = res.index;
    return JSON.stringify(out);
  }
}

function write(res) {
  process.stdout.write(encodeResponse(res) + '\n'); // synchronous: stdout is a pipe
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
      chain = chain.then(() => handle(line, write)).catch(
        (e) => write({ id: null, status: 'error', message: 'worker: ' + e.message }),
      );
    }
  });
  process.stdin.on('end', () => chain.then(() => { engine.retire(); process.exit(0); }));
}

main();
