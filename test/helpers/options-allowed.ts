/**
 * Differences between our OPTIONS answers and Nautobot 1.6.32's (test/fixtures/nautobot-options.json) that
 * are deliberate or not fixed, each with its reason (README, "Deliberate deviations" and "Known
 * differences"). Anything not matched here fails test/api/options-fixture.test.ts; an entry that matches
 * nothing fails it too, so the list cannot go stale.
 */
import { registry } from "../../src/registry/index.ts";
import type { OptionsDiff } from "./options-diff.ts";

export interface Allowance {
  /** Why the difference is kept. */
  why: string;
  /** `<app>/<endpoint>`. */
  endpoint: string;
  /** The field path, exact, or a prefix when it ends with `*`. */
  path: string;
  /** The differing attributes covered (all when omitted). */
  attrs?: readonly string[];
  /** A further condition on the difference. */
  when?: (d: OptionsDiff) => boolean;
}

const reg = registry();

/** A `choices.values` difference where we only miss content types of models this service does not build. */
const onlyUnbuiltContentTypes = (d: OptionsDiff) =>
  Array.isArray(d.ours) &&
  d.ours.length === 0 &&
  Array.isArray(d.ref) &&
  d.ref.every((v) => !reg.models.has(String(v)));

export const ALLOWED: readonly Allowance[] = [
  // --- not built: Git repositories, jobs, image storage, user config ---------------------------------
  {
    why: "Nautobot offers every content type (Django's own, Git repositories, jobs, templates, cable paths); we offer the models that take notes",
    endpoint: "extras/notes",
    path: "POST.assigned_object_type",
    attrs: ["choices.values"],
    when: (d) => Array.isArray(d.ours) && d.ours.length === 0,
  },
  ...["extras/relationships", "extras/relationship-associations"].flatMap((endpoint) =>
    ["POST.source_type", "POST.destination_type"].map((path) => ({
      why: "Git repositories and jobs are not built, so they are no relationship content types",
      endpoint,
      path,
      attrs: ["choices.values"],
      when: onlyUnbuiltContentTypes,
    })),
  ),
  ...["extras/config-contexts", "extras/config-context-schemas", "extras/export-templates"].map(
    (endpoint) => ({
      why: "the owner (a Git repository, not built) is read-only here; Nautobot lets it be written",
      endpoint,
      path: "POST.owner_*",
      attrs: ["read_only", "choices"],
    }),
  ),
  ...["POST.front_image", "POST.rear_image"].map((path) => ({
    why: "device-type images are read-only and always null: this service has no file storage",
    endpoint: "dcim/device-types",
    path,
    attrs: ["type", "read_only", "max_length"],
  })),
  { why: "users' API configuration (`/api/users/config/`) is not built", endpoint: "users/config", path: "" },
  // --- deliberate deviations (README) ----------------------------------------------------------------
  {
    why: "primary keys are UUIDs everywhere, groups included (Nautobot: integer ids)",
    endpoint: "users/groups",
    path: "POST.id",
    attrs: ["type", "label"],
  },
  {
    why: "webhooks carry `enabled` (Nautobot's serializer leaves it out)",
    endpoint: "extras/webhooks",
    path: "POST.enabled",
    attrs: ["present"],
  },
  {
    why: "±9223372036854775807 cannot be carried exactly by JSON numbers in JavaScript",
    endpoint: "extras/custom-fields",
    path: "POST.validation_*",
    attrs: ["min_value", "max_value"],
  },
  {
    why: "a note's slug is generated from its object and time, never written (Nautobot: a writable slug)",
    endpoint: "extras/notes",
    path: "POST.slug",
    attrs: ["type", "read_only", "max_length"],
  },
  {
    why: '`fields = "__all__"` leaks `_custom_field_data` in Nautobot\'s serializer; we do not',
    endpoint: "dcim/interface-redundancy-groups",
    path: "POST._custom_field_data",
    attrs: ["present"],
  },
  {
    why: "Nautobot's serializer says optional, but its model rejects a blank protocol; ours says required",
    endpoint: "ipam/services",
    path: "POST.protocol",
    attrs: ["required"],
  },
  // --- not worth it: DRF field classes we describe by the value they hold ----------------------------
  {
    why: "a ListField(IntegerField) in Nautobot; we describe the JSON list as a field (values checked 1-65535)",
    endpoint: "ipam/services",
    path: "POST.ports",
    attrs: ["type", "child"],
  },
  {
    why: "a DictField in Nautobot (DRF calls it a nested object); we describe the JSON object as a field",
    endpoint: "extras/graphql-queries",
    path: "POST.variables",
    attrs: ["type", "child"],
  },
  {
    why: "a TimeZoneSerializerField in Nautobot; we describe the time-zone name as a string of at most 63",
    endpoint: "dcim/sites",
    path: "POST.time_zone",
    attrs: ["type", "max_length"],
  },
  // --- known differences, in GET too (README "Known differences not fixed yet") ----------------------
  {
    why: 'Nautobot\'s `fields = "__all__"` serializer: datetime `created`, and a nested association without its links',
    endpoint: "dcim/interface-redundancy-groups",
    path: "POST.*",
    attrs: ["type", "present"],
    when: (d) => d.path === "POST.created" || d.path.startsWith("POST.interfaces.child.children."),
  },
  {
    why: "a rack reservation without a user is accepted (Nautobot requires one)",
    endpoint: "dcim/rack-reservations",
    path: "POST.user",
    attrs: ["required"],
  },
];

/** Whether `a` covers `d`. */
function covers(a: Allowance, d: OptionsDiff): boolean {
  if (a.endpoint !== d.endpoint) return false;
  if (a.path.endsWith("*") ? !d.path.startsWith(a.path.slice(0, -1)) : a.path !== d.path) return false;
  if (a.attrs && !a.attrs.includes(d.attr)) return false;
  return !a.when || a.when(d);
}

/** The allowance that covers `d`, if any. */
export function allowedDiff(d: OptionsDiff): Allowance | undefined {
  return ALLOWED.find((a) => covers(a, d));
}
