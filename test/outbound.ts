/**
 * DNS for tests: workerd's `node:dns` resolves names with DNS over HTTPS through the global `fetch`
 * (`https://cloudflare-dns.com/dns-query?name=…&type=A|AAAA`), which tests replace. `dnsAnswer` answers
 * those queries from a table; a name not in it answers NXDOMAIN.
 */
export type DnsTable = Record<string, string[]>;

export function dnsAnswer(url: string, table: DnsTable): Response | null {
  const u = new URL(url);
  if (u.origin !== "https://cloudflare-dns.com" || u.pathname !== "/dns-query") return null;
  const name = (u.searchParams.get("name") ?? "").replace(/\.$/, "").toLowerCase();
  const aaaa = u.searchParams.get("type") === "AAAA";
  const known = Object.hasOwn(table, name);
  const data = (table[name] ?? []).filter((ip) => ip.includes(":") === aaaa);
  const type = aaaa ? 28 : 1;
  const body = {
    Status: known ? 0 : 3,
    Question: [{ name, type }],
    Answer: data.map((ip) => ({ name, type, TTL: 300, data: ip })),
  };
  return new Response(JSON.stringify(body), { headers: { "Content-Type": "application/dns-json" } });
}
