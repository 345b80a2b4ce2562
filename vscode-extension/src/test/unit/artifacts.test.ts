import assert from 'node:assert/strict';
import { test } from 'node:test';
import { artifactUriParts, artifactsOf, fileOfQuery, kernelOfPath, kindOfPath, languageOf, summary } from '../../artifacts';

// The shape of flydsl_ls/server/compile_report.py's result_json.
const result = {
  command: 'flydsl-ls.compile',
  status: 'ok',
  ok: true,
  message: 'vector_add.py::small (gfx942): compiled in 0.21 s (total 3.10 s)\nadd_kernel_0: VGPRs 15',
  example: 'small',
  arch: 'gfx942',
  kernels: [
    {
      name: 'add_kernel_0',
      files: {
        mlirFirst: '/runs/r1/ir/add_kernel_0/00_origin.mlir',
        mlirFinal: '/runs/r1/ir/add_kernel_0/19_reconcile_unrealized_casts.mlir',
        llvm: '/runs/r1/ir/add_kernel_0/21_llvm_ir.ll',
        isa: '/runs/r1/ir/add_kernel_0/22_final_isa.s',
      },
    },
    { name: 'no_isa_kernel', files: {} },
  ],
  shown: null,
};

test('artifactsOf finds every kernel file of a kind', () => {
  assert.deepEqual(artifactsOf(result, 'isa'), [{ kernel: 'add_kernel_0', kind: 'isa', path: '/runs/r1/ir/add_kernel_0/22_final_isa.s' }]);
  assert.equal(artifactsOf(result, 'llvm')[0].path, '/runs/r1/ir/add_kernel_0/21_llvm_ir.ll');
  assert.equal(artifactsOf(result, 'mlir')[0].path.endsWith('19_reconcile_unrealized_casts.mlir'), true);
  assert.equal(artifactsOf(result, 'mlir-first')[0].path.endsWith('00_origin.mlir'), true);
});

test('verifyFix results: the kernels of the compile after the fix', () => {
  const verify = { command: 'flydsl-ls.verifyFix', status: 'identical', ok: true, before: result, after: result };
  assert.equal(artifactsOf(verify, 'isa').length, 1);
});

test('nothing to open in failed or odd results', () => {
  assert.deepEqual(artifactsOf({ status: 'error', ok: false, kernels: [] }, 'isa'), []);
  assert.deepEqual(artifactsOf(null, 'isa'), []);
  assert.deepEqual(artifactsOf('text', 'isa'), []);
  assert.deepEqual(artifactsOf({ kernels: [null, 3, { files: { isa: 7 } }] }, 'isa'), []);
});

test('flydsl-isa URIs: readable tab title, the file in the query, round trip', () => {
  const artifact = artifactsOf(result, 'isa')[0];
  const parts = artifactUriParts(artifact, 'gfx942');
  assert.equal(parts.path, '/add_kernel_0 (gfx942).s');
  assert.equal(fileOfQuery(parts.query), '/runs/r1/ir/add_kernel_0/22_final_isa.s');
  const odd = { kernel: 'k', kind: 'llvm' as const, path: '/tmp/a b&c=d/21_llvm_ir.ll' };
  assert.equal(fileOfQuery(artifactUriParts(odd).query), odd.path);
  assert.equal(artifactUriParts({ ...odd, kind: 'mlir-first' }).path, '/k first.mlir');
  assert.equal(fileOfQuery('other=1'), undefined);
});

test('languages: the ISA gets the extension grammar', () => {
  assert.equal(languageOf('isa'), 'amdgpu-isa');
  assert.equal(languageOf('llvm'), 'llvm');
  assert.equal(languageOf('mlir'), 'mlir');
});

test('files the server asks to show', () => {
  assert.equal(kindOfPath('/r/ir/k_0/22_final_isa.s'), 'isa');
  assert.equal(kindOfPath('/r/ir/k_0/21_llvm_ir.ll'), 'llvm');
  assert.equal(kindOfPath('/r/ir/k_0/00_origin.mlir'), 'mlir-first');
  assert.equal(kindOfPath('/r/ir/k_0/19_x.mlir'), 'mlir');
  assert.equal(kindOfPath('/r/verify-fix.diff'), 'diff'); // verifyFix's diff: read-only too
  assert.equal(languageOf('diff'), 'diff');
  assert.equal(kernelOfPath('/r/ir/k_0/22_final_isa.s'), 'k_0');
});

test('summary: the server message, ok or not', () => {
  assert.deepEqual(summary(result), { ok: true, text: result.message });
  assert.deepEqual(summary({ status: 'unavailable', ok: false }), { ok: false, text: 'flydsl-ls: unavailable' });
  assert.equal(summary(undefined).ok, false);
});
