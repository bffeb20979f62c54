/** Link preview cards: fetched once per URL (after the post's response), stored, served from D1. */
import { eq } from "drizzle-orm";
import type { DB } from "../db/client";
import { now } from "../db/client";
import { linkCards } from "../db/schema";
import { fetchCard } from "../content/cards";
import { outboundFetch } from "../lib/outbound";

/** Fetches and stores the card of `url` unless it was fetched before. A page without a card is stored as null. */
export async function ensureCard(d: DB, url: string, allowPrivate: boolean): Promise<Record<string, unknown> | null> {
  const known = await d.select().from(linkCards).where(eq(linkCards.url, url)).get();
  if (known) return known.data ?? null;
  // fetchCard follows redirects itself (each hop re-checked, time and size bounded); every hop goes through
  // the SSRF guard, which also resolves names (fetchCard's own check sees only the URL).
  const card = await fetchCard(url, {
    allowPrivate,
    fetcher: (req) => outboundFetch(req, undefined, { allowPrivate, maxRedirects: 0, timeoutMs: 5000 }),
  });
  const data = card ? ({ ...card } as Record<string, unknown>) : null;
  await d.insert(linkCards).values({ url, data, fetchedAt: now() }).onConflictDoNothing();
  return data;
}
