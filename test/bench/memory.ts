import type { Report } from './support.js';

export async function benchMemory(_report: Report): Promise<void> {
  throw new Error('memory benchmark not written yet');
}
