/**
 * Filter values Nautobot 1.6.32 refuses or reads differently (issue 24): partial and odd networks (netaddr
 * 0.8.0) and content types. One table, used twice: test/api/filter-values-cases.test.ts asserts it on this
 * server (SQLite and PostgreSQL), and `node scripts/filter-values.ts --cases` builds the same fixture on the
 * reference Nautobot and prints every case whose answer differs from the table.
 *
 * A case is `[query, status, count?]`: the answer's status, and for most 200s the row count. Every query carries
 * a filter that keeps it to the fixture's rows (`vrf=65000:24`, `rir=t2-rir`, `name__isw=t2-`...), so other
 * data on the reference does not change the counts.
 */

/** What the fixture needs from a server: a JSON API call (token, Accept) returning status and body. */
export type Api = (
  path: string,
  init?: { method?: string; body?: unknown },
) => Promise<{ status: number; body: any }>;

async function make(api: Api, path: string, find: string, body: Record<string, unknown>): Promise<any> {
  const got = await api(`${path}?${find}`);
  if (got.status === 200 && got.body.count > 0) return got.body.results[0];
  const r = await api(path, { method: "POST", body });
  if (r.status !== 201)
    throw new Error(`${path} ${JSON.stringify(body)}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** The fixture, created through the API (found again when it exists: the reference keeps it between runs). */
export async function buildFixture(api: Api): Promise<void> {
  const site = await make(api, "/api/dcim/sites/", "slug=t2-site", {
    name: "t2-site",
    slug: "t2-site",
    status: "active",
  });
  const vrf = await make(api, "/api/ipam/vrfs/", "rd=65000:24", { name: "t2-vrf", rd: "65000:24" });
  for (const prefix of [
    "0.0.0.0/1",
    "10.0.0.0/8",
    "10.1.0.0/16",
    "10.1.2.0/24",
    "192.168.0.0/16",
    "2001:db8::/32",
  ])
    await make(api, "/api/ipam/prefixes/", `vrf_id=${vrf.id}&prefix=${prefix}`, {
      prefix,
      vrf: vrf.id,
      status: "active",
    });
  for (const address of ["10.1.2.3/24", "10.0.0.1/8", "10.1.0.0/16", "2001:db8::1/64"])
    await make(api, "/api/ipam/ip-addresses/", `vrf_id=${vrf.id}&address=${address}`, {
      address,
      vrf: vrf.id,
      status: "active",
    });
  const rir = await make(api, "/api/ipam/rirs/", "slug=t2-rir", { name: "t2-rir", slug: "t2-rir" });
  for (const prefix of ["10.0.0.0/8", "2001:db8::/32"])
    await make(api, "/api/ipam/aggregates/", `rir_id=${rir.id}&prefix=${prefix}`, { prefix, rir: rir.id });
  await make(api, "/api/extras/custom-links/", "name=t2-link", {
    name: "t2-link",
    content_type: "dcim.site",
    target_url: "https://example.com/{{ obj.pk }}",
    text: "t2",
    new_window: false,
  });
  await make(api, "/api/extras/notes/", `assigned_object_id=${site.id}`, {
    assigned_object_type: "dcim.site",
    assigned_object_id: site.id,
    note: "t2-note",
  });
  await make(api, "/api/extras/relationships/", "slug=t2-rel", {
    name: "t2-rel",
    slug: "t2-rel",
    type: "many-to-many",
    source_type: "dcim.site",
    destination_type: "dcim.device",
  });
  await make(api, "/api/extras/dynamic-groups/", "slug=t2-dg", {
    name: "t2-dg",
    slug: "t2-dg",
    content_type: "dcim.device",
    filter: {},
  });
  const lt = await make(api, "/api/dcim/location-types/", "slug=t2-lt", {
    name: "t2-lt",
    slug: "t2-lt",
    content_types: ["dcim.device", "ipam.prefix"],
  });
  await make(api, "/api/dcim/locations/", "slug=t2-loc", {
    name: "t2-loc",
    slug: "t2-loc",
    location_type: lt.id,
    site: site.id,
    status: "active",
  });
}

const P = "/api/ipam/prefixes/?vrf=65000:24&";
const IP = "/api/ipam/ip-addresses/?vrf=65000:24&";
const AG = "/api/ipam/aggregates/?rir=t2-rir&";
const CL = "/api/extras/custom-links/?name__isw=t2-&";
const NO = "/api/extras/notes/?note__isw=t2-&";
const RE = "/api/extras/relationships/?slug__isw=t2-&";
const DG = "/api/extras/dynamic-groups/?slug__isw=t2-&";
const LO = "/api/dcim/locations/?slug__isw=t2-&";

/**
 * `[query, status, count?, nautobotCount?]`: the answers of Nautobot 1.6.32, and where this server
 * deliberately differs, Nautobot's count last: Nautobot compares addresses as bytes without their family,
 * so 0.0.0.0/1 (bytes 00000000–7fffffff) contains 2001:db8::5 and overlaps the IPv6 networks a `q` stands
 * for; here a network only meets networks of its own family (README, deviations).
 */
export const CASES: readonly (readonly [string, number, number?, number?])[] = [
  // Networks: netaddr's `IPNetwork` pads a partial IPv4 address with zero octets and keeps the full width.
  [`${P}within=10`, 200, 0],
  [`${P}within=10.1`, 200, 0],
  [`${P}within=10.1/16`, 200, 1],
  [`${P}within=10/8`, 200, 2],
  [`${P}within=010.0.0.0/8`, 200, 2],
  [`${P}within=10.0.0.0/255.0.0.0`, 200, 2],
  [`${P}within=10.0.0.0/0.255.255.255`, 200, 2],
  [`${P}within=10.0.0.0/%2B8`, 200, 2],
  [`${P}within=10.0.0.0/255.0.255.0`, 200, 0],
  [`${P}within=10.0.0.0/33`, 200, 0],
  [`${P}within=banana`, 200, 0],
  [`${P}within=`, 200, 6],
  [`${P}within=%2010.0.0.0/8%20`, 200, 2],
  [`${P}within=10.0.0.0/8&within=192.168.0.0/16`, 200, 0],
  [`${P}within=2001:db8::/16`, 200, 1],
  [`${P}within_include=10.1`, 200, 0],
  [`${P}within_include=10.1/16`, 200, 2],
  // `contains` without a `/` is an address (`IPAddress`, glibc inet_aton): `10` is 0.0.0.10, `10.1` 10.0.0.1.
  [`${P}contains=10`, 200, 1],
  [`${P}contains=10.1`, 200, 2],
  [`${P}contains=10.1.2.3`, 200, 4],
  [`${P}contains=012.1.2.3`, 200, 4],
  [`${P}contains=0x0a.1.2.3`, 200, 4],
  [`${P}contains=10.1.2.3%20junk`, 200, 4],
  [`${P}contains=10.1/16`, 200, 3],
  [`${P}contains=2001:db8::5`, 200, 1, 2],
  [`${P}contains=banana`, 200, 0],
  [`${P}prefix=10.1`, 200, 0],
  [`${P}prefix=10.1/16`, 200, 1],
  [`${P}prefix=10/8`, 200, 1],
  [`${P}prefix=10.9.9.9/255.0.0.0`, 200, 1],
  // `q`: a partial address stands for the network it begins (10.1 → 10.1.0.0/16; a number below 256 is
  // also an IPv6 hextet); text that is no address searches 0.0.0.0/32, which 0.0.0.0/1 contains.
  [`${P}q=10`, 200, 4],
  [`${P}q=10.1`, 200, 4],
  [`${P}q=10.1.2.3/8`, 200, 4],
  [`${P}q=192`, 200, 1, 2],
  [`${P}q=banana`, 200, 1],
  [`${P}q=2001:db8`, 200, 1, 2],
  [`${P}q=2001:db8:`, 200, 1, 2],
  [`${P}q=fe80`, 200, 0],
  [`${P}q=FE80`, 200, 1],
  [`${IP}parent=10.1`, 200, 1],
  [`${IP}parent=10.1/16`, 200, 2],
  [`${IP}parent=10/8`, 200, 3],
  [`${IP}parent=banana`, 200, 0],
  [`${IP}address=10.1`, 200, 1],
  [`${IP}address=10.1.2.3/24`, 200, 1],
  [`${IP}address=10.1.2.3/16`, 200, 0],
  [`${IP}address=10.1.2.3/8&address=10.0.0.1/24`, 200, 2],
  [`${IP}address=`, 200, 4],
  [`${IP}address=banana`, 400], // Nautobot: 500 (AddrFormatError)
  [`${IP}q=10.1`, 200, 2],
  [`${IP}q=10`, 200, 3],
  [`${IP}q=banana`, 200, 0],
  [`${IP}q=2001:db8::1`, 200, 1],
  [`${AG}prefix=10`, 200, 0],
  [`${AG}prefix=10/8`, 200, 1],
  [`${AG}prefix=banana`, 200, 0],
  [`${AG}q=10.1`, 200, 1],
  [`${AG}q=banana`, 200, 0],
  // Content types. `ContentTypeFilter` (custom links, notes): the last value, case-insensitive, else nothing.
  [`${CL}content_type=dcim.site`, 200, 1],
  [`${CL}content_type=DCIM.Site`, 200, 1],
  [`${CL}content_type=dcim.nosuch`, 200, 0],
  [`${CL}content_type=nope`, 200, 0],
  [`${CL}content_type=5`, 200, 0],
  [`${CL}content_type=`, 200, 1],
  [`${CL}content_type=dcim.device&content_type=dcim.site`, 200, 1],
  [`${CL}content_type=dcim.site&content_type=dcim.device`, 200, 0],
  [`${CL}content_type__ic=dcim`, 400],
  [`${NO}assigned_object_type=dcim.site`, 200, 1],
  [`${NO}assigned_object_type=dcim.nosuch`, 200, 0],
  [`${NO}assigned_object_type=nope`, 200, 0],
  [`${NO}assigned_object_type=5`, 200, 0],
  [`${NO}assigned_object_type=`, 200, 1],
  // `ContentTypeMultipleChoiceFilter`: each value one of the field's types; statuses' AND, the others' OR.
  ["/api/extras/statuses/?content_types=dcim.device", 200, 7],
  ["/api/extras/statuses/?content_types=dcim.device&content_types=ipam.prefix", 200, 1],
  ["/api/extras/statuses/?content_types=DCIM.Device", 400],
  ["/api/extras/statuses/?content_types=dcim.nosuch", 400],
  ["/api/extras/statuses/?content_types=nope", 400],
  ["/api/extras/statuses/?content_types=5", 400],
  ["/api/extras/statuses/?content_types=", 400],
  ["/api/extras/tags/?content_types=nope", 400],
  ["/api/extras/custom-fields/?content_types=", 400],
  [`${RE}source_type=dcim.site`, 200, 1],
  [`${RE}source_type=dcim.site&source_type=dcim.device`, 200, 1],
  [`${RE}source_type=dcim.nosuch`, 400],
  [`${RE}source_type=nope`, 400],
  [`${RE}source_type=`, 400],
  [`${RE}destination_type=dcim.device`, 200, 1],
  [`${DG}content_type=dcim.device`, 200, 1],
  [`${DG}content_type=dcim.device&content_type=dcim.rack`, 200, 1],
  [`${DG}content_type=dcim.site`, 400],
  [`${DG}content_type=nope`, 400],
  [`${DG}content_type=`, 400],
  [`${LO}content_type=dcim.device`, 200, 1],
  [`${LO}content_type=dcim.device&content_type=ipam.prefix`, 200, 1],
  [`${LO}content_type=dcim.device&content_type=dcim.rack`, 200, 0],
  [`${LO}content_type=dcim.rack`, 200, 0],
  [`${LO}content_type=nope`, 400],
  [`${LO}content_type=5`, 400],
  [`${LO}content_type=`, 400],
  ["/api/dcim/cables/?termination_a_type=dcim.interface", 200, 0],
  ["/api/dcim/cables/?termination_a_type=dcim.nosuch", 400],
  ["/api/dcim/cables/?termination_b_type=nope", 400],
  ["/api/dcim/cables/?termination_a_type=5", 400],
  ["/api/dcim/cables/?termination_a_type=", 400],
  ["/api/extras/relationship-associations/?source_type=nope", 400],
  ["/api/dcim/location-types/?content_types=nope", 400],
  // Automatic model-choice filters: export templates' content type, permissions' object types.
  ["/api/extras/export-templates/?content_type=nope", 400],
  ["/api/extras/export-templates/?content_type=", 200],
  ["/api/users/permissions/?object_types=nope", 400],
  ["/api/users/permissions/?object_types=", 400],
  ["/api/users/permissions/?object_types=999999", 400],
];
