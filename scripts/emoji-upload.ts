/**
 * `npm run admin -- emoji-upload <folder> [--remote]`: copies a local folder of emoji packs into R2 under
 * `emoji/` (the layout of docs/emoji.md: `<folder>/<pack>/pack.json` + files, or `emoji.txt`, or bare images)
 * through `wrangler r2 object put`, locally (`$STATE`, as `npm start` keeps it) or with `--remote`. The packs
 * then become rows with `GET /api/v1/pleroma/emoji/packs/import` (an admin token), which is idempotent.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { bucketOf } from "./deploy";

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

export function uploadEmojiFolder(folder: string | undefined, remote: boolean) {
  if (!folder) throw new Error("usage: npm run admin -- emoji-upload <folder of packs> [--remote]");
  const toml = readFileSync(new URL("../wrangler.toml", import.meta.url), "utf8");
  const bucket = bucketOf(toml, "MEDIA");
  const target = remote ? ["--remote"] : ["--local", "--persist-to", process.env.STATE || ".wrangler/state"];
  const packs = readdirSync(folder).filter((name) => statSync(join(folder, name)).isDirectory());
  let count = 0;
  for (const pack of packs) {
    for (const file of filesUnder(join(folder, pack))) {
      const key = `emoji/${relative(folder, file).split(sep).join("/")}`;
      execFileSync("npx", ["wrangler", "r2", "object", "put", `${bucket}/${key}`, "--file", file, ...target], {
        stdio: ["ignore", "ignore", "inherit"],
      });
      count++;
    }
  }
  console.log(`Uploaded ${count} files of ${packs.length} pack(s) (${packs.join(", ")}) to ${bucket}/emoji/.`);
  console.log("Now import them: GET /api/v1/pleroma/emoji/packs/import with an admin token, e.g.");
  console.log(
    "  curl -H 'Authorization: Bearer <admin token>' https://<your instance>/api/v1/pleroma/emoji/packs/import",
  );
}
