import type { AppContract } from './events.js';

/**
 * The offline builder's answer (POST /apps/{id}/builder/chat with the offline provider): a
 * deterministic scaffold of three files, the same for the same app name and contract whatever the
 * message:
 * - `index.html`: the app's name as title, a form with one field per property of the contract's
 *   input schema (in schema order: `boolean` → checkbox, `number`/`integer` → number input, `enum`
 *   → select, a string with `format: email|uri|date` → that input type, `maxLength` > 200 →
 *   textarea, else text; `required` ones marked required; `title`/`description` as label and
 *   hint), a submit button and an `<output>` area; it loads `app-client.js` (generated with every
 *   preview and deployment) then `app.js`;
 * - `app.js`: on submit, reads the form through `AppClient.readForm`, calls the linked flow with
 *   `AppClient.call` (inputs validated against the contract) and shows the answer or the error;
 * - `style.css`: a small neutral stylesheet.
 */
export const SCAFFOLD_PATHS = ['index.html', 'app.js', 'style.css'] as const;

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

type Schema = Record<string, unknown>;
const isObject = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);

function fieldHtml(name: string, schema: Schema, required: boolean): string {
  const id = `field-${name.replace(/[^A-Za-z0-9_-]/g, '_')}`;
  const label = escapeHtml(typeof schema.title === 'string' ? schema.title : name);
  const attrs = `id="${id}" name="${escapeHtml(name)}"${required ? ' required' : ''}`;
  const hint = typeof schema.description === 'string' ? `\n      <small>${escapeHtml(schema.description)}</small>` : '';
  const type = ([] as unknown[]).concat(schema.type ?? 'string')[0];
  let control: string;
  if (Array.isArray(schema.enum)) {
    const options = schema.enum.map((v) => `<option value="${escapeHtml(String(v))}">${escapeHtml(String(v))}</option>`).join('');
    control = `<select ${attrs}>${options}</select>`;
  } else if (type === 'boolean') {
    return `    <label class="check"><input type="checkbox" ${attrs}> ${label}</label>${hint}`;
  } else if (type === 'number' || type === 'integer') {
    const min = typeof schema.minimum === 'number' ? ` min="${schema.minimum}"` : '';
    const max = typeof schema.maximum === 'number' ? ` max="${schema.maximum}"` : '';
    control = `<input type="number" step="${type === 'integer' ? '1' : 'any'}"${min}${max} ${attrs}>`;
  } else if (typeof schema.maxLength === 'number' && schema.maxLength > 200) {
    control = `<textarea rows="5" maxlength="${schema.maxLength}" ${attrs}></textarea>`;
  } else {
    const format = schema.format === 'email' ? 'email' : schema.format === 'uri' ? 'url' : schema.format === 'date' ? 'date' : 'text';
    const maxLength = typeof schema.maxLength === 'number' ? ` maxlength="${schema.maxLength}"` : '';
    control = `<input type="${format}"${maxLength} ${attrs}>`;
  }
  return `    <label for="${id}">${label}</label>\n    ${control}${hint}`;
}

export function scaffoldFiles(appName: string, contract: AppContract): Array<{ path: string; content: string; encoding: 'utf8' }> {
  const properties = isObject(contract.input.properties) ? contract.input.properties : {};
  const required = new Set(Array.isArray(contract.input.required) ? contract.input.required : []);
  const fields = Object.entries(properties)
    .filter(([, s]) => isObject(s))
    .map(([name, s]) => fieldHtml(name, s as Schema, required.has(name)));
  const title = escapeHtml(appName);
  const html = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${title}</title>
  <link rel="stylesheet" href="style.css">
</head>
<body>
  <main>
  <h1>${title}</h1>
  <form id="app-form" novalidate>
${fields.join('\n')}
    <button type="submit">Send</button>
  </form>
  <output id="app-output" aria-live="polite"></output>
  </main>
  <script src="app-client.js"></script>
  <script src="app.js"></script>
</body>
</html>
`;
  const js = `// Calls the app's linked flow through the generated client (app-client.js, window.AppClient).
(function () {
  var form = document.getElementById('app-form');
  var output = document.getElementById('app-output');
  function show(value, state) {
    output.textContent = typeof value === 'string' ? value : JSON.stringify(value, null, 2);
    output.setAttribute('data-state', state);
  }
  form.addEventListener('submit', function (event) {
    event.preventDefault();
    var button = form.querySelector('button[type=submit]');
    button.disabled = true;
    show('Working…', 'pending');
    window.AppClient.call(window.AppClient.readForm(form)).then(
      function (answer) { show(answer, 'done'); },
      function (error) { show(error.message, 'error'); }
    ).then(function () { button.disabled = false; });
  });
})();
`;
  const css = `:root { font-family: system-ui, sans-serif; color: #1d1d1f; background: #f6f6f7; }
main { max-width: 40rem; margin: 2rem auto; padding: 1.5rem; background: #fff; border-radius: 8px; box-shadow: 0 1px 3px rgba(0, 0, 0, 0.1); }
form { display: grid; gap: 0.5rem; }
label { font-weight: 600; margin-top: 0.5rem; }
label.check { font-weight: normal; }
input, select, textarea, button { font: inherit; padding: 0.5rem; border: 1px solid #c7c7cc; border-radius: 6px; }
button { margin-top: 1rem; background: #0a66c2; color: #fff; border: none; cursor: pointer; }
button:disabled { opacity: 0.6; }
small { color: #6e6e73; }
output { display: block; margin-top: 1.5rem; white-space: pre-wrap; font-family: ui-monospace, monospace; }
output[data-state="error"] { color: #b00020; }
`;
  return [
    { path: 'index.html', content: html, encoding: 'utf8' },
    { path: 'app.js', content: js, encoding: 'utf8' },
    { path: 'style.css', content: css, encoding: 'utf8' },
  ];
}
