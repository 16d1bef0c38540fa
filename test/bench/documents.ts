import type { Report } from './support.js';

export async function benchDocuments(_report: Report): Promise<void> {
  throw new Error('documents benchmark not written yet');
}
