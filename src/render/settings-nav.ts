/** The links between the instance's own settings pages, shown on each of them and on the signed-in sign-in page. */
import { html } from "hono/html";

const SETTINGS = [
  { path: "/settings/import", label: "Import your posts" },
  { path: "/settings/bluesky", label: "Connect to Bluesky" },
] as const;

export type SettingsPath = (typeof SETTINGS)[number]["path"];

export function settingsNav(current?: SettingsPath) {
  return html`<nav class="settings" aria-label="Settings">${SETTINGS.map(
    (s, i) =>
      html`${i ? " · " : ""}${
        s.path === current
          ? html`<strong aria-current="page">${s.label}</strong>`
          : html`<a href="${s.path}">${s.label}</a>`
      }`,
  )}</nav>`;
}
