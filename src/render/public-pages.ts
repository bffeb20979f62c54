/**
 * The public HTML pages for people (browsers, link previews): the instance at `/`, an actor's profile and a
 * status. They are built from the rendered API entities (Account, Status, as an anonymous client would get them),
 * so what a page shows went through the same rules and renderers. Content and bio HTML arrive sanitised and are
 * inserted as they are; everything else is escaped by `html`, and URLs from the data are kept to http(s).
 * No JavaScript: sensitive content folds into `<details>`, media use the browser's own controls.
 */
import { html, raw } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";
import { htmlToText } from "../content/format";
import type { Account } from "../schemas/account";
import type { MediaAttachment, Status } from "../schemas/status";

type Body = HtmlEscapedString | Promise<HtmlEscapedString>;

const STYLE = `*{box-sizing:border-box}body{font-family:system-ui,sans-serif;background:#f4f5f7;color:#1b1f23;margin:0;line-height:1.45}
a{color:#4b3cc9}.site{background:#282c37;padding:.6rem 1rem}.site a{color:#fff;font-weight:700;text-decoration:none}
main{max-width:40rem;margin:1rem auto;padding:0 .6rem}section,article{background:#fff;border-radius:10px;box-shadow:0 1px 6px #0002;padding:1rem;margin-bottom:.8rem;overflow-wrap:anywhere}
.banner{display:block;width:calc(100% + 2rem);margin:-1rem -1rem 0;height:10rem;object-fit:cover;border-radius:10px 10px 0 0;background:#ccd}
.avatar{border-radius:12%;background:#ccd;object-fit:cover}.profile .avatar{margin-top:-3rem;border:4px solid #fff}
h1{font-size:1.4rem;margin:.3rem 0 0}h2{font-size:1.1rem;margin:1.2rem 0 .6rem}.acct,.meta,.counts{color:#606770}.acct{margin:0}
.badge{font-size:.75rem;border:1px solid #999;border-radius:4px;padding:0 .3rem;margin-left:.4rem;vertical-align:middle}
dl.fields{display:grid;grid-template-columns:minmax(6rem,auto) 1fr;gap:.3rem .8rem;margin:.8rem 0}dl.fields dt{font-weight:600}dl.fields dd{margin:0}
.status header{display:flex;gap:.6rem;align-items:center}.status header a.who{display:flex;gap:.6rem;align-items:center;text-decoration:none;color:inherit;min-width:0;flex:1}
.who strong{display:block}.who .acct{font-size:.9rem}.status time{white-space:nowrap}.status p.meta{font-size:.85rem;margin:.4rem 0 0}section>h2:first-child{margin-top:0}.content{margin:.6rem 0}.content p{margin:.4rem 0}
.media{display:grid;gap:.4rem;margin:.6rem 0}.media img,.media video{width:100%;max-height:32rem;object-fit:contain;background:#000;border-radius:6px;display:block}
details>summary{cursor:pointer;font-weight:600;margin:.4rem 0}.poll{padding-left:1.2rem}.card{display:block;border:1px solid #dde;border-radius:6px;padding:.6rem;text-decoration:none;color:inherit}
.remote label{display:block;font-weight:600;margin:.6rem 0 .3rem}.remote input{width:100%;padding:.5rem;border:1px solid #c8ccd1;border-radius:6px;font-size:1rem}.remote button{margin-top:.5rem;padding:.5rem 1rem;border:0;border-radius:6px;background:#5b4cdb;color:#fff;font-size:1rem;cursor:pointer}
.stats{display:flex;gap:1.2rem;flex-wrap:wrap;padding:0;list-style:none}.stats strong{font-size:1.2rem;display:block}.more{text-align:center}code{background:#f0f0f3;padding:.1rem .3rem;border-radius:4px}`;

/** A URL from the data, kept only if it is http(s) (a remote object could carry `javascript:`). */
export function safeUrl(url: string | null | undefined): string {
  return url && /^https?:\/\//i.test(url) ? url : "#";
}

const clip = (text: string, max: number) => {
  const t = text.replace(/\s+/g, " ").trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
};

/** `2026-11-23 05:53 UTC`: the same for every reader, no script needed to localise it. */
const plural = (n: number, word: string) => (n === 1 ? word : `${word}s`);
const when = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;

export interface PageMeta {
  siteName: string;
  title: string;
  description: string;
  /** The page's own permanent URL. */
  canonical: string;
  /** The ActivityStreams id of what the page shows, offered to servers. */
  activityJson?: string;
  ogType: "website" | "profile" | "article";
  image?: { url: string; alt?: string; large?: boolean };
  /** Keep search engines away (accounts that are not discoverable, unlisted statuses). */
  noindex?: boolean;
  extra?: Body;
}

/** The page's `<head>` tags for people and link previews: title, description, canonical URL, OpenGraph. */
function metaTags(m: PageMeta) {
  const image = m.image;
  return html`<title>${m.title}</title><meta name="description" content="${m.description}">
${m.noindex ? html`<meta name="robots" content="noindex, noarchive">` : ""}
<link rel="canonical" href="${m.canonical}">
${m.activityJson ? html`<link rel="alternate" type="application/activity+json" href="${m.activityJson}">` : ""}
<meta property="og:site_name" content="${m.siteName}"><meta property="og:type" content="${m.ogType}">
<meta property="og:title" content="${m.title}"><meta property="og:description" content="${m.description}">
<meta property="og:url" content="${m.canonical}">
${image ? html`<meta property="og:image" content="${image.url}">${image.alt ? html`<meta property="og:image:alt" content="${image.alt}">` : ""}` : ""}
<meta name="twitter:card" content="${image?.large ? "summary_large_image" : "summary"}">${m.extra ?? ""}`;
}

/** A page: what its head says of it, and its body for the built-in (no-JavaScript) document. */
export interface Page {
  meta: PageMeta;
  body: Body;
}

const page = (meta: PageMeta, body: Body): Page => ({ meta, body });

/** The built-in document of a page. */
export function renderPage(p: Page) {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
${metaTags(p.meta)}
<style>${raw(STYLE)}</style></head>
<body><div class="site"><a href="/">${p.meta.siteName}</a></div><main>${p.body}</main></body></html>`;
}

const META_MARK = "<!--server-generated-meta-->";

/**
 * An installed frontend's `index.html` with the page's tags put in, as Pleroma's metadata providers do: at
 * Pleroma-FE's `<!--server-generated-meta-->` mark, else before `</head>` (an index without a head gets none).
 */
export async function frontendDocument(index: string, p: Page): Promise<string> {
  const tags = String(await metaTags(p.meta));
  // The page's title replaces the index's own (one `<title>` per document).
  const untitled = index.replace(/<title>[^<]*<\/title>/i, "");
  if (untitled.includes(META_MARK)) return untitled.replace(META_MARK, () => tags);
  const head = untitled.search(/<\/head>/i);
  return head < 0 ? index : untitled.slice(0, head) + tags + untitled.slice(head);
}

function mediaHtml(m: MediaAttachment) {
  const url = safeUrl(m.url);
  const alt = m.description ?? "";
  if (m.type === "image")
    return html`<a href="${url}"><img src="${safeUrl(m.preview_url)}" alt="${alt}" loading="lazy"></a>`;
  if (m.type === "video" || m.type === "gifv") {
    return html`<video src="${url}" controls preload="metadata" ${m.type === "gifv" ? raw("loop muted") : ""} aria-label="${alt}"></video>`;
  }
  if (m.type === "audio") return html`<audio src="${url}" controls preload="none" aria-label="${alt}"></audio>`;
  return html`<a href="${url}">${alt || "Attachment"}</a>`;
}

function statusBody(s: Status) {
  const media = s.media_attachments.length
    ? s.sensitive && !s.spoiler_text
      ? html`<details><summary>Sensitive media</summary><div class="media">${s.media_attachments.map(mediaHtml)}</div></details>`
      : html`<div class="media">${s.media_attachments.map(mediaHtml)}</div>`
    : "";
  const poll = s.poll
    ? html`<ul class="poll">${s.poll.options.map((o) => html`<li>${o.title}${o.votes_count === null ? "" : html` <span class="meta">(${o.votes_count})</span>`}</li>`)}</ul>
<p class="meta">${s.poll.expired ? "Poll closed" : s.poll.expires_at ? `Poll closes ${when(s.poll.expires_at)}` : "Poll"}</p>`
    : "";
  const card =
    s.card && !s.media_attachments.length
      ? html`<a class="card" href="${safeUrl(s.card.url)}" rel="nofollow noopener"><strong>${s.card.title || s.card.url}</strong>${s.card.description ? html`<br><span class="meta">${clip(s.card.description, 200)}</span>` : ""}</a>`
      : "";
  // Content HTML is sanitised when stored (local) or received (remote).
  const inner = html`<div class="content">${raw(s.content)}</div>${media}${poll}${card}`;
  return s.spoiler_text ? html`<details><summary>${s.spoiler_text}</summary>${inner}</details>` : inner;
}

/** One status as an article; `full` adds the counters (the status page). */
function statusArticle(s: Status, full: boolean) {
  const a = s.account;
  const reply =
    s.in_reply_to_id && s.pleroma.parent_visible
      ? html`<p class="meta">In reply to <a href="/notice/${s.in_reply_to_id}">${s.pleroma.in_reply_to_account_acct ? `@${s.pleroma.in_reply_to_account_acct}` : "a post"}</a></p>`
      : "";
  return html`<article class="status" ${s.language ? html`lang="${s.language}"` : ""}>
<header><a class="who" href="${safeUrl(a.url)}"><img class="avatar" src="${safeUrl(a.avatar)}" alt="" width="44" height="44"><span><strong>${a.display_name}</strong><span class="acct">@${a.fqn}</span></span></a></header>
${reply}${statusBody(s)}
<p class="meta"><a href="${safeUrl(s.url)}"><time datetime="${s.created_at}">${when(s.created_at)}</time></a>${
    full
      ? html` · ${s.replies_count} replies · ${s.reblogs_count} reposts · ${s.favourites_count} favourites${s.visibility === "unlisted" ? " · unlisted" : ""}${s.edited_at ? html` · edited <time datetime="${s.edited_at}">${when(s.edited_at)}</time>` : ""}`
      : ""
  }</p>
</article>`;
}

const plain = (s: Status) => s.pleroma.content["text/plain"] ?? "";

/** The first image of a status, for previews. */
const firstImage = (s: Status) => s.media_attachments.find((m) => m.type === "image");

export interface RemoteFollowForm {
  /** What is followed or interacted with, in words (`@alice@a.example`, "this post"). */
  what: string;
  /** The hidden fields naming it (`user[nickname]`, or `status[status_id]`), Pleroma's names. */
  field: "user" | "status";
  id: string;
  profile?: string;
  error?: string;
}

/**
 * "Follow or interact from your server" (remote follow, issue 34): the visitor's handle, posted to
 * `/main/ostatus`, which sends the browser to their server's subscribe page. On the profile and status pages,
 * and the page of its own (render/interaction-pages.ts) when the look-up failed.
 */
export function remoteFollowFields(f: RemoteFollowForm) {
  const idName = f.field === "user" ? "user[nickname]" : "status[status_id]";
  return html`<form class="remote" method="post" action="/main/ostatus"><input type="hidden" name="${idName}" value="${f.id}">
<label for="profile">Your handle on your server</label><input type="text" id="profile" name="${f.field}[profile]" value="${f.profile ?? ""}" placeholder="you@your.server" autocomplete="username" required>
<div class="actions"><button type="submit" name="decision" value="approve">${f.field === "user" ? "Follow" : "Interact"} from your server</button></div>
</form>`;
}

export interface ProfileView {
  siteName: string;
  account: Account;
  statuses: Status[];
  /** Link to the next (older) page, if there may be one. */
  olderUrl: string | null;
  noindex: boolean;
}

/** "1 post", "2 posts" (the preview of a profile link said "1 posts"). */
const counted = (n: number, one: string, other: string) => (n === 1 ? one : other);

export function profilePage(v: ProfileView) {
  const a = v.account;
  const bio = clip(htmlToText(a.note), 300);
  const counts = [
    html`<li><strong>${a.statuses_count}</strong> ${counted(a.statuses_count, "post", "posts")}</li>`,
    a.pleroma.hide_follows_count ? "" : html`<li><strong>${a.following_count}</strong> following</li>`,
    a.pleroma.hide_followers_count
      ? ""
      : html`<li><strong>${a.followers_count}</strong> ${counted(a.followers_count, "follower", "followers")}</li>`,
  ];
  return page(
    {
      siteName: v.siteName,
      title: `${a.display_name} (@${a.fqn})`,
      description: bio || `${a.statuses_count} ${counted(a.statuses_count, "post", "posts")}`,
      canonical: a.url,
      activityJson: a.pleroma.ap_id ?? undefined,
      ogType: "profile",
      image: { url: a.avatar, alt: a.display_name },
      noindex: v.noindex,
      extra: html`<meta property="profile:username" content="${a.fqn}">`,
    },
    html`<section class="profile h-card">
<img class="banner" src="${safeUrl(a.header)}" alt="">
<img class="avatar u-photo" src="${safeUrl(a.avatar)}" alt="" width="96" height="96">
<h1 class="p-name">${a.display_name}${a.locked ? html`<span class="badge">locked</span>` : ""}${a.bot ? html`<span class="badge">bot</span>` : ""}</h1>
<p class="acct">@${a.fqn}</p>
<div class="content p-note">${raw(a.note)}</div>
${a.fields.length ? html`<dl class="fields">${a.fields.map((f) => html`<dt>${f.name}</dt><dd>${raw(f.value)}</dd>`)}</dl>` : ""}
<ul class="stats counts">${counts}</ul>
<p class="meta">Joined <time datetime="${a.created_at}">${a.created_at.slice(0, 10)}</time>. Follow from any Mastodon or Pleroma account: search for <code>@${a.fqn}</code>, or enter your handle here.</p>
${remoteFollowFields({ field: "user", id: a.username, what: `@${a.fqn}` })}
</section>
<h2>Posts</h2>
${v.statuses.length ? v.statuses.map((s) => statusArticle(s, false)) : html`<section><p class="meta">No public posts${v.olderUrl === null ? "" : " here"}.</p></section>`}
${v.olderUrl ? html`<p class="more"><a rel="next" href="${v.olderUrl}">Older posts</a></p>` : ""}`,
  );
}

export interface TagView {
  siteName: string;
  tag: string;
  url: string;
  statuses: Status[];
  olderUrl: string | null;
}

export function tagPage(v: TagView) {
  return page(
    {
      siteName: v.siteName,
      title: `#${v.tag}`,
      description: `Public posts with #${v.tag} on ${v.siteName}`,
      canonical: v.url,
      ogType: "website",
    },
    html`<h1>#${v.tag}</h1>
${v.statuses.length ? v.statuses.map((s) => statusArticle(s, false)) : html`<section><p class="meta">No public posts with this hashtag${v.olderUrl === null ? "" : " here"}.</p></section>`}
${v.olderUrl ? html`<p class="more"><a rel="next" href="${v.olderUrl}">Older posts</a></p>` : ""}`,
  );
}

export function statusPage(siteName: string, s: Status, noindex: boolean) {
  const a = s.account;
  const text = clip(s.spoiler_text ? `CW: ${s.spoiler_text}` : plain(s), 300);
  const image = !s.sensitive && firstImage(s);
  return page(
    {
      siteName,
      title: `${a.display_name}: "${clip(s.spoiler_text || plain(s) || "Post", 60)}"`,
      description: text || (s.media_attachments.length ? `${s.media_attachments.length} attachment(s)` : ""),
      canonical: s.url ?? s.uri,
      activityJson: s.uri,
      ogType: "article",
      image: image
        ? // The thumbnail (lib/media-urls.ts), as the timeline shows it: link previews need no more.
          { url: image.preview_url, alt: image.description || undefined, large: true }
        : { url: a.avatar, alt: a.display_name },
      noindex,
      extra: html`<meta property="article:published_time" content="${s.created_at}"><meta property="article:author" content="${a.url}">`,
    },
    html`${statusArticle(s, true)}<section>${remoteFollowFields({ field: "status", id: s.id, what: "this post" })}</section>`,
  );
}

export interface InstanceView {
  name: string;
  description: string;
  host: string;
  registrations: "open" | "invite";
  activationRequired: boolean;
  /** Null where the page's tags only are shown (an installed frontend's index). */
  figures: { users: number; statuses: number; domains: number } | null;
  email: string;
  thumbnail: string;
  base: string;
}

const APPS: [string, string, string][] = [
  ["Tusky", "https://tusky.app/", "Android"],
  ["Elk", "https://elk.zone/", "web"],
  ["Phanpy", "https://phanpy.social/", "web"],
  ["Pleroma-FE", "https://pleroma.social/", "web"],
];

export function instancePage(v: InstanceView) {
  const f = v.figures;
  const join =
    v.registrations === "open"
      ? html`Registrations are <strong>open</strong>: <a href="/auth/sign_up">sign up here</a>, or choose “Sign up” (or “Create account”) in the app after entering <code>${v.host}</code>.${v.activationRequired ? " You will confirm your e-mail address before signing in." : ""}`
      : html`Registrations are <strong>by invitation only</strong>: a member can send you an invite link (or enter its code <a href="/auth/sign_up">on the sign-up page</a>).`;
  return page(
    {
      siteName: v.name,
      title: v.name,
      description: clip(v.description, 300),
      canonical: `${v.base}/`,
      ogType: "website",
      image: { url: v.thumbnail },
    },
    html`<section><h1>${v.name}</h1><p>${v.description}</p>
${f ? html`<ul class="stats"><li><strong>${f.users}</strong> ${plural(f.users, "user")}</li><li><strong>${f.statuses}</strong> ${plural(f.statuses, "post")}</li><li><strong>${f.domains}</strong> connected ${plural(f.domains, "server")}</li></ul>` : ""}
${v.email ? html`<p class="meta">Contact: <a href="mailto:${v.email}">${v.email}</a></p>` : ""}</section>
<section><h2>Join or sign in</h2>
<p>This server has no web app of its own. Use a Mastodon or Pleroma app and enter this server's address, <code>${v.host}</code>:</p>
<ul>${APPS.map(([name, url, kind]) => html`<li><a href="${url}" rel="noopener">${name}</a> (${kind})</li>`)}<li>or any other Mastodon-compatible app</li></ul>
<p>${join}</p>
<p>Have an account here? <a href="/auth/sign_in">Sign in</a> in this browser (to follow people from other servers).</p></section>`,
  );
}
