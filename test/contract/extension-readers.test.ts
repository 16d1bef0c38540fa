import { expect } from 'chai';
import { DomainError } from '../../domain/shared/decider.js';
import { createHtmlReader, flattenDeepTags } from '../../infra/html/readable.js';
import { createPdfReader } from '../../infra/pdf/unpdf.js';
import { bombPdf, corruptPdf, encryptedPdf, imageOnlyPdf, notAPdf, textPdf } from '../support/extension-pdfs.js';

/** The PDF text and readable-text adapters of the web extension, on real documents made here. */

async function refusal(work: Promise<unknown>): Promise<DomainError> {
  try {
    await work;
  } catch (err) {
    expect(err).to.be.instanceOf(DomainError);
    return err as DomainError;
  }
  return expect.fail('expected a refusal') as never;
}

describe('PDF text (infra/pdf, unpdf in a worker thread)', function () {
  this.timeout(60_000);
  const reader = createPdfReader({ timeoutMs: 20_000 });

  it('reads a multi-page PDF page by page, in order', async () => {
    const text = await reader.read(await textPdf(4, { marker: 'MARK' }), { maxPages: 300 });
    expect(text.pageCount).to.equal(4);
    expect(text.pages).to.have.length(4);
    text.pages.forEach((p, i) => expect(p).to.include(`Page ${i + 1} of 4 MARK`));
    expect(text.truncated).to.equal(false);
    expect(text.chars).to.equal(text.pages.join('').length);
  });

  it('keeps at most maxChars characters and says it cut', async () => {
    const text = await reader.read(await textPdf(10), { maxPages: 300, maxChars: 300 });
    expect(text.chars).to.equal(300);
    expect(text.pages.join('').length).to.equal(300);
    expect(text.truncated).to.equal(true);
    expect(text.pageCount).to.equal(10);
  });

  it('refuses more pages than maxPages before reading them (PDF_TOO_MANY_PAGES, too_large)', async () => {
    const err = await refusal(reader.read(await textPdf(12, { linesPerPage: 0 }), { maxPages: 11 }));
    expect(err.code).to.equal('PDF_TOO_MANY_PAGES');
    expect(err.kind).to.equal('too_large');
    expect(err.details).to.deep.equal({ pages: 12, maxPages: 11 });
  });

  for (const [what, make, reason] of [
    ['an encrypted PDF', encryptedPdf, 'encrypted'],
    ['a corrupt PDF', corruptPdf, 'corrupt'],
    ['bytes that are not a PDF', async () => notAPdf(), 'corrupt'],
    ['an image-only PDF', () => imageOnlyPdf(2), 'no_text'],
  ] as const) {
    it(`${what}: PDF_UNREADABLE with reason ${reason}`, async () => {
      const err = await refusal(reader.read(await make(), { maxPages: 300 }));
      expect(err.code).to.equal('PDF_UNREADABLE');
      expect(err.kind).to.equal('invalid');
      expect(err.details).to.deep.equal({ reason });
    });
  }

  it('a zip-bomb-like PDF (200 KB inflating to 64 MiB) is stopped at the time limit while the event loop stays free', async () => {
    const bomb = await bombPdf(64 * 1024 * 1024);
    expect(bomb.byteLength).to.be.below(1024 * 1024);
    const fast = createPdfReader({ timeoutMs: 1500 });
    let ticks = 0;
    const timer = setInterval(() => (ticks += 1), 50);
    const started = Date.now();
    const err = await refusal(fast.read(bomb, { maxPages: 10, maxChars: 1000 }));
    clearInterval(timer);
    expect(err.code).to.equal('PDF_TIMEOUT');
    expect(err.kind).to.equal('timeout');
    expect(Date.now() - started).to.be.below(5000);
    expect(ticks, 'the main thread kept running').to.be.above(10);
  });

  it('an aborted read rejects with PDF_ABORTED', async () => {
    const controller = new AbortController();
    const pending = reader.read(await textPdf(50), { maxPages: 300, signal: controller.signal });
    controller.abort();
    const err = await refusal(pending);
    expect(err.code).to.equal('PDF_ABORTED');
  });
});

describe('readable text (infra/html, Readability over linkedom)', () => {
  const reader = createHtmlReader();
  const limits = { maxBytes: 2 * 1024 * 1024, maxChars: 200_000 };

  it('keeps the article, drops scripts, styles and frames, and runs nothing', () => {
    (globalThis as { pwned?: number }).pwned = undefined;
    const html = `<html><head><title>T</title><script>globalThis.pwned=1;SCRIPT</script><style>STYLE</style></head>
      <body onload="globalThis.pwned=2"><article><h1>Head</h1><p>${'Readable words of the article. '.repeat(20)}</p>
      <img src=x onerror="globalThis.pwned=3"><noscript>NOSCRIPT</noscript><template>TEMPLATE</template></article></body></html>`;
    const out = reader.read(html, limits);
    expect(out.text).to.include('Readable words of the article.');
    for (const hidden of ['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'pwned']) expect(out.text).to.not.include(hidden);
    expect(out.title).to.equal('T');
    expect((globalThis as { pwned?: number }).pwned).to.equal(undefined);
  });

  it('huge nesting is flattened before parsing and read in bounded time', () => {
    const deep = `<html><body>${'<div>'.repeat(150_000)}INNER${'</div>'.repeat(150_000)}</body></html>`;
    const started = Date.now();
    const out = reader.read(deep, limits);
    expect(out.text).to.include('INNER');
    expect(Date.now() - started).to.be.below(10_000);
    const flat = flattenDeepTags('<b>'.repeat(300) + 'x');
    expect(flat.match(/<b>/g)).to.have.length(256);
  });

  it('refuses more than maxBytes (HTML_TOO_LARGE) and cuts the text at maxChars', () => {
    expect(() => reader.read('x'.repeat(101), { maxBytes: 100, maxChars: 10 })).to.throw(DomainError).with.property('code', 'HTML_TOO_LARGE');
    const out = reader.read(`<p>${'word '.repeat(1000)}</p>`, { maxBytes: 1_000_000, maxChars: 50 });
    expect(out.chars).to.equal(50);
    expect(out.truncated).to.equal(true);
  });
});
