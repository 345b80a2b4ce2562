// Pure helpers (no `vscode` import): what the extension says to the user, and which finding
// a command acts on. Unit-tested in src/test/unit.
import { summary } from './artifacts';

export const SHOW_OUTPUT = 'Show Output';

/**
 * A server message (window/showMessage) as a notification: VS Code shows a notification's
 * text on one line, so a message of several lines (a compile's resources, the install
 * commands of a missing compiler) ran together. The notification gets the first line and,
 * when there is more, a "Show Output" button: the server logs the whole message there.
 */
export function notificationOf(message: string): { text: string; more: boolean } {
  const lines = message.split(/\r?\n/);
  const text = lines[0].trim();
  const more = lines.slice(1).some((line) => line.trim() !== '');
  return { text, more };
}

export interface Point {
  line: number;
  character: number;
}

export interface Span {
  start: Point;
  end: Point;
}

function before(a: Point, b: Point): boolean {
  return a.line < b.line || (a.line === b.line && a.character <= b.character);
}

function contains(span: Span, at: Point): boolean {
  return before(span.start, at) && before(at, span.end);
}

/** Lines, then characters: the smaller of two nested spans is the inner one. */
function extent(span: Span): [number, number] {
  const lines = span.end.line - span.start.line;
  return [lines, lines === 0 ? span.end.character - span.start.character : span.end.character];
}

/**
 * The finding a command at the cursor means: of those whose range contains it, the
 * innermost (a FLY102 on one argument of a FLY301 call spanning several lines is the
 * FLY102), the first of equals. Without a cursor, the first.
 */
export function innermost<T>(items: T[], at: Point | undefined, rangeOf: (item: T) => Span): T | undefined {
  if (!at) return items[0];
  let best: T | undefined;
  let bestExtent: [number, number] | undefined;
  for (const item of items) {
    const span = rangeOf(item);
    if (!contains(span, at)) continue;
    const size = extent(span);
    if (!bestExtent || size[0] < bestExtent[0] || (size[0] === bestExtent[0] && size[1] < bestExtent[1])) {
      best = item;
      bestExtent = size;
    }
  }
  return best;
}

/** What "Open IR/ISA of the Last Compile" says when the last compile left nothing to open. */
export function nothingToOpen(last: unknown): string {
  const { ok, text } = summary(last);
  const headline = notificationOf(text).text;
  if (!ok) return `FlyDSL: the last compile failed, so it has no IR or ISA to open: ${headline}`;
  return `FlyDSL: the last compile wrote no IR or ISA files: ${headline}`;
}

/**
 * The server's hover without the text of the findings under the cursor: VS Code shows each
 * finding's message in the same hover already, above the server's part. A section the
 * server starts with a finding's message keeps the rest (the rule's summary, its link).
 */
export function withoutMessages(markdown: string, messages: string[]): string {
  const sections = markdown.split('\n\n---\n\n').map((section) => {
    const repeated = messages.find((message) => message && section.startsWith(message));
    return repeated === undefined ? section : section.slice(repeated.length).replace(/^\n+/, '');
  });
  return sections.filter((section) => section.trim() !== '').join('\n\n---\n\n');
}
