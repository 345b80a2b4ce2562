// Pure helpers (no `vscode` import): what a compile result names, and the read-only
// `flydsl-isa:` documents that show it (virtual documents of a TextDocumentContentProvider:
// the dump files the server wrote, never an editable buffer). Unit-tested in src/test/unit.

export const SCHEME = 'flydsl-isa';

/** The dumps of a compile, and the diff verifyFix writes when the IR differs. */
export type ArtifactKind = 'isa' | 'llvm' | 'mlir' | 'mlir-first' | 'diff';

export interface Artifact {
  kernel: string;
  kind: ArtifactKind;
  /** File the server (its compile worker) wrote. */
  path: string;
}

// The server's result (flydsl_ls/server/compile_report.py, docs/compile.md "In the editor"):
// { status, ok, message, example, arch, kernels: [{ name, summary, files: { mlirFirst,
// mlirFinal, llvm, isa }, uris: {...} }], ... }; verifyFix nests two of them in before/after.
const KIND_KEYS: Record<ArtifactKind, string> = {
  isa: 'isa',
  llvm: 'llvm',
  mlir: 'mlirFinal',
  'mlir-first': 'mlirFirst',
  diff: 'diff', // not a kernel file: verifyFix's diffFile
};

function record(value: unknown): Record<string, unknown> | undefined {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/** Kernels of a compile result (for verifyFix: of the compile after the fix). */
function kernelsOf(result: unknown): Record<string, unknown>[] {
  const top = record(result);
  if (!top) return [];
  for (const holder of [top, record(top.after), record(top.before)]) {
    if (holder && Array.isArray(holder.kernels)) {
      return holder.kernels.map(record).filter((k): k is Record<string, unknown> => k !== undefined);
    }
  }
  return [];
}

/** The artifacts of every kernel of a compile result, in the order the server gave them. */
export function artifactsOf(result: unknown, kind: ArtifactKind): Artifact[] {
  const out: Artifact[] = [];
  for (const kernel of kernelsOf(result)) {
    const name = typeof kernel.name === 'string' ? kernel.name : 'kernel';
    const path = record(kernel.files)?.[KIND_KEYS[kind]];
    if (typeof path === 'string' && path) out.push({ kernel: name, kind, path });
  }
  return out;
}

const SUFFIX: Record<ArtifactKind, string> = { isa: '.s', llvm: '.ll', mlir: '.mlir', 'mlir-first': '.mlir', diff: '.diff' };

/** Language of an artifact document (the assembly grammar is this extension's own). */
export function languageOf(kind: ArtifactKind): string {
  return { isa: 'amdgpu-isa', llvm: 'llvm', mlir: 'mlir', 'mlir-first': 'mlir', diff: 'diff' }[kind];
}

/**
 * The `flydsl-isa:` URI of an artifact, as (path, query) parts: the path is what the tab
 * shows (`/<kernel> (<arch>).s`), the query is the file on disk, percent-encoded.
 */
export function artifactUriParts(artifact: Artifact, arch?: string): { path: string; query: string } {
  const label = arch ? `${artifact.kernel} (${arch})` : artifact.kernel;
  const stage = artifact.kind === 'mlir-first' ? ' first' : '';
  return { path: `/${label}${stage}${SUFFIX[artifact.kind]}`, query: `file=${encodeURIComponent(artifact.path)}` };
}

/** The file on disk behind a `flydsl-isa:` URI query, or undefined. */
export function fileOfQuery(query: string): string | undefined {
  for (const part of query.split('&')) {
    const [key, value] = part.split('=');
    if (key === 'file' && value !== undefined) return decodeURIComponent(value);
  }
  return undefined;
}

/** The result's own message (several lines), or a fallback, and whether it succeeded. */
export function summary(result: unknown): { ok: boolean; text: string } {
  const top = record(result) ?? {};
  const ok = top.ok === true;
  if (typeof top.message === 'string' && top.message) return { ok, text: top.message };
  const status = typeof top.status === 'string' ? top.status : 'no result';
  return { ok, text: `flydsl-ls: ${status}` };
}

/** An artifact kind for a file name the server asked to show (window/showDocument). */
export function kindOfPath(path: string): ArtifactKind | undefined {
  if (/\.(s|amdgcn)$/.test(path)) return 'isa';
  if (path.endsWith('.ll')) return 'llvm';
  if (path.endsWith('.diff')) return 'diff';
  if (/00_origin\.mlir$/.test(path)) return 'mlir-first';
  if (path.endsWith('.mlir')) return 'mlir';
  return undefined;
}

/** The kernel folder name of a dump path (…/ir/<kernel>_0/22_final_isa.s -> <kernel>_0). */
export function kernelOfPath(path: string): string {
  const parts = path.split(/[\\/]/).filter(Boolean);
  return parts.length >= 2 ? parts[parts.length - 2] : parts[parts.length - 1] ?? 'kernel';
}
