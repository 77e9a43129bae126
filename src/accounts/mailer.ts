import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import nodemailer from "nodemailer";
import type { Logger } from "../log.ts";

export interface Mail {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  send(mail: Mail): Promise<void>;
}

/** Real mail over SMTP (SMTP_URL). */
export function smtpMailer(url: string, from: string): Mailer {
  const transport = nodemailer.createTransport(url);
  return {
    async send(mail) {
      await transport.sendMail({ from, ...mail });
    },
  };
}

/**
 * The embedded default without SMTP: each message is written as an .eml file into the dev outbox
 * directory and its text is logged, so a developer can sign up on a laptop with no mail server.
 */
export function devOutbox(dir: string, from: string, log: Logger): Mailer {
  return {
    async send(mail) {
      mkdirSync(dir, { recursive: true });
      const file = join(dir, `${new Date().toISOString().replaceAll(":", "-")}-${mail.to.replace(/[^a-z0-9@.+_-]/gi, "_")}.eml`);
      writeFileSync(file, `From: ${from}\r\nTo: ${mail.to}\r\nSubject: ${mail.subject}\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n${mail.text}\r\n`);
      log.info({ to: mail.to, file, text: mail.text }, "dev outbox: mail not sent (no SMTP_URL), kept here instead");
    },
  };
}
