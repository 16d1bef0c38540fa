import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type Koa from 'koa';

/**
 * The web console (web/, bundled by scripts/build-web.mjs into dist/web/) served at the origin's
 * root: `/assets/<hashed name>` are the bundle's files (cached for ever: their names change with
 * their content), and every other GET outside `/api`, `/apps-public` and `/.well-known` answers the
 * console's index.html, whose router shows the page (so the links the API mails and prints —
 * `/reset-password`, `/invitations/<token>`, `/auth/callback`, `/verify-email`, `/cli/device` —
 * open pages). The console talks to `/api` on the same origin; the CSP allows nothing else.
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const HEADERS: Record<string, string> = {
  'Content-Security-Policy': CONSOLE_CSP,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'X-Frame-Options': 'DENY',
  'Permissions-Policy': 'camera=(), microphone=(), geolocation=(), payment=(), usb=()',
};

const TYPES: Record<string, string> = {
  '.js': 'application/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
};

/** Paths the console never answers: the API, apps' public pages, well-known documents. */
const NOT_CONSOLE = /^\/(api|apps-public|\.well-known)(\/|$)/;

function repositoryRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error('console: no package.json above api/console');
    dir = up;
  }
  return dir;
}

export function consoleDirectory(): string {
  return join(repositoryRoot(), 'dist', 'web');
}

export function mountConsole(app: Koa, directory = consoleDirectory()): void {
  const files = new Map<string, Buffer>();
  const read = (path: string): Buffer | null => {
    const cached = files.get(path);
    if (cached) return cached;
    if (!existsSync(path)) return null;
    const body = readFileSync(path);
    files.set(path, body);
    return body;
  };
  app.use(async (ctx, next) => {
    if ((ctx.method !== 'GET' && ctx.method !== 'HEAD') || NOT_CONSOLE.test(ctx.path)) return next();
    ctx.set(HEADERS);
    if (ctx.path.startsWith('/assets/')) {
      const path = normalize(join(directory, ctx.path));
      const body = path.startsWith(join(directory, 'assets') + sep) ? read(path) : null;
      if (!body) {
        ctx.status = 404;
        ctx.type = 'text/plain';
        ctx.body = 'no such console asset (the console was rebuilt: reload the page)\n';
        return;
      }
      ctx.type = TYPES[path.slice(path.lastIndexOf('.'))] ?? 'application/octet-stream';
      ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
      ctx.body = body;
      return;
    }
    // A file name that is not an asset (favicon.ico, robots.txt) is not a page of the console.
    if (/\.[a-z0-9]{2,5}$/i.test(ctx.path)) {
      ctx.status = 404;
      ctx.type = 'text/plain';
      ctx.body = 'not found\n';
      return;
    }
    // index.html names the current hashed assets: read it again on every request.
    const indexPath = join(directory, 'index.html');
    if (!existsSync(indexPath)) {
      ctx.status = 503;
      ctx.type = 'text/plain';
      ctx.set('Retry-After', '30');
      ctx.body = 'The web console is not built: run `npm run build` (npm start and npm ci do it). The API is at /api.\n';
      return;
    }
    ctx.type = 'html';
    ctx.set('Cache-Control', 'no-cache');
    ctx.body = readFileSync(indexPath);
  });
}
