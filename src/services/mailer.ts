/**
 * The one mailer interface. `cloudflare` sends through the Email Routing `send_email` binding; `outbox`
 * (the default for local development and tests) keeps messages in the `mail_outbox` table, where
 * `npm run mail` and the tests read them.
 */
import type { Env } from "../env";
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
  send(mail: Mail): Promise<void>;
}

function fromAddress(env: Env, host: string): string {
  return config(env).mailFrom || config(env).email || `no-reply@${host.split(":")[0]}`;
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
  constructor(
    private env: Env,
    private from: string,
  ) {}
  async send(mail: Mail) {
    await db(this.env)
      .insert(mailOutbox)
      .values({ id: newId(), from: this.from, ...mail, createdAt: now() });
    console.log(`[mail outbox] to=${mail.to} subject=${JSON.stringify(mail.subject)}`);
  }
}

class CloudflareMailer implements Mailer {
  constructor(
    private binding: SendEmail,
    private from: string,
  ) {}
  async send(mail: Mail) {
    const { EmailMessage } = await import("cloudflare:email");
    await this.binding.send(new EmailMessage(this.from, mail.to, mime(this.from, mail)));
  }
}

export function mailer(env: Env, host: string): Mailer {
  const from = fromAddress(env, host);
  if (config(env).mailer === "cloudflare") {
    if (!env.EMAIL) throw new Error('MAILER is "cloudflare" but no send_email binding named EMAIL is configured');
    return new CloudflareMailer(env.EMAIL, from);
  }
  return new OutboxMailer(env, from);
}
