/**
 * The code of the PDF text worker thread, evaluated by `new Worker(code, { eval: true })` (a classic
 * CommonJS script: the same code under tsx and in dist/). It loads unpdf (pdf.js) by the URL the
 * main thread resolved, reads the document with evaluation, fonts and system fonts off, checks the
 * page count before reading any page, and reads pages one at a time, keeping at most `maxChars`
 * characters. pdf.js parses on this thread, so a hostile document (a content stream that inflates
 * to gigabytes, a page tree that loops) only costs this thread: the main thread terminates it past
 * the time limit, and V8 stops it past its heap limit.
 *
 * The thread stays up between reads (pdf.js loaded once): a job `{ id, bytes, maxPages, maxChars }`
 * is answered `{ id, ok: true, text }` or `{ id, ok: false, reason, message, pages? }` with reason
 * 'encrypted' | 'corrupt' | 'no_text' | 'too_many_pages'.
 */
export const PDF_WORKER_SOURCE = String.raw`
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
// pdf.js may print warnings about broken documents: they never reach the service's output.
for (const name of ['log', 'info', 'warn', 'error', 'debug']) console[name] = () => {};
const NON_TEXT = /[\s\u0000-\u001f\u007f\ufffd]/gu;
const library = import(workerData.unpdfUrl);
library.catch(() => {});
function classify(err) {
  const name = (err && err.name) || '';
  const message = err instanceof Error ? err.message : String(err);
  if (name === 'PasswordException' || /password|encrypt/i.test(message)) return { ok: false, reason: 'encrypted', message: 'the PDF is encrypted (password protected)' };
  return { ok: false, reason: 'corrupt', message: 'the PDF cannot be parsed: ' + message.slice(0, 200) };
}
async function read(job) {
  const { getDocumentProxy } = await library;
  const { bytes, maxPages, maxChars } = job;
  let doc;
  try {
    doc = await getDocumentProxy(new Uint8Array(bytes), { isEvalSupported: false, disableFontFace: true, useSystemFonts: false, stopAtErrors: false, verbosity: 0 });
  } catch (err) {
    return classify(err);
  }
  try {
    const pageCount = doc.numPages;
    if (pageCount > maxPages) return { ok: false, reason: 'too_many_pages', message: 'too many pages', pages: pageCount };
    const limit = maxChars == null ? Infinity : maxChars;
    const pages = [];
    let chars = 0;
    let truncated = false;
    let meaningful = 0;
    for (let n = 1; n <= pageCount; n += 1) {
      const page = await doc.getPage(n);
      const content = await page.getTextContent();
      let text = '';
      for (const it of content.items) if ('str' in it) text += it.str + (it.hasEOL ? '\n' : '');
      page.cleanup();
      meaningful += text.replace(NON_TEXT, '').length;
      if (!truncated) {
        if (chars + text.length > limit) {
          text = text.slice(0, Math.max(0, limit - chars));
          truncated = true;
        }
        chars += text.length;
        pages.push(text);
      }
      // Once cut, later pages are read only while no text at all was found (the "no text layer" verdict).
      if (truncated && meaningful > 0) break;
    }
    if (meaningful === 0) return { ok: false, reason: 'no_text', message: 'the PDF has no text layer (image-only or empty pages)' };
    return { ok: true, text: { pageCount, pages, chars, truncated } };
  } catch (err) {
    return classify(err);
  } finally {
    await doc.destroy().catch(() => {});
  }
}
parentPort.on('message', (job) => {
  read(job).then(
    (answer) => parentPort.postMessage({ id: job.id, ...answer }),
    (err) => parentPort.postMessage({ id: job.id, ...classify(err) }),
  );
});
`;
