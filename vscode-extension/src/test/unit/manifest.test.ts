// package.json contributions agree with the code: commands, settings, grammar.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { SERVER_KEYS } from '../../settings';

const root = path.resolve(__dirname, '..', '..', '..');
const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const source = fs.readFileSync(path.join(root, 'src', 'extension.ts'), 'utf8');

test('every command is contributed, and every contributed command is implemented', () => {
  const contributed: string[] = manifest.contributes.commands.map((c: { command: string }) => c.command).sort();
  const server = [
    'flydsl-ls.compile', 'flydsl-ls.launch', 'flydsl-ls.showIsa', 'flydsl-ls.verifyFix', 'flydsl-ls.migrateKernel',
    'flydsl-ls.compareWithDisk',
  ];
  const own = [...source.matchAll(/registerCommand\('([^']+)'/g)].map((m) => m[1]);
  assert.deepEqual(contributed, [...server, ...own].sort());
  for (const command of server) assert.ok(source.includes(`'${command}'`), command);
});

test('every server setting is a contributed setting, plus path and interpreter', () => {
  const keys = Object.keys(manifest.contributes.configuration.properties).sort();
  const expected = [...SERVER_KEYS, 'path', 'interpreter'].map((k) => `flydsl-ls.${k}`).sort();
  assert.deepEqual(keys, expected);
});

test('the grammar and language configuration exist', () => {
  for (const grammar of manifest.contributes.grammars) assert.ok(fs.existsSync(path.join(root, grammar.path)), grammar.path);
  for (const language of manifest.contributes.languages) assert.ok(fs.existsSync(path.join(root, language.configuration)));
});

test('the client library is a runtime dependency, the tools are not', () => {
  assert.ok(manifest.dependencies['vscode-languageclient']);
  for (const tool of ['typescript', '@vscode/vsce', 'playwright-core', 'esbuild']) assert.ok(!manifest.dependencies[tool], tool);
});

test('the extension runs from its esbuild bundle, which the package script builds', () => {
  assert.equal(manifest.main, './dist/extension.js');
  assert.match(manifest.scripts.bundle, /^esbuild src\/extension\.ts --bundle --outfile=dist\/extension\.js --external:vscode /);
  assert.match(manifest.scripts['vscode:prepublish'], /npm run bundle/);
  assert.match(manifest.scripts.package, /--no-dependencies/); // bundled: no node_modules in the .vsix
  assert.ok(manifest.devDependencies.esbuild);
});

test('palette titles: distinct, and the two ISA commands say what they do (compile, or not)', () => {
  const titles: string[] = manifest.contributes.commands.map((c: { title: string }) => c.title);
  assert.equal(new Set(titles).size, titles.length);
  const title = (id: string) => manifest.contributes.commands.find((c: { command: string }) => c.command === id).title;
  assert.match(title('flydsl-ls.showIsa'), /^Compile .* Show ISA$/);
  assert.match(title('flydsl-ls.showIr'), /Last Compile \(no recompile\)/);
});
