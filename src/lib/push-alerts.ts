/** The alerts a Web Push subscription chooses (Mastodon's names, with Pleroma's). */
export const ALERTS = [
  "follow",
  "favourite",
  "reblog",
  "mention",
  "status",
  "poll",
  "update",
  "quote",
  "quoted_update",
  "pleroma:chat_mention",
  "pleroma:emoji_reaction",
] as const;
export type Alerts = Record<(typeof ALERTS)[number], boolean>;

/** `given` alerts over `base` (or off): every known alert, nothing else. */
export const alertsFrom = (
  given: Partial<Record<string, boolean>> | undefined,
  base?: Record<string, boolean>,
): Alerts => Object.fromEntries(ALERTS.map((a) => [a, given?.[a] ?? base?.[a] ?? false])) as Alerts;
