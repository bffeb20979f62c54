/**
 * The remote follow pages (issue 34), no JavaScript: the "interact from your server" form of the public pages
 * (`/main/ostatus`, Pleroma's), and the confirmation a signed-in user sees at `/authorize_interaction` (Mastodon)
 * or `/ostatus_subscribe` (Pleroma) before following or acting on what another server sent them here for.
 * Values are escaped by `html`; a status's content arrives sanitised.
 */
import { html, raw } from "hono/html";
import type { Account } from "../schemas/account";
import type { Status } from "../schemas/status";
import { page } from "./pages";
import { remoteFollowFields, safeUrl, type RemoteFollowForm } from "./public-pages";

export type { RemoteFollowForm };

export function remoteFollowPage(f: RemoteFollowForm) {
  return page(
    `Follow or interact with ${f.what}`,
    html`<h1>${f.field === "user" ? `Follow ${f.what}` : `Interact with ${f.what}`}</h1>
${f.error ? html`<p class="error" role="alert">${f.error}</p>` : ""}
<p>Enter the handle of your account on another server: you will be sent there to confirm.</p>
${remoteFollowFields(f)}`,
    // Its POST is checked by its Origin (routes/remote-interaction.ts).
    "same-origin",
  );
}

export interface AuthorizeInteraction {
  csrf: string;
  me: string;
  account?: { entity: Account; self: boolean; following: boolean; requested: boolean };
  status?: Status;
}

const button = (action: string, label: string, primary = false) =>
  html`<button type="submit" name="action" value="${action}"${primary ? raw(' class="primary"') : ""}>${label}</button>`;

/** The signed-in user's confirmation: follow this account, or favourite, boost or answer this status. */
export function authorizeInteractionPage(v: AuthorizeInteraction) {
  const hidden = (id: string) =>
    html`<input type="hidden" name="csrf_token" value="${v.csrf}"><input type="hidden" name="id" value="${id}">`;
  const style = html`<style>.actions button{background:#e4e6ea}.actions button.primary{background:#5b4cdb;color:#fff}.who{display:flex;gap:.8rem;align-items:center}.who img{border-radius:12%}.content{margin:.6rem 0;overflow-wrap:anywhere}textarea{width:100%;box-sizing:border-box;min-height:6rem;padding:.6rem;border:1px solid #c8ccd1;border-radius:6px;font:inherit}</style>`;
  if (v.account) {
    const a = v.account.entity;
    return page(
      `Follow @${a.acct}`,
      html`${style}<h1>Follow @${a.acct}?</h1>
<p class="who"><img src="${safeUrl(a.avatar)}" alt="" width="48" height="48"><span><strong>${a.display_name}</strong><br>@${a.acct}</span></p>
<p>Signed in as <strong>@${v.me}</strong>.</p>
${
  v.account.self
    ? html`<p>This is your own account.</p>`
    : v.account.following || v.account.requested
      ? html`<p>${v.account.following ? "You follow this account." : "Your follow request is waiting for an answer."}</p>`
      : html`<form method="post" action="/authorize_interaction">${hidden(a.id)}
<div class="actions">${button("follow", a.locked ? "Ask to follow" : "Follow", true)}</div></form>`
}
<p><a href="${safeUrl(a.url)}">See the profile on its server</a></p>`,
    );
  }
  const s = v.status!;
  return page(
    `A post by @${s.account.acct}`,
    html`${style}<h1>A post by @${s.account.acct}</h1>
<p class="who"><img src="${safeUrl(s.account.avatar)}" alt="" width="48" height="48"><span><strong>${s.account.display_name}</strong><br>@${s.account.acct}</span></p>
${s.spoiler_text ? html`<p><strong>${s.spoiler_text}</strong></p>` : ""}<div class="content">${raw(s.content)}</div>
<p>Signed in as <strong>@${v.me}</strong>.</p>
<form method="post" action="/authorize_interaction">${hidden(s.id)}
<div class="actions">${s.favourited ? "" : button("favourite", "Favourite", true)}${s.reblogged || !["public", "unlisted"].includes(s.visibility) ? "" : button("reblog", "Boost")}</div></form>
<form method="post" action="/authorize_interaction">${hidden(s.id)}
<label for="status">Reply</label><textarea id="status" name="status" required>@${s.account.acct} </textarea>
<div class="actions">${button("reply", "Reply")}</div></form>
<p><a href="${safeUrl(s.url ?? s.uri)}">Open the post on its server</a>; it is known here now, so your app finds it too.</p>`,
  );
}
