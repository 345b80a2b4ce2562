import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  Probe,
  SERVER_KEYS,
  launchProblem,
  needsRestart,
  resolveCommand,
  serverCommand,
  serverSettings,
  startFailure,
  statusText,
} from '../../settings';

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
      inlayHints: false,
      path: '/not/a/server/key',
      interpreter: '/nor/this',
    }),
  );
  assert.deepEqual(settings, { ignore: ['FLY105', 'FLY9'], targetArch: 'gfx950', logLevel: 'info', diagnosticsDelay: 300, compileTimeout: 60, inlayHints: false });
  assert.deepEqual(serverSettings(getter({})), {});
});

test('SERVER_KEYS mirrors the server settings', () => {
  assert.deepEqual([...SERVER_KEYS].sort(), ['compileMemoryLimit', 'compileTimeout', 'diagnosticsDelay', 'flydslVersion', 'ignore', 'inlayHints', 'isaHints', 'logLevel', 'select', 'targetArch']);
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

// --- before starting: does the command name an executable? ------------------------------------
const files: Record<string, ReturnType<Probe>> = {
  '/usr/bin/python3': 'executable',
  '/opt/bin/flydsl-ls': 'executable',
  '/home/me/notes.txt': 'not executable',
};
const probe: Probe = (p) => files[p] ?? 'missing';

test('a mistyped flydsl-ls.path: one sentence naming the setting and the path, no pip advice', () => {
  const cmd = serverCommand(getter({ path: '/opt/bin/flydsl-lss' }));
  assert.equal(launchProblem(cmd, '/usr/bin', probe, 'linux'), 'flydsl-ls.path is /opt/bin/flydsl-lss, which does not exist.');
  assert.equal(launchProblem(serverCommand(getter({ path: '/opt/bin/flydsl-ls' })), '/usr/bin', probe, 'linux'), undefined);
  assert.equal(
    launchProblem(serverCommand(getter({ interpreter: '/home/me/notes.txt' })), '', probe, 'linux'),
    'flydsl-ls.interpreter is /home/me/notes.txt, which is not executable.',
  );
});

test('a bare command is looked up on PATH', () => {
  assert.equal(resolveCommand('python3', '/nowhere:/usr/bin/', probe, 'linux'), '/usr/bin/python3');
  assert.equal(resolveCommand('python4', '/usr/bin', probe, 'linux'), undefined);
  assert.equal(launchProblem(serverCommand(getter({}), undefined, 'linux'), '/usr/bin', probe, 'linux'), undefined);
  assert.equal(
    launchProblem(serverCommand(getter({}), undefined, 'linux'), '/nowhere', probe, 'linux'),
    'the default interpreter is python3, which is not a command on PATH.',
  );
});

test('a start that fails: the pip hint only for an interpreter', () => {
  const path = serverCommand(getter({ path: '/opt/bin/flydsl-ls' }));
  assert.equal(
    startFailure(path, 'connection closed'),
    'flydsl-ls did not start with `/opt/bin/flydsl-ls serve` (flydsl-ls.path): connection closed. Check that /opt/bin/flydsl-ls is flydsl-ls.',
  );
  const python = serverCommand(getter({ interpreter: '/usr/bin/python3' }));
  assert.match(startFailure(python, 'exited'), /^flydsl-ls did not start with `\/usr\/bin\/python3 -m flydsl_ls serve` \(flydsl-ls\.interpreter\): exited\. Is flydsl-ls installed in that interpreter\? \(from a checkout: pip install -e/);
});
