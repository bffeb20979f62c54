/** Nodeinfo discovery and documents. The software is named `pleroma` so that clients detecting the server
 *  type (megalodon and the apps built on it) speak the Pleroma dialect to it. */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../http/app-env";
import { route } from "../http/route";
import { baseUrl } from "../http/urls";
import { renderNodeinfo } from "../render/instance";
import { mrfTransparency } from "../services/federation-policies";
import { NodeinfoSchema } from "../schemas/instance";
import { cachedInstanceStats } from "./instance-stats";
import { z } from "@hono/zod-openapi";

const SCHEMA = (v: string) => `http://nodeinfo.diaspora.software/ns/schema/${v}`;

export function registerNodeinfoRoutes(app: OpenAPIHono<AppEnv>) {
  route(app, {
    method: "get",
    path: "/.well-known/nodeinfo",
    summary: "Nodeinfo discovery",
    tags: ["Instance"],
    auth: "none",
    response: z.object({ links: z.array(z.object({ rel: z.string(), href: z.string() })) }),
    handler: (c) => {
      const base = baseUrl(c);
      return c.json({
        links: [
          { rel: SCHEMA("2.0"), href: `${base}/nodeinfo/2.0.json` },
          { rel: SCHEMA("2.1"), href: `${base}/nodeinfo/2.1.json` },
        ],
      });
    },
  });

  for (const version of ["2.0", "2.1"] as const) {
    for (const path of [`/nodeinfo/${version}.json`, `/nodeinfo/${version}`]) {
      route(app, {
        method: "get",
        path,
        summary: `Nodeinfo ${version}`,
        tags: ["Instance"],
        auth: "none",
        response: NodeinfoSchema,
        handler: async (c) => {
          const body = renderNodeinfo(c.env, version, await cachedInstanceStats(c), mrfTransparency(c.env));
          return c.json(body, 200, {
            "Content-Type": `application/json; profile="${SCHEMA(version)}#"`,
          });
        },
      });
    }
  }
}
