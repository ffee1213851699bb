/**
 * The navigation menu of every page (issue 25), derived from the registry: the groups of
 * `registry/presentation.ts` (Nautobot's Organization, Devices, Connections, IPAM, …), each entry a
 * model's list page, only the models the user may view. Models of the registry that no group names fall
 * into their app's group, so every browsable model is reachable.
 */
import type { Model, Registry } from "../registry/index.ts";
import { MENU, menuGroupOf } from "../registry/presentation.ts";
import { type Grants, mayDo } from "../service/permissions.ts";
import { titleOf } from "./views.ts";

/** One menu group as the layout draws it: a label and links (title, URL) to list pages. */
export interface MenuSection {
  label: string;
  items: Array<{ title: string; url: string }>;
}

/** Models shown by the web interface: every registered model except the content types. */
export const browsable = (m: Model): boolean => m.key !== "extras.contenttype";

/** The menu of a user holding `grants` (undefined: a superuser): groups without a viewable model are left out. */
export function menuFor(reg: Registry, grants: Grants | undefined): MenuSection[] {
  const groups = new Map<string, Model[]>(MENU.map((g) => [g.label, []]));
  const listed = MENU.flatMap((g) => g.models);
  const models = [...reg.models.values()].sort(
    (a, b) => rank(listed, a.key) - rank(listed, b.key) || a.key.localeCompare(b.key),
  );
  for (const m of models) {
    if (!browsable(m) || !mayDo(grants, m, "view")) continue;
    const label = menuGroupOf(m);
    groups.set(label, [...(groups.get(label) ?? []), m]);
  }
  return [...groups]
    .filter(([, ms]) => ms.length)
    .map(([label, ms]) => ({
      label,
      items: ms.map((m) => ({ title: titleOf(m.plural ?? `${m.verbose}s`), url: `/${m.app}/${m.path}/` })),
    }));
}

const rank = (listed: string[], key: string) => {
  const i = listed.indexOf(key);
  return i < 0 ? listed.length : i;
};
