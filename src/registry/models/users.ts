/**
 * Users models: users, groups, tokens, object permissions (Nautobot 1.6 `users` app;
 * shared/reference/nautobot-models.md §2G, nautobot-api-core.md §8). Passwords and token keys are stored
 * hashed (scrypt / SHA-256); the token key is shown in clear only in the response that creates it.
 */
import { defineModel, f, type ModelDef } from "../meta.ts";

export const user = defineModel({
  app: "users",
  loginRequired: true,
  name: "user",
  keyOrder: ["display", "id", "url"], // Nautobot 1.6 users serializers list `display` first
  verbose: "user",
  path: "users",
  fields: {
    username: f.str(150, {
      required: true,
      unique: true,
      pattern: [
        /^[\w.@+-]+$/,
        "Enter a valid username. This value may contain only letters, numbers, and @/./+/-/_ characters.",
      ],
    }),
    password: f.str(128, { required: true, writeOnly: true, noFilter: true }),
    first_name: f.str(150, { default: "" }),
    last_name: f.str(150, { default: "" }),
    email: f.str(254, { default: "", format: "email" }),
    is_staff: f.bool(false),
    is_active: f.bool(true),
    is_superuser: f.bool(false, { hidden: true, readOnly: true }),
    date_joined: f.datetime({ autoNow: true }),
    groups: f.m2m("users.group", { filterKey: "name" }),
  },
  nested: ["username"],
  display: "username",
  ordering: ["username"],
  search: ["email", "first_name", "last_name", "username"],
  filters: {
    group: { kind: "path", path: "groups", key: "name" },
    group_id: { kind: "path", path: "groups", key: "id" },
  },
});

export const group = defineModel({
  app: "users",
  loginRequired: true,
  name: "group",
  keyOrder: ["display", "id", "url"], // Nautobot 1.6 users serializers list `display` first
  verbose: "group",
  path: "groups",
  fields: {
    name: f.name(150, { unique: true }),
    user_count: f.computed("user_count", { type: "integer", annotation: "absent" }),
  },
  nested: ["name"],
  ordering: ["name"],
  search: ["name"],
});

export const token = defineModel({
  app: "users",
  loginRequired: true,
  name: "token",
  naturalKeyFields: [],
  naturalKeyNote:
    "No natural key: a token's key is stored hashed and tokens have no other uniqueness rule; not upserted",
  keyOrder: ["id", "url", "display"], // Nautobot 1.6 `TokenSerializer.Meta.fields`
  verbose: "token",
  path: "tokens",
  fields: {
    user: f.fk("users.user", "CASCADE", { hidden: true, readOnly: true }),
    created: f.datetime({ readOnly: true, autoNow: true }),
    expires: f.datetime({ nullable: true }),
    key: f.str(40, { min: 40, noFilter: true, hashed: true }),
    key_suffix: f.str(6, { hidden: true, readOnly: true }),
    write_enabled: f.bool(true),
    description: f.description(),
  },
  nested: ["key", "write_enabled"],
  displayUses: ["user"],
  display: (r, rel) => `${r.key_suffix} (${rel.user?.display ?? ""})`,
  ordering: ["created"],
  search: ["description"],
});

export const ACTIONS = ["view", "add", "change", "delete"];

export const objectPermission = defineModel({
  app: "users",
  loginRequired: true,
  name: "objectpermission",
  naturalKeyFields: ["name"],
  naturalKeyNote:
    "Unique in Nautobot 2.x (`ObjectPermission.name`), not enforced in 1.6: duplicates make an upsert of them a 400",
  keyOrder: ["display", "id", "url"], // Nautobot 1.6 users serializers list `display` first
  verbose: "permission",
  path: "permissions",
  fields: {
    name: f.name(100),
    description: f.description(),
    enabled: f.bool(true),
    object_types: f.cts("all", { required: true, ctFilter: "pk" }),
    groups: f.m2m("users.group", { filterKey: "name" }),
    users: f.m2m("users.user", { filterKey: "username" }),
    actions: f.json({ array: "str", required: true }),
    constraints: f.json({ nullable: true }),
  },
  serviceValidate: "object_permission",
  nested: ["name", "enabled", "object_types", "groups", "users", "actions"],
  ordering: ["name"],
  search: ["name", "description"],
  filters: {
    group: { kind: "path", path: "groups", key: "name" },
    group_id: { kind: "path", path: "groups", key: "id" },
    user: { kind: "path", path: "users", key: "username" },
    user_id: { kind: "path", path: "users", key: "id" },
  },
});

export const models: ModelDef[] = [user, group, token, objectPermission];
