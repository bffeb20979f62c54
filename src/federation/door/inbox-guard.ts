/**
 * What an inbox POST must be before anything reads it as an activity (issue 18): at most `MAX_INBOX_BYTES`
 * (413: real activities are a few kilobytes), JSON (400), an object with an `actor`
 * (400), nested at most `MAX_DEPTH` deep (400: JSON-LD processing of a pathological document must not exhaust
 * the isolate). Each refusal says why, and nothing is stored or fetched for it.
 */
import { readBodyCapped } from "../../lib/body";

export const MAX_INBOX_BYTES = 1_000_000;
/** Real activities nest a few levels (Announce > Create > Page > attachment > …). */
export const MAX_DEPTH = 32;

const refuse = (status: number, error: string) => {
  console.log(`inbox: refused (${status}) ${error}`);
  return new Response(JSON.stringify({ error }), {
    status,
    headers: { "Content-Type": "application/json; charset=utf-8" },
  });
};

/** Deeper than `max` levels of arrays and objects (walked without recursion). */
function tooDeep(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== "object") continue;
    if (depth > max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v))
      if (child !== null && typeof child === "object") stack.push([child, depth + 1]);
  }
  return false;
}

/** The inbox POST's bytes and parsed body, or the response refusing it. */
export async function readInboxPost(
  req: Request,
): Promise<{ bytes: ArrayBuffer; body: Record<string, unknown> } | Response> {
  const read = await readBodyCapped(req, MAX_INBOX_BYTES);
  if (!read) return refuse(413, `The activity is larger than ${MAX_INBOX_BYTES} bytes`);
  const bytes = read.byteLength === read.buffer.byteLength ? (read.buffer as ArrayBuffer) : read.slice().buffer;
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return refuse(400, "The body is not JSON");
  }
  if (body === null || typeof body !== "object" || Array.isArray(body))
    return refuse(400, "The body is not a JSON object");
  if (tooDeep(body, MAX_DEPTH)) return refuse(400, `The activity is nested more than ${MAX_DEPTH} levels deep`);
  const actor = (body as { actor?: unknown }).actor;
  if (
    typeof actor !== "string" &&
    !(actor && typeof actor === "object" && typeof (actor as { id?: unknown }).id === "string")
  ) {
    return refuse(400, "The activity has no actor");
  }
  return { bytes, body: body as Record<string, unknown> };
}
