// The FlyDSL extension: starts flydsl-ls, forwards settings, presents what its commands return.
//
// Diagnostics, quick fixes, fix-all (`source.fixAll.flydsl-ls`), hover and the CodeLens are
// the server's; vscode-languageclient wires them up. The server's commands
// (flydsl-ls.compile, .launch, .showIsa, .verifyFix, .migrateKernel, .compareWithDisk) are registered by vscode-languageclient
// when the server advertises them; our middleware fills in the arguments when they come
// from the command palette and opens the ISA/IR the server wrote beside the kernel, as
// read-only virtual documents (`flydsl-isa:`, a TextDocumentContentProvider).
import * as fs from 'node:fs';
import * as vscode from 'vscode';
import {
  DidChangeConfigurationNotification,
  LanguageClient,
  LanguageClientOptions,
  MessageType,
  RevealOutputChannelOn,
  ServerOptions,
  ShowMessageNotification,
  ShowMessageParams,
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
import { IsaLink, isaLinkOf } from './isaview';
import { SHOW_OUTPUT, innermost, nothingToOpen, notificationOf, withoutMessages } from './present';
import {
  Probe,
  ServerCommand,
  ServerState,
  launchProblem,
  needsRestart,
  RUNS_CODE,
  serverCommand,
  serverSettings,
  startFailure,
  statusText,
} from './settings';

export const SERVER_COMMANDS = [
  'flydsl-ls.compile',
  'flydsl-ls.launch',
  'flydsl-ls.showIsa',
  'flydsl-ls.verifyFix',
  'flydsl-ls.migrateKernel',
  'flydsl-ls.compareWithDisk',
];
/** The code action "Migrate this kernel" runs where the palette's command has no kernel name. */
const MIGRATE_KIND = 'refactor.rewrite.migrateKernel.flydsl-ls';
const SECTION = 'flydsl-ls';

/** What the extension exports (used by its end-to-end tests, and by anyone scripting it). */
export interface FlydslApi {
  client(): LanguageClient | undefined;
  state(): ServerState;
  serverCommand(): ServerCommand | undefined;
  lastResult(): unknown;
  openArtifact(artifact: Artifact, arch?: string, source?: vscode.Uri): Promise<vscode.TextEditor>;
  /** The ISA rows (0-based) lit for the source line under the cursor (Show ISA's link). */
  isaHighlight(): number[];
  ready(): Promise<void>;
  /** The notification shown when the server could not start, while it is up; else undefined. */
  startProblem(): string | undefined;
}

let client: LanguageClient | undefined;
let output: vscode.OutputChannel;
let status: vscode.StatusBarItem;
let state: ServerState = 'stopped';
let started: ServerCommand | undefined;
let last: unknown;
let starting: Promise<void> = Promise.resolve();
/** The source file of the server command in flight: its IR/ISA open beside it. */
let commandSource: vscode.Uri | undefined;
/** The start-failure notification while it is on screen (one at a time). */
let startProblem: string | undefined;

function config(scope?: vscode.Uri): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration(SECTION, scope);
}

function settingsNow(scope?: vscode.Uri): Record<string, unknown> {
  const section = config(scope);
  // `trust`: in Restricted Mode the server runs no workspace code and offers no compile lenses.
  return { ...serverSettings((key) => section.get(key)), trust: vscode.workspace.isTrusted };
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
/** `flydsl-isa:/<kernel> (<arch>).s?file=<dump file>`: the dump files the server wrote, as
 * virtual documents. A content provider's documents are read-only: the editor shows a lock
 * and refuses typing; nothing can be saved back into the run folder. */
class ArtifactContentProvider implements vscode.TextDocumentContentProvider {
  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const file = fileOfQuery(uri.query);
    if (!file) throw new Error(`not a flydsl-isa document: ${uri.toString()}`);
    return new TextDecoder().decode(await vscode.workspace.fs.readFile(vscode.Uri.file(file)));
  }
}

/** The column right of the editor showing `source` (the kernel), else beside the active one. */
function besideOf(source: vscode.Uri | undefined): vscode.ViewColumn {
  const kernel = source && vscode.window.visibleTextEditors.find((e) => e.document.uri.toString() === source.toString());
  const column = kernel?.viewColumn;
  return column !== undefined && column < vscode.ViewColumn.Nine ? ((column + 1) as vscode.ViewColumn) : vscode.ViewColumn.Beside;
}

async function openArtifact(artifact: Artifact, arch?: string, source?: vscode.Uri): Promise<vscode.TextEditor> {
  const { path, query } = artifactUriParts(artifact, arch);
  let doc = await vscode.workspace.openTextDocument(vscode.Uri.from({ scheme: SCHEME, path, query }));
  try {
    doc = await vscode.languages.setTextDocumentLanguage(doc, languageOf(artifact.kind));
  } catch {
    // no MLIR / LLVM IR language installed: plain text
  }
  return vscode.window.showTextDocument(doc, { viewColumn: besideOf(source), preview: false });
}

function sourceOf(result: unknown): vscode.Uri | undefined {
  const uri = record(result)?.uri;
  return typeof uri === 'string' ? vscode.Uri.parse(uri) : undefined;
}

async function openArtifacts(result: unknown, kind: ArtifactKind): Promise<void> {
  const artifacts = artifactsOf(result, kind);
  const arch = (result as { arch?: string }).arch;
  for (const artifact of artifacts) await openArtifact(artifact, arch, sourceOf(result));
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
  const cursor = editor && editor.document.uri.toString() === uri.toString() ? editor.selection.active : undefined;
  const ours = vscode.languages.getDiagnostics(uri).filter((d) => d.source === 'flydsl-ls');
  const found = innermost(ours, cursor, (d) => d.range);
  if (!found || !client) {
    void vscode.window.showErrorMessage('FlyDSL: put the cursor on a flydsl-ls finding with a fix to verify it.');
    return undefined;
  }
  return [uri.toString(), client.code2ProtocolConverter.asDiagnostic(found)];
}

/** The commands whose result is a compile's, kept as the last one ("Open IR/ISA of the Last
 * Compile", the status bar's arch); not verifyFix's pair, nor addExample's or a fix's answer. */
const COMPILES = new Set(['flydsl-ls.compile', 'flydsl-ls.showIsa', 'flydsl-ls.launch']);

async function runServerCommand(
  command: string,
  args: unknown[],
  next: (command: string, args: unknown[]) => vscode.ProviderResult<unknown>,
): Promise<unknown> {
  if (command === 'flydsl-ls.migrateKernel' && args.length === 0) return migrateAtCursor();
  if (RUNS_CODE.has(command) && !vscode.workspace.isTrusted) {
    void vscode.window.showWarningMessage(`FlyDSL: ${command} runs the workspace's code: trust the workspace first.`);
    return undefined;
  }
  const given = commandArguments(command, args);
  if (!given) return undefined;
  let result: unknown;
  commandSource = vscode.Uri.parse(typeof given[0] === 'string' ? given[0] : String(record(given[0])?.uri));
  try {
    result = await next(command, given);
  } catch (error) {
    void vscode.window.showErrorMessage(`FlyDSL: ${command} failed: ${error instanceof Error ? error.message : error}`);
    throw error;
  } finally {
    commandSource = undefined;
  }
  const top = record(result);
  if (!top) return result;
  if (COMPILES.has(command)) last = result;
  updateStatus();
  const ok = summary(result).ok;
  if (ok && (command === 'flydsl-ls.compile' || command === 'flydsl-ls.showIsa') && !top.shown) {
    await openArtifacts(result, 'isa');
  }
  if (ok && command === 'flydsl-ls.showIsa') linkIsa(result);
  return result;
}

/** Migrate This Kernel from the palette: the server's code action at the cursor names the
 * kernel there; its command runs this one again with [uri, version, name] and answers with
 * the server's result. Asked for directly rather than through editor.action.codeAction, which
 * does nothing, silently, when the editor has lost focus. */
async function migrateAtCursor(): Promise<unknown> {
  const editor = vscode.window.activeTextEditor;
  if (!editor) {
    void vscode.window.showErrorMessage('FlyDSL: open a kernel file and put the cursor in a kernel to migrate it.');
    return undefined;
  }
  const actions =
    (await vscode.commands.executeCommand<vscode.CodeAction[]>(
      'vscode.executeCodeActionProvider',
      editor.document.uri,
      editor.selection,
      MIGRATE_KIND,
    )) ?? [];
  const action = actions.find((a) => a.command?.command === 'flydsl-ls.migrateKernel' && a.command.arguments?.length);
  if (!action?.command) {
    void vscode.window.showInformationMessage('FlyDSL: no kernel with a fix to migrate at the cursor.');
    return undefined;
  }
  return vscode.commands.executeCommand(action.command.command, ...(action.command.arguments ?? []));
}

// --- the ISA linked to its source (Show ISA, compiled with line info) ---------------------------
/** ISA file -> its link to the kernel's source (isaview.ts), and the source file it is of. */
const links = new Map<string, { link: IsaLink; source: vscode.Uri }>();
let lit: number[] = [];
let isaLines: vscode.TextEditorDecorationType | undefined;

function realPath(file: string): string {
  try {
    return fs.realpathSync(file);
  } catch {
    return file;
  }
}

function linkIsa(result: unknown): void {
  const source = sourceOf(result);
  if (!source) return;
  const real = realPath(source.fsPath);
  const link = isaLinkOf(result, (file) => file === source.fsPath || realPath(file) === real);
  if (link) links.set(link.isaPath, { link, source });
}

function isaEditorsOf(isaPath: string): vscode.TextEditor[] {
  return vscode.window.visibleTextEditors.filter(
    (e) => e.document.uri.scheme === SCHEME && fileOfQuery(e.document.uri.query) === isaPath,
  );
}

/** The cursor moved: in a kernel's source, light its line's instructions in the ISA beside it;
 * clicked in the ISA, go to the instruction's source line. */
function followSelection(event: vscode.TextEditorSelectionChangeEvent): void {
  const doc = event.textEditor.document;
  if (doc.uri.scheme === SCHEME) {
    if (event.kind === vscode.TextEditorSelectionChangeKind.Mouse && event.selections[0]?.isEmpty) void goToSourceLine();
    return;
  }
  for (const [isaPath, { link, source }] of links) {
    if (source.toString() !== doc.uri.toString()) continue;
    const rows = link.rowsOf.get(event.selections[0].active.line + 1) ?? [];
    lit = rows;
    isaLines ??= vscode.window.createTextEditorDecorationType({
      isWholeLine: true,
      backgroundColor: new vscode.ThemeColor('editor.rangeHighlightBackground'),
    });
    for (const editor of isaEditorsOf(isaPath)) {
      editor.setDecorations(isaLines, rows.map((row) => new vscode.Range(row, 0, row, 0)));
      if (rows.length > 0) editor.revealRange(new vscode.Range(rows[0], 0, rows[0], 0), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
    }
  }
}

/** "Go to Source Line": from the instruction under the cursor in a linked ISA document. */
async function goToSourceLine(): Promise<{ file?: string; line?: number }> {
  const editor = vscode.window.activeTextEditor;
  const isaPath = editor && editor.document.uri.scheme === SCHEME ? fileOfQuery(editor.document.uri.query) : undefined;
  const entry = isaPath ? links.get(isaPath) : undefined;
  const at = entry?.link.lineOf.get(editor!.selection.active.line);
  if (!entry || !at) return {};
  const [file, line] = at;
  const uri = realPath(file) === realPath(entry.source.fsPath) ? entry.source : vscode.Uri.file(file);
  const shown = vscode.window.visibleTextEditors.find((e) => e.document.uri.toString() === uri.toString());
  const where = new vscode.Range(line - 1, 0, line - 1, 0);
  await vscode.window.showTextDocument(uri, { viewColumn: shown?.viewColumn ?? vscode.ViewColumn.One, selection: where });
  return { file, line };
}

/** VS Code shows the findings' messages in the hover already: the server's part leaves them out. */
function hoverWithoutMessages(
  document: vscode.TextDocument,
  position: vscode.Position,
  hover: vscode.Hover | null | undefined,
): vscode.Hover | null | undefined {
  if (!hover) return hover;
  const messages = vscode.languages
    .getDiagnostics(document.uri)
    .filter((d) => d.source === 'flydsl-ls' && d.range.contains(position))
    .map((d) => d.message);
  if (messages.length === 0) return hover;
  const contents = hover.contents.map((c) => {
    if (!(c instanceof vscode.MarkdownString)) return c;
    const stripped = new vscode.MarkdownString(withoutMessages(c.value, messages));
    stripped.isTrusted = c.isTrusted;
    stripped.supportHtml = c.supportHtml;
    return stripped;
  });
  return new vscode.Hover(contents, hover.range);
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
    await openArtifact({ kernel: kernelOfPath(uri.fsPath), kind, path: uri.fsPath }, lastArch(), commandSource);
    return { success: true };
  } catch (error) {
    output.appendLine(`showDocument ${params.uri}: ${error}`);
    return { success: false };
  }
}

/** A server message as a notification: its first line, and the rest in the output. */
function showServerMessage(params: ShowMessageParams): void {
  const { text, more } = notificationOf(params.message);
  const show =
    params.type === MessageType.Error
      ? vscode.window.showErrorMessage
      : params.type === MessageType.Warning
        ? vscode.window.showWarningMessage
        : vscode.window.showInformationMessage;
  void show(text, ...(more ? [SHOW_OUTPUT] : [])).then((choice) => {
    if (choice === SHOW_OUTPUT) output.show(true);
  });
}

/** Open one IR or ISA file of the last compile (nothing is compiled). Returns what it did,
 * for scripts and tests: the document opened, or the message shown instead. */
async function showIr(): Promise<{ opened?: string; message?: string }> {
  if (!last) {
    const message = 'FlyDSL: nothing compiled yet in this window: run "FlyDSL: Compile Kernel Example" first.';
    void vscode.window.showInformationMessage(message);
    return { message };
  }
  const kinds: [ArtifactKind, string][] = [
    ['isa', 'ISA (final_isa.s)'],
    ['llvm', 'LLVM IR (llvm_ir.ll)'],
    ['mlir', 'MLIR, final stage'],
    ['mlir-first', 'MLIR as the DSL emitted it'],
  ];
  const items = kinds.flatMap(([kind, label]) =>
    artifactsOf(last, kind).map((a) => ({ label: `${a.kernel}: ${label}`, description: a.path, artifact: a })),
  );
  if (items.length === 0) {
    const message = nothingToOpen(last);
    void vscode.window.showWarningMessage(message, SHOW_OUTPUT).then((choice) => {
      if (choice === SHOW_OUTPUT) output.show(true);
    });
    return { message };
  }
  const picked = await vscode.window.showQuickPick(items, { title: 'FlyDSL: IR and ISA of the last compile' });
  if (!picked) return {};
  const editor = await openArtifact(picked.artifact, lastArch(), sourceOf(last));
  return { opened: editor.document.uri.toString() };
}

// --- the client ------------------------------------------------------------------------------
/** vscode-languageclient's own notifications while starting ("couldn't create connection to
 * server", "connection got closed") go to the output only: the extension shows one of its
 * own, which names the setting to fix. A server that exits with 0 when stopped (every
 * restart) is not an error. */
class FlydslClient extends LanguageClient {
  quiet = true;

  error(message: string, data?: unknown, showNotification: boolean | 'force' = true): void {
    if (message === 'Server process exited with code 0.') return super.info(message, data, false);
    super.error(message, data, this.quiet ? false : showNotification);
  }
}

const isExecutable: Probe = (path) => {
  try {
    if (!fs.statSync(path).isFile()) return 'not executable';
    fs.accessSync(path, fs.constants.X_OK);
    return 'executable';
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR' ? 'missing' : 'not executable';
  }
};

/** The start failure, as one notification (a new failure replaces the one on screen). */
function showStartProblem(text: string, setting: string): void {
  hideStartProblem();
  const shown = (startProblem = `FlyDSL: ${text}`);
  output.appendLine(shown);
  void vscode.window.showErrorMessage(shown, 'Open Settings', SHOW_OUTPUT).then((choice) => {
    if (startProblem === shown) startProblem = undefined;
    if (choice === 'Open Settings') void vscode.commands.executeCommand('workbench.action.openSettings', setting);
    if (choice === SHOW_OUTPUT) output.show(true);
  });
}

/** Once the server starts (the setting was fixed), its failure notification goes. The API
 * cannot close one notification: the toasts on screen are hidden (the notification centre
 * keeps them). */
function hideStartProblem(): void {
  if (startProblem === undefined) return;
  startProblem = undefined;
  void vscode.commands.executeCommand('notifications.hideToasts');
}

async function startClient(): Promise<void> {
  const folder = vscode.workspace.workspaceFolders?.[0];
  const scope = vscode.window.activeTextEditor?.document.uri ?? folder?.uri;
  const section = config(scope);
  const explicit = (section.get<string>('path') || section.get<string>('interpreter') || '').trim() !== '';
  const python = explicit ? undefined : await pythonFromExtension(scope);
  started = serverCommand((key) => section.get(key), python);
  const launch = started;
  const setting = launch.source === 'flydsl-ls.path' ? 'flydsl-ls.path' : launch.source === 'flydsl-ls.interpreter' ? 'flydsl-ls.interpreter' : SECTION;
  output.appendLine(`Starting flydsl-ls: ${launch.command} ${launch.args.join(' ')} (from ${launch.source})`);
  const problem = launchProblem(launch, process.env.PATH ?? '', isExecutable);
  if (problem) {
    setState('failed');
    showStartProblem(problem, setting);
    return;
  }
  const serverOptions: ServerOptions = {
    command: launch.command,
    args: launch.args,
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
      provideHover: async (document, position, token, next) => hoverWithoutMessages(document, position, await next(document, position, token)),
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
  const next = new FlydslClient('flydsl-ls', 'FlyDSL', serverOptions, clientOptions);
  client = next;
  // The server's notifications: first line shown, the rest in the output (it logs them).
  next.onNotification(ShowMessageNotification.type, showServerMessage);
  next.onDidChangeState((event) => {
    if (client !== next) return;
    setState(event.newState === State.Running ? 'running' : event.newState === State.Starting ? 'starting' : 'stopped');
  });
  setState('starting');
  try {
    await next.start();
    next.quiet = false;
    setState('running');
    hideStartProblem();
  } catch (error) {
    setState('failed');
    const reason = (error instanceof Error ? error.message : String(error)).replace(/\.$/, '');
    showStartProblem(startFailure(launch, reason), setting);
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
    vscode.workspace.registerTextDocumentContentProvider(SCHEME, new ArtifactContentProvider()),
    vscode.commands.registerCommand('flydsl-ls.restartServer', () => restart()),
    vscode.commands.registerCommand('flydsl-ls.showOutput', () => output.show(true)),
    vscode.commands.registerCommand('flydsl-ls.showIr', () => showIr()),
    vscode.commands.registerCommand('flydsl-ls.goToSourceLine', () => goToSourceLine()),
    vscode.window.onDidChangeTextEditorSelection(followSelection),
    vscode.window.onDidChangeActiveTextEditor(() => updateStatus()),
    vscode.workspace.onDidGrantWorkspaceTrust(() => {
      if (client?.isRunning()) {
        void client.sendNotification(DidChangeConfigurationNotification.type, { settings: { [SECTION]: settingsNow() } });
      }
    }),
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
    isaHighlight: () => lit,
    ready: () => starting,
    startProblem: () => startProblem,
  };
}

export async function deactivate(): Promise<void> {
  await stopClient();
}
