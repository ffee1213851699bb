/**
 * Config-context schemas and secrets (Nautobot 1.6.32 `extras`: `ConfigContextSchema`, `Secret`,
 * `SecretsGroup`, `SecretsGroupAssociation`; serializers in `nautobot/extras/api/serializers.py`, shapes
 * compared against a running Nautobot 1.6.32 at API 1.2). Secret values are never stored or served: a
 * secret names where its value lives (an environment variable or a file), read by `service/secrets.ts`.
 */
import { defineModel, f, type ModelDef } from "../meta.ts";

/** Secret providers built in (Nautobot 1.6 `EnvironmentVariableSecretsProvider`, `TextFileSecretsProvider`). */
export const SECRET_PROVIDERS = ["environment-variable", "text-file"] as const;

/** Nautobot 1.6 `SecretsGroupAccessTypeChoices`. */
export const ACCESS_TYPES = [
  ["Generic", "Generic"],
  ["Console", "Console"],
  ["gNMI", "gNMI"],
  ["HTTP(S)", "HTTP(S)"],
  ["NETCONF", "NETCONF"],
  ["REST", "REST"],
  ["RESTCONF", "RESTCONF"],
  ["SNMP", "SNMP"],
  ["SSH", "SSH"],
] as const;

/** Nautobot 1.6 `SecretsGroupSecretTypeChoices`. */
export const SECRET_TYPES = [
  ["key", "Key"],
  ["password", "Password"],
  ["secret", "Secret"],
  ["token", "Token"],
  ["username", "Username"],
] as const;

export const configContextSchema = defineModel({
  app: "extras",
  name: "configcontextschema",
  verbose: "config context schema",
  path: "config-context-schemas",
  changelog: true,
  customFields: true,
  fields: {
    name: f.name(200, { unique: true }),
    slug: { ...f.slug("name", { max: 200, unique: true }) },
    owner_content_type: f.ct([], { nullable: true, readOnly: true }),
    owner_object_id: f.str(36, { nullable: true, readOnly: true }),
    owner: f.computed("null", { type: "field" }),
    description: f.description(),
    data_schema: f.json({
      required: true,
      help: "A JSON Schema document which is used to validate a config context object.",
    }),
  },
  nested: ["name", "slug"],
  ordering: ["name"],
  search: ["data_schema", "description", "name"],
  serviceValidate: "configContextSchema",
});

export const secret = defineModel({
  app: "extras",
  name: "secret",
  verbose: "secret",
  path: "secrets",
  changelog: true,
  customFields: true,
  tags: true,
  fields: {
    name: f.name(100, { unique: true }),
    slug: { ...f.slug("name", { unique: true }) },
    description: f.description(),
    provider: f.str(100, { required: true }),
    parameters: f.json({ object: true, default: {} }),
  },
  nested: ["name", "slug"],
  ordering: ["name"],
  search: ["name", "slug"],
  /** Nautobot 1.6 `Secret.clean` and the providers' parameter forms. */
  validate({ data, error }) {
    const params = (data.parameters ?? {}) as Record<string, unknown>;
    if (!params || Object.keys(params).length === 0) error("parameters", "This field cannot be blank.");
    if (!(SECRET_PROVIDERS as readonly string[]).includes(String(data.provider))) {
      error("provider", `No registered provider "${data.provider}" is available`);
      return;
    }
    if (!Object.keys(params).length) return;
    if (data.provider === "environment-variable") {
      if (typeof params.variable !== "string" || !params.variable)
        error("parameters", 'The "variable" parameter is mandatory!');
    } else {
      const path = params.path;
      if (typeof path !== "string" || !path) error("parameters", 'The "path" parameter is mandatory!');
      else if (!path.startsWith("/"))
        error("parameters", "Path must be an absolute path, not a relative one");
      else if (path.includes("..")) error("parameters", "Illegal character sequence in path");
    }
  },
});

export const secretsGroup = defineModel({
  app: "extras",
  name: "secretsgroup",
  verbose: "secrets group",
  path: "secrets-groups",
  changelog: true,
  customFields: true,
  fields: {
    name: f.name(100, { unique: true }),
    slug: { ...f.slug("name", { unique: true }) },
    description: f.description(),
    secrets: f.computed("reverse_nested", {
      type: "field",
      of: { model: "extras.secretsgroupassociation", via: "group" },
    }),
  },
  nested: ["name", "slug"],
  ordering: ["name"],
  search: ["name", "slug"],
});

export const secretsGroupAssociation = defineModel({
  app: "extras",
  name: "secretsgroupassociation",
  verbose: "secrets group association",
  path: "secrets-groups-associations",
  fields: {
    group: f.rfk("extras.secretsgroup", "CASCADE", { filterKey: "slug" }),
    access_type: f.choice(ACCESS_TYPES, { required: true, plain: true }),
    secret_type: f.choice(SECRET_TYPES, { required: true, plain: true }),
    // Nautobot 1.6 `SecretsGroupAssociationSerializer` (a secrets group's `secrets`) declares it writable.
    secret: f.rfk("extras.secret", "CASCADE", { filterKey: "slug", nestedWrite: "required" }),
  },
  nested: ["access_type", "secret_type", "secret"],
  displayUses: ["group", "secret"],
  display: (r, rel) =>
    `${(rel.group as { display?: string } | null)?.display ?? ""}: ${r.access_type} ${r.secret_type}: ${(rel.secret as { display?: string } | null)?.display ?? ""}`,
  ordering: ["group", "access_type", "secret_type"],
  search: [],
  uniqueTogether: [{ fields: ["group", "access_type", "secret_type"] }],
});

export const models: ModelDef[] = [configContextSchema, secret, secretsGroup, secretsGroupAssociation];
