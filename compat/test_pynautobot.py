"""pynautobot 1.5.5 as users drive it (issue 9): a small data centre built and read back through its endpoint
objects. A failing call is fixed in the server, never here."""
import pynautobot
import pytest
from pynautobot.core.graphql import GraphQLException

IF, FP, RP = "dcim.interface", "dcim.frontport", "dcim.rearport"


@pytest.fixture(scope="module")
def dc(nb):
    """Sites, racks, vendor device types with templates, switches and patch panels (module-scoped)."""
    site = nb.dcim.sites.create(name="DC1", slug="dc1", status="active")
    site2 = nb.dcim.sites.create(name="DC2", status="active")
    maker = nb.dcim.manufacturers.create(name="Acme", slug="acme")
    switch_type = nb.dcim.device_types.create(model="Switch 48", slug="switch-48", manufacturer=maker.id, u_height=1)
    nb.dcim.interface_templates.create(
        [{"device_type": switch_type.id, "name": f"eth{i}", "type": "10gbase-x-sfpp"} for i in range(1, 49)]
    )
    panel_type = nb.dcim.device_types.create(model="Panel 12", manufacturer={"name": "Acme"}, u_height=1)
    rear = nb.dcim.rear_port_templates.create(device_type=panel_type.id, name="trunk", type="mpo", positions=12)
    nb.dcim.front_port_templates.create(
        [
            {"device_type": panel_type.id, "name": f"p{i}", "type": "lc", "rear_port": rear.id, "rear_port_position": i}
            for i in range(1, 13)
        ]
    )
    leaf = nb.dcim.device_roles.create(name="Leaf", slug="leaf", color="00ff00")
    patch = nb.dcim.device_roles.create(name="Patch", color="aaaaaa")
    racks = nb.dcim.racks.create([{"name": f"R{i}", "site": site.id, "status": "active"} for i in (1, 2)])
    devices = {}
    for name, dtype, role, rack, pos in [
        ("leaf1", switch_type, leaf, racks[0], 40),
        ("leaf2", switch_type, leaf, racks[1], 40),
        ("pp1", panel_type, patch, racks[0], 42),
        ("pp2", panel_type, patch, racks[1], 42),
    ]:
        devices[name] = nb.dcim.devices.create(
            name=name,
            device_type=dtype.id,
            device_role=role.id,
            site=site.id,
            rack=rack.id,
            position=pos,
            face="front",
            status="active",
        )
    return {"site": site, "site2": site2, "racks": racks, "devices": devices, "leaf": leaf}


def test_status_and_version(nb):
    status = nb.status()
    assert "nautobot-version" in status
    assert nb.version == "1.2"


def test_components_from_templates_and_paging(dc, nb, nb_threaded):
    assert nb.dcim.interfaces.count(device="leaf1") == 48
    # 48 + 48 interfaces over pages of 50, with and without threading.
    names = [i.name for i in nb.dcim.interfaces.filter(device=["leaf1", "leaf2"])]
    assert len(names) == 96
    threaded = list(nb_threaded.dcim.interfaces.filter(device=["leaf1", "leaf2"]))
    assert len(threaded) == 96
    assert {i.id for i in threaded} == {i.id for i in nb.dcim.interfaces.filter(device=["leaf1", "leaf2"])}
    assert len(nb.dcim.front_ports.filter(device="pp1")) == 12
    assert len(list(nb.dcim.devices.filter(site="dc1"))) == 4
    assert len(list(nb.dcim.devices.all())) >= 4


def test_get_filter_choices_and_lazy_records(dc, nb):
    leaf1 = nb.dcim.devices.get(name="leaf1")
    assert leaf1.id == dc["devices"]["leaf1"].id
    assert nb.dcim.devices.get(leaf1.id).name == "leaf1"
    # Nested records load themselves on first access of a field they lack.
    assert leaf1.rack.name == "R1"
    assert leaf1.device_type.manufacturer.name == "Acme"
    assert leaf1.site.full_details() and leaf1.site.status.value == "active"
    choices = nb.dcim.devices.choices()
    assert {"value": "front", "display": "Front"} in choices["face"]
    assert any(c["value"] == "active" for c in choices["status"])
    assert nb.dcim.devices.get(name="nope") is None
    with pytest.raises(ValueError):
        nb.dcim.devices.get(role="leaf")


def test_record_save_update_delete(dc, nb):
    leaf2 = nb.dcim.devices.get(name="leaf2")
    assert leaf2.save() is False, "nothing changed, nothing sent"
    leaf2.serial = "SN-2"
    assert leaf2.save() is True
    assert nb.dcim.devices.get(name="leaf2").serial == "SN-2"
    assert leaf2.update({"asset_tag": "A-2", "comments": "updated"}) is True
    again = nb.dcim.devices.get(name="leaf2")
    assert (again.asset_tag, again.comments) == ("A-2", "updated")
    tmp = nb.dcim.sites.create(name="Temp", status="planned")
    assert tmp.delete() is True
    assert nb.dcim.sites.get(name="Temp") is None
    # Update by id without fetching, then delete each bulk-created record.
    made = nb.dcim.sites.create([{"name": f"Bulk{i}", "status": "planned"} for i in range(3)])
    for s in made:
        assert nb.dcim.sites.update(id=s.id, data={"description": "bulk"}) is True
    assert {s.description for s in nb.dcim.sites.filter(name=[s.name for s in made])} == {"bulk"}
    assert all(s.delete() for s in made)
    assert nb.dcim.sites.count(name=[s.name for s in made]) == 0


def test_patch_panel_trace(dc, nb):
    leaf1, leaf2 = nb.dcim.interfaces.get(device="leaf1", name="eth1"), nb.dcim.interfaces.get(device="leaf2", name="eth1")
    p1 = nb.dcim.front_ports.get(device="pp1", name="p1")
    p2 = nb.dcim.front_ports.get(device="pp2", name="p1")
    r1 = nb.dcim.rear_ports.get(device="pp1", name="trunk")
    r2 = nb.dcim.rear_ports.get(device="pp2", name="trunk")
    for a, at, b, bt in [(leaf1, IF, p1, FP), (r1, RP, r2, RP), (p2, FP, leaf2, IF)]:
        nb.dcim.cables.create(termination_a_type=at, termination_a_id=a.id, termination_b_type=bt, termination_b_id=b.id, status="connected")
    leaf1 = nb.dcim.interfaces.get(leaf1.id)
    assert leaf1.connected_endpoint.id == leaf2.id
    assert leaf1.connected_endpoint_reachable is True
    hops = leaf1.trace()
    assert len(hops) == 3
    near, cable, far = hops[-1]
    assert far.id == leaf2.id and far.name == "eth1"
    assert isinstance(hops[0][1], pynautobot.models.dcim.Cables)
    assert [type(h[0]).__name__ for h in hops] == ["Interfaces", "RearPorts", "FrontPorts"]


def test_ip_plan_and_allocation(dc, nb):
    block = nb.ipam.prefixes.create(prefix="10.10.0.0/16", status="container", site=dc["site"].id)
    first = block.available_prefixes.create({"prefix_length": 24, "status": "active"})
    assert first.prefix == "10.10.0.0/24"
    assert block.available_prefixes.list()[0].prefix == "10.10.1.0/24"
    two = block.available_prefixes.create([{"prefix_length": 26, "status": "active"}, {"prefix_length": 26, "status": "active"}])
    assert [p.prefix for p in two] == ["10.10.1.0/26", "10.10.1.64/26"]
    subnet = nb.ipam.prefixes.get(prefix="10.10.0.0/24")
    free = subnet.available_ips.list()
    assert free[0].address == "10.10.0.1/24" and len(free) == 50
    ip = subnet.available_ips.create({"status": "active", "dns_name": "leaf1.example.net"})
    assert ip.address == "10.10.0.1/24"
    more = subnet.available_ips.create([{"status": "active"} for _ in range(3)])
    assert [x.address for x in more] == ["10.10.0.2/24", "10.10.0.3/24", "10.10.0.4/24"]
    tiny = nb.ipam.prefixes.create(prefix="10.20.0.0/30", status="active")
    tiny.available_ips.create([{"status": "active"}, {"status": "active"}])
    with pytest.raises(pynautobot.AllocationError):
        tiny.available_ips.create({"status": "active"})
    # Assign to an interface and make it the device's primary address.
    eth48 = nb.dcim.interfaces.get(device="leaf1", name="eth48")
    assert ip.update({"assigned_object_type": "dcim.interface", "assigned_object_id": eth48.id})
    leaf1 = nb.dcim.devices.get(name="leaf1")
    leaf1.primary_ip4 = ip.id
    assert leaf1.save()
    assert nb.dcim.devices.get(name="leaf1").primary_ip.address == "10.10.0.1/24"
    assert nb.ipam.ip_addresses.count(parent="10.10.0.0/24") == 4
    assert [x.address for x in nb.ipam.ip_addresses.filter(q="10.10.0.3")] == ["10.10.0.3/24"]


def test_vlans_tags_and_circuits(dc, nb):
    tag = nb.extras.tags.create(name="Prod", slug="prod", color="ff0000")
    group = nb.ipam.vlan_groups.create(name="DC1 VLANs", slug="dc1-vlans", site=dc["site"].id)
    vlans = nb.ipam.vlans.create(
        [
            {"vid": v, "name": f"v{v}", "site": dc["site"].id, "group": group.id, "status": "active", "tags": [tag.id]}
            for v in (10, 20, 30)
        ]
    )
    assert nb.ipam.vlans.count(tag="prod") == 3
    eth2 = nb.dcim.interfaces.get(device="leaf1", name="eth2")
    assert eth2.update({"mode": "tagged", "tagged_vlans": [v.id for v in vlans[:2]], "untagged_vlan": vlans[2].id})
    assert sorted(v.vid for v in nb.dcim.interfaces.get(eth2.id).tagged_vlans) == [10, 20]
    provider = nb.circuits.providers.create(name="Transit Co", slug="transit-co")
    ctype = nb.circuits.circuit_types.create(name="Internet", slug="internet")
    circuit = nb.circuits.circuits.create(cid="CID-1", provider=provider.id, type=ctype.id, status="active")
    term_a = nb.circuits.circuit_terminations.create(circuit=circuit.id, term_side="A", site=dc["site"].id, port_speed=10000)
    eth3 = nb.dcim.interfaces.get(device="leaf1", name="eth3")
    nb.dcim.cables.create(
        termination_a_type="dcim.interface", termination_a_id=eth3.id,
        termination_b_type="circuits.circuittermination", termination_b_id=term_a.id, status="connected",
    )
    assert nb.circuits.circuits.get(cid="CID-1").termination_a.id == term_a.id
    assert nb.circuits.circuit_terminations.get(term_a.id).connected_endpoint.id == eth3.id


def test_custom_field_choices_notes_and_relationships(dc, nb):
    field = nb.extras.custom_fields.create(name="tier", type="select", content_types=["dcim.site"])
    assert field.label == "tier"
    gold = nb.extras.custom_field_choices.create(field=field.id, value="gold", weight=10)
    nb.extras.custom_field_choices.create(field={"name": "tier"}, value="silver", weight=20)
    assert [c.value for c in nb.extras.custom_field_choices.filter(field="tier")] == ["gold", "silver"]
    assert gold.field.name == "tier"
    site = nb.dcim.sites.get(dc["site"].id)
    site.custom_fields["tier"] = "gold"
    assert site.save()
    assert nb.dcim.sites.get(site.id).custom_fields["tier"] == "gold"
    site.custom_fields["tier"] = "bronze"
    with pytest.raises(pynautobot.RequestError):
        site.save()

    note = nb.extras.notes.create(assigned_object_type="dcim.site", assigned_object_id=site.id, note="Racks delivered")
    assert note.user.username and note.assigned_object.id == site.id
    assert [n.note for n in nb.extras.notes.filter(assigned_object_id=site.id)] == ["Racks delivered"]
    assert nb.dcim.sites.get(site.id).notes_url.endswith(f"/api/dcim/sites/{site.id}/notes/")

    rel = nb.extras.relationships.create(
        name="Backup site", type="one-to-one", source_type="dcim.site", destination_type="dcim.site"
    )
    assoc = nb.extras.relationship_associations.create(
        relationship=rel.id,
        source_type="dcim.site",
        source_id=site.id,
        destination_type="dcim.site",
        destination_id=dc["site2"].id,
    )
    assert assoc.relationship.slug == "backup_site"
    assert nb.extras.relationship_associations.count(relationship="backup_site") == 1


def test_graphql_query(dc, nb):
    """`nb.graphql.query()` as pynautobot documents it (issue 11): variables, nested reverse relations, errors."""
    query = """
    query ($site: [String]) {
      sites(slug: $site) { name devices(role: "leaf") { name rack { name } interfaces(name: "eth1") { name type } } }
    }
    """
    resp = nb.graphql.query(query=query, variables={"site": ["dc1"]})
    sites = resp.json["data"]["sites"]
    assert [s["name"] for s in sites] == ["DC1"]
    assert sorted(d["name"] for d in sites[0]["devices"]) == ["leaf1", "leaf2"]
    assert sites[0]["devices"][0]["interfaces"] == [{"name": "eth1", "type": "A_10GBASE_X_SFPP"}]
    with pytest.raises(GraphQLException) as err:
        nb.graphql.query(query="{ devices { nme } }")
    assert 'Cannot query field "nme"' in err.value.errors[0]["message"]


def test_tag_content_types(url, token, nb):
    """pynautobot's own integration test `test_tag_content_types` (issue 24): a client at API 1.3 reads and
    updates a tag's content types; at the default 1.2 a tag has none on the wire."""
    nb_1_3 = pynautobot.api(url, token=token, api_version="1.3")
    tag = nb_1_3.extras.tags.create(name="Versioned Tag", slug="versioned-tag", content_types=["dcim.site"])
    assert tag.content_types == ["dcim.site"]
    tag = nb_1_3.extras.tags.get(id=tag.id)
    assert tag.content_types
    tag.update({"content_types": ["dcim.device"]})
    tag = nb_1_3.extras.tags.get(id=tag.id)
    assert tag.content_types == ["dcim.device"]
    assert not hasattr(nb.extras.tags.get(id=tag.id), "content_types")
