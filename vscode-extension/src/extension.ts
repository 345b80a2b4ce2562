// The FlyDSL extension: starts flydsl-ls, forwards settings, presents what its commands return.
//
// Diagnostics, quick fixes, fix-all (`source.fixAll.flydsl-ls`), hover and the CodeLens are
// the server's; vscode-languageclient wires them up. The server's commands
// (flydsl-ls.compile, .launch, .showIsa, .verifyFix) are registered by vscode-languageclient
// when the server advertises them; our middleware fills in the arguments when they come
// from the command palette and opens the ISA/IR the server wrote as read-only
// documents of a read-only `flydsl-isa:` file system.
import * as vscode from 'vscode';
import {
  DidChangeConfigurationNotification,
  LanguageClient,
  LanguageClientOptions,
  RevealOutputChannelOn,
  ServerOptions,
  State,
} from 'vscode-languageclient/node';
import {
  Artifact,
  ArtifactKind,
  SCHEME,
  artifactUriParts,
  artifactsOf,
  fileOfQuery,
  kernelOfPath,
  kindOfPath,
  languageOf,
  summary,
} from './artifacts';
import { ServerCommand, ServerState, needsRestart, serverCommand, serverSettings, statusText } from './settings';

export const SERVER_COMMANDS = ['flydsl-ls.compile', 'flydsl-ls.launch', 'flydsl-ls.showIsa', 'flydsl-ls.verifyFix'];
const SECTION = 'flydsl-ls';

/** What the extension exports (used by its end-to-end tests, and by anyone scripting it). */
export interface FlydslApi {
  client(): LanguageClient | undefined;
  state(): ServerState;
  serverCommand(): ServerCommand | undefined;
  lastResult(): unknown;
  openArtifact(artifact: Artifact, arch?: string): Promise<vscode.TextEditor>;
  ready(): Promise<void>;
}

let client: LanguageClient | undefined;
let output: vscode.OutputChannel;
let status: vscode.StatusBarItem;
let state: ServerState = 'stopped';
let started: ServerCommand | undefined;
let last: unknown;
let starting: Promise<void> = Promise.resolve();

function config(scope?: vscode.Uri): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration(SECTION, scope);
}

function settingsNow(scope?: vscode.Uri): Record<string, unknown> {
  const section = config(scope);
  return serverSettings((key) => section.get(key));
}

function setState(next: ServerState): void {
  state = next;
  updateStatus();
}

function lastArch(): string | undefined {
  const result = last as { arch?: unknown } | undefined;
  return result && typeof result.arch === 'string' ? result.arch : undefined;
}

function updateStatus(): void {
  const scope = vscode.window.activeTextEditor?.document.uri;
  const arch = (config(scope).get<string>('targetArch') || '').trim() || lastArch();
  const { text, tooltip } = statusText(state, arch);
  status.text = text;
  status.tooltip = started ? `${tooltip}\nServer: ${started.command} ${started.args.join(' ')} (${started.source})` : tooltip;
  status.backgroundColor = state === 'failed' ? new vscode.ThemeColor('statusBarItem.errorBackground') : undefined;
  status.show();
}

/** The interpreter selected in the Python extension (ms-python.python), if it is installed. */
async function pythonFromExtension(resource?: vscode.Uri): Promise<string | undefined> {
  const extension = vscode.extensions.getExtension('ms-python.python');
  if (!extension) return undefined;
  try {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const api: any = extension.isActive ? extension.exports : await extension.activate();
    const environments = api?.environments;
    if (environments?.getActiveEnvironmentPath) {
      const active = environments.getActiveEnvironmentPath(resource);
      const resolved = await environments.resolveEnvironment(active);
      const executable: string | undefined = resolved?.executable?.uri?.fsPath;
      if (executable) return executable;
    }
    const command = api?.settings?.getExecutionDetails?.(resource)?.execCommand;
    if (Array.isArray(command) && command.length === 1 && typeof command[0] === 'string') return command[0];
  } catch (error) {
    output.appendLine(`Python extension: no interpreter (${error})`);
  }
  return undefined;
}

// --- the ISA/IR documents --------------------------------------------------------------------
/** `flydsl-isa:/<kernel> (<arch>).s?file=<dump file>`: the dump files the server wrote, as a
 * read-only file system (the editor shows a lock and refuses edits, from the UI and the API). */
class ArtifactFileSystem implements vscode.FileSystemProvider {
  private readonly changed = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.changed.event;

  private file(uri: vscode.Uri): vscode.Uri {
    const file = fileOfQuery(uri.query);
    if (!file) throw vscode.FileSystemError.FileNotFound(uri);
    return vscode.Uri.file(file);
  }

  watch(): vscode.Disposable {
    return new vscode.Disposable(() => undefined);
  }

  async stat(uri: vscode.Uri): Promise<vscode.FileStat> {
    const stat = await vscode.workspace.fs.stat(this.file(uri));
    return { ...stat, permissions: vscode.FilePermission.Readonly };
  }

  readDirectory(): [string, vscode.FileType][] {
    return [];
  }

  readFile(uri: vscode.Uri): Thenable<Uint8Array> {
    return vscode.workspace.fs.readFile(this.file(uri));
  }

  createDirectory(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }

  writeFile(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }

  delete(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }

  rename(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }
}

async function openArtifact(artifact: Artifact, arch?: string): Promise<vscode.TextEditor> {
  const { path, query } = artifactUriParts(artifact, arch);
  let doc = await vscode.workspace.openTextDocument(vscode.Uri.from({ scheme: SCHEME, path, query }));
  try {
    doc = await vscode.languages.setTextDocumentLanguage(doc, languageOf(artifact.kind));
  } catch {
    // no MLIR / LLVM IR language installed: plain text
  }
  return vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, preview: false });
}

async function openArtifacts(result: unknown, kind: ArtifactKind): Promise<void> {
  const artifacts = artifactsOf(result, kind);
  const arch = (result as { arch?: string }).arch;
  for (const artifact of artifacts) await openArtifact(artifact, arch);
}

// --- the server's commands -------------------------------------------------------------------
function record(value: unknown): Record<string, unknown> | undefined {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/** Arguments for a server command: as given (CodeLens: [uri, example, arch]), or, from the
 * palette or a menu, the active Python file (and, for verifyFix, the finding at the cursor). */
function commandArguments(command: string, args: unknown[]): unknown[] | undefined {
  if (args.length > 0 && typeof args[0] === 'string') return args;
  if (args.length > 0 && record(args[0]) && typeof record(args[0])!.uri === 'string') return args;
  const editor = vscode.window.activeTextEditor;
  const uri = args[0] instanceof vscode.Uri ? args[0] : editor?.document.uri;
  if (!uri || (editor && editor.document.uri.toString() === uri.toString() && editor.document.languageId !== 'python')) {
    void vscode.window.showErrorMessage('FlyDSL: open a Python file with a `# flydsl: example` function first.');
    return undefined;
  }
  if (command !== 'flydsl-ls.verifyFix') return [uri.toString()];
  const cursor = editor?.selection.active;
  const found = vscode.languages
    .getDiagnostics(uri)
    .filter((d) => d.source === 'flydsl-ls' && (!cursor || d.range.contains(cursor)));
  if (found.length === 0 || !client) {
    void vscode.window.showErrorMessage('FlyDSL: put the cursor on a flydsl-ls finding with a fix to verify it.');
    return undefined;
  }
  return [uri.toString(), client.code2ProtocolConverter.asDiagnostic(found[0])];
}

async function runServerCommand(
  command: string,
  args: unknown[],
  next: (command: string, args: unknown[]) => vscode.ProviderResult<unknown>,
): Promise<unknown> {
  const given = commandArguments(command, args);
  if (!given) return undefined;
  let result: unknown;
  try {
    result = await next(command, given);
  } catch (error) {
    void vscode.window.showErrorMessage(`FlyDSL: ${command} failed: ${error instanceof Error ? error.message : error}`);
    throw error;
  }
  const top = record(result);
  if (!top) return result;
  if (command !== 'flydsl-ls.verifyFix') last = result;
  updateStatus();
  const ok = summary(result).ok;
  if (ok && (command === 'flydsl-ls.compile' || command === 'flydsl-ls.showIsa') && !top.shown) {
    await openArtifacts(result, 'isa');
  }
  return result;
}

/** The server asks to show a dump it wrote (showIsa, verifyFix's diff): IR and ISA open as
 * read-only, highlighted documents; anything else as usual. */
async function showDocument(
  params: { uri: string; takeFocus?: boolean; external?: boolean },
  next: (params: never) => unknown,
): Promise<{ success: boolean }> {
  const uri = vscode.Uri.parse(params.uri);
  const kind = uri.scheme === 'file' && !params.external ? kindOfPath(uri.fsPath) : undefined;
  if (!kind) return (await next(params as never)) as { success: boolean };
  try {
    await openArtifact({ kernel: kernelOfPath(uri.fsPath), kind, path: uri.fsPath }, lastArch());
    return { success: true };
  } catch (error) {
    output.appendLine(`showDocument ${params.uri}: ${error}`);
    return { success: false };
  }
}

async function showIr(): Promise<void> {
  if (!last) {
    void vscode.window.showInformationMessage('FlyDSL: compile an example first (FlyDSL: Compile Kernel Example).');
    return;
  }
  const kinds: [ArtifactKind, string][] = [
    ['isa', 'ISA (22_final_isa.s)'],
    ['llvm', 'LLVM IR (21_llvm_ir.ll)'],
    ['mlir', 'MLIR, final stage'],
    ['mlir-first', 'MLIR as the DSL emitted it'],
  ];
  const items = kinds.flatMap(([kind, label]) =>
    artifactsOf(last, kind).map((a) => ({ label: `${a.kernel}: ${label}`, description: a.path, artifact: a })),
  );
  const picked = await vscode.window.showQuickPick(items, { title: 'FlyDSL: IR and ISA of the last compile' });
  if (picked) await openArtifact(picked.artifact, lastArch());
}

// --- the client ------------------------------------------------------------------------------
async function startClient(): Promise<void> {
  const folder = vscode.workspace.workspaceFolders?.[0];
  const scope = vscode.window.activeTextEditor?.document.uri ?? folder?.uri;
  const section = config(scope);
  const explicit = (section.get<string>('path') || section.get<string>('interpreter') || '').trim() !== '';
  const python = explicit ? undefined : await pythonFromExtension(scope);
  started = serverCommand((key) => section.get(key), python);
  output.appendLine(`Starting flydsl-ls: ${started.command} ${started.args.join(' ')} (from ${started.source})`);
  const serverOptions: ServerOptions = {
    command: started.command,
    args: started.args,
    options: { cwd: folder?.uri.scheme === 'file' ? folder.uri.fsPath : undefined, env: { ...process.env, PYTHONUNBUFFERED: '1' } },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: 'file', language: 'python' },
      { scheme: 'untitled', language: 'python' },
    ],
    outputChannel: output,
    revealOutputChannelOn: RevealOutputChannelOn.Never,
    initializationOptions: { [SECTION]: settingsNow(scope) },
    middleware: {
      executeCommand: (command, args, next) => runServerCommand(command, args, next),
      workspace: {
        // The server asks for the `flydsl-ls` section: answer with the keys it knows.
        configuration: async (params, token, next) => {
          const answers = await next(params, token);
          if (!Array.isArray(answers)) return answers;
          return params.items.map((item, i) =>
            item.section === SECTION ? settingsNow(item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined) : answers[i],
          );
        },
      },
      window: {
        showDocument: (params, next) => showDocument(params, next as never),
      },
    },
  };
  const next = new LanguageClient('flydsl-ls', 'FlyDSL', serverOptions, clientOptions);
  client = next;
  next.onDidChangeState((event) => {
    if (client !== next) return;
    setState(event.newState === State.Running ? 'running' : event.newState === State.Starting ? 'starting' : 'stopped');
  });
  setState('starting');
  try {
    await next.start();
    setState('running');
  } catch (error) {
    setState('failed');
    output.appendLine(`flydsl-ls did not start: ${error}`);
    const choice = await vscode.window.showErrorMessage(
      `FlyDSL: flydsl-ls did not start with ${started.command} (${started.source}). Install it (pip install flydsl-ls) ` +
        'in that interpreter, or set flydsl-ls.interpreter / flydsl-ls.path.',
      'Open Settings',
      'Show Output',
    );
    if (choice === 'Open Settings') void vscode.commands.executeCommand('workbench.action.openSettings', SECTION);
    if (choice === 'Show Output') output.show(true);
  }
}

async function stopClient(): Promise<void> {
  const old = client;
  client = undefined;
  if (!old) return;
  try {
    if (old.isRunning()) await old.stop(5000);
  } catch (error) {
    output.appendLine(`stopping flydsl-ls: ${error}`);
  }
  try {
    await old.dispose();
  } catch {
    // already gone
  }
  setState('stopped');
}

function restart(): Promise<void> {
  starting = starting.then(async () => {
    await stopClient();
    await startClient();
  });
  return starting;
}

export async function activate(context: vscode.ExtensionContext): Promise<FlydslApi> {
  output = vscode.window.createOutputChannel('FlyDSL');
  status = vscode.window.createStatusBarItem('flydsl-ls.status', vscode.StatusBarAlignment.Right, 100);
  status.name = 'FlyDSL';
  status.command = 'flydsl-ls.showOutput';
  context.subscriptions.push(
    output,
    status,
    vscode.workspace.registerFileSystemProvider(SCHEME, new ArtifactFileSystem(), { isReadonly: true, isCaseSensitive: true }),
    vscode.commands.registerCommand('flydsl-ls.restartServer', () => restart()),
    vscode.commands.registerCommand('flydsl-ls.showOutput', () => output.show(true)),
    vscode.commands.registerCommand('flydsl-ls.showIr', () => showIr()),
    vscode.window.onDidChangeActiveTextEditor(() => updateStatus()),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (!event.affectsConfiguration(SECTION)) return;
      updateStatus();
      if (needsRestart((key) => event.affectsConfiguration(key))) {
        void restart();
      } else if (client?.isRunning()) {
        void client.sendNotification(DidChangeConfigurationNotification.type, { settings: { [SECTION]: settingsNow() } });
      }
    }),
  );
  const python = vscode.extensions.getExtension('ms-python.python');
  if (python) {
    // A new interpreter selected in the Python extension: restart on it (unless a setting wins).
    void Promise.resolve(python.isActive ? python.exports : python.activate()).then(
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      (api: any) => {
        const event = api?.environments?.onDidChangeActiveEnvironmentPath;
        if (typeof event === 'function') {
          context.subscriptions.push(
            event(() => {
              if (started?.source === 'python extension' || started?.source === 'PATH') void restart();
            }),
          );
        }
      },
      () => undefined,
    );
  }
  updateStatus();
  starting = startClient();
  await starting;
  return {
    client: () => client,
    state: () => state,
    serverCommand: () => started,
    lastResult: () => last,
    openArtifact,
    ready: () => starting,
  };
}

export async function deactivate(): Promise<void> {
  await stopClient();
}
