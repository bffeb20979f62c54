/** The settings page for importing an account archive (`/settings/import`; routes/settings-import.ts). */
import { html } from "hono/html";
import { page } from "./pages";
import { settingsNav } from "./settings-nav";
import type { z } from "@hono/zod-openapi";
import type { ArchiveImportSchema } from "../schemas/archive-import";

type Progress = z.infer<typeof ArchiveImportSchema>;

export interface ImportPageForm {
  instance: string;
  /** The signed-in user, or null (the page then asks to sign in first). */
  user: string | null;
  csrf: string;
  imports: Progress[];
  maxMb: number;
  error?: string;
  notice?: string;
}

const STATE: Record<Progress["state"], string> = {
  queued: "waiting to start",
  importing: "importing",
  done: "done",
  failed: "failed",
};

function progressItem(p: Progress) {
  const skipped = Object.entries(p.skipped)
    .map(([reason, n]) => `${n} ${reason.replace(/_/g, " ")}`)
    .join(", ");
  return html`<li data-state="${p.state}"><strong>${STATE[p.state]}</strong> — ${p.posts_done} of ${p.posts_total} posts
handled, ${p.posts_imported} imported, ${p.media_imported} media${p.media_skipped ? html` (${p.media_skipped} left out)` : ""}
${skipped ? html`<br><small>Left out: ${skipped}</small>` : ""}
${p.paused && p.state !== "done" && p.state !== "failed" ? html`<br><small>Waiting: ${p.paused}</small>` : ""}
${p.error ? html`<br><small class="error">${p.error}</small>` : ""}
<br><small>Uploaded ${p.inserted_at.slice(0, 16).replace("T", " ")} UTC</small></li>`;
}

export function importPage(f: ImportPageForm) {
  const active = f.imports.some((i) => i.state === "queued" || i.state === "importing");
  return page(
    `Import your posts — ${f.instance}`,
    html`${f.user ? settingsNav("/settings/import") : ""}
<h1>Import your posts</h1>
${f.error ? html`<p class="error" role="alert">${f.error}</p>` : ""}
${f.notice ? html`<p role="status">${f.notice}</p>` : ""}
${
  f.user
    ? html`<p>Bring your posts from Mastodon or Pleroma: upload the archive your old server made (Mastodon: Preferences →
Import and export → Request your archive; Pleroma: Settings → Data import/export → Backup). Your own posts and your
threads are added to your profile at their original dates, quietly: nobody is notified and nothing is sent to other
servers. Up to ${f.maxMb} MB here; ask an admin for larger archives.</p>
<form method="post" action="/settings/import" enctype="multipart/form-data">
<input type="hidden" name="csrf_token" value="${f.csrf}">
<label for="file">Archive (.zip)</label><input type="file" id="file" name="file" accept=".zip,application/zip" required>
<div class="actions"><button type="submit" name="decision" value="approve">Import</button></div>
</form>
${
  f.imports.length
    ? html`<h2>Your imports</h2><ul>${f.imports.map(progressItem)}</ul>${
        active
          ? html`<p><small>The import goes on a step a minute; <a href="/settings/import">reload</a> to see how far it got.</small></p>`
          : ""
      }`
    : ""
}
<p><small>Signed in as @${f.user}.</small></p>`
    : html`<p>Sign in to import the archive of your old account.</p>
<p><a href="/auth/sign_in?return_to=%2Fsettings%2Fimport">Sign in</a></p>`
}`,
    "same-origin",
  );
}
