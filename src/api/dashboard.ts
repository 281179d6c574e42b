/**
 * `/dashboard`: the web UI's page (src/ui), served without authentication because it holds no data;
 * every object it shows it reads through the API with the token the user logs in with.
 */
import { DASHBOARD_HTML } from '../ui/page.js';
import { sendRaw } from './http.js';
import type { Route } from './routes.js';

export const DASHBOARD_PATH = '/dashboard';

export function dashboardRoutes(): Route[] {
  return [
    {
      path: DASHBOARD_PATH,
      public: true,
      methods: {
        GET: ({ res }) =>
          sendRaw(res, 200, DASHBOARD_HTML, {
            contentType: 'text/html; charset=utf-8',
            headers: {
              'X-Content-Type-Options': 'nosniff',
              'Cache-Control': 'no-store',
              // Nothing leaves for another origin; the page talks to this API server only.
              'Content-Security-Policy': "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'",
            },
          }),
      },
    },
  ];
}
