/** Link preview cards: fetched once per URL (after the post's response), stored, served from D1. */
import { eq } from "drizzle-orm";
import type { DB } from "../db/client";
import { now } from "../db/client";
import { linkCards } from "../db/schema";
import { fetchCard } from "../content/cards";

/** Fetches and stores the card of `url` unless it was fetched before. A page without a card is stored as null. */
export async function ensureCard(d: DB, url: string): Promise<Record<string, unknown> | null> {
  const known = await d.select().from(linkCards).where(eq(linkCards.url, url)).get();
  if (known) return known.data ?? null;
  // The fetcher is looked up at call time so the runtime's (or a test's) fetch is used.
  const card = await fetchCard(url, { fetcher: (req) => fetch(req) });
  const data = card ? ({ ...card } as Record<string, unknown>) : null;
  await d.insert(linkCards).values({ url, data, fetchedAt: now() }).onConflictDoNothing();
  return data;
}

