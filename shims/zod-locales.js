// zod's `locales` (every language's error messages, about 258 KiB minified) in place of its own index, for the
// bundle only (wrangler.toml `[alias]`): `z` is a namespace object that @hono/zod-openapi extends, so every
// export of zod, `z.locales` with all its languages included, was bundled. Starling uses zod's default (English),
// which zod imports directly; no code reads `z.locales`.
export { default as en } from "zod/v4/locales/en.js";
