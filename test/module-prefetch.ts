/**
 * Loads the Worker's modules into a file's fresh workerd in waves instead of one by one (issue 43: a file's start
 * was mostly this). Vite's module runner fetches each module from vitest's process only when the module importing
 * it runs, awaiting each import in turn: 520 fetches a file, each a round trip through the pool's runner object,
 * one after the other. Here, as soon as a module's code arrives, the modules it imports statically are asked for
 * too, all at once; when the runner reaches them, their answer is already there or on its way. Nothing else
 * changes: the same fetches with the same arguments, each used once, evaluated by the runner in its own order.
 * It reaches into vitest's worker state, as the workers pool itself does, and fails loudly if that shape changes.
 */

type Invoke = (name: string, data: unknown[]) => Promise<unknown>;

interface FetchOptions {
  cached?: boolean;
  startOffset?: number;
}

interface FetchResult {
  code?: string;
  file?: string | null;
  id?: string;
}

interface VitestGlobals {
  __vitest_mocker__?: { moduleRunner?: { transport?: { invoke?: Invoke } } };
}

// `await __vite_ssr_import__("/src/app.ts", {...})`: the static imports of a transformed module, already resolved.
const STATIC_IMPORT = /__vite_ssr_import__\("(\/[^"]+)"/g;

export function prefetchModules(): void {
  const transport = (globalThis as VitestGlobals).__vitest_mocker__?.moduleRunner?.transport;
  const invoke = transport?.invoke?.bind(transport);
  if (!transport || !invoke) throw new Error("vitest's module runner not found (test/module-prefetch.ts)");
  const pending = new Map<string, Promise<unknown>>();
  const asked = new Set<string>();

  const fetchModule = (url: string, importer: string | undefined, options: FetchOptions): Promise<unknown> => {
    asked.add(url);
    const answer = invoke("fetchModule", [url, importer, options]);
    void answer.then(
      (result) => prefetchImportsOf(result as FetchResult, options.startOffset),
      () => undefined,
    );
    return answer;
  };

  const prefetchImportsOf = (result: FetchResult, startOffset: number | undefined) => {
    if (typeof result?.code !== "string") return;
    const importer = result.file || result.id;
    for (const [, url] of result.code.matchAll(STATIC_IMPORT)) {
      if (asked.has(url)) continue;
      const answer = fetchModule(url, importer, { cached: false, startOffset });
      answer.catch(() => undefined); // the runner's own request sees the failure
      pending.set(url, answer);
    }
  };

  transport.invoke = (name, data) => {
    const [url, importer, options] = data as [string, string | undefined, FetchOptions | undefined];
    if (name !== "fetchModule" || options?.cached) return invoke(name, data);
    const prefetched = pending.get(url);
    if (prefetched) {
      pending.delete(url);
      return prefetched;
    }
    return fetchModule(url, importer, options ?? {});
  };
}
