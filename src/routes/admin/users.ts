/** `/api/v1/pleroma/admin/users…` (Pleroma 2.5's `AdminAPI.UserController` and the user's statuses). */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { config } from "../../env";
import { db } from "../../db/client";
import { badRequest, forbidden, notFound } from "../../lib/errors";
import { arrayParam, boolParam } from "../../http/params";
import { after, route, type Ctx } from "../../http/route";
import type { UserAuth } from "../../http/auth";
import { baseUrl, hostOf, renderContext } from "../../http/urls";
import { renderAdminCredentials, renderAdminUser } from "../../render/admin-account";
import { AdminCredentialsSchema, AdminUserSchema, AdminUsersSchema } from "../../schemas/admin";
import { confirmationMail } from "../../services/registration-mail";
import * as admin from "../../services/admin-users";
import { mailer } from "../../services/mailer";
import { findAccount } from "../../services/accounts";
import { ADMIN_TAG, actorOf, nicknamesParam, pageFields, statusPage, StatusPageSchema } from "./common";

const READ = ["admin:read:accounts"];
const WRITE = ["admin:write:accounts"];
const UsersAnswer = z.object({ users: z.array(AdminUserSchema) });

export function registerAdminUserRoutes(app: OpenAPIHono<AppEnv>) {
  route(app, {
    method: "get",
    path: "/api/v1/pleroma/admin/users",
    summary: "Users, filtered and paged (`filters=local,active,…`, query, name, email, tags, actor_types)",
    tags: ADMIN_TAG,
    auth: "user",
    scopes: READ,
    privilege: "users_read",
    params: z.object({
      filters: z.string().max(500).optional(),
      query: z.string().max(300).optional(),
      name: z.string().max(300).optional(),
      email: z.string().max(320).optional(),
      tags: arrayParam(z.string().max(100), 40).optional(),
      actor_types: arrayParam(z.string().max(40), 10).optional(),
      ...pageFields(50),
    }),
    response: AdminUsersSchema,
    handler: async (c, p) => {
      // Unknown filter names are ignored, as Pleroma does.
      const filters = new Set(
        (p.filters ?? "")
          .split(",")
          .map((f) => f.trim())
          .filter((f): f is admin.UserFilter => (admin.USER_FILTERS as readonly string[]).includes(f)),
      );
      const { rows, count } = await admin.listUsers(db(c.env), {
        filters,
        query: p.query || undefined,
        name: p.name || undefined,
        email: p.email || undefined,
        tags: p.tags ?? [],
        actorTypes: p.actor_types ?? [],
        page: p.page,
        pageSize: p.page_size,
      });
      const ctx = renderContext(c, null);
      return c.json({ users: rows.map((r) => renderAdminUser(ctx, r)), count, page_size: p.page_size });
    },
  });

  route(app, {
    method: "post",
    path: "/api/v1/pleroma/admin/users",
    summary: "Create confirmed local users (all or none)",
    tags: ADMIN_TAG,
    auth: "user",
    scopes: WRITE,
    privilege: "users_manage_credentials",
    params: z.object({
      users: z
        .array(z.object({ nickname: z.string().max(64), email: z.string().max(320), password: z.string().max(256) }))
        .min(1)
        .max(100),
    }),
    handler: async (c, p, auth) => {
      const { ok, results } = await admin.createUsers(
        db(c.env),
        actorOf(auth),
        baseUrl(c),
        p.users,
        config(c.env).passwordIterations,
      );
      return c.json(results, ok ? 200 : 409);
    },
  });

  route(app, {
    method: "delete",
    path: "/api/v1/pleroma/admin/users",
    summary: "Delete users (local ones for real, by the account deletion job; remote ones deactivated)",
    tags: ADMIN_TAG,
    auth: "user",
    scopes: WRITE,
    privilege: "users_delete",
    params: z.object({ nicknames: nicknamesParam(), nickname: z.string().optional() }),
    response: z.array(z.string()),
    handler: async (c, p, auth) => {
      const d = db(c.env);
      const names = [...(p.nicknames ?? []), ...(p.nickname ? [p.nickname] : [])];
      const found = await admin.accountsByNicknames(d, names, hostOf(c));
      const { nicknames, effects } = await admin.deleteUsers(d, actorOf(auth), found);
      after(c, effects);
      return c.json(nicknames);
    },
  });

  for (const [action, privilege] of [
    ["activate", "users_manage_activation_state"],
    ["deactivate", "users_manage_activation_state"],
    ["approve", "users_manage_invites"],
  ] as const) {
    route(app, {
      method: "patch",
      path: `/api/v1/pleroma/admin/users/${action}`,
      summary: `${action[0]!.toUpperCase()}${action.slice(1)} users (\`nicknames[]\`)`,
      tags: ADMIN_TAG,
      auth: "user",
      scopes: WRITE,
      privilege,
      params: z.object({ nicknames: nicknamesParam() }),
      response: UsersAnswer,
      handler: async (c, p, auth) => {
        const d = db(c.env);
        const found = await admin.accountsByNicknames(d, p.nicknames ?? [], hostOf(c));
        const done =
          action === "approve"
            ? await admin.approveUsers(d, actorOf(auth), found)
            : await admin.setActive(d, actorOf(auth), found, action === "activate");
        const ctx = renderContext(c, null);
        return c.json({ users: done.map((f) => renderAdminUser(ctx, f)) });
      },
    });
  }

  route(app, {
    method: "patch",
    path: "/api/v1/pleroma/admin/users/confirm_email",
    summary: "Mark users' e-mail addresses confirmed",
    tags: ADMIN_TAG,
    auth: "user",
    scopes: WRITE,
    privilege: "users_manage_credentials",
    params: z.object({ nicknames: nicknamesParam() }),
    handler: async (c, p, auth) => {
      const d = db(c.env);
      await admin.confirmEmails(d, actorOf(auth), await admin.accountsByNicknames(d, p.nicknames ?? [], hostOf(c)));
      return c.json("");
    },
  });

  route(app, {
    method: "patch",
    path: "/api/v1/pleroma/admin/users/force_password_reset",
    summary: "Make users choose a new password before they can sign in again",
    tags: ADMIN_TAG,
    auth: "user",
    scopes: WRITE,
    privilege: "users_manage_credentials",
    params: z.object({ nicknames: nicknamesParam() }),
    noContent: true,
    handler: async (c, p, auth) => {
      const d = db(c.env);
      await admin.forcePasswordResets(
        d,
        actorOf(auth),
        await admin.accountsByNicknames(d, p.nicknames ?? [], hostOf(c)),
      );
      return c.body(null, 204);
    },
  });

  route(app, {
    method: "put",
    path: "/api/v1/pleroma/admin/users/disable_mfa",
    summary: "Turn off a user's two-factor authentication",
    tags: ADMIN_TAG,
    auth: "user",
    scopes: WRITE,
    privilege: "users_manage_credentials",
    params: z.object({ nickname: z.string().max(320) }),
    response: z.string(),
    handler: async (c, p, auth) => {
      const d = db(c.env);
      const [found] = (await admin.accountsByNicknames(d, [p.nickname], hostOf(c))).filter((f) => f.user);
      if (!found) throw notFound();
      await admin.disableUserMfa(d, actorOf(auth), found);
      return c.json(p.nickname);
    },
  });

  route(app, {
    method: "patch",
    path: "/api/v1/pleroma/admin/users/resend_confirmation_email",
    summary: "Send unconfirmed users a fresh confirmation mail",
    tags: ADMIN_TAG,
    auth: "user",
    scopes: WRITE,
    privilege: "users_manage_credentials",
    params: z.object({ nicknames: nicknamesParam() }),
    handler: async (c, p, auth) => {
      const d = db(c.env);
      const found = await admin.accountsByNicknames(d, p.nicknames ?? [], hostOf(c));
      const renewed = await admin.renewConfirmations(d, actorOf(auth), found);
      const cfg = config(c.env);
      const m = mailer(c.env, hostOf(c));
      for (const r of renewed)
        c.executionCtx.waitUntil(
          m.send(confirmationMail(cfg, baseUrl(c), r.found.account, r.found.user!.email, r.token)),
        );
      return c.json("");
    },
  });

  for (const [method, add] of [
    ["put", true],
    ["delete", false],
  ] as const) {
    route(app, {
      method,
      path: "/api/v1/pleroma/admin/users/tag",
      summary: add ? "Tag users" : "Untag users",
      tags: ADMIN_TAG,
      auth: "user",
      scopes: WRITE,
      privilege: "users_manage_tags",
      params: z.object({ nicknames: nicknamesParam(), tags: arrayParam(z.string().min(1).max(100), 20) }),
      noContent: true,
      handler: async (c, p, auth) => {
        const d = db(c.env);
        await admin.tagUsers(
          d,
          actorOf(auth),
          await admin.accountsByNicknames(d, p.nicknames ?? [], hostOf(c)),
          p.tags,
          add,
        );
        return c.body(null, 204);
      },
    });
  }

  route(app, {
    method: "get",
    path: "/api/v1/pleroma/admin/users/:nickname/permission_group",
    summary: "A user's roles (Pleroma's `right_get`)",
    tags: ADMIN_TAG,
    auth: "user",
    scopes: READ,
    privilege: "users_read",
    params: z.object({ nickname: z.string() }),
    response: z.object({ is_admin: z.boolean(), is_moderator: z.boolean() }),
    handler: async (c, p) => {
      const found = await findAccount(db(c.env), p.nickname, hostOf(c));
      if (!found) throw notFound("Not found");
      return c.json({ is_admin: found.user?.isAdmin ?? false, is_moderator: found.user?.isModerator ?? false });
    },
  });

  for (const [method, on] of [
    ["post", true],
    ["delete", false],
  ] as const) {
    for (const path of [
      "/api/v1/pleroma/admin/users/permission_group/:group",
      "/api/v1/pleroma/admin/users/:nickname/permission_group/:group",
    ]) {
      route(app, {
        method,
        path,
        summary: on ? "Grant users the admin or moderator role" : "Revoke users' admin or moderator role",
        tags: ADMIN_TAG,
        auth: "user",
        scopes: WRITE,
        privilege: "superuser",
        // The body's `nicknames`, or admin-fe's one nickname in the path.
        params: z.object({
          group: z.string(),
          nickname: z.string().optional(),
          nicknames: nicknamesParam().optional(),
        }),
        handler: async (c, p, auth) => {
          const d = db(c.env);
          const names = [...(p.nicknames ?? []), ...(p.nickname ? [p.nickname] : [])];
          if (names.length === 0) throw badRequest("Missing field: nicknames.");
          await admin.setRole(d, actorOf(auth), await admin.accountsByNicknames(d, names, hostOf(c)), p.group, on);
          return c.json(p.group === "admin" ? { is_admin: on } : { is_moderator: on });
        },
      });
    }
  }

  route(app, {
    method: "get",
    path: "/api/v1/pleroma/admin/users/:nickname/statuses",
    summary: "A user's statuses (`godmode` includes private and direct ones)",
    tags: ADMIN_TAG,
    auth: "user",
    scopes: ["admin:read:statuses"],
    privilege: "messages_read",
    params: z.object({
      nickname: z.string(),
      godmode: boolParam().optional(),
      with_reblogs: boolParam().optional(),
      ...pageFields(20),
    }),
    response: StatusPageSchema,
    handler: async (c, p, auth) => {
      const found = await findAccount(db(c.env), p.nickname, hostOf(c));
      if (!found) throw notFound("Not found");
      return c.json(
        await statusPage(c, auth, {
          accountId: found.account.id,
          withReblogs: p.with_reblogs ?? false,
          godmode: p.godmode ?? false,
          page: p.page,
          pageSize: p.page_size,
        }),
      );
    },
  });

  /**
   * A user, for the credentials routes (a remote one too, as Pleroma: admin-fe opens their page). Staff's
   * credentials only for an admin: a moderator granted `users_manage_credentials` must not read another staff
   * member's e-mail or take their account over.
   */
  const credentialsOf = async (c: Ctx, nickname: string, auth: UserAuth) => {
    const found = await findAccount(db(c.env), nickname, hostOf(c));
    if (!found) throw notFound("Not found");
    if (found.user && (found.user.isAdmin || found.user.isModerator) && !auth.user.isAdmin)
      throw forbidden("User is not an admin.");
    return found;
  };

  route(app, {
    method: "get",
    path: "/api/v1/pleroma/admin/users/:nickname/credentials",
    summary: "A local user's credentials and settings (what admin-fe's security dialog shows)",
    tags: ADMIN_TAG,
    auth: "user",
    scopes: READ,
    privilege: "users_manage_credentials",
    params: z.object({ nickname: z.string().max(320) }),
    response: AdminCredentialsSchema,
    handler: async (c, p, auth) =>
      c.json(renderAdminCredentials(renderContext(c, auth.account.id), await credentialsOf(c, p.nickname, auth))),
  });

  route(app, {
    method: "patch",
    path: "/api/v1/pleroma/admin/users/:nickname/credentials",
    summary: "Change a local user's e-mail, password (they must still reset it by e-mail, as Pleroma) or actor type",
    tags: ADMIN_TAG,
    auth: "user",
    scopes: WRITE,
    privilege: "users_manage_credentials",
    params: z.object({
      nickname: z.string().max(320),
      email: z.string().max(320).optional(),
      password: z.string().max(1000).optional(),
      actor_type: z.enum(["Person", "Service", "Group", "Application"]).optional(),
    }),
    response: z.object({ status: z.literal("success") }),
    handler: async (c, p, auth) => {
      const { account, user } = await credentialsOf(c, p.nickname, auth);
      // A remote account's credentials are its server's.
      if (!user) throw notFound("Not found");
      const effects = await admin.updateCredentialsAsAdmin(
        db(c.env),
        config(c.env),
        { bucket: c.env.MEDIA, images: c.env.IMAGES },
        baseUrl(c),
        actorOf(auth),
        { account, user },
        { email: p.email, password: p.password, actor_type: p.actor_type },
      );
      after(c, effects);
      return c.json({ status: "success" as const });
    },
  });

  route(app, {
    method: "get",
    path: "/api/v1/pleroma/admin/users/:nickname",
    summary: "A user, by nickname or id",
    tags: ADMIN_TAG,
    auth: "user",
    scopes: READ,
    privilege: "users_read",
    params: z.object({ nickname: z.string() }),
    response: AdminUserSchema,
    handler: async (c, p) => {
      const found = await findAccount(db(c.env), p.nickname, hostOf(c));
      if (!found) throw notFound("Not found");
      return c.json(renderAdminUser(renderContext(c, null), found));
    },
  });
}
