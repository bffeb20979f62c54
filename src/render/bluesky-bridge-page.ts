/** The settings page "Connect to Bluesky" (`/settings/bluesky`; routes/settings-bluesky.ts). */
import { html } from "hono/html";
import { page } from "./pages";
import { settingsNav } from "./settings-nav";
import type { BridgeState } from "../services/bluesky-bridge";

export interface BridgePageForm {
  instance: string;
  user: string;
  csrf: string;
  state: BridgeState;
  error?: string;
  notice?: string;
}

/** What each checklist item asks, met or not (the service's message says what to do when it is not). */
const ITEM: Record<BridgeState["checklist"][number]["key"], string> = {
  avatar: "A profile picture",
  account_age: "An account at least a week old",
  public_posts: "Public posts",
  no_nobridge: "No #nobridge in your bio",
  follow_back: "The bridge follows you back",
};

const where = (s: BridgeState) =>
  s.connected
    ? s.missing.length
      ? "You follow the bridge, but it bridges your account only once everything below is done."
      : html`Your account is bridged: people on Bluesky find you as <strong>@${s.bluesky_handle}</strong>.`
    : s.pending
      ? "Your follow of the bridge is sent: it answers within minutes."
      : "Your account is not bridged.";

export function bridgePage(f: BridgePageForm) {
  const s = f.state;
  const form = (decision: "connect" | "disconnect", label: string) =>
    html`<form method="post" action="/settings/bluesky"><input type="hidden" name="csrf_token" value="${f.csrf}">
<div class="actions"><button type="submit" name="decision" value="${decision}">${label}</button></div></form>`;
  return page(
    `Connect to Bluesky — ${f.instance}`,
    html`${settingsNav("/settings/bluesky")}
<h1>Connect to Bluesky</h1>
${f.error ? html`<p class="error" role="alert">${f.error}</p>` : ""}
${f.notice ? html`<p role="status">${f.notice}</p>` : ""}
<p>The Bluesky bridge (Bridgy Fed) makes your account and public posts visible on Bluesky, and brings replies, likes
and follows from there back here. You opt in by following its account <strong>@${s.bridge}</strong>; it follows you
back. Unfollowing it opts out.</p>
<p data-connected="${s.connected ? "yes" : s.pending ? "pending" : "no"}">${where(s)}</p>
<h2>Checklist</h2>
<ul class="checklist">${s.checklist.map(
      (i) =>
        html`<li data-item="${i.key}" data-ok="${i.ok ? "yes" : "no"}">${i.ok ? "✓" : "✗"} ${ITEM[i.key]}${
          i.ok ? "" : html`<br><small>${i.message}</small>`
        }</li>`,
    )}</ul>
${
  s.missing.length
    ? html`<p>Missing: ${s.missing.map((k) => ITEM[k].toLowerCase()).join(", ")}.</p>`
    : html`<p>Nothing is missing.</p>`
}
${s.connected || s.pending ? form("disconnect", "Disconnect from Bluesky") : form("connect", "Connect to Bluesky")}
<p><small>Signed in as @${f.user}.</small></p>`,
    "same-origin",
  );
}
