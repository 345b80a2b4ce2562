// Pure helpers (no `vscode` import): settings -> server command line and options.
// Unit-tested in src/test/unit without VS Code.

/** The server settings this extension mirrors (keys as the server reads them). */
export const SERVER_KEYS = [
  'select',
  'ignore',
  'targetArch',
  'flydslVersion',
  'logLevel',
  'diagnosticsDelay',
  'compileTimeout',
  'compileMemoryLimit',
  'inlayHints',
  'isaHints',
] as const;

/** Commands that import and run the workspace's code: none in Restricted Mode. */
export const RUNS_CODE = new Set([
  'flydsl-ls.compile',
  'flydsl-ls.launch',
  'flydsl-ls.showIsa',
  'flydsl-ls.verifyFix',
  'flydsl-ls.migrateKernel',
  'flydsl-ls.compareWithDisk',
]);

export type ServerKey = (typeof SERVER_KEYS)[number];

/** What `workspace.getConfiguration('flydsl-ls')` offers, reduced to a getter. */
export type Getter = (key: string) => unknown;

export interface ServerCommand {
  command: string;
  args: string[];
  /** Where the choice came from, for the log and the status bar tooltip. */
  source: 'flydsl-ls.path' | 'flydsl-ls.interpreter' | 'python extension' | 'PATH';
}

function nonEmpty(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/**
 * How to start the server. An explicit setting wins (as in ruff's and pylint's extensions):
 * `flydsl-ls.path` (an executable, run as `<path> serve`), then `flydsl-ls.interpreter`
 * (`<python> -m flydsl_ls serve`), then the Python extension's interpreter, then `python3`.
 */
export function serverCommand(get: Getter, pythonExtension?: string, platform = process.platform): ServerCommand {
  const logLevel = nonEmpty(get('logLevel'));
  const extra = logLevel ? ['--log-level', logLevel] : [];
  const path = nonEmpty(get('path'));
  if (path) {
    return { command: path, args: ['serve', ...extra], source: 'flydsl-ls.path' };
  }
  const interpreter = nonEmpty(get('interpreter'));
  if (interpreter) {
    return { command: interpreter, args: ['-m', 'flydsl_ls', 'serve', ...extra], source: 'flydsl-ls.interpreter' };
  }
  if (pythonExtension) {
    return { command: pythonExtension, args: ['-m', 'flydsl_ls', 'serve', ...extra], source: 'python extension' };
  }
  const python = platform === 'win32' ? 'python' : 'python3';
  return { command: python, args: ['-m', 'flydsl_ls', 'serve', ...extra], source: 'PATH' };
}

/**
 * The `flydsl-ls` section as the server expects it in initializationOptions and
 * workspace/didChangeConfiguration: only the keys that are set (empty strings and
 * null lists mean "not set here", so pyproject.toml still applies).
 */
export function serverSettings(get: Getter): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of SERVER_KEYS) {
    const value = get(key);
    if (value === undefined || value === null) continue;
    if (typeof value === 'string' && value.trim() === '') continue;
    if (Array.isArray(value)) {
      out[key] = value.filter((v) => typeof v === 'string' && v.trim() !== '').map((v: string) => v.trim());
      continue;
    }
    out[key] = value;
  }
  return out;
}

/** Settings keys whose change needs a new server process rather than a notification. */
export function needsRestart(changed: (section: string) => boolean): boolean {
  return ['flydsl-ls.path', 'flydsl-ls.interpreter', 'flydsl-ls.logLevel'].some(changed);
}

export type ServerState = 'starting' | 'running' | 'stopped' | 'failed';

/** Status bar text and tooltip for a server state and target arch. */
export function statusText(state: ServerState, arch: string | undefined): { text: string; tooltip: string } {
  const icon = { starting: '$(sync~spin)', running: '$(check)', stopped: '$(circle-slash)', failed: '$(error)' }[state];
  const archText = arch && arch.trim() ? arch.trim() : 'arch: auto';
  return {
    text: `${icon} FlyDSL ${archText}`,
    tooltip: `flydsl-ls: ${state}. Target arch: ${arch && arch.trim() ? arch.trim() : 'from pyproject.toml or the example (default gfx942)'}. Click for the output.`,
  };
}

/** What the file system says about a path (injected: unit tests have no such files). */
export type Probe = (path: string) => 'executable' | 'not executable' | 'missing';

/** `command` as a file: itself when it names one (has a separator), else the first match on PATH. */
export function resolveCommand(command: string, pathVariable: string, probe: Probe, platform = process.platform): string | undefined {
  const separator = platform === 'win32' ? /[\\/]/ : /\//;
  if (separator.test(command)) return command;
  const extensions = platform === 'win32' ? ['', '.exe', '.cmd', '.bat'] : [''];
  for (const dir of pathVariable.split(platform === 'win32' ? ';' : ':').filter(Boolean)) {
    for (const extension of extensions) {
      const candidate = `${dir.replace(/[\\/]$/, '')}/${command}${extension}`;
      if (probe(candidate) === 'executable') return candidate;
    }
  }
  return undefined;
}

/**
 * Why the server cannot be started with `command`, before trying: a `flydsl-ls.path` or
 * `flydsl-ls.interpreter` that names no executable file. One sentence naming the setting and
 * the value as written; undefined when it can be tried (then `startFailure` explains a failure).
 */
export function launchProblem(command: ServerCommand, pathVariable: string, probe: Probe, platform = process.platform): string | undefined {
  const resolved = resolveCommand(command.command, pathVariable, probe, platform);
  const state = resolved === undefined ? 'not on PATH' : probe(resolved);
  if (state === 'executable') return undefined;
  const what = { 'not on PATH': 'is not a command on PATH', missing: 'does not exist', 'not executable': 'is not executable' }[state];
  const who =
    command.source === 'flydsl-ls.path' || command.source === 'flydsl-ls.interpreter'
      ? `${command.source} is`
      : command.source === 'PATH'
        ? 'the default interpreter is'
        : "the Python extension's interpreter is";
  return `${who} ${command.command}, which ${what}.`;
}

/** Why the server did not start although `command` exists; the install hint only where it helps. */
export function startFailure(command: ServerCommand, error: string): string {
  const line = `flydsl-ls did not start with \`${[command.command, ...command.args].join(' ')}\` (${command.source}): ${error}`;
  if (command.source === 'flydsl-ls.path') return `${line}. Check that ${command.command} is flydsl-ls.`;
  return `${line}. Is flydsl-ls installed in that interpreter? (from a checkout: pip install -e <checkout>)`;
}
