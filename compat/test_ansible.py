"""The networktocode.nautobot 4.5.1 collection (issue 9): the playbook twice (the second run changes nothing),
then the REST inventory plugin. Runs after test_pynautobot.py on the same server; uses its own names."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent / "ansible"


def run(*args):
    env = {**os.environ, "ANSIBLE_NOCOLOR": "1", "ANSIBLE_PYTHON_INTERPRETER": sys.executable}
    return subprocess.run(list(args), cwd=HERE, env=env, capture_output=True, text=True, timeout=600)


def recap(out):
    m = re.search(r"localhost\s*:\s*ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)", out)
    assert m, out[-3000:]
    return {k: int(v) for k, v in zip(("ok", "changed", "unreachable", "failed"), m.groups())}


def test_playbook_is_idempotent(nb):
    first = run("ansible-playbook", "-i", "localhost,", "site.yml")
    assert first.returncode == 0, first.stdout[-4000:] + first.stderr[-2000:]
    r1 = recap(first.stdout)
    assert r1["failed"] == 0 and r1["changed"] > 10, r1
    second = run("ansible-playbook", "-i", "localhost,", "site.yml")
    assert second.returncode == 0, second.stdout[-4000:] + second.stderr[-2000:]
    r2 = recap(second.stdout)
    assert r2["changed"] == 0, second.stdout[-6000:]
    edge1 = nb.dcim.devices.get(name="edge1")
    assert edge1.primary_ip4.address.startswith("172.30.255.")
    assert nb.ipam.prefixes.count(q="transit") == 1
    assert nb.ipam.prefixes.get(q="transit").prefix == "172.30.0.0/31"
    assert nb.dcim.interfaces.get(device="edge1", name="ge-0/0/0").connected_endpoint.device.name == "edge2"


def test_inventory_plugin_groups_by_site_and_role():
    out = run("ansible-inventory", "-i", "inventory.yml", "--list")
    assert out.returncode == 0, out.stderr[-3000:]
    inv = json.loads(out.stdout)
    assert set(inv["sites_ans1"]["hosts"]) == {"edge1", "edge2"}
    assert set(inv["device_roles_ansible-edge"]["hosts"]) == {"edge1", "edge2"}
    assert inv["_meta"]["hostvars"]["edge1"]["ansible_host"].startswith("172.30.255.")


def test_gql_inventory_plugin():
    """The GraphQL inventory plugin: one POST /api/graphql/ with the default query, filters at two levels."""
    out = run("ansible-inventory", "-i", "gql_inventory.yml", "--list")
    assert out.returncode == 0, out.stderr[-3000:]
    inv = json.loads(out.stdout)
    # Collection 4.5.1 names a group by the value alone (the site's slug, the status's slug).
    assert set(inv["ans1"]["hosts"]) == {"edge1", "edge2"}, list(inv)
    assert set(inv["active"]["hosts"]) == {"edge1", "edge2"}
    edge1 = inv["_meta"]["hostvars"]["edge1"]
    assert edge1["ansible_host"].startswith("172.30.255.")
    assert [i["name"] for i in edge1["interfaces"]] == ["ge-0/0/0"]
