// Pure helpers (no `vscode` import): the link between a kernel's source and its ISA document
// after "Compile Kernel Example and Show ISA" (a compile with line info). The server's result
// gives each instruction's row in the ISA file and its source lines, its own first, then the
// calls it came from: kernels[i].isaRows = [{ row, lines: [[file, line], ...] }] (1-based lines).
// Unit-tested in src/test/unit.

export interface IsaLink {
  /** The ISA file on disk (what the `flydsl-isa:` document's query names). */
  isaPath: string;
  /** 1-based source line -> the ISA rows (0-based) it became, its own and through its calls. */
  rowsOf: Map<number, number[]>;
  /** ISA row -> the source line it belongs to: [file, 1-based line]. */
  lineOf: Map<number, [string, number]>;
}

function record(value: unknown): Record<string, unknown> | undefined {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/**
 * The link of the first kernel of a compile result to the source file `isSource` accepts;
 * undefined without an ISA file or line info.
 */
export function isaLinkOf(result: unknown, isSource: (file: string) => boolean): IsaLink | undefined {
  const kernels = record(result)?.kernels;
  const kernel = Array.isArray(kernels) ? record(kernels[0]) : undefined;
  const isaPath = record(kernel?.files)?.isa;
  const rows = kernel?.isaRows;
  if (typeof isaPath !== 'string' || !Array.isArray(rows) || rows.length === 0) return undefined;
  const link: IsaLink = { isaPath, rowsOf: new Map(), lineOf: new Map() };
  const source = new Map<string, boolean>();
  for (const entry of rows.map(record)) {
    const row = entry?.row;
    const lines = entry?.lines;
    if (typeof row !== 'number' || !Array.isArray(lines) || lines.length === 0) continue;
    const own = lines[0] as [string, number];
    link.lineOf.set(row, own);
    for (const [file, line] of lines as [string, number][]) {
      if (!source.has(file)) source.set(file, isSource(file));
      if (!source.get(file)) continue;
      const found = link.rowsOf.get(line) ?? [];
      if (!found.includes(row)) found.push(row);
      link.rowsOf.set(line, found);
    }
  }
  return link;
}
