// The code editor: CodeMirror 6 with Python and JavaScript modes, line numbers, bracket
// matching, and a highlighted line for the error a test run or a save reported. It behaves as
// an IDE: the language's indentation (4 spaces in Python, as the template), Tab and Shift-Tab
// indent and dedent (Escape then Tab leaves the editor, CodeMirror's accessible way out), and
// a closing bracket typed above the one auto-closing put there steps over it (closeBrackets
// alone only does that on the same line, which left a stray `}` when typing line by line).
import { basicSetup } from 'codemirror';
import { indentWithTab } from '@codemirror/commands';
import { javascript } from '@codemirror/lang-javascript';
import { json, jsonParseLinter } from '@codemirror/lang-json';
import { python } from '@codemirror/lang-python';
import { indentUnit, syntaxTree } from '@codemirror/language';
import { Compartment, EditorState, Prec, StateEffect, StateField } from '@codemirror/state';
import { linter, lintGutter } from '@codemirror/lint';
import { Decoration, EditorView, keymap } from '@codemirror/view';
import { t } from '../common/boot.js';

const setErrorLine = StateEffect.define();
const errorLineMark = Decoration.line({ class: 'cm-error-line' });

const errorLineField = StateField.define({
  create: () => Decoration.none,
  update(marks, tr) {
    let next = tr.docChanged ? Decoration.none : marks;
    for (const effect of tr.effects) {
      if (!effect.is(setErrorLine)) continue;
      const line = effect.value;
      next = line && line <= tr.state.doc.lines
        ? Decoration.set([errorLineMark.range(tr.state.doc.line(line).from)]) : Decoration.none;
    }
    return next;
  },
  provide: (field) => EditorView.decorations.from(field),
});

const modes = {
  json: () => [json(), indentUnit.of('  '), linter(jsonParseLinter()), lintGutter()],
  python: () => [python(), indentUnit.of('    ')],
  nodejs: () => [javascript(), indentUnit.of('  ')],
};

const OPENER = { ')': '(', ']': '[', '}': '{' };

/** True when the document's `open` and `close` brackets (outside strings and comments) pair up. */
function balanced(state, open, close) {
  let depth = 0;
  syntaxTree(state).iterate({
    enter(node) {
      if (node.name === open) depth += 1;
      else if (node.name === close) depth -= 1;
    },
  });
  return depth === 0;
}

/** Typing a closing bracket on a blank line whose next non-blank line is just that bracket,
 * in a document whose brackets already pair up, steps over it and drops the blank line. */
const stepOverClosing = EditorView.inputHandler.of((view, from, to, text) => {
  if (!(text in OPENER) || from !== to || view.state.selection.ranges.length !== 1) return false;
  const { doc } = view.state;
  const line = doc.lineAt(from);
  if (line.text.trim() !== '' || line.number === doc.lines) return false;
  let next = doc.line(line.number + 1);
  while (next.text.trim() === '' && next.number < doc.lines) next = doc.line(next.number + 1);
  if (next.text.trim() !== text || !balanced(view.state, OPENER[text], text)) return false;
  const bracket = next.from + next.text.indexOf(text);
  const removed = next.from - line.from;
  view.dispatch({ changes: { from: line.from, to: next.from }, selection: { anchor: bracket + 1 - removed },
    userEvent: 'input.type', scrollIntoView: true });
  return true;
});

/** CodeMirror's own words (fold markers' titles, the search panel, what a screen reader is
 * told), in the page's language. */
const phrases = () => ({
  'Fold line': t('cm.foldLine'), 'Unfold line': t('cm.unfoldLine'), 'Folded lines': t('cm.foldedLines'),
  'Unfolded lines': t('cm.unfoldedLines'), 'folded code': t('cm.foldedCode'), unfold: t('cm.unfold'),
  Find: t('cm.find'), Replace: t('cm.replace'), next: t('cm.next'), previous: t('cm.previous'), all: t('cm.all'),
  'match case': t('cm.matchCase'), regexp: t('cm.regexp'), 'by word': t('cm.byWord'), replace: t('cm.replaceOne'),
  'replace all': t('cm.replaceAll'), close: t('cm.close'), 'current match': t('cm.currentMatch'),
  'on line': t('cm.onLine'), 'replaced $ matches': t('cm.replacedMatches'),
  'replaced match on line $': t('cm.replacedOnLine'), 'Go to line': t('cm.gotoLine'), go: t('cm.go'),
  Diagnostics: t('cm.diagnostics'), 'No diagnostics': t('cm.noDiagnostics'), Completions: t('cm.completions'),
  'Control character': t('cm.controlCharacter'), 'Selection deleted': t('cm.selectionDeleted'), to: t('cm.to'),
});

/** An editor in `parent`; `onChange()` after each edit (the page binds Ctrl/Cmd-S itself). */
export function createEditor(parent, { doc, language, readOnly = false, onChange }) {
  const mode = new Compartment();
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc,
      extensions: [
        Prec.highest(stepOverClosing),
        // focusable by Tab order too (axe: a scrollable region must hold focusable content)
        EditorView.contentAttributes.of({ tabindex: '0' }),
        keymap.of([indentWithTab]),
        basicSetup,
        EditorState.phrases.of(phrases()),
        mode.of(modes[language] ? modes[language]() : []),
        errorLineField,
        EditorState.readOnly.of(readOnly),
        // read-only code is not editable either: no caret invites a change that would be refused
        EditorView.editable.of(!readOnly),
        EditorView.updateListener.of((update) => { if (update.docChanged) onChange?.(); }),
      ],
    }),
  });
  return {
    view,
    getCode: () => view.state.doc.toString(),
    setCode(text) {
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } });
    },
    setLanguage(name) {
      view.dispatch({ effects: mode.reconfigure(modes[name] ? modes[name]() : []) });
    },
    showErrorLine(line) {
      const valid = line && line <= view.state.doc.lines;
      view.dispatch({
        effects: [setErrorLine.of(valid ? line : null),
          ...(valid ? [EditorView.scrollIntoView(view.state.doc.line(line).from, { y: 'center' })] : [])],
      });
    },
    clearError() {
      view.dispatch({ effects: setErrorLine.of(null) });
    },
  };
}

/** The line of the evaluator's source that an error message or traceback points at, or null. */
export function errorLine(...texts) {
  const patterns = [
    [/File "<evaluator>", line (\d+)/g, 'last'], // Python traceback: innermost frame last
    [/evaluator\.js:(\d+)(?::\d+)?/g, 'first'], // Node.js stack: innermost frame first
    [/\bline (\d+)(?:, column \d+)?/g, 'first'], // syntax errors found when the code is checked
  ];
  for (const text of texts) {
    if (!text) continue;
    for (const [pattern, pick] of patterns) {
      const found = [...String(text).matchAll(pattern)];
      if (found.length) return Number(found[pick === 'last' ? found.length - 1 : 0][1]);
    }
  }
  return null;
}
