import { Worker } from 'node:worker_threads';
import { DomainError } from '../../domain/shared/decider.js';
import type { PdfReader, PdfText, PdfTextOptions } from '../../ports/pdf-text.js';
import { PDF_WORKER_SOURCE } from './worker-source.js';

/**
 * The PDF text adapter over unpdf (Mozilla's pdf.js built for servers). Each read runs in its own
 * worker thread (infra/pdf/worker-source.ts) with a heap limit, terminated past `timeoutMs` or when
 * the caller's signal aborts: pdf.js parses synchronously, so a hostile document (a Flate stream
 * that inflates to gigabytes) could otherwise hold the event loop for tens of seconds. At most
 * `concurrency` reads run at once; others wait their turn (their time starts when they run).
 *
 * Refusals: PDF_UNREADABLE (invalid; details.reason 'encrypted' | 'corrupt' | 'no_text'),
 * PDF_TOO_MANY_PAGES (too_large), PDF_TOO_COMPLEX (too_large: the worker passed its heap limit),
 * PDF_TIMEOUT (timeout), PDF_ABORTED (cancelled).
 */
export interface UnpdfReaderOptions {
  /** Wall-clock bound of one read (parse + text of the pages kept). */
  timeoutMs: number;
  /** Reads running at once (each a thread with its own heap). Default 2. */
  concurrency?: number;
  /** Heap limit of a reading thread, in MB. Default 256. */
  maxHeapMb?: number;
}

export function pdfUnreadable(reason: 'encrypted' | 'corrupt' | 'no_text', message: string): DomainError {
  return new DomainError('PDF_UNREADABLE', message, 'invalid', { reason });
}

type WorkerAnswer =
  | { ok: true; text: PdfText }
  | { ok: false; reason: 'encrypted' | 'corrupt' | 'no_text' | 'too_many_pages'; message: string; pages?: number };

const UNPDF_URL = import.meta.resolve('unpdf');

export function createPdfReader(options: UnpdfReaderOptions): PdfReader {
  const slots = createSemaphore(options.concurrency ?? 2);
  const maxHeapMb = options.maxHeapMb ?? 256;
  const pool = createWorkerPool(maxHeapMb);
  return {
    async read(bytes: Uint8Array, opts: PdfTextOptions): Promise<PdfText> {
      if (bytes.byteLength < 8 || !looksLikePdf(bytes)) throw pdfUnreadable('corrupt', 'the file is not a PDF (no %PDF- header)');
      const release = await slots.acquire(opts.signal);
      try {
        const answer = await runWorker(pool, bytes, opts, options.timeoutMs, maxHeapMb);
        if (answer.ok) return answer.text;
        if (answer.reason === 'too_many_pages') {
          throw new DomainError('PDF_TOO_MANY_PAGES', `the PDF has ${answer.pages} pages; at most ${opts.maxPages} are read`, 'too_large', { pages: answer.pages, maxPages: opts.maxPages });
        }
        throw pdfUnreadable(answer.reason, answer.message);
      } finally {
        release();
      }
    },
  };
}

const aborted = () => new DomainError('PDF_ABORTED', 'the PDF read was cancelled', 'cancelled');

/** A reading thread with pdf.js loaded, reused for up to READS_PER_WORKER reads; discarded after any timeout, abort or crash. */
const READS_PER_WORKER = 50;
interface PdfWorker {
  worker: Worker;
  reads: number;
}

function createWorkerPool(maxHeapMb: number) {
  const idle: PdfWorker[] = [];
  const spawn = (): PdfWorker => {
    const worker = new Worker(PDF_WORKER_SOURCE, {
      eval: true,
      workerData: { unpdfUrl: UNPDF_URL },
      resourceLimits: { maxOldGenerationSizeMb: maxHeapMb, maxYoungGenerationSizeMb: 32 },
    });
    worker.on('error', () => {});
    return { worker, reads: 0 };
  };
  return {
    take(): PdfWorker {
      const w = idle.pop() ?? spawn();
      w.worker.ref();
      return w;
    },
    give(w: PdfWorker) {
      w.reads += 1;
      if (w.reads >= READS_PER_WORKER) return void w.worker.terminate();
      // An idle thread does not keep the process alive.
      w.worker.unref();
      idle.push(w);
    },
    discard(w: PdfWorker) {
      void w.worker.terminate();
    },
  };
}

let nextJob = 0;

function runWorker(pool: ReturnType<typeof createWorkerPool>, bytes: Uint8Array, opts: PdfTextOptions, timeoutMs: number, maxHeapMb: number): Promise<WorkerAnswer> {
  if (opts.signal?.aborted) return Promise.reject(aborted());
  const w = pool.take();
  const { worker } = w;
  const id = ++nextJob;
  return new Promise((resolve, reject) => {
    let done = false;
    const finish = (outcome: WorkerAnswer | Error, reusable: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
      if (reusable) pool.give(w);
      else pool.discard(w);
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
    };
    const onAbort = () => finish(aborted(), false);
    const onMessage = (answer: WorkerAnswer & { id: number }) => {
      if (answer.id === id) finish(answer, true);
    };
    const onError = (err: Error & { code?: string }) => {
      if (err.code === 'ERR_WORKER_OUT_OF_MEMORY') finish(new DomainError('PDF_TOO_COMPLEX', `reading the PDF needed more than ${maxHeapMb} MB`, 'too_large', { maxHeapMb }), false);
      else finish(pdfUnreadable('corrupt', `the PDF cannot be parsed: ${err.message.slice(0, 200)}`), false);
    };
    const onExit = (code: number) => finish(new Error(`PDF worker exited with code ${code}`), false);
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(() => finish(new DomainError('PDF_TIMEOUT', `reading the PDF took longer than ${timeoutMs} ms`, 'timeout', { timeoutMs }), false), timeoutMs);
    worker.on('message', onMessage);
    worker.once('error', onError);
    worker.once('exit', onExit);
    // A copy the thread owns (pdf.js detaches the buffer it is given).
    const copy = new Uint8Array(bytes);
    worker.postMessage({ id, bytes: copy, maxPages: opts.maxPages, maxChars: opts.maxChars ?? null }, [copy.buffer as ArrayBuffer]);
  });
}

function looksLikePdf(bytes: Uint8Array): boolean {
  // The header may follow up to 1 KiB of garbage (pdf.js accepts that too).
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.byteLength, 1024)).toString('latin1');
  return head.includes('%PDF-');
}

function createSemaphore(size: number) {
  let free = Math.max(1, size);
  const waiting: Array<() => void> = [];
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else free += 1;
  };
  return {
    acquire(signal?: AbortSignal): Promise<() => void> {
      if (free > 0) {
        free -= 1;
        return Promise.resolve(release);
      }
      return new Promise((resolve, reject) => {
        const grant = () => {
          signal?.removeEventListener('abort', cancel);
          resolve(release);
        };
        const cancel = () => {
          const i = waiting.indexOf(grant);
          if (i >= 0) waiting.splice(i, 1);
          reject(aborted());
        };
        signal?.addEventListener('abort', cancel, { once: true });
        waiting.push(grant);
      });
    },
  };
}
