import { PDFDocument, PDFName, PDFHexString, PDFNumber, StandardFonts } from 'pdf-lib';

/** Real PDFs for the PDF text tests, made with pdf-lib (no fixtures checked in). */

/** A text PDF with `pages` pages; page n says "Page n of N" and `linesPerPage` lines of words. */
export async function textPdf(pages: number, options: { linesPerPage?: number; marker?: string } = {}): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const lines = options.linesPerPage ?? 3;
  for (let n = 1; n <= pages; n += 1) {
    const page = doc.addPage([595, 842]);
    page.drawText(`Page ${n} of ${pages}${options.marker ? ` ${options.marker}` : ''}`, { x: 50, y: 790, size: 14, font });
    for (let l = 0; l < lines; l += 1) {
      page.drawText(`Line ${l + 1}: the quick brown fox jumps over the lazy dog ${n}-${l}`, { x: 50, y: 760 - l * 16, size: 10, font });
    }
  }
  return doc.save({ useObjectStreams: false });
}

/** A PDF whose pages hold only a drawn image (no text layer): what a scan looks like. */
export async function imageOnlyPdf(pages = 2): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  // A 1x1 PNG.
  const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
  const image = await doc.embedPng(png);
  for (let n = 0; n < pages; n += 1) {
    const page = doc.addPage([595, 842]);
    page.drawImage(image, { x: 0, y: 0, width: 595, height: 842 });
  }
  return doc.save();
}

/**
 * A PDF with a standard security handler (RC4, revision 2) whose user password is not empty:
 * pdf.js asks for a password. pdf-lib does not encrypt, so the /Encrypt dictionary is added by hand
 * (the content itself stays readable bytes, which does not matter: the reader must refuse it).
 */
export async function encryptedPdf(): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  doc.addPage().drawText('secret text', { x: 50, y: 700, size: 12, font });
  const ctx = doc.context;
  const encrypt = ctx.obj({
    Filter: PDFName.of('Standard'),
    V: PDFNumber.of(1),
    R: PDFNumber.of(2),
    Length: PDFNumber.of(40),
    P: PDFNumber.of(-44),
    O: PDFHexString.of('a'.repeat(64)),
    U: PDFHexString.of('b'.repeat(64)),
  });
  const ref = ctx.register(encrypt);
  ctx.trailerInfo.Encrypt = ref;
  ctx.trailerInfo.ID = ctx.obj([PDFHexString.of('0123456789abcdef0123456789abcdef'), PDFHexString.of('0123456789abcdef0123456789abcdef')]);
  return doc.save({ useObjectStreams: false });
}

/** Not a PDF at all past its header: a cut-off document. */
export async function corruptPdf(): Promise<Uint8Array> {
  const good = await textPdf(3);
  const cut = Buffer.from(good.subarray(0, 40));
  return Buffer.concat([cut, Buffer.from('\n garbage \u0000\u0001 obj << /Type /Catalog /Pages 99 0 R >> endobj\n%%EOF')]);
}

/** Random bytes with no PDF header. */
export function notAPdf(): Uint8Array {
  return Buffer.from('this is plain text, not a PDF at all\n'.repeat(20));
}

/**
 * A zip-bomb-like PDF: one page whose content stream is `inflatedBytes` of text-drawing operators
 * compressed with Flate to a tiny file (the text drawn is `marker` repeated).
 */
export async function bombPdf(inflatedBytes: number, marker = 'BOMB'): Promise<Uint8Array> {
  const { deflateSync } = await import('node:zlib');
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const page = doc.addPage([595, 842]);
  page.drawText('cover', { x: 50, y: 800, size: 10, font });
  const fontName = page.node.Resources()!.lookup(PDFName.of('Font'), (await import('pdf-lib')).PDFDict).keys()[0]!.asString();
  const op = Buffer.from(`BT ${fontName} 10 Tf 50 700 Td (${marker}) Tj ET\n`);
  const body = Buffer.alloc(inflatedBytes);
  for (let i = 0; i + op.length <= inflatedBytes; i += op.length) op.copy(body, i);
  const ctx = doc.context;
  const stream = ctx.stream(deflateSync(body, { level: 9 }), { Filter: 'FlateDecode' });
  page.node.set(PDFName.of('Contents'), ctx.register(stream));
  return doc.save({ useObjectStreams: false });
}
