import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isaLinkOf } from '../../isaview';

const result = {
  uri: 'file:///w/k.py',
  kernels: [
    {
      name: 'k_0',
      files: { isa: '/runs/r/ir/k_0/23_final_isa.s' },
      isaRows: [
        { row: 14, lines: [['/w/k.py', 30]] },
        // a helper's instruction, in another file, made by the call on line 32
        { row: 15, lines: [['/w/h.py', 5], ['/w/k.py', 32]] },
        { row: 16, lines: [['/w/k.py', 30]] },
      ],
    },
  ],
};

test('source lines and ISA rows, both ways; calls count for their line', () => {
  const link = isaLinkOf(result, (file) => file === '/w/k.py');
  assert.ok(link);
  assert.equal(link.isaPath, '/runs/r/ir/k_0/23_final_isa.s');
  assert.deepEqual([...link.rowsOf], [[30, [14, 16]], [32, [15]]]);
  assert.deepEqual(link.lineOf.get(15), ['/w/h.py', 5]); // clicked: the helper's own line
  assert.deepEqual(link.lineOf.get(16), ['/w/k.py', 30]);
});

test('no link without line info or an ISA file', () => {
  const withoutRows = { kernels: [{ files: { isa: '/x.s' }, isaRows: [] }] };
  assert.equal(isaLinkOf(withoutRows, () => true), undefined);
  assert.equal(isaLinkOf({ kernels: [{ isaRows: result.kernels[0].isaRows }] }, () => true), undefined);
  assert.equal(isaLinkOf({ status: 'error' }, () => true), undefined);
});
