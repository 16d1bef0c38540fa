import nodemailer, { type Transporter } from 'nodemailer';
import type { Logger } from '../../ports/logger.js';
import type { Mail, Mailer } from '../../ports/mailer.js';

/** SMTP through nodemailer (`SMTP_URL`, e.g. smtp://user:pass@host:587). Bodies are never logged. */
export class SmtpMailer implements Mailer {
  readonly adapter = 'smtp';
  private readonly transport: Transporter;

  constructor(url: string, private readonly from: string, private readonly logger: Logger) {
    this.transport = nodemailer.createTransport(url);
  }

  async send(mail: Mail): Promise<void> {
    await this.transport.sendMail({ from: this.from, to: mail.to, subject: mail.subject, text: mail.text });
    this.logger.info({ to: mail.to, subject: mail.subject }, 'mail sent');
  }
}
