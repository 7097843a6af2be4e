// The code editor: CodeMirror 6 with Python and JavaScript modes, line numbers, bracket
// matching, and a highlighted line for the error a test run or a save reported.
import { basicSetup } from 'codemirror';
import { javascript } from '@codemirror/lang-javascript';
import { python } from '@codemirror/lang-python';
import { Compartment, EditorState, StateEffect, StateField } from '@codemirror/state';
import { Decoration, EditorView } from '@codemirror/view';

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

const modes = { python: () => python(), nodejs: () => javascript() };

/** An editor in `parent`; `onChange()` after each edit (the page binds Ctrl/Cmd-S itself). */
export function createEditor(parent, { doc, language, readOnly = false, onChange }) {
  const mode = new Compartment();
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc,
      extensions: [
        basicSetup,
        mode.of(modes[language] ? modes[language]() : []),
        errorLineField,
        EditorState.readOnly.of(readOnly),
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
