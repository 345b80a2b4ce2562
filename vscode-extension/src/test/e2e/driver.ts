// End-to-end test of the extension in real VS Code, headless, with nothing downloaded:
//   - the VS Code server bundled in code-server (npm `code-server`, which needs Node 24),
//     started with --enable-smoke-test-driver (which runs extensionTestsPath; it also
//     keeps notifications from popping up: the driver reads them in the notification list);
//   - Debian's chromium, driven by playwright-core, opens its web UI with the extension
//     under development (extensionDevelopmentPath) and our scenario (extensionTestsPath,
//     out/test/e2e/suite.js) in the payload;
//   - the scenario runs in the extension host; at each checkpoint this driver looks at the
//     real UI and takes a screenshot; VS Code reports the end through `codeAutomationExit`.
//
// Usage: node out/test/e2e/driver.js   (from vscode-extension/, after `npm run build`)
// Environment (all optional):
//   FLYDSL_CODE_SERVER   code-server package folder (default: <repo>/.cache/editors/vscode/node_modules/code-server)
//   FLYDSL_CHROMIUM      chromium binary (default: /usr/bin/chromium)
//   FLYDSL_E2E_PYTHON    interpreter that has flydsl-ls (default: python3)
//   FLYDSL_E2E_SCREENSHOTS  folder for the PNGs (default: <work>/screenshots)
//   FLYDSL_E2E_WORK      work folder (default: a new temporary folder)
//   FLYDSL_E2E_EXPECT_COMPILE=1  the compile must succeed (FlyDSL + torch installed)
//   FLYDSL_E2E_EXTENSION  the extension to load: the .vsix unpacked (default: this folder, built)
//   FLYDSL_E2E_PYTHON_NO_COMPILER  an interpreter with flydsl-ls but without flydsl
//   FLYDSL_E2E_BUILDER_REPO  a folder copied into the workspace: kernels/copy_builder.py and its tests
//   FLYDSL_E2E_RESTRICTED=1  Workspace Trust on and the folder untrusted: the restricted scenario
// Exit status 0 when the scenario passed; the report is <work>/out/{suite,driver}.json.
import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';

const EXTENSION = path.resolve(__dirname, '..', '..', '..');
const REPO = path.resolve(EXTENSION, '..');
/** The extension VS Code loads: the packaged .vsix unpacked (its `extension/` folder), else this folder. */
const EXTENSION_UNDER_TEST = process.env.FLYDSL_E2E_EXTENSION || EXTENSION;
const CODE_SERVER = process.env.FLYDSL_CODE_SERVER || path.join(REPO, '.cache', 'editors', 'vscode', 'node_modules', 'code-server');
const CHROMIUM = process.env.FLYDSL_CHROMIUM || '/usr/bin/chromium';
const PYTHON = process.env.FLYDSL_E2E_PYTHON || 'python3';
const TOTAL_TIMEOUT = Number(process.env.FLYDSL_E2E_TIMEOUT || 600) * 1000;
const RESTRICTED = process.env.FLYDSL_E2E_RESTRICTED === '1';
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

const work = process.env.FLYDSL_E2E_WORK || fs.mkdtempSync(path.join(os.tmpdir(), 'flydsl-vscode-e2e-'));
const out = path.join(work, 'out');
const workspace = path.join(work, 'workspace');
const shots = process.env.FLYDSL_E2E_SCREENSHOTS || path.join(work, 'screenshots');
const report: Record<string, unknown> = { screenshots: {}, checkpoints: [], timings: {} };
const started = Date.now();

function log(message: string): void {
  const line = `[driver ${((Date.now() - started) / 1000).toFixed(1).padStart(6)} s] ${message}`;
  console.log(line);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(port));
    });
  });
}

function writeJson(file: string, value: unknown): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(value, null, 2) + '\n');
}

/** A workspace with the two example kernels and the settings a user would write. */
function prepareWorkspace(): void {
  fs.mkdirSync(path.join(workspace, '.vscode'), { recursive: true });
  fs.copyFileSync(path.join(REPO, 'examples', 'legacy_kernel.py'), path.join(workspace, 'legacy_kernel.py'));
  fs.copyFileSync(path.join(REPO, 'examples', 'legacy_kernel.py'), path.join(workspace, 'migrate_kernel.py'));
  fs.copyFileSync(path.join(REPO, 'examples', 'compile', 'vector_add.py'), path.join(workspace, 'vector_add.py'));
  fs.writeFileSync(path.join(workspace, 'pyproject.toml'), '[project]\nname = "kernels"\nversion = "0"\n');
  // No example; a FLY102 inside a FLY301 that spans four lines (Verify Fix at the cursor).
  fs.writeFileSync(
    path.join(workspace, 'nested_findings.py'),
    [
      'import flydsl.expr as fx',
      'from flydsl.expr import arith',
      'from flydsl.expr.typing import T',
      '',
      '',
      'def narrow(idx: fx.Int32, limit: fx.Int32):',
      '    return arith.index_cast(',
      '        T.i32,',
      '        arith.unwrap(idx < limit),',
      '    )',
      '',
    ].join('\n'),
  );
  // A kernel builder without an example, and the tests that call it ("Add compile example").
  if (process.env.FLYDSL_E2E_BUILDER_REPO) fs.cpSync(process.env.FLYDSL_E2E_BUILDER_REPO, workspace, { recursive: true });
  writeJson(path.join(workspace, '.vscode', 'settings.json'), {
    // In Restricted Mode a workspace may not choose the server's interpreter (a restricted
    // configuration): that one must be ignored, the user's is used.
    'flydsl-ls.interpreter': RESTRICTED ? path.join(workspace, 'evil-python') : PYTHON,
    'flydsl-ls.targetArch': 'gfx942',
    '[python]': { 'editor.codeActionsOnSave': { 'source.fixAll.flydsl-ls': 'explicit' } },
  });
  // Restricted Mode ignores the workspace's interpreter (a restricted setting); the remote
  // machine's settings (where machine-overridable ones live) name ours.
  if (RESTRICTED) writeJson(path.join(work, 'user-data', 'Machine', 'settings.json'), { 'flydsl-ls.interpreter': PYTHON });
  // User settings (code-server keeps them on the server, in --user-data-dir/User).
  writeJson(path.join(work, 'user-data', 'User', 'settings.json'), {
    ...(RESTRICTED
      ? {
          'security.workspace.trust.enabled': true,
          'security.workspace.trust.startupPrompt': 'never',
          'security.workspace.trust.banner': 'never',
        }
      : { 'security.workspace.trust.enabled': false }),
    'chat.disableAIFeatures': true,
    'workbench.startupEditor': 'none',
    'workbench.tips.enabled': false,
    'workbench.enableExperiments': false,
    'telemetry.telemetryLevel': 'off',
    'update.mode': 'none',
    'extensions.autoCheckUpdates': false,
    'extensions.autoUpdate': false,
    'git.enabled': false,
    'editor.minimap.enabled': false,
    'editor.hover.delay': 100,
    'editor.codeLens': true,
    'window.commandCenter': false,
    'workbench.secondarySideBar.defaultVisibility': 'hidden',
    'chat.commandCenter.enabled': false,
    'workbench.colorTheme': 'Default Dark Modern',
    'files.trimTrailingWhitespace': false,
    // VS Code in a browser saves after a delay by default; codeActionsOnSave "explicit" is
    // for Ctrl+S, which the scenario does itself.
    'files.autoSave': 'off',
  });
}

function startServer(port: number): ChildProcess {
  const serverMain = path.join(CODE_SERVER, 'lib', 'vscode', 'out', 'server-main.js');
  if (!fs.existsSync(serverMain)) throw new Error(`no VS Code server at ${serverMain}`);
  const args = [
    serverMain,
    '--host', '127.0.0.1',
    '--port', String(port),
    '--without-connection-token',
    '--accept-server-license-terms',
    '--enable-smoke-test-driver',
    '--telemetry-level', 'off',
    '--user-data-dir', path.join(work, 'user-data'),
    '--server-data-dir', path.join(work, 'server-data'),
    '--extensions-dir', path.join(work, 'extensions'),
  ];
  const env = {
    ...process.env,
    FLYDSL_E2E_OUT: out,
    FLYDSL_E2E_WORKSPACE: workspace,
    FLYDSL_E2E_RESTRICTED: RESTRICTED ? '1' : '',
    FLYDSL_LS_CACHE: path.join(work, 'flydsl-cache'),
    PYTHONPATH: [REPO, process.env.PYTHONPATH].filter(Boolean).join(path.delimiter),
  };
  // Its own process group (as `setsid`): at the end the whole group goes, extension host,
  // language server and compile worker included.
  const child = spawn(process.execPath, args, { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const logFile = fs.createWriteStream(path.join(out, 'server.log'));
  child.stdout!.pipe(logFile);
  child.stderr!.pipe(logFile);
  return child;
}

function killGroup(child: ChildProcess | undefined): void {
  if (!child?.pid) return;
  for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
    try {
      process.kill(-child.pid, signal);
    } catch {
      return; // gone
    }
    if (signal === 'SIGTERM') {
      const end = Date.now() + 3000;
      while (Date.now() < end) {
        try {
          process.kill(-child.pid, 0);
        } catch {
          return;
        }
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
      }
    }
  }
}

async function waitForHttp(url: string, timeout: number): Promise<void> {
  const end = Date.now() + timeout;
  for (;;) {
    try {
      const response = await fetch(url);
      if (response.status < 500) return;
    } catch {
      // not up yet
    }
    if (Date.now() > end) throw new Error(`VS Code server did not answer at ${url}`);
    await sleep(250);
  }
}

// --- what the driver does at each checkpoint of the scenario --------------------------------
async function screenshot(page: Page, name: string): Promise<void> {
  fs.mkdirSync(shots, { recursive: true });
  const file = path.join(shots, `${name}.png`);
  await page.screenshot({ path: file });
  (report.screenshots as Record<string, string>)[name] = file;
  log(`screenshot ${file}`);
}

async function statusBarText(page: Page): Promise<string> {
  const item = page.locator('.statusbar-item', { hasText: 'FlyDSL' });
  return (await item.count()) > 0 ? (await item.first().innerText()).trim() : '';
}

const checkpoints: Record<string, (page: Page) => Promise<void>> = {
  'quick-fix': async (page) => {
    // The squiggles must be painted before the menu opens.
    await page.locator('.monaco-editor .squiggly-warning, .monaco-editor .squiggly-error').first().waitFor({ timeout: 30_000 });
    const menu = page.locator('.action-widget');
    await menu.first().waitFor({ state: 'visible', timeout: 15_000 });
    await page.locator('.action-widget', { hasText: 'fx.Index' }).first().waitFor({ timeout: 30_000 });
    report.quickFixMenu = (await menu.first().innerText()).split('\n').filter(Boolean);
    await sleep(300);
    await screenshot(page, 'vscode-quick-fix');
    await page.keyboard.press('Escape');
    await menu.first().waitFor({ state: 'hidden', timeout: 10_000 });
  },
  hover: async (page) => {
    const hover = page.locator('.monaco-hover', { hasText: 'FLY901' });
    await hover.first().waitFor({ state: 'visible', timeout: 30_000 });
    report.hoverText = (await page.locator('.monaco-hover').allInnerTexts()).join('\n').slice(0, 4000);
    await sleep(300);
    await screenshot(page, 'vscode-hover');
    await page.keyboard.press('Escape');
  },
  'inlay-hints': async (page) => {
    // Drawn inline, in the editor's own lines: `raw_tid: ir.Value index = gpu.thread_id("x")`.
    const line = page.locator('.editor-group-container.active .view-line', { hasText: 'ir.Value index' });
    await line.first().waitFor({ state: 'visible', timeout: 30_000 });
    report.inlayHintLine = (await line.first().innerText()).replace(/\u00a0/g, ' ');
    await sleep(300);
    await screenshot(page, 'vscode-inlay-hints');
  },
  'isa-linked': async (page) => {
    // The kernel's store line under the cursor, its instruction lit in the ISA beside it.
    await page.locator('.tab', { hasText: /add_kernel_0 \(gfx942\)\.s/ }).first().waitFor({ timeout: 30_000 });
    await sleep(800);
    await screenshot(page, 'vscode-isa-linked');
  },
  isa: async (page) => {
    // The ISA tab is open and its assembly highlighted by the extension's grammar.
    await page.locator('.tab', { hasText: /add_kernel_0 \(gfx942\)\.s/ }).first().waitFor({ timeout: 30_000 });
    // tokenized: the mnemonic is a span of its own (before that, the line is one span)
    await page.waitForFunction(
      () => Array.from(document.querySelectorAll('.view-line span[class^="mtk"]')).some((s) => s.textContent === 's_load_dwordx2'),
      undefined,
      { timeout: 30_000 },
    );
    const colours = await page.evaluate(() => {
      const spans = Array.from(document.querySelectorAll('.view-line span'));
      const colourOf = (text: string) => {
        const span = spans.find((s) => s.textContent === text);
        return span ? getComputedStyle(span).color : null;
      };
      return { mnemonic: colourOf('s_load_dwordx2'), register: colourOf('s[12:13]'), directive: colourOf('.text') };
    });
    report.isaColours = colours;
    report.isaLineHtml = await page.evaluate(
      () => Array.from(document.querySelectorAll('.view-line')).find((l) => l.textContent?.includes('s_load_dwordx2'))?.innerHTML ?? null,
    );
    report.statusBar = await statusBarText(page);
    await sleep(500);
    await screenshot(page, 'vscode-isa');
    // Read-only: typing into the ISA is refused with the editor's own message.
    await page.locator('.editor-group-container.active .view-line', { hasText: 's_load_dwordx2' }).first().click();
    await page.keyboard.type('flydsl-e2e-typed');
    const refused = page.locator('.monaco-editor-overlaymessage', { hasText: /read-only/i });
    await refused.first().waitFor({ state: 'visible', timeout: 10_000 });
    report.isaReadOnlyMessage = (await refused.first().innerText()).trim();
  },
};

// The "Add compile example" CodeLens above the builder, clicked as a user would.
checkpoints['add-example'] = async (page) => {
  const lens = page.locator('.codelens-decoration a', { hasText: 'Add compile example' });
  await lens.first().waitFor({ state: 'visible', timeout: 30_000 });
  report.addExampleLens = (await page.locator('.codelens-decoration', { hasText: 'Add compile example' }).first().innerText()).trim();
  await screenshot(page, 'vscode-add-example');
  await lens.first().click();
};

interface Toast {
  text: string;
  severity: string;
  buttons: string[];
}

/** The notifications in the notification list (the scenario opens it: under the smoke-test
 * driver VS Code shows no toasts), newest first, each with its severity icon and buttons. */
async function toasts(page: Page): Promise<Toast[]> {
  return page.evaluate(() =>
    Array.from(document.querySelectorAll('.notifications-center .notification-list-item')).map((t) => {
      const icon = t.querySelector('.notification-list-item-icon');
      const severity = ['error', 'warning', 'info'].find((s) => icon?.classList.contains(`codicon-${s}`)) ?? '?';
      return {
        text: (t.querySelector('.notification-list-item-message') as HTMLElement | null)?.innerText.trim() ?? '',
        severity,
        buttons: Array.from(t.querySelectorAll('.notification-list-item-buttons-container .monaco-button'))
          .map((b) => (b as HTMLElement).innerText.trim())
          .filter(Boolean),
      };
    }),
  );
}

async function toastWith(page: Page, text: string | RegExp): Promise<Toast> {
  const end = Date.now() + 30_000;
  for (;;) {
    const shown = await toasts(page);
    const found = shown.find((t) => (typeof text === 'string' ? t.text.includes(text) : text.test(t.text)));
    if (found) return found;
    if (Date.now() > end) throw new Error(`no notification with ${text} among ${JSON.stringify(shown)}`);
    await sleep(200);
  }
}

function record(key: string, value: unknown): void {
  report[key] = value;
}

checkpoints['compile-unavailable'] = async (page) => {
  const toast = await toastWith(page, 'cannot compile');
  record('unavailableToast', toast);
  await sleep(300);
  await screenshot(page, 'vscode-compile-unavailable');
};
checkpoints['show-ir-failed'] = async (page) => {
  record('showIrToast', await toastWith(page, 'the last compile failed'));
  record('quickInputVisible', await page.locator('.quick-input-widget').isVisible());
};
checkpoints.palette = async (page) => {
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: 15_000 });
  await page.keyboard.type('FlyDSL:');
  await sleep(800);
  const rows = await page.locator('.quick-input-list .monaco-list-row').evaluateAll((rs) =>
    rs.map((r) => (r.getAttribute('aria-label') || (r as HTMLElement).innerText).split('\n')[0].trim()),
  );
  record('palette', rows);
  await page.keyboard.press('Escape');
};
checkpoints['bad-path'] = async (page) => {
  await toastWith(page, 'no-such-folder');
  await sleep(1500); // a second notification would be here by now
  record('badPathToasts', await toasts(page));
};
checkpoints['path-fixed'] = async (page) => {
  await sleep(500);
  record('pathFixedToasts', await toasts(page));
};

async function serveCheckpoints(page: Page, finished: () => boolean): Promise<void> {
  const dir = path.join(out, 'checkpoints');
  fs.mkdirSync(dir, { recursive: true });
  const done = new Set<string>();
  while (!finished()) {
    for (const file of fs.readdirSync(dir)) {
      if (!file.endsWith('.request')) continue;
      const name = file.slice(0, -'.request'.length);
      if (done.has(name)) continue;
      done.add(name);
      log(`checkpoint ${name}`);
      let problem = '';
      try {
        const action = checkpoints[name.split('#')[0]]; // quick-fix#2: a second attempt
        if (!action) throw new Error(`unknown checkpoint ${name}`);
        await action(page);
        (report.checkpoints as string[]).push(name);
      } catch (error) {
        problem = error instanceof Error ? error.message : String(error);
        log(`checkpoint ${name} FAILED: ${problem}`);
        await screenshot(page, `failed-${name.replace('#', '-')}`).catch(() => undefined);
      }
      fs.writeFileSync(path.join(dir, `${name}.done`), problem);
    }
    await sleep(100);
  }
}

async function main(): Promise<number> {
  fs.mkdirSync(out, { recursive: true });
  for (const needed of [CHROMIUM, path.join(EXTENSION, 'out', 'test', 'e2e', 'suite.js')]) {
    if (!fs.existsSync(needed)) throw new Error(`missing ${needed}`);
  }
  prepareWorkspace();
  const port = await freePort();
  const server = startServer(port);
  let context: BrowserContext | undefined;
  let exitCode: number | undefined;
  try {
    const base = `http://127.0.0.1:${port}`;
    await waitForHttp(`${base}/`, 60_000);
    (report.timings as Record<string, number>).serverUp = (Date.now() - started) / 1000;
    log(`VS Code server up at ${base}`);

    const { chromium } = await import('playwright-core');
    context = await chromium.launchPersistentContext(path.join(work, 'chromium-profile'), {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_FLAGS,
      viewport: { width: 1400, height: 860 },
      deviceScaleFactor: 1,
    });
    const page = context.pages()[0] ?? (await context.newPage());
    const exited = new Promise<number>((resolve) => {
      void page.exposeFunction('codeAutomationExit', (code: number) => {
        log(`VS Code says the tests ended with ${code}`);
        resolve(code);
      });
    });
    void page.exposeFunction('codeAutomationLog', (type: string, args: unknown[]) => log(`[vscode ${type}] ${JSON.stringify(args)}`));
    const consoleLog = fs.createWriteStream(path.join(out, 'browser-console.log'));
    page.on('console', (message) => consoleLog.write(`[${message.type()}] ${message.text()}\n`));
    page.on('pageerror', (error) => consoleLog.write(`[pageerror] ${error.message}\n`));

    const remote = (p: string) => `vscode-remote://127.0.0.1:${port}${p}`;
    const payload = [
      ['extensionDevelopmentPath', remote(EXTENSION_UNDER_TEST)],
      ['extensionTestsPath', remote(path.join(EXTENSION, 'out', 'test', 'e2e', 'suite.js'))],
      ['skipWelcome', 'true'],
    ];
    const url = `${base}/?folder=${encodeURIComponent(workspace)}&payload=${encodeURIComponent(JSON.stringify(payload))}`;
    log(`opening ${url}`);
    await page.goto(url);

    let finished = false;
    const checkpointsDone = serveCheckpoints(page, () => finished);
    const timeout = new Promise<number>((resolve) =>
      setTimeout(() => {
        log(`timed out after ${TOTAL_TIMEOUT / 1000} s`);
        resolve(124);
      }, TOTAL_TIMEOUT).unref(),
    );
    exitCode = await Promise.race([exited, timeout]);
    finished = true;
    await checkpointsDone;
    if (exitCode !== 0) await screenshot(page, 'failed-final').catch(() => undefined);
  } finally {
    (report.timings as Record<string, number>).total = (Date.now() - started) / 1000;
    report.exitCode = exitCode;
    writeJson(path.join(out, 'driver.json'), report);
    await context?.close().catch(() => undefined);
    killGroup(server);
  }
  const suite = path.join(out, 'suite.json');
  if (fs.existsSync(suite)) {
    const result = JSON.parse(fs.readFileSync(suite, 'utf8'));
    log(`scenario steps: ${result.steps.join(', ')}${result.error ? `\nerror: ${result.error}` : ''}`);
  } else {
    log('the scenario wrote no report (see out/server.log and out/browser-console.log)');
  }
  log(`work folder: ${work}`);
  return exitCode === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(error);
    process.exit(2);
  },
);
