// The AMDGPU assembly grammar, tokenized by VS Code's own TextMate engine.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { before, test } from 'node:test';
import * as oniguruma from 'vscode-oniguruma';
import * as textmate from 'vscode-textmate';

const root = path.resolve(__dirname, '..', '..', '..');
let grammar: textmate.IGrammar;

before(async () => {
  const wasm = fs.readFileSync(require.resolve('vscode-oniguruma/release/onig.wasm'));
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength) as ArrayBuffer);
  const registry = new textmate.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (patterns: string[]) => new oniguruma.OnigScanner(patterns),
      createOnigString: (s: string) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async () => {
      const file = path.join(root, 'syntaxes', 'amdgpu-isa.tmLanguage.json');
      return textmate.parseRawGrammar(fs.readFileSync(file, 'utf8'), file);
    },
  });
  grammar = (await registry.loadGrammar('source.amdgpu-isa'))!;
});

/** [text, innermost scope] of each token of one line. */
function tokens(line: string): [string, string][] {
  const { tokens } = grammar.tokenizeLine(line, textmate.INITIAL);
  return tokens
    .map((t): [string, string] => [line.slice(t.startIndex, t.endIndex), t.scopes[t.scopes.length - 1]])
    .filter(([text]) => text.trim() !== '' && text.trim() !== ',');
}

function scopeOf(line: string, text: string): string | undefined {
  return tokens(line).find(([t]) => t.trim() === text)?.[1];
}

test('scalar, vector, memory and matrix mnemonics', () => {
  assert.equal(scopeOf('\ts_load_dwordx2 s[12:13], s[0:1], 0x0', 's_load_dwordx2'), 'keyword.other.opcode.scalar.amdgpu-isa');
  assert.equal(scopeOf('\tv_pk_add_f32 v[2:3], v[2:3], v[6:7]', 'v_pk_add_f32'), 'keyword.other.opcode.vector.amdgpu-isa');
  assert.equal(scopeOf('\tglobal_load_dwordx4 v[0:3], v[10:11], off', 'global_load_dwordx4'), 'keyword.other.opcode.memory.amdgpu-isa');
  assert.equal(scopeOf('\tds_read_b128 v[4:7], v2 offset:512', 'ds_read_b128'), 'keyword.other.opcode.memory.amdgpu-isa');
  assert.equal(
    scopeOf('\tv_mfma_f32_16x16x16_f16 a[0:3], v[0:1], v[2:3], a[0:3]', 'v_mfma_f32_16x16x16_f16'),
    'keyword.other.opcode.matrix.amdgpu-isa',
  );
  assert.equal(scopeOf('\ts_endpgm', 's_endpgm'), 'keyword.other.opcode.scalar.amdgpu-isa');
});

test('registers v/s/a, ranges, specials', () => {
  const line = '\tv_mad_u64_u32 v[4:5], s[8:9], s9, v14, a3';
  for (const reg of ['v[4:5]', 's[8:9]', 's9', 'v14', 'a3']) assert.equal(scopeOf(line, reg), 'variable.other.register.amdgpu-isa', reg);
  assert.equal(scopeOf('\ts_and_saveexec_b64 s[0:1], vcc', 'vcc'), 'variable.language.register.special.amdgpu-isa');
  assert.equal(scopeOf('\ts_mov_b32 m0, -1', 'm0'), 'variable.language.register.special.amdgpu-isa');
});

test('directives, labels, comments, numbers, modifiers', () => {
  assert.equal(scopeOf('\t.amdhsa_next_free_vgpr 15', '.amdhsa_next_free_vgpr'), 'keyword.control.directive.amdgpu-isa');
  assert.equal(scopeOf('\t.amdhsa_next_free_vgpr 15', '15'), 'constant.numeric.decimal.amdgpu-isa');
  assert.equal(scopeOf('add_kernel_0:', 'add_kernel_0'), 'entity.name.function.amdgpu-isa');
  assert.equal(scopeOf('.LBB0_2:', '.LBB0_2'), 'entity.name.label.amdgpu-isa');
  assert.equal(scopeOf('; %bb.0:', '; %bb.0:'), 'comment.line.semicolon.amdgpu-isa');
  assert.equal(scopeOf('\ts_waitcnt vmcnt(0) lgkmcnt(0)', 'vmcnt'), 'storage.modifier.amdgpu-isa');
  assert.equal(scopeOf('\tv_and_b32_e32 v8, 0x3f0, v0', '0x3f0'), 'constant.numeric.hex.amdgpu-isa');
  assert.equal(scopeOf('\t.amdgcn_target "amdgcn-amd-amdhsa--gfx942"', '"'), 'string.quoted.double.amdgpu-isa');
});

test('a whole ISA file from FlyDSL tokenizes without unscoped mnemonics', () => {
  const sample = fs.readFileSync(path.join(__dirname, '..', '..', '..', 'src', 'test', 'unit', 'sample_isa.s'), 'utf8');
  let state = textmate.INITIAL;
  for (const line of sample.split('\n')) {
    const result = grammar.tokenizeLine(line, state);
    state = result.ruleStack;
    const first = line.trim().split(/\s+/)[0];
    if (/^[sv]_/.test(first)) {
      const token = result.tokens.find((t) => line.slice(t.startIndex, t.endIndex) === first);
      assert.ok(token && token.scopes.some((s) => s.startsWith('keyword.other.opcode')), line);
    }
  }
});
