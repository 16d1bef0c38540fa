/**
 * Web extension: PDF text extraction (infra/pdf: unpdf = pdf.js, in a worker thread per read) on a
 * 300-page PDF made here with pdf-lib (30 lines a page, about 2,000 characters), and readable text of
 * 2 MiB of HTML (infra/html: Readability over linkedom).
 *  - pages/s of a full read (all 300 pages, no character cap), median of 3; aim ≥ 100 pages/s
 *    (a 300-page upload answered in ≤ 3 s of extraction);
 *  - reference: the same document read by unpdf in this thread, without the worker (what the
 *    isolation costs: thread start and pdf.js loading);
 *  - memory: the process's peak resident memory above its level before the read (the worker's heap
 *    included, sampled every 10 ms); aim ≤ 256 MB (the worker's heap limit);
 *  - HTML: milliseconds to read 2 MiB of article HTML; aim ≤ 2,000 ms.
 */
import { getDocumentProxy } from 'unpdf';
import { createHtmlReader } from '../../infra/html/readable.js';
import { createPdfReader } from '../../infra/pdf/unpdf.js';
import { textPdf } from '../support/extension-pdfs.js';
import { now, type Report } from './support.js';

const BENCH = 'extension';
const PAGES = 300;
const RUNS = 3;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function peakRssDuring<T>(work: () => Promise<T>): Promise<{ result: T; peakMb: number }> {
  const base = process.memoryUsage().rss;
  let peak = base;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10);
  try {
    const result = await work();
    peak = Math.max(peak, process.memoryUsage().rss);
    return { result, peakMb: (peak - base) / (1024 * 1024) };
  } finally {
    clearInterval(timer);
  }
}

export async function benchExtension(report: Report): Promise<void> {
  const pdf = await textPdf(PAGES, { linesPerPage: 30 });
  report.info(BENCH, `PDF: ${PAGES} pages, ${(pdf.byteLength / 1024).toFixed(0)} KiB`);
  const reader = createPdfReader({ timeoutMs: 120_000 });

  const rates: number[] = [];
  const peaks: number[] = [];
  let chars = 0;
  for (let i = 0; i < RUNS; i += 1) {
    const started = now();
    const { result, peakMb } = await peakRssDuring(() => reader.read(pdf, { maxPages: PAGES }));
    const seconds = (now() - started) / 1000;
    if (result.pageCount !== PAGES) throw new Error(`read ${result.pageCount} pages`);
    chars = result.chars;
    rates.push(PAGES / seconds);
    peaks.push(peakMb);
  }
  report.figure(BENCH, `PDF text, ${PAGES} pages (worker thread per read)`, median(rates), 'pages/s', { digits: 0, target: { op: '>=', value: 100 }, note: `median of ${RUNS}; ${chars.toLocaleString('en-US')} characters` });
  report.figure(BENCH, `PDF text, ${PAGES} pages: peak memory above baseline`, Math.max(...peaks), 'MB', { digits: 0, target: { op: '<=', value: 256 }, note: 'process RSS, worker heap included' });

  // Reference: pdf.js in this thread, no worker.
  const refRates: number[] = [];
  for (let i = 0; i < RUNS; i += 1) {
    const started = now();
    const doc = await getDocumentProxy(new Uint8Array(pdf), { isEvalSupported: false, disableFontFace: true, useSystemFonts: false, verbosity: 0 });
    for (let n = 1; n <= doc.numPages; n += 1) {
      const page = await doc.getPage(n);
      await page.getTextContent();
      page.cleanup();
    }
    await doc.destroy();
    refRates.push(PAGES / ((now() - started) / 1000));
  }
  report.figure(BENCH, `reference: pdf.js in the main thread, ${PAGES} pages`, median(refRates), 'pages/s', { digits: 0, note: 'no isolation: what the worker costs' });

  const html = `<html><head><title>Bench</title></head><body><article>${'<p>Some words of a long article, with commas, names and numbers 1234.</p>\n'.repeat(28_000)}</article></body></html>`;
  const htmlReader = createHtmlReader();
  const times: number[] = [];
  for (let i = 0; i < RUNS; i += 1) {
    const started = now();
    htmlReader.read(html, { maxBytes: 2 * 1024 * 1024, maxChars: 200_000 });
    times.push(now() - started);
  }
  report.figure(BENCH, `readable text of ${(Buffer.byteLength(html) / (1024 * 1024)).toFixed(1)} MiB of HTML`, median(times), 'ms', { digits: 0, target: { op: '<=', value: 2000 }, note: `median of ${RUNS}` });
}
