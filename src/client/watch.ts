import { StringDecoder } from 'node:string_decoder';
import { BadRequestError, ExpiredError, type StowageError } from '../util/errors.js';
import { errorFromStatus, parseStatus } from './status.js';

export const WATCH_EVENT_TYPES = ['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR'] as const;
export type WatchEventType = (typeof WATCH_EVENT_TYPES)[number];

/** One decoded watch event. ERROR events carry the server's Status turned into a typed error. */
export type WatchEvent<T> =
  | { readonly type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK'; readonly object: T }
  | { readonly type: 'ERROR'; readonly error: StowageError; readonly object: unknown };

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Parses one line of a watch stream. Throws BadRequestError on malformed input. */
export function parseWatchLine<T>(line: string): WatchEvent<T> {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch (e) {
    throw new BadRequestError(`watch: malformed event JSON: ${line.slice(0, 200)}`, { cause: e });
  }
  if (!isObject(v) || typeof v.type !== 'string' || !isObject(v.object)) {
    throw new BadRequestError(`watch: not a watch event: ${line.slice(0, 200)}`);
  }
  const type = v.type;
  switch (type) {
    case 'ADDED':
    case 'MODIFIED':
    case 'DELETED':
    case 'BOOKMARK':
      // The object is the kind the caller watches; the server is trusted to send that kind.
      return { type, object: v.object as T };
    case 'ERROR': {
      const status = parseStatus(v.object);
      // 410 in a watch means the requested resourceVersion is older than the retained history.
      const error =
        status?.code === 410
          ? new ExpiredError(status.message ?? 'resource version too old', { cause: status })
          : errorFromStatus(status?.code ?? 500, v.object);
      return { type, error, object: v.object };
    }
    default:
      throw new BadRequestError(`watch: unknown event type ${JSON.stringify(type)}`);
  }
}

/**
 * Incremental decoder for a Kubernetes watch body: one JSON event per line, delivered in chunks
 * that may split lines (and UTF-8 characters) anywhere.
 */
export class WatchDecoder<T> {
  private readonly utf8 = new StringDecoder('utf8');
  private partial = '';

  /** Feeds one chunk; returns the events completed by it. */
  push(chunk: Buffer | string): WatchEvent<T>[] {
    const text = this.partial + (typeof chunk === 'string' ? chunk : this.utf8.write(chunk));
    const out: WatchEvent<T>[] = [];
    let start = 0;
    let nl: number;
    // Walk by index and cut the remainder once: re-slicing per line is quadratic in a large chunk.
    while ((nl = text.indexOf('\n', start)) >= 0) {
      const line = text.slice(start, nl).trim();
      start = nl + 1;
      if (line !== '') out.push(parseWatchLine<T>(line));
    }
    this.partial = text.slice(start);
    return out;
  }

  /** End of stream: a final unterminated line is still an event (servers may omit the last newline). */
  end(): WatchEvent<T>[] {
    this.partial += this.utf8.end();
    const line = this.partial.trim();
    this.partial = '';
    return line === '' ? [] : [parseWatchLine<T>(line)];
  }
}
