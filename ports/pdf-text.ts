/**
 * The PDF text port: text of a PDF, page by page, read with a real PDF library
 * (adapter: `infra/pdf/`, unpdf = Mozilla's pdf.js), bounded in pages, bytes and time.
 * Encrypted, corrupt and image-only documents reject with DomainError `PDF_UNREADABLE`
 * (kind `invalid`, details.reason 'encrypted' | 'corrupt' | 'no_text'); more pages than
 * `maxPages` with `PDF_TOO_MANY_PAGES`.
 */
export interface PdfTextOptions {
  maxPages: number;
  /** Stop collecting once this many characters were read (the rest is counted, not kept). */
  maxChars?: number;
  signal?: AbortSignal;
}

export interface PdfText {
  pageCount: number;
  /** One entry per page read, in order. */
  pages: string[];
  /** Characters kept in `pages` and whether the text was cut at `maxChars`. */
  chars: number;
  truncated: boolean;
}

export interface PdfReader {
  read(bytes: Uint8Array, options: PdfTextOptions): Promise<PdfText>;
}
