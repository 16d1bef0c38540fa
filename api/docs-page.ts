/** A self-contained docs page (no CDN): the operations of the OpenAPI document, grouped by tag. */
export function docsPage(doc: { info: { title: string; version: string }; paths: Record<string, Record<string, any>> }): string {
  const escape = (s: string) => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
  const byTag = new Map<string, string[]>();
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const tag = op.tags?.[0] ?? 'Other';
      const schema = op.requestBody ? `<details><summary>body</summary><pre>${escape(JSON.stringify(op.requestBody.content['application/json'].schema, null, 2))}</pre></details>` : '';
      const row = `<li><code class="m ${method}">${method.toUpperCase()}</code> <code>/api${escape(path)}</code> — ${escape(op.summary ?? '')} ${op.security ? '🔒' : ''}${schema}</li>`;
      byTag.set(tag, [...(byTag.get(tag) ?? []), row]);
    }
  }
  const sections = [...byTag].map(([tag, rows]) => `<h2>${escape(tag)}</h2><ul>${rows.join('')}</ul>`).join('');
  return `<!doctype html><html><head><meta charset="utf-8"><title>${escape(doc.info.title)} API</title>
<style>body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}li{margin:.4rem 0}code.m{display:inline-block;width:4.5rem;font-weight:bold}pre{background:#f4f4f4;padding:.5rem;overflow:auto}</style>
</head><body><h1>${escape(doc.info.title)} <small>${escape(doc.info.version)}</small></h1>
<p>Machine-readable: <a href="/api/openapi.json">/api/openapi.json</a> (OpenAPI 3.1). Errors: <code>{"success": false, "error": {"code", "message", "details"}}</code>.</p>
${sections}</body></html>`;
}
