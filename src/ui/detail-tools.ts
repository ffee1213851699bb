/**
 * What issue 25 adds to detail pages, per model as data derived from the registry: the "Add components"
 * menu of a device (every component model, routes/components.ts), the allocation buttons of a prefix and
 * the "Make primary" button of an assigned IP address (routes/allocate.ts), and a prefix's child tables with
 * its free space as rows (prefix-tables.ts). Each piece is shown only when the user may use it.
 */
import type { Model } from "../registry/index.ts";
import type { Ctx } from "../service/context.ts";
import type { Row } from "../service/rows.ts";
import type { ChildTable } from "./children.ts";
import { prefixTables } from "./prefix-tables.ts";
import { allocationTools, type Tool } from "./routes/allocate.ts";
import { componentMenu } from "./routes/components.ts";

/** A toolbar menu: a label and its links. */
export interface Menu {
  label: string;
  items: Array<{ label: string; url: string }>;
}

/** The menus, buttons and extra child tables of one object's detail page. */
export async function detailTools(
  ctx: Ctx,
  model: Model,
  row: Row,
): Promise<{ menus: Menu[]; tools: Tool[]; tables: ChildTable[] }> {
  const items = componentMenu(ctx, model, String(row.id));
  return {
    menus: items.length ? [{ label: "Add components", items }] : [],
    tools: await allocationTools(ctx, model, row),
    tables: model.key === "ipam.prefix" ? await prefixTables(ctx, row) : [],
  };
}
