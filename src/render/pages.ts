/** Server-rendered HTML pages (OAuth authorize, e-mail confirmation). Values are escaped by `html`. */
import { html, raw } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";
import { settingsNav } from "./settings-nav";

type Body = HtmlEscapedString | Promise<HtmlEscapedString>;

const STYLE = `body{font-family:system-ui,sans-serif;background:#f4f5f7;color:#1b1f23;display:flex;justify-content:center;padding:3rem 1rem;margin:0}
main{background:#fff;border-radius:10px;box-shadow:0 2px 12px #0002;padding:2rem;max-width:24rem;width:100%}
h1{font-size:1.3rem;margin-top:0}label{display:block;margin:.8rem 0 .3rem;font-weight:600}
input[type=text],input[type=password]{width:100%;box-sizing:border-box;padding:.6rem;border:1px solid #c8ccd1;border-radius:6px;font-size:1rem}
.actions{display:flex;flex-direction:row-reverse;gap:.6rem;margin-top:1.2rem}button{flex:1;padding:.7rem;border:0;border-radius:6px;font-size:1rem;cursor:pointer}
button[value=approve]{background:#5b4cdb;color:#fff}button[value=deny]{background:#e4e6ea}
.error{background:#fde8e8;color:#9b1c1c;padding:.6rem;border-radius:6px}.scopes{color:#555}code{font-size:1.1rem;word-break:break-all;background:#f0f0f3;padding:.4rem;display:block}
nav.settings{font-size:.9rem;margin-bottom:1rem}.checklist{padding-left:1.2rem}`;

/**
 * A small centred page with a heading and a form (every page of this file, and render/interaction-pages.ts).
 * No referrer by default (these URLs may carry tokens); a form whose POST is checked by its `Origin` needs
 * `same-origin`, since under `no-referrer` browsers send `Origin: null`.
 */
export function page(title: string, body: Body, referrer: "no-referrer" | "same-origin" = "no-referrer") {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="${referrer}"><title>${title}</title><style>${raw(STYLE)}</style></head>
<body><main>${body}</main></body></html>`;
}

export interface AuthorizeForm {
  instance: string;
  appName: string;
  scopes: string[];
  csrf: string;
  hidden: Record<string, string | undefined>;
  /** Signed-in user, when the session cookie is valid; otherwise a login form is shown. */
  user: string | null;
  error?: string;
  forceLoginUrl?: string;
}

/**
 * Pressing Enter submits a form with its first submit button, so Authorize comes first in the markup (and is
 * drawn on the right, where sign-in pages put it).
 */
export function authorizePage(f: AuthorizeForm) {
  const hidden = Object.entries(f.hidden)
    .filter(([, v]) => v !== undefined && v !== "")
    .map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`);
  return page(
    `Authorize ${f.appName}`,
    html`<h1>${f.appName} wants to use your ${f.instance} account</h1>
<p class="scopes">Permissions: ${f.scopes.join(", ")}</p>
${f.error ? html`<p class="error" role="alert">${f.error}</p>` : ""}
<form method="post" action="/oauth/authorize">
<input type="hidden" name="csrf_token" value="${f.csrf}">${hidden}
${
  f.user
    ? html`<p>Signed in as <strong>@${f.user}</strong>. <a href="${f.forceLoginUrl ?? "#"}">Not you?</a></p>`
    : html`<label for="username">Nickname or e-mail</label><input type="text" id="username" name="username" autocomplete="username" required autofocus>
<label for="password">Password</label><input type="password" id="password" name="password" autocomplete="current-password" required>`
}
<div class="actions"><button type="submit" name="decision" value="approve">Authorize</button><button type="submit" name="decision" value="deny">Deny</button></div>
</form>`,
  );
}

export function codePage(appName: string, code: string) {
  return page(
    "Authorization code",
    html`<h1>Authorization code</h1><p>Copy this code and paste it into ${appName}:</p><code id="code">${code}</code>`,
  );
}

export function messagePage(title: string, message: string) {
  return page(title, html`<h1>${title}</h1><p>${message}</p>`);
}

export interface MfaForm {
  /** Where the code goes: the authorize page's `/oauth/mfa/verify`, the sign-in page's `/auth/sign_in/mfa`. */
  action: string;
  /** What the code is for, ending the sentence "Enter the code from your authenticator app …". */
  purpose: string;
  csrf: string;
  mfaToken: string;
  /** The authorize request, carried to the code once the second factor passes. */
  hidden: Record<string, string | undefined>;
  error?: string;
}

/** The second step of a page sign-in: a TOTP or backup code for the `mfa_token` the password step gave. */
export function mfaPage(f: MfaForm) {
  const hidden = Object.entries(f.hidden)
    .filter(([, v]) => v !== undefined && v !== "")
    .map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`);
  return page(
    "Two-factor authentication",
    html`<h1>Two-factor authentication</h1>
<p>Enter the code from your authenticator app ${f.purpose}, or one of your backup codes.</p>
${f.error ? html`<p class="error" role="alert">${f.error}</p>` : ""}
<form method="post" action="${f.action}">
<input type="hidden" name="csrf_token" value="${f.csrf}"><input type="hidden" name="mfa_token" value="${f.mfaToken}">${hidden}
<label for="code">Code</label><input type="text" id="code" name="code" inputmode="numeric" autocomplete="one-time-code" required autofocus>
<label><input type="checkbox" name="challenge_type" value="recovery"> This is a backup code</label>
<div class="actions"><button type="submit" name="decision" value="approve">Verify</button></div>
</form>`,
  );
}

/** The password reset page (`/api/v1/pleroma/password_reset/:token`): the form, as Pleroma's `data[...]` fields. */
export function resetPage(token: string, error?: string) {
  return page(
    "Password reset",
    html`<h1>Choose a new password</h1>
${error ? html`<p class="error" role="alert">${error}</p>` : ""}
<form method="post" action="/api/v1/pleroma/password_reset">
<input type="hidden" name="data[token]" value="${token}">
<label for="password">New password</label><input type="password" id="password" name="data[password]" autocomplete="new-password" required autofocus>
<label for="password_confirmation">Confirm the new password</label><input type="password" id="password_confirmation" name="data[password_confirmation]" autocomplete="new-password" required>
<div class="actions"><button type="submit" name="decision" value="approve">Reset password</button></div>
</form>`,
  );
}

export interface SetupForm {
  instance: string;
  secret: string;
  username?: string;
  email?: string;
  error?: string;
}

/** The first administrator's form (`/setup`, until an admin exists), for the holder of the set-up secret. */
export function setupPage(f: SetupForm) {
  return page(
    `Set up ${f.instance}`,
    html`<h1>Set up ${f.instance}</h1>
<p>Choose the first administrator's account. This page goes away once it exists.</p>
${f.error ? html`<p class="error" role="alert">${f.error}</p>` : ""}
<form method="post" action="/setup">
<label for="secret">Set-up secret</label><input type="password" id="secret" name="secret" value="${f.secret}" autocomplete="off" required>
<label for="username">Nickname</label><input type="text" id="username" name="username" value="${f.username ?? ""}" autocomplete="username" pattern="[a-zA-Z0-9_]+" required autofocus>
<label for="email">E-mail</label><input type="text" id="email" name="email" value="${f.email ?? ""}" autocomplete="email" required>
<label for="password">Password (8 characters or more)</label><input type="password" id="password" name="password" autocomplete="new-password" minlength="8" required>
<div class="actions"><button type="submit" name="decision" value="approve">Create the administrator</button></div>
</form>`,
  );
}

export interface SignUpForm {
  instance: string;
  csrf: string;
  /** Registrations closed: an invite token is needed (prefilled from an invite link). */
  inviteOnly: boolean;
  token?: string;
  approvalRequired: boolean;
  reasonLimit: number;
  captcha: { token: string; url: string; answerData: string } | null;
  values?: { username?: string; email?: string; reason?: string };
  error?: string;
}

/** The sign-up page (`/auth/sign_up`, `/registration/:token`): no JavaScript, the instance's rules. */
export function signUpPage(f: SignUpForm) {
  const v = f.values ?? {};
  return page(
    `Sign up on ${f.instance}`,
    html`<h1>Sign up on ${f.instance}</h1>
${f.error ? html`<p class="error" role="alert">${f.error}</p>` : ""}
${f.approvalRequired ? html`<p>New accounts are approved by the admins: say why you want to join.</p>` : ""}
<form method="post" action="/auth/sign_up">
<input type="hidden" name="csrf_token" value="${f.csrf}">
<label for="username">Nickname</label><input type="text" id="username" name="username" value="${v.username ?? ""}" autocomplete="username" pattern="[a-zA-Z0-9_]+" required autofocus>
<label for="email">E-mail</label><input type="text" id="email" name="email" value="${v.email ?? ""}" autocomplete="email" required>
<label for="password">Password (8 characters or more)</label><input type="password" id="password" name="password" autocomplete="new-password" minlength="8" required>
<label for="password_confirmation">The password again</label><input type="password" id="password_confirmation" name="password_confirmation" autocomplete="new-password" minlength="8" required>
${
  f.approvalRequired
    ? html`<label for="reason">Why do you want to join?</label><input type="text" id="reason" name="reason" value="${v.reason ?? ""}" maxlength="${String(f.reasonLimit)}" required>`
    : ""
}
${
  f.inviteOnly
    ? html`<label for="token">Invite code</label><input type="text" id="token" name="token" value="${f.token ?? ""}" required>`
    : f.token
      ? html`<input type="hidden" name="token" value="${f.token}">`
      : ""
}
${
  f.captcha
    ? html`<label for="captcha_solution">The characters in the picture</label><img src="${f.captcha.url}" alt="captcha" width="180" height="60">
<input type="text" id="captcha_solution" name="captcha_solution" autocomplete="off" required>
<input type="hidden" name="captcha_token" value="${f.captcha.token}"><input type="hidden" name="captcha_answer_data" value="${f.captcha.answerData}">`
    : ""
}
<label><input type="checkbox" name="agreement" value="true" required> I accept this server's rules</label>
<div class="actions"><button type="submit" name="decision" value="approve">Sign up</button></div>
</form>
<p>Already have an account? <a href="/auth/sign_in">Sign in</a>.</p>`,
  );
}

export interface SignInForm {
  instance: string;
  csrf: string;
  /** Where the browser goes once signed in (a same-origin path, checked by `safeReturnTo`). */
  returnTo: string;
  /** The account this browser is already signed in as, if any. */
  signedInAs?: string | null;
  login?: string;
  error?: string;
}

/** The sign-in page (`/auth/sign_in`): no JavaScript; the second factor follows on `mfaPage` when MFA is on. */
export function signInPage(f: SignInForm) {
  return page(
    `Sign in to ${f.instance}`,
    html`<h1>Sign in to ${f.instance}</h1>
${f.error ? html`<p class="error" role="alert">${f.error}</p>` : ""}
${
  f.signedInAs
    ? html`${settingsNav()}<form method="post" action="/auth/sign_out"><p>This browser is signed in as <strong>@${f.signedInAs}</strong>. <a href="${f.returnTo}">Continue</a>, <button type="submit" name="decision" value="deny">sign out</button>, or sign in as someone else:</p></form>`
    : ""
}
<form method="post" action="/auth/sign_in">
<input type="hidden" name="csrf_token" value="${f.csrf}"><input type="hidden" name="return_to" value="${f.returnTo}">
<label for="username">Nickname or e-mail</label><input type="text" id="username" name="username" value="${f.login ?? ""}" autocomplete="username" required autofocus>
<label for="password">Password</label><input type="password" id="password" name="password" autocomplete="current-password" required>
<div class="actions"><button type="submit" name="decision" value="approve">Sign in</button></div>
</form>
<p>No account yet? <a href="/auth/sign_up">Sign up</a>. Forgot the password? Ask for a reset link in your app.</p>`,
    // Sign-out checks the POST's Origin, which browsers send as `null` under no-referrer; this URL carries no token.
    "same-origin",
  );
}
