// The one Node API Starling uses (src/lib/outbound.ts), provided by workerd's nodejs_compat (DNS over HTTPS).
// Declared here rather than pulling all of @types/node into the Worker's types.
declare module "node:dns/promises" {
  export function lookup(hostname: string, options: { all: true }): Promise<{ address: string; family: number }[]>;
}
