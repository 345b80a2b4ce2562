import assert from 'node:assert/strict';
import { test } from 'node:test';
import { innermost, nothingToOpen, notificationOf, withoutMessages } from '../../present';

test('a message of several lines: its first line in the notification, "Show Output" for the rest', () => {
  const missing =
    'flydsl-ls: k.py::small (gfx942): cannot compile: compiling FlyDSL kernels with /v/bin/python needs flydsl\n' +
    'install with:\n  pip install flydsl\nor everything at once: pip install torch==2.13.0 -e /src[compile]';
  assert.deepEqual(notificationOf(missing), {
    text: 'flydsl-ls: k.py::small (gfx942): cannot compile: compiling FlyDSL kernels with /v/bin/python needs flydsl',
    more: true,
  });
  assert.deepEqual(notificationOf('flydsl-ls: fix-all of k.py: 3 fixes'), { text: 'flydsl-ls: fix-all of k.py: 3 fixes', more: false });
  assert.deepEqual(notificationOf('one line\r\n\n  \n'), { text: 'one line', more: false });
});

// FLY301 over lines 6-9 around a FLY102 on line 8 (the e2e's nested_findings.py).
const outer = { code: 'FLY301', range: { start: { line: 6, character: 11 }, end: { line: 9, character: 5 } } };
const inner = { code: 'FLY102', range: { start: { line: 8, character: 8 }, end: { line: 8, character: 33 } } };
const other = { code: 'FLY104', range: { start: { line: 12, character: 4 }, end: { line: 12, character: 9 } } };

test('the finding at the cursor is the innermost one containing it, in any order', () => {
  const at = { line: 8, character: 10 };
  assert.equal(innermost([outer, inner, other], at, (d) => d.range)?.code, 'FLY102');
  assert.equal(innermost([inner, outer], at, (d) => d.range)?.code, 'FLY102');
  assert.equal(innermost([outer, inner], { line: 7, character: 8 }, (d) => d.range)?.code, 'FLY301');
  assert.equal(innermost([outer, inner], { line: 9, character: 5 }, (d) => d.range)?.code, 'FLY301'); // the end is inside
  assert.equal(innermost([outer, inner], { line: 11, character: 0 }, (d) => d.range), undefined);
  assert.equal(innermost([outer, inner], undefined, (d) => d.range)?.code, 'FLY301'); // no cursor: the first
});

test('one line inside another on the same line: the shorter', () => {
  const wide = { range: { start: { line: 3, character: 4 }, end: { line: 3, character: 40 } } };
  const narrow = { range: { start: { line: 3, character: 10 }, end: { line: 3, character: 20 } } };
  assert.equal(innermost([wide, narrow], { line: 3, character: 12 }, (d) => d.range), narrow);
});

test('"Open IR/ISA of the Last Compile" after a compile without files says why', () => {
  const failed = { status: 'unavailable', ok: false, message: 'k.py::small (gfx942): cannot compile: needs flydsl\ninstall with:\n  pip install flydsl' };
  assert.equal(nothingToOpen(failed), 'FlyDSL: the last compile failed, so it has no IR or ISA to open: k.py::small (gfx942): cannot compile: needs flydsl');
  assert.match(nothingToOpen({ status: 'ok', ok: true, message: 'k.py::small: compiled', kernels: [] }), /wrote no IR or ISA files: k\.py::small: compiled$/);
});

test("the hover leaves out the findings' messages VS Code shows above it, and keeps the rest", () => {
  const message = 'use `fx.max(a, b)`: `acc.maximumf(...)` is deprecated';
  const hover = `${message}\n\n**FLY901** \`deprecated-api\`: summary\n\n---\n\nFlyDSL 0.5.0\n\n---\n\n\`fx.max\` docs`;
  assert.equal(withoutMessages(hover, [message]), '**FLY901** `deprecated-api`: summary\n\n---\n\nFlyDSL 0.5.0\n\n---\n\n`fx.max` docs');
  assert.equal(withoutMessages(hover, []), hover);
  assert.equal(withoutMessages(message, [message]), '');
});
