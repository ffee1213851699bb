/**
 * Django's `slugify` (django.utils.text, `allow_unicode=False`) for slugs the registry's own rules build:
 * NFKD, non-ASCII dropped, lower case, characters other than word characters, spaces and dashes removed,
 * runs of dashes and spaces made one dash, dashes and underscores stripped from both ends.
 * Example: `slugify("Site A-2026-11-27T00:33:39.186725")` is `"site-a-2026-11-27t003339186725"`.
 */
export function djangoSlugify(text: string): string {
  return text
    .normalize("NFKD")
    .replace(/[\u0080-\uffff]/g, "")
    .toLowerCase()
    .replace(/[^\w\s-]/g, "")
    .replace(/[-\s]+/g, "-")
    .replace(/^[-_]+|[-_]+$/g, "");
}

/**
 * Python's `datetime.now().isoformat()` of this moment in UTC (Nautobot runs with the UTC time zone):
 * `YYYY-MM-DDTHH:MM:SS.ffffff`, the fraction in microseconds and left out when it is zero, as Python does.
 */
export function pythonIsoNow(): string {
  const ms = performance.timeOrigin + performance.now();
  const seconds = Math.floor(ms / 1000);
  const micro = Math.min(999_999, Math.floor((ms - seconds * 1000) * 1000));
  const base = new Date(seconds * 1000).toISOString().slice(0, 19);
  return micro ? `${base}.${String(micro).padStart(6, "0")}` : base;
}
