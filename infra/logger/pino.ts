import { pino, type DestinationStream } from 'pino';
import type { Logger } from '../../ports/logger.js';

/** JSON logs on stdout. Secrets never reach here: redact the usual places anyway as a second line of defence. */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'flowsvc' },
      redact: { paths: ['req.headers.authorization', 'req.headers["x-trigger-key"]', '*.password', '*.token', '*.secret'], censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  ) as unknown as Logger;
}
