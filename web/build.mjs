// Builds the pages' scripts and style sheet into the Python package (src/assay/server/static/),
// where they are committed: a machine that serves the pages needs no Node.js.
// Usage: npm install --no-package-lock && node build.mjs   (add --watch while editing, --outdir DIR to build elsewhere)
import * as esbuild from 'esbuild';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const here = path.dirname(fileURLToPath(import.meta.url));
// --outdir DIR builds elsewhere (tests/server/test_static_bundle.py compares a fresh build with the committed one).
const outdirAt = process.argv.indexOf('--outdir');
const outdir = outdirAt > 0 ? path.resolve(process.argv[outdirAt + 1]) : path.join(here, '..', 'src', 'assay', 'server', 'static');
const pages = ['signin', 'notfound', 'evaluators', 'editor', 'tasks', 'task', 'task-form', 'datasets', 'dataset', 'run', 'sample', 'compare',
  'users', 'account', 'online', 'online-rule', 'online-form', 'traces', 'trace'];

const options = {
  entryPoints: [
    ...pages.map((name) => ({ in: path.join(here, 'src', `${name}.js`), out: name })),
    { in: path.join(here, 'src', 'assay.css'), out: 'assay' },
  ],
  outdir,
  bundle: true,
  format: 'esm',
  minify: true,
  target: ['es2020'],
  legalComments: 'none',
  logLevel: 'info',
};

// The bundles carry third-party code: its licences ship beside them.
function writeLicences() {
  const modules = path.join(here, 'node_modules');
  const names = fs.readdirSync(modules).flatMap((name) => (name.startsWith('@')
    ? fs.readdirSync(path.join(modules, name)).map((sub) => `${name}/${sub}`) : [name]))
    .filter((name) => !name.startsWith('.') && !name.includes('esbuild') && name !== 'axe-core').sort(); // axe: tests only
  const parts = [];
  for (const name of names) {
    const dir = path.join(modules, name);
    const file = fs.readdirSync(dir).find((f) => /^licen[cs]e/i.test(f));
    const { version, license } = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
    parts.push(`${name}@${version} (${license})\n\n${file ? fs.readFileSync(path.join(dir, file), 'utf8').trim() : ''}`);
  }
  fs.writeFileSync(path.join(outdir, 'THIRD-PARTY-LICENSES.txt'), `${parts.join('\n\n----\n\n')}\n`);
}

if (process.argv.includes('--watch')) {
  const context = await esbuild.context(options);
  await context.watch();
} else {
  await esbuild.build(options);
  fs.copyFileSync(path.join(here, 'src', 'favicon.svg'), path.join(outdir, 'favicon.svg'));
  writeLicences();
}
