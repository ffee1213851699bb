/**
 * Guards against privilege escalation through the users app (issue 12, "self-escalation"). They apply to
 * non-superusers (contexts with grants); superusers and system contexts (CLI, importer) pass.
 *
 * - Object permissions are created, changed and deleted by superusers only: a user allowed to write them
 *   could otherwise grant themselves anything (a deliberate deviation from Nautobot 1.6).
 * - A superuser's account is changed or deleted by superusers only.
 * - Changing a user's groups needs `change` permission on every group added or removed — a permission to
 *   edit oneself (`{"username": "$user"}`) never lets one join a group.
 * - Setting another user's password needs an unconstrained `change` permission on users; `is_staff` is
 *   set by superusers only.
 */
import type { Model } from "../registry/index.ts";
import type { Ctx } from "./context.ts";
import { PermissionDenied } from "./errors.ts";
import { permits } from "./permissions.ts";
import type { Row } from "./rows.ts";

/**
 * Check a create or update of `model` (record after the write, stored record before it, the fields the
 * body set). @throws PermissionDenied naming what is refused.
 */
export async function guardAccountWrite(
  ctx: Ctx,
  model: Model,
  record: Row,
  before: Row | undefined,
  touched: ReadonlySet<string> | undefined,
): Promise<void> {
  if (!ctx.grants || model.app !== "users") return;
  if (model.key === "users.objectpermission")
    throw new PermissionDenied("Only superusers may create or change object permissions.");
  if (model.key !== "users.user") return;
  if (before?.is_superuser) throw new PermissionDenied("Only superusers may change a superuser's account.");
  const set = (name: string) => !touched || touched.has(name);
  if (set("is_staff") && !!record.is_staff !== !!before?.is_staff)
    throw new PermissionDenied("Only superusers may change is_staff.");
  if (set("groups")) {
    const was = new Set<string>(((before?.groups as string[] | undefined) ?? []).map(String));
    const now = new Set<string>(((record.groups as string[] | undefined) ?? []).map(String));
    const changed = [...now].filter((g) => !was.has(g)).concat([...was].filter((g) => !now.has(g)));
    const groups = ctx.reg.get("users.group");
    for (const g of changed)
      if (!(await permits(ctx, groups, g, "change")) || !ctx.grants.rules.has("users.group:change"))
        throw new PermissionDenied("Changing a user's groups needs change permission on those groups.");
  }
  const self = before && String(before.id ?? "") === ctx.grants.user.id;
  if (before && !self && set("password") && typeof record.password === "string" && record.password) {
    if (ctx.grants.rules.get("users.user:change") !== "all")
      throw new PermissionDenied(
        "Setting another user's password needs unconstrained change permission on users.",
      );
  }
}

/** Check a delete: superusers' accounts and object permissions are deleted by superusers only. */
export async function guardAccountDelete(ctx: Ctx, model: Model, rows: Row[]): Promise<void> {
  if (!ctx.grants || model.app !== "users") return;
  if (model.key === "users.objectpermission")
    throw new PermissionDenied("Only superusers may delete object permissions.");
  if (model.key === "users.user" && rows.some((r) => r.is_superuser))
    throw new PermissionDenied("Only superusers may delete a superuser's account.");
}
