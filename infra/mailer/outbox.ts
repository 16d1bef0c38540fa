import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../../ports/logger.js';
import type { Mail, Mailer } from '../../ports/mailer.js';

/**
 * The embedded mailer: each mail is appended as one JSON line to DATA_DIR/outbox/mail.jsonl, where
 * an operator (or a test) reads it. The log line names the recipient and subject only, because
 * bodies carry single-use secrets (reset links, invitations) that must never reach the logs.
 */
export class OutboxMailer implements Mailer {
  readonly adapter = 'outbox';
  readonly file: string;

  constructor(dataDir: string, private readonly logger: Logger, private readonly now: () => Date = () => new Date()) {
    const dir = join(dataDir, 'outbox');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    this.file = join(dir, 'mail.jsonl');
  }

  async send(mail: Mail): Promise<void> {
    appendFileSync(this.file, `${JSON.stringify({ at: this.now().toISOString(), ...mail })}\n`, { mode: 0o600 });
    this.logger.info({ to: mail.to, subject: mail.subject, outbox: this.file }, 'mail written to the outbox');
  }
}
