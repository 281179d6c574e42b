/**
 * Just enough of the Chrome DevTools Protocol to drive Debian's chromium headless from a test:
 * start it, open a page, evaluate expressions, take screenshots. Over our own WebSocket framing
 * (src/util/websocket.ts), so the tests need no browser-automation package.
 */

import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Socket } from 'node:net';
import { encodeFrame, OPCODE, WsDecoder } from '../../src/util/websocket.js';

export interface Page {
  /** The value of a JavaScript expression in the page (awaited if a promise). */
  evaluate<T = unknown>(expression: string): Promise<T>;
  navigate(url: string): Promise<void>;
  /** A PNG of the viewport. */
  screenshot(): Promise<Buffer>;
}

export interface Browser {
  open(url: string): Promise<Page>;
  close(): Promise<void>;
}

function httpJson(port: number, method: string, path: string): Promise<any> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve(JSON.parse(body)));
    });
    req.on('error', reject);
    req.end();
  });
}

function connect(
  wsUrl: string,
): Promise<{ call: (method: string, params?: object) => Promise<any>; close: () => void }> {
  const u = new URL(wsUrl);
  return new Promise((resolve, reject) => {
    const req = request({
      host: u.hostname,
      port: u.port,
      path: u.pathname,
      headers: {
        Connection: 'Upgrade',
        Upgrade: 'websocket',
        'Sec-WebSocket-Version': '13',
        'Sec-WebSocket-Key': 'c3Rvd2FnZS1kYXNoYm9hcmQ=',
      },
    });
    req.on('error', reject);
    req.on('upgrade', (_res, socket: Socket) => {
      let next = 1;
      const waiting = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>();
      const dec = new WsDecoder();
      socket.on('data', (chunk: Buffer) => {
        for (const m of dec.push(chunk)) {
          if (m.opcode !== OPCODE.text) continue;
          const msg = JSON.parse(m.payload.toString('utf8'));
          const w = msg.id !== undefined ? waiting.get(msg.id) : undefined;
          if (!w) continue;
          waiting.delete(msg.id);
          if (msg.error) w.reject(new Error(JSON.stringify(msg.error)));
          else w.resolve(msg.result);
        }
      });
      resolve({
        call: (method, params = {}) =>
          new Promise((res, rej) => {
            const id = next++;
            waiting.set(id, { resolve: res, reject: rej });
            socket.write(encodeFrame(OPCODE.text, Buffer.from(JSON.stringify({ id, method, params })), true));
          }),
        close: () => socket.destroy(),
      });
    });
    req.end();
  });
}

/** Starts headless chromium with its own profile dir (removed on close). */
export async function launchChromium(): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'stowage-chromium-'));
  const child: ChildProcess = spawn(
    'chromium',
    [
      '--headless=new',
      '--no-sandbox',
      '--disable-gpu',
      '--ignore-certificate-errors',
      '--no-first-run',
      '--disable-breakpad',
      '--disable-crash-reporter',
      '--window-size=1280,900',
      `--user-data-dir=${profile}`,
      '--remote-debugging-port=0',
      'about:blank',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'], detached: true },
  );
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const port = await new Promise<number>((resolve, reject) => {
    let err = '';
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /DevTools listening on ws:\/\/127\.0\.0\.1:(\d+)\//.exec(err);
      if (m) resolve(Number(m[1]));
    });
    void exited.then(() => reject(new Error(`chromium exited: ${err.slice(-500)}`)));
  });
  child.stderr!.resume();
  const conns: Array<{ close: () => void }> = [];
  return {
    async open(url) {
      const target = await httpJson(port, 'PUT', `/json/new?${encodeURIComponent(url)}`);
      const c = await connect(target.webSocketDebuggerUrl as string);
      conns.push(c);
      await c.call('Runtime.enable');
      return {
        evaluate: async (expression) => {
          const r = await c.call('Runtime.evaluate', { expression, awaitPromise: true, returnByValue: true });
          if (r.exceptionDetails) throw new Error(JSON.stringify(r.exceptionDetails));
          return r.result.value;
        },
        navigate: async (u) => void (await c.call('Page.navigate', { url: u })),
        screenshot: async () => Buffer.from((await c.call('Page.captureScreenshot', { format: 'png' })).data, 'base64'),
      };
    },
    async close() {
      for (const c of conns) c.close();
      // Its own process group: the zygote, GPU and renderer processes go with it.
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGTERM');
      await exited;
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
