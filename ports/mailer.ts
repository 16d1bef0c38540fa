export interface Mail {
  to: string;
  subject: string;
  text: string;
}

/** Outgoing mail (password resets, invitations). Adapters: SMTP (nodemailer, `SMTP_URL`) or the embedded outbox. */
export interface Mailer {
  readonly adapter: string;
  send(mail: Mail): Promise<void>;
}
