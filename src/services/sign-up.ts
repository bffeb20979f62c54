/**
 * Signing up, the one way (issue 34): the client API's `POST /api/v1/accounts` and the web page `/auth/sign_up`
 * both come here. The agreement, the captcha when one is configured, then `register` (services/registration.ts: the
 * instance's rules, invites, approval, confirmation); the mails that follow (the confirmation link, the admins'
 * approval requests) are queued in its batch and sent by the Effects door.
 */
import type { DB } from "../db/client";
import type { Config, Env } from "../env";
import type { Effects } from "./effects";
import type { AppRow } from "./apps";
import { fieldErrors, register, type Registered, type RegistrationInput } from "./registration";
import { verifyCaptcha } from "./captcha";

export interface SignUpInput extends RegistrationInput {
  agreement: boolean;
  captcha_token?: string;
  captcha_solution?: string;
  captcha_answer_data?: string;
}

/** Registers the account (a token for `app`, when given and the account may sign in at once). */
export async function signUp(
  env: Env,
  d: DB,
  cfg: Config,
  base: string,
  app: AppRow | null,
  input: SignUpInput,
): Promise<{ made: Registered; effects: Effects }> {
  if (!input.agreement) throw fieldErrors({ agreement: ["must be accepted"] });
  if (cfg.captcha !== "none")
    await verifyCaptcha(env, input.captcha_token, input.captcha_solution, input.captcha_answer_data);
  const made = await register(d, cfg, base, app, input);
  return { made, effects: { mail: made.mailed } };
}
