/** Minimal leveled logger writing one line per entry to stderr. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
const ORDER: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(component: string): Logger;
}

let threshold: LogLevel = (process.env.STOWAGE_LOG_LEVEL as LogLevel | undefined) ?? 'info';
export function setLogLevel(level: LogLevel): void {
  threshold = level;
}

export function newLogger(component: string): Logger {
  const write = (level: LogLevel, msg: string, fields?: Record<string, unknown>): void => {
    if (ORDER[level] < ORDER[threshold]) return;
    const extra = fields
      ? ' ' +
        Object.entries(fields)
          .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
          .join(' ')
      : '';
    process.stderr.write(`${new Date().toISOString()} ${level.toUpperCase()} [${component}] ${msg}${extra}\n`);
  };
  return {
    debug: (m, f) => write('debug', m, f),
    info: (m, f) => write('info', m, f),
    warn: (m, f) => write('warn', m, f),
    error: (m, f) => write('error', m, f),
    child: (c) => newLogger(`${component}/${c}`),
  };
}
