/**
 * The native captcha: a few characters drawn as a distorted SVG. The answer is not stored: the client gets
 * `answer_data`, an HMAC over the token, the answer and the expiry, and sends it back with the solution.
 * Each token works once (kept in `used_captchas` until it would have expired).
 */
import type { Env } from "../env";
import { db, now } from "../db/client";
import { usedCaptchas } from "../db/schema";
import { randomToken, safeEqual } from "../lib/crypto";
import { instanceSignature } from "./instance-keys";
import { fieldErrors } from "./registration";

const SECONDS_VALID = 300;
// No look-alikes (0/O, 1/I/L).
const ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789";

const sign = instanceSignature;

function draw(answer: string): string {
  const r = crypto.getRandomValues(new Uint8Array(answer.length * 3 + 12));
  const chars = [...answer]
    .map((ch, i) => {
      const x = 18 + i * 28 + (r[i * 3] % 8);
      const y = 38 + (r[i * 3 + 1] % 12);
      const rot = (r[i * 3 + 2] % 50) - 25;
      return `<text x="${x}" y="${y}" transform="rotate(${rot} ${x} ${y})">${ch}</text>`;
    })
    .join("");
  const lines = [0, 1, 2, 3]
    .map(
      (i) =>
        `<line x1="${r[answer.length * 3 + i] % 40}" y1="${r[answer.length * 3 + i + 4] % 60}" x2="${120 + (r[answer.length * 3 + i + 8] % 60)}" y2="${r[i] % 60}" stroke="#555" stroke-width="2"/>`,
    )
    .join("");
  return `<svg xmlns="http://www.w3.org/2000/svg" width="180" height="60" viewBox="0 0 180 60"><rect width="180" height="60" fill="#eee"/><g font-family="monospace" font-size="30" font-weight="bold" fill="#222">${chars}</g>${lines}</svg>`;
}

export interface Captcha {
  type: "none" | "native";
  token?: string;
  url?: string;
  answer_data?: string;
  seconds_valid?: number;
}

export async function newCaptcha(env: Env, kind: "none" | "native"): Promise<Captcha> {
  if (kind === "none") return { type: "none" };
  const pick = crypto.getRandomValues(new Uint8Array(5));
  const answer = [...pick].map((b) => ALPHABET[b % ALPHABET.length]).join("");
  const token = randomToken(16);
  const expires = now() + SECONDS_VALID * 1000;
  const answerData = `${expires}.${await sign(env, `${token}:${answer}:${expires}`)}`;
  const url = `data:image/svg+xml;base64,${btoa(draw(answer))}`;
  return { type: "native", token, url, answer_data: answerData, seconds_valid: SECONDS_VALID };
}

const captchaError = (message: string) => fieldErrors({ captcha: [message] });

/** Throws Pleroma's captcha errors unless the solution is right, in time, and first. */
export async function verifyCaptcha(env: Env, token?: string, solution?: string, answerData?: string): Promise<void> {
  if (!token || !solution || !answerData)
    throw captchaError("Invalid CAPTCHA (Missing parameter: captcha_token, captcha_solution or captcha_answer_data)");
  const [expiresText, mac] = answerData.split(".");
  const expires = Number(expiresText);
  if (!Number.isFinite(expires) || !mac) throw captchaError("Invalid answer data");
  const expected = await sign(env, `${token}:${solution.trim().toUpperCase()}:${expires}`);
  if (!safeEqual(expected, mac)) throw captchaError("Invalid CAPTCHA");
  if (expires < now()) throw captchaError("CAPTCHA expired");
  const d = db(env);
  const inserted = await d.insert(usedCaptchas).values({ token, expiresAt: expires }).onConflictDoNothing().returning();
  if (inserted.length === 0) throw captchaError("CAPTCHA already used");
}
