import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SERVER_KEYS, needsRestart, serverCommand, serverSettings, statusText } from '../../settings';

const getter = (values: Record<string, unknown>) => (key: string) => values[key];

test('flydsl-ls.path wins: the executable runs `serve`', () => {
  const cmd = serverCommand(getter({ path: '/opt/bin/flydsl-ls', interpreter: '/usr/bin/python3' }), '/venv/bin/python');
  assert.deepEqual(cmd, { command: '/opt/bin/flydsl-ls', args: ['serve'], source: 'flydsl-ls.path' });
});

test('flydsl-ls.interpreter comes next: `python -m flydsl_ls serve`', () => {
  const cmd = serverCommand(getter({ interpreter: ' /venv/bin/python ' }), '/other/python');
  assert.deepEqual(cmd, { command: '/venv/bin/python', args: ['-m', 'flydsl_ls', 'serve'], source: 'flydsl-ls.interpreter' });
});

test("then the Python extension's interpreter, then python3 on PATH", () => {
  assert.equal(serverCommand(getter({ path: '', interpreter: '' }), '/venv/bin/python').command, '/venv/bin/python');
  assert.equal(serverCommand(getter({}), '/venv/bin/python').source, 'python extension');
  assert.deepEqual(serverCommand(getter({}), undefined, 'linux'), {
    command: 'python3',
    args: ['-m', 'flydsl_ls', 'serve'],
    source: 'PATH',
  });
  assert.equal(serverCommand(getter({}), undefined, 'win32').command, 'python');
});

test('logLevel is passed on the command line too (server start-up messages)', () => {
  assert.deepEqual(serverCommand(getter({ path: 'fl', logLevel: 'debug' })).args, ['serve', '--log-level', 'debug']);
});

test('serverSettings keeps only what is set, in the keys the server reads', () => {
  const settings = serverSettings(
    getter({
      select: null,
      ignore: ['FLY105', ' ', 'FLY9 '],
      targetArch: 'gfx950',
      flydslVersion: '',
      logLevel: 'info',
      diagnosticsDelay: 300,
      compileTimeout: 60,
      path: '/not/a/server/key',
      interpreter: '/nor/this',
    }),
  );
  assert.deepEqual(settings, { ignore: ['FLY105', 'FLY9'], targetArch: 'gfx950', logLevel: 'info', diagnosticsDelay: 300, compileTimeout: 60 });
  assert.deepEqual(serverSettings(getter({})), {});
});

test('SERVER_KEYS mirrors the server settings', () => {
  assert.deepEqual([...SERVER_KEYS].sort(), ['compileTimeout', 'diagnosticsDelay', 'flydslVersion', 'ignore', 'logLevel', 'select', 'targetArch']);
});

test('a new interpreter or log level restarts the server; rule settings do not', () => {
  assert.equal(needsRestart((s) => s === 'flydsl-ls.interpreter'), true);
  assert.equal(needsRestart((s) => s === 'flydsl-ls.path'), true);
  assert.equal(needsRestart((s) => s === 'flydsl-ls.select'), false);
});

test('status bar text names the state and the arch', () => {
  assert.equal(statusText('running', 'gfx942').text, '$(check) FlyDSL gfx942');
  assert.equal(statusText('starting', '').text, '$(sync~spin) FlyDSL arch: auto');
  assert.match(statusText('failed', undefined).tooltip, /failed/);
});
