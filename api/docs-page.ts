import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * The docs page: Swagger UI (the `swagger-ui-dist` package, served from node_modules: no CDN) over
 * the OpenAPI document the service serves, so it shows every operation's parameters, request and
 * response schemas with generated examples, and "Try it out" calls the running service (the
 * document's server is `/api`; "Authorize" takes a bearer token or a trigger key).
 */
export function docsPage(doc: { info: { title: string; version: string }; paths: Record<string, Record<string, unknown>> }): string {
  const escape = (s: string) => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
  // Without JavaScript: the list of operations, and the document itself.
  const operations = Object.entries(doc.paths)
    .flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => `<li><code>${method.toUpperCase()} /api${escape(path)}</code> ${escape((op as { summary?: string }).summary ?? '')}</li>`))
    .join('');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(doc.info.title)} API ${escape(doc.info.version)}</title>
<link rel="stylesheet" href="/api/docs/assets/swagger-ui.css">
</head><body>
<noscript><p>${escape(doc.info.title)}: the machine-readable document is <a href="/api/openapi.json">/api/openapi.json</a> (OpenAPI 3.1).</p><ul>${operations}</ul></noscript>
<div id="swagger-ui"></div>
<script src="/api/docs/assets/swagger-ui-bundle.js"></script>
<script src="/api/docs/assets/swagger-ui-standalone-preset.js"></script>
<script src="/api/docs/assets/init.js"></script>
</body></html>`;
}

const INIT = `window.ui = SwaggerUIBundle({
  url: '/api/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  displayOperationId: true,
  defaultModelsExpandDepth: 0,
  defaultModelExpandDepth: 3,
  persistAuthorization: true,
  // The operations' forms are open: Execute calls this service (the document's server is /api).
  tryItOutEnabled: true,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  plugins: [SwaggerUIBundle.plugins.DownloadUrl],
  layout: 'StandaloneLayout',
});
`;

export interface DocsAsset {
  type: string;
  body: Buffer | string;
}

/** The files `/api/docs/assets/{name}` serves: Swagger UI's bundle from node_modules and the page's start script. */
export function docsAssets(): Map<string, DocsAsset> {
  const root = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  const file = (name: string, type: string): [string, DocsAsset] => [name, { type, body: readFileSync(join(root, name)) }];
  return new Map([
    file('swagger-ui.css', 'text/css; charset=utf-8'),
    file('swagger-ui-bundle.js', 'application/javascript; charset=utf-8'),
    file('swagger-ui-standalone-preset.js', 'application/javascript; charset=utf-8'),
    file('favicon-32x32.png', 'image/png'),
    ['init.js', { type: 'application/javascript; charset=utf-8', body: INIT }],
  ]);
}
