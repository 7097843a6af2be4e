'use strict';
/**
 * Packs the libraries that evaluators may `require` into plain scripts for an isolate.
 *
 * An isolated-vm context has no module system and no file system, so each library is turned,
 * once per worker, into one self-contained expression: a table in which every CommonJS file it
 * reaches becomes a function, which the harness (bootstrap.js) evaluates in its library
 * compartment and instantiates once per isolate.
 * The dependency graph is found by scanning `require("...")` calls with string literals and
 * resolving them with Node's own resolver; anything that resolves to a Node built-in (or does
 * not resolve, like ajv's optional `re2`) becomes a module that throws when required.
 *
 * This replaces a bundler (no build step in the Makefile): the packing takes ~20 ms at start-up.
 */
const fs = require('fs');
const path = require('path');
const { createRequire, builtinModules } = require('module');

/** The allowed libraries and the file each starts from (pre-built single files where shipped). */
const ENTRIES = {
  lodash: 'lodash/lodash.min.js',
  dayjs: 'dayjs/dayjs.min.js',
  validator: 'validator/validator.min.js',
  ajv: 'ajv', // a CommonJS graph (ajv + fast-deep-equal, fast-uri, json-schema-traverse)
};

/**
 * State a library keeps in a closure, which hardening cannot freeze, made the evaluation's own:
 * [library, file ending, pattern (must match once), replacement]. lodash's `uniqueId` counter
 * would otherwise carry from one evaluation to the next; each evaluation counts from 1 again
 * (`__assayNextId` is the library compartment's, bootstrap.js).
 */
const PATCHES = [
  ['lodash', 'lodash.min.js', /function (\w+)\(n\)\{var t=\+\+\w+;return (\w+)\(n\)\+t\}/g,
    'function $1(n){var t=__assayNextId();return $2(n)+t}'],
];

const REQUIRE_RE = /\brequire\(\s*(['"])([^'"\n]+)\1\s*\)/g;
const BUILTINS = new Set(builtinModules);

function resolveFrom(file, spec) {
  if (BUILTINS.has(spec) || spec.startsWith('node:')) return null;
  try {
    return createRequire(file).resolve(spec);
  } catch (_) {
    return null; // optional dependency that is not installed
  }
}

function patched(name, file, src) {
  for (const [lib, ending, pattern, replacement] of PATCHES) {
    if (lib !== name || !file.endsWith(ending)) continue;
    const found = src.match(pattern);
    if (!found || found.length !== 1) throw new Error(`${name}: ${file} does not have the code assay patches (${pattern}); is it the pinned version?`);
    src = src.replace(pattern, replacement);
  }
  return src;
}

/** Return the expression (a table) for library `name`, whose files live under `nodeModules`. */
function packLibrary(name, nodeModules) {
  const entry = createRequire(path.join(nodeModules, 'x.js')).resolve(ENTRIES[name]);
  const ids = new Map(); // absolute path -> numeric id
  const parts = [];
  const queue = [entry];
  ids.set(entry, 0);
  while (queue.length) {
    const file = queue.shift();
    const src = patched(name, file, fs.readFileSync(file, 'utf8'));
    const deps = {};
    let body;
    if (file.endsWith('.json')) {
      body = 'module.exports = ' + src + ';';
    } else {
      body = src;
      for (const m of src.matchAll(REQUIRE_RE)) {
        const spec = m[2];
        if (spec in deps) continue;
        const target = resolveFrom(file, spec);
        if (target === null) {
          deps[spec] = -1;
          continue;
        }
        if (!ids.has(target)) {
          ids.set(target, ids.size);
          queue.push(target);
        }
        deps[spec] = ids.get(target);
      }
    }
    // The trailing newline keeps a final `// comment` from swallowing the closing brace.
    parts.push(
      `[function (module, exports, require) {${body}\n}, ${JSON.stringify(deps)}]`
    );
  }
  return `[\n${parts.join(',\n')}\n]`;
}

/** Versions of the allowed libraries as installed (null when missing), for `probe()`. */
function versions(nodeModules) {
  const out = {};
  for (const name of Object.keys(ENTRIES).concat(['isolated-vm'])) {
    try {
      out[name] = JSON.parse(
        fs.readFileSync(path.join(nodeModules, name, 'package.json'), 'utf8')
      ).version;
    } catch (_) {
      out[name] = null;
    }
  }
  return out;
}

module.exports = { ENTRIES, packLibrary, versions };
