import type { Report } from './support.js';

export async function benchMessaging(_report: Report): Promise<void> {
  throw new Error('messaging benchmark not written yet');
}
