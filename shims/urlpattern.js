// In place of `urlpattern-polyfill` (Fedify imports its URLPattern for runtimes without one), for the bundle only
// (wrangler.toml `[alias]`): workerd has URLPattern itself.
export const URLPattern = globalThis.URLPattern;
