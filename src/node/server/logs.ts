/**
 * Container logs as the kubelet serves them from CRI log files (`<RFC3339Nano> <stream> <P|F> <text>`
 * per line): partial (P) pieces joined, `tailLines` counted in file lines, `sinceTime`, `timestamps`
 * on the first piece of a line only, `limitBytes` cutting the output, `follow` until the container
 * stops. The parsing and formatting are pure; `streamContainerLog` does the file reading.
 */
import { open, stat, type FileHandle } from 'node:fs/promises';
import { watch, type FSWatcher } from 'node:fs';

/** One line of a CRI log file. */
export interface CriLogEntry {
  /** When the runtime wrote it, in ms since the epoch (sub-ms digits kept in `timestamp`). */
  readonly timeMs: number;
  /** The line's timestamp as written (RFC3339 with nanoseconds). */
  readonly timestamp: string;
  readonly stream: 'stdout' | 'stderr';
  /** A piece of a longer line (P); the line ends with the next full (F) entry. */
  readonly partial: boolean;
  /** The text, without the file's newline. */
  readonly content: Buffer;
}

const SPACE = 0x20;

/** Parses one file line (without its newline); undefined for a line not in the CRI format. */
export function parseCriLine(line: Buffer): CriLogEntry | undefined {
  const a = line.indexOf(SPACE);
  const b = a < 0 ? -1 : line.indexOf(SPACE, a + 1);
  if (b < 0) return undefined;
  const timestamp = line.subarray(0, a).toString('latin1');
  const timeMs = Date.parse(timestamp);
  const stream = line.subarray(a + 1, b).toString('latin1');
  if (Number.isNaN(timeMs) || (stream !== 'stdout' && stream !== 'stderr')) return undefined;
  // Tags: `P` or `F`, possibly followed by more `:`-separated tags.
  const c = line.indexOf(SPACE, b + 1);
  const tags = line.subarray(b + 1, c < 0 ? line.length : c).toString('latin1');
  const partial = tags.split(':')[0] === 'P';
  return { timeMs, timestamp, stream, partial, content: c < 0 ? Buffer.alloc(0) : line.subarray(c + 1) };
}

/**
 * Go's RFC3339Nano, which the kubelet writes `--timestamps` with: trailing zeros of the fraction
 * dropped (`…:05.1Z`, `…:05Z`).
 */
export function rfc3339Nano(timestamp: string): string {
  return timestamp.replace(/\.(\d*?)0+(?=Z|[+-]\d\d:\d\d$)/, (_, d: string) => (d ? `.${d}` : ''));
}

/** What a log request asks for (PodLogOptions, parsed and validated by the API server). */
export interface LogRequest {
  readonly follow: boolean;
  readonly tailLines?: number;
  /** Only entries at or after this time (sinceSeconds is turned into a time when the request arrives). */
  readonly sinceMs?: number;
  readonly timestamps: boolean;
  readonly limitBytes?: number;
}

/**
 * Turns CRI log lines into what `kubectl logs` prints. Keeps the partial-line state between
 * calls (a follow reads a file in pieces). `done` turns true once `limitBytes` is spent.
 */
export class LogFormatter {
  private afterPartial = false;
  private remaining: number;
  constructor(private readonly o: Pick<LogRequest, 'sinceMs' | 'timestamps' | 'limitBytes'>) {
    this.remaining = o.limitBytes ?? Infinity;
  }

  get done(): boolean {
    return this.remaining <= 0;
  }

  /** The output for one file line (empty when filtered out or malformed). */
  format(line: Buffer): Buffer {
    if (this.done) return Buffer.alloc(0);
    const e = parseCriLine(line);
    if (!e) return Buffer.alloc(0);
    if (this.o.sinceMs !== undefined && e.timeMs < this.o.sinceMs) return Buffer.alloc(0);
    const parts: Buffer[] = [];
    // The kubelet stamps the first piece of a line only.
    if (this.o.timestamps && !this.afterPartial) parts.push(Buffer.from(`${rfc3339Nano(e.timestamp)} `));
    parts.push(e.content);
    if (!e.partial) parts.push(Buffer.from('\n'));
    this.afterPartial = e.partial;
    let out = Buffer.concat(parts);
    if (out.length > this.remaining) out = out.subarray(0, this.remaining);
    this.remaining -= out.length;
    return out;
  }
}

/** Splits `buf` into complete lines; the unterminated rest is returned for the next read. */
export function splitLines(buf: Buffer): { lines: Buffer[]; rest: Buffer } {
  const lines: Buffer[] = [];
  let start = 0;
  for (let i = buf.indexOf(0x0a); i >= 0; i = buf.indexOf(0x0a, start)) {
    lines.push(buf.subarray(start, i));
    start = i + 1;
  }
  return { lines, rest: buf.subarray(start) };
}

const CHUNK = 64 * 1024;

/** The offset of the first of the last `n` lines of the file (0 when it has no more than `n`). */
export async function tailStartOffset(f: FileHandle, size: number, n: number): Promise<number> {
  if (n <= 0) return size;
  let pos = size;
  let seen = 0;
  // A final newline ends the last line; it does not start another.
  let skipLast = true;
  const buf = Buffer.alloc(CHUNK);
  while (pos > 0) {
    const len = Math.min(CHUNK, pos);
    pos -= len;
    await f.read(buf, 0, len, pos);
    for (let i = len - 1; i >= 0; i--) {
      if (buf[i] !== 0x0a) continue;
      if (skipLast && pos + i === size - 1) continue;
      if (++seen === n) return pos + i + 1;
    }
    skipLast = false;
  }
  return 0;
}

export interface LogSink {
  write(b: Buffer): Promise<void>;
  /** Aborted when the reader went away. */
  readonly signal: AbortSignal;
}

/**
 * Streams a CRI log file to `sink` as `kubectl logs` shows it. With `follow`, keeps reading as the
 * file grows until `running()` says the container stopped (checked on every change and every
 * `recheckMs`), the limit is spent or the reader leaves.
 */
export async function streamContainerLog(
  path: string,
  r: LogRequest,
  sink: LogSink,
  running: () => Promise<boolean>,
  recheckMs = 1_000,
): Promise<void> {
  let f = await open(path, 'r');
  let watcher: FSWatcher | undefined;
  try {
    const fmt = new LogFormatter(r);
    const size = (await f.stat()).size;
    let pos = r.tailLines !== undefined ? await tailStartOffset(f, size, r.tailLines) : 0;
    let rest: Buffer = Buffer.alloc(0);
    const buf = Buffer.alloc(CHUNK);
    const drain = async (): Promise<void> => {
      for (;;) {
        const { bytesRead } = await f.read(buf, 0, CHUNK, pos);
        if (bytesRead === 0) return;
        pos += bytesRead;
        const split = splitLines(Buffer.concat([rest, buf.subarray(0, bytesRead)]));
        rest = Buffer.from(split.rest);
        for (const line of split.lines) {
          const out = fmt.format(line);
          if (out.length) await sink.write(out);
          if (fmt.done || sink.signal.aborted) return;
        }
      }
    };
    await drain();
    if (!r.follow) return;
    let wake: (() => void) | undefined;
    const watchPath = (): FSWatcher => {
      const w = watch(path, () => wake?.());
      w.on('error', () => wake?.());
      return w;
    };
    watcher = watchPath();
    while (!fmt.done && !sink.signal.aborted) {
      let timer: NodeJS.Timeout | undefined;
      const onAbort = (): void => wake?.();
      await new Promise<void>((resolve) => {
        wake = resolve;
        timer = setTimeout(resolve, recheckMs);
        sink.signal.addEventListener('abort', onAbort, { once: true });
      });
      clearTimeout(timer);
      sink.signal.removeEventListener('abort', onAbort);
      await drain();
      if (await rotatedAway(path, f)) {
        // Rotated (./log-rotation.ts): the rest of the old file, then the new one from its start,
        // as the kubelet's follow does when its log is renamed and recreated.
        await drain();
        await f.close();
        f = await open(path, 'r');
        pos = 0;
        rest = Buffer.alloc(0);
        watcher.close();
        watcher = watchPath();
        await drain();
      }
      // A stopped container's file is complete once read after the stop was seen.
      if (!(await running())) {
        await drain();
        return;
      }
    }
  } finally {
    watcher?.close();
    await f.close();
  }
}

/** Whether `path` now names another file than the open `f` (renamed by a rotation, a new one created). */
async function rotatedAway(path: string, f: FileHandle): Promise<boolean> {
  const now = await stat(path).catch(() => undefined);
  if (!now) return false; // renamed, not yet reopened by the runtime: keep reading the old one
  return now.ino !== (await f.stat()).ino;
}

/** Whether the file exists (a container removed since has no log to show). */
export async function logFileExists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}
