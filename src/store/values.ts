/**
 * How values are stored: the one definition of the datetime text format and of reading JSON columns,
 * shared by every layer that writes or compares stored values.
 */

/**
 * A datetime as stored and rendered: ISO 8601 UTC with microseconds and `Z`, as Nautobot/DRF render them
 * (`2026-11-23T07:54:01.123000Z`). Fixed width, so stored values sort and compare as text.
 * @param at epoch milliseconds or a Date; default now.
 */
export function storedTime(at: number | Date = Date.now()): string {
  return new Date(at).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}

/**
 * The value of a JSON column. JSON is stored as text on both engines; a value that is already parsed
 * passes through; null, empty or unparsable text gives null.
 */
export function parseJsonColumn<T = unknown>(v: unknown): T | null {
  if (v === null || v === undefined || v === "") return null;
  if (typeof v !== "string") return v as T;
  try {
    return JSON.parse(v) as T;
  } catch {
    return null;
  }
}
