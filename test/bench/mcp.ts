import type { Report } from './support.js';

export async function benchMcp(_report: Report): Promise<void> {
  throw new Error('mcp benchmark not written yet');
}
