/**
 * How mail leaves, once it is due (services/mail-queue.ts decides when: actions queue it, the effects door and the
 * cron send it). `cloudflare` sends through the Email Routing `send_email` binding; `outbox` (the default for local
 * development and tests) keeps messages in the `mail_outbox` table, where `npm run mail` and the tests read them.
 */
import type { Config, Env } from "../env";
import { config } from "../env";
import { db, now } from "../db/client";
import { newId } from "../db/ids";
import { mailOutbox } from "../db/schema";

export interface Mail {
  to: string;
  subject: string;
  text: string;
  html: string;
}

export interface Mailer {
  send(from: string, mail: Mail): Promise<void>;
}

/** The sender of this instance's mail: `MAIL_FROM`, else the instance's address, else no-reply at its host. */
export function fromAddress(cfg: Config, host: string): string {
  return cfg.mailFrom || cfg.email || `no-reply@${host.split(":")[0]}`;
}

const b64 = (s: string) => {
  const bytes = new TextEncoder().encode(s);
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/.{1,76}/g, "$&\r\n");
};
const encodeHeader = (s: string) => (/^[\x20-\x7e]*$/.test(s) ? s : `=?UTF-8?B?${b64(s).replace(/\r\n/g, "")}?=`);

/** A multipart/alternative RFC 5322 message. */
export function mime(from: string, mail: Mail): string {
  const boundary = `starling-${newId()}`;
  return [
    `From: ${from}`,
    `To: ${mail.to}`,
    `Subject: ${encodeHeader(mail.subject)}`,
    `Date: ${new Date().toUTCString()}`,
    `Message-ID: <${newId()}@${from.split("@")[1] ?? "localhost"}>`,
    "MIME-Version: 1.0",
    `Content-Type: multipart/alternative; boundary="${boundary}"`,
    "",
    `--${boundary}`,
    "Content-Type: text/plain; charset=utf-8",
    "Content-Transfer-Encoding: base64",
    "",
    b64(mail.text),
    `--${boundary}`,
    "Content-Type: text/html; charset=utf-8",
    "Content-Transfer-Encoding: base64",
    "",
    b64(mail.html),
    `--${boundary}--`,
    "",
  ].join("\r\n");
}

class OutboxMailer implements Mailer {
  constructor(private env: Env) {}
  async send(from: string, mail: Mail) {
    await db(this.env)
      .insert(mailOutbox)
      .values({ id: newId(), from, ...mail, createdAt: now() });
    console.log(`[mail outbox] to=${mail.to} subject=${JSON.stringify(mail.subject)}`);
  }
}

class CloudflareMailer implements Mailer {
  constructor(private binding: SendEmail) {}
  async send(from: string, mail: Mail) {
    const { EmailMessage } = await import("cloudflare:email");
    await this.binding.send(new EmailMessage(from, mail.to, mime(from, mail)));
  }
}

export function mailer(env: Env): Mailer {
  if (config(env).mailer === "cloudflare") {
    if (!env.EMAIL) throw new Error('MAILER is "cloudflare" but no send_email binding named EMAIL is configured');
    return new CloudflareMailer(env.EMAIL);
  }
  return new OutboxMailer(env);
}
