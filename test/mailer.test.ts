import { describe, expect, it } from "vitest";
import { mime } from "../src/services/mailer";

describe("mail encoding for the Cloudflare mailer", () => {
  it("builds a multipart/alternative message with encoded subject and bodies", () => {
    const raw = mime("no-reply@social.example", {
      to: "ada@example.com",
      subject: "Bienvenue à Starling",
      text: "Héllo",
      html: "<p>Héllo</p>",
    });
    const [head, body] = raw.split("\r\n\r\n");
    expect(head).toContain("From: no-reply@social.example");
    expect(head).toContain("To: ada@example.com");
    expect(head).toMatch(/Subject: =\?UTF-8\?B\?[A-Za-z0-9+/=]+\?=/);
    expect(head).toMatch(/Message-ID: <[0-9A-Z]{26}@social\.example>/);
    const boundary = /boundary="([^"]+)"/.exec(head)![1];
    const parts = raw.split(`--${boundary}`).slice(1, -1);
    expect(parts).toHaveLength(2);
    const decode = (part: string) =>
      new TextDecoder().decode(
        Uint8Array.from(atob(part.split("\r\n\r\n")[1].replace(/\r\n/g, "")), (c) => c.charCodeAt(0)),
      );
    expect(decode(parts[0])).toBe("Héllo");
    expect(decode(parts[1])).toBe("<p>Héllo</p>");
    expect(raw.endsWith(`--${boundary}--\r\n`)).toBe(true);
    expect(body.startsWith(`--${boundary}\r\n`)).toBe(true);
  });
});
