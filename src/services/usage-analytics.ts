/**
 * The budget meter's exact figures (services/usage-budget.ts), from Cloudflare's GraphQL Analytics API, when the host
 * gave a read-only token (`CF_ANALYTICS_TOKEN`, "Account Analytics: Read") and the account id (`CF_ACCOUNT_ID`).
 * One query, the month so far by day, for the whole account: the plans' caps are the account's (D1's rows "across
 * all databases", Workers' requests across all Workers), so what else runs on the account counts against them too.
 *
 * Datasets: `workersInvocationsAdaptive` (requests), `d1AnalyticsAdaptiveGroups` (rowsRead, rowsWritten),
 * `durableObjectsInvocationsAdaptiveGroups` (requests), `r2OperationsAdaptiveGroups` (requests by actionType, sorted
 * into R2's classes as its pricing page lists them) and `imagesUniqueTransformations`. An answer that is not the
 * expected shape, a GraphQL `errors` list (a token without the permission, another account) or an HTTP error is
 * an error the meter shows, never a throw.
 */
import { z } from "zod";
import { count } from "../lib/meter";

export const GRAPHQL_URL = "https://api.cloudflare.com/client/v4/graphql";
const TIMEOUT_MS = 10_000;

/** What the caps are counted in (the meter's own names, lib/meter.ts). */
export const CAP_KEYS = [
  "requests",
  "rowsRead",
  "rowsWritten",
  "durableObjectRequests",
  "r2ClassA",
  "r2ClassB",
  "imageTransformations",
] as const;
export type CapKey = (typeof CAP_KEYS)[number];
export type Counts = Record<CapKey, number>;

export const zeroCounts = (): Counts => Object.fromEntries(CAP_KEYS.map((k) => [k, 0])) as Counts;

/** What the API said: the day's figures and the month's up to and including that day. */
export interface ExactFigures {
  day: string;
  today: Counts;
  month: Counts;
}

/** What a refresh leaves in the day's row (`usage_days.exact`): the figures, or why there are none. */
export type ExactRecord = { at: number; day: string } & ({ today: Counts; month: Counts } | { error: string });

const QUERY = `query StarlingBudget($account: string!, $from: Date!, $to: Date!) {
  viewer {
    accounts(filter: { accountTag: $account }) {
      workers: workersInvocationsAdaptive(limit: 1000, filter: { date_geq: $from, date_leq: $to }) {
        dimensions { date }
        sum { requests }
      }
      d1: d1AnalyticsAdaptiveGroups(limit: 1000, filter: { date_geq: $from, date_leq: $to }) {
        dimensions { date }
        sum { rowsRead rowsWritten }
      }
      durableObjects: durableObjectsInvocationsAdaptiveGroups(limit: 1000, filter: { date_geq: $from, date_leq: $to }) {
        dimensions { date }
        sum { requests }
      }
      r2: r2OperationsAdaptiveGroups(limit: 1000, filter: { date_geq: $from, date_leq: $to }) {
        dimensions { date actionType }
        sum { requests }
      }
      images: imagesUniqueTransformations(limit: 100, filter: { date_geq: $from, date_leq: $to }) {
        date
        transformations
      }
    }
  }
}`;

const n = z.coerce.number().finite().nonnegative();
const Dated = <S extends z.ZodRawShape>(sum: S) =>
  z.array(z.object({ dimensions: z.object({ date: z.string() }).passthrough(), sum: z.object(sum) }));
const Answer = z.object({
  data: z
    .object({
      viewer: z.object({
        accounts: z.array(
          z.object({
            workers: Dated({ requests: n }),
            d1: Dated({ rowsRead: n, rowsWritten: n }),
            durableObjects: Dated({ requests: n }),
            r2: z.array(
              z.object({
                dimensions: z.object({ date: z.string(), actionType: z.string() }),
                sum: z.object({ requests: n }),
              }),
            ),
            images: z.array(z.object({ date: z.string(), transformations: n })),
          }),
        ),
      }),
    })
    .nullable()
    .optional(),
  errors: z
    .array(z.object({ message: z.string() }).passthrough())
    .nullable()
    .optional(),
});

// R2's pricing page: Class B reads state; deletes and aborted uploads are free; every other operation is Class A.
const R2_CLASS_B = new Set([
  "HeadBucket",
  "HeadObject",
  "GetObject",
  "UsageSummary",
  "GetBucketEncryption",
  "GetBucketLocation",
  "GetBucketCors",
  "GetBucketLifecycleConfiguration",
]);
const R2_FREE = new Set(["DeleteObject", "DeleteObjects", "DeleteBucket", "AbortMultipartUpload"]);

/** The day's and the month's figures from the API's answer (`day`: the UTC day they are for). */
export function readAnswer(body: unknown, day: string): ExactFigures | { error: string } {
  const parsed = Answer.safeParse(body);
  if (!parsed.success) return { error: "unexpected answer from the GraphQL Analytics API" };
  if (parsed.data.errors?.length) return { error: parsed.data.errors[0]!.message.slice(0, 300) };
  const account = parsed.data.data?.viewer.accounts[0];
  if (!account) return { error: "the token cannot read this account's analytics" };
  const today = zeroCounts();
  const month = zeroCounts();
  const add = (date: string, key: CapKey, value: number) => {
    month[key] += value;
    if (date === day) today[key] += value;
  };
  for (const r of account.workers) add(r.dimensions.date, "requests", r.sum.requests);
  for (const r of account.d1) {
    add(r.dimensions.date, "rowsRead", r.sum.rowsRead);
    add(r.dimensions.date, "rowsWritten", r.sum.rowsWritten);
  }
  for (const r of account.durableObjects) add(r.dimensions.date, "durableObjectRequests", r.sum.requests);
  for (const r of account.r2) {
    const action = r.dimensions.actionType;
    if (R2_FREE.has(action)) continue;
    add(r.dimensions.date, R2_CLASS_B.has(action) ? "r2ClassB" : "r2ClassA", r.sum.requests);
  }
  for (const r of account.images) add(r.date, "imageTransformations", r.transformations);
  return { day, today, month };
}

/** Asks the API for the month so far (UTC) and reads its answer; an error is answered, not thrown. */
export async function fetchExactUsage(token: string, accountId: string, t: number): Promise<ExactRecord> {
  const day = new Date(t).toISOString().slice(0, 10);
  const from = `${day.slice(0, 7)}-01`;
  try {
    count("subrequests");
    // A fixed Cloudflare endpoint, not a user's URL: plain fetch (lib/outbound.ts guards the fetches of others' URLs).
    const res = await fetch(GRAPHQL_URL, {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ query: QUERY, variables: { account: accountId, from, to: day } }),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    const body: unknown = await res.json().catch(() => null);
    const read = readAnswer(body, day);
    if ("error" in read) return { at: t, day, error: res.ok ? read.error : `HTTP ${res.status}: ${read.error}` };
    if (!res.ok) return { at: t, day, error: `the GraphQL Analytics API answered ${res.status}` };
    return { at: t, ...read };
  } catch (e) {
    return {
      at: t,
      day,
      error: `the GraphQL Analytics API did not answer (${(e as Error)?.message ?? e})`.slice(0, 300),
    };
  }
}
