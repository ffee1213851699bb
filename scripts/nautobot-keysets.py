"""Capture Nautobot's REST key sets at one API version (test/fixtures/nautobot-keys*.json).

Run inside a Nautobot 1.6 shell, with the version and output path in the environment:

    NB_API_VERSION=1.3 NB_KEYS_OUT=test/fixtures/nautobot-keys-1.3.json \
      nautobot-server nbshell --command "exec(open('scripts/nautobot-keysets.py').read())"

For every list endpoint of the core apps' API routers, the viewset's get_serializer_class() is asked for the
serializer of a (non-brief) list request at that version, exactly as Nautobot's versioned_serializer_selector
picks it; the keys are that serializer's fields, write-only fields left out and the opt-in fields
(`computed_fields`, `relationships`, only sent with `?include=`) pruned. Reads Nautobot; writes one JSON file.
"""

import datetime
import importlib
import json
import os

from django.contrib.auth import get_user_model
from rest_framework.request import Request
from rest_framework.test import APIRequestFactory

VERSION = os.environ.get("NB_API_VERSION", "1.2")
OUT = os.environ["NB_KEYS_OUT"]
APPS = ["circuits", "dcim", "extras", "ipam", "tenancy", "users", "virtualization"]
OPT_IN = {"computed_fields", "relationships"}

user = get_user_model().objects.filter(is_superuser=True).first()
endpoints = {}
for app in APPS:
    router = importlib.import_module(f"nautobot.{app}.api.urls").router
    for prefix, viewset, _basename in router.registry:
        if not hasattr(viewset, "get_serializer_class"):
            continue
        raw = APIRequestFactory().get(f"/api/{app}/{prefix}/", HTTP_ACCEPT=f"application/json; version={VERSION}")
        raw.user = user
        view = viewset(action="list", action_map={"get": "list"}, format_kwarg=None, kwargs={}, args=())
        request = view.initialize_request(raw)
        request.user = user
        request.accepted_renderer, request.accepted_media_type = view.perform_content_negotiation(request)
        request.version, request.versioning_scheme = view.determine_version(request)
        major, minor = request.version.split(".")
        request.major_version, request.minor_version = int(major), int(minor)
        view.request = request
        view.brief = False
        try:
            cls = view.get_serializer_class()
        except Exception as e:  # noqa: BLE001 - a view that cannot answer a list is reported, not fatal
            print(f"skip {app}/{prefix}: {e!r}")
            continue
        fields = cls(context={"request": request}).fields
        keys = [k for k, f in fields.items() if not f.write_only and k not in OPT_IN]
        endpoints[f"{app}/{prefix}"] = {"serializer": cls.__name__, "keys": keys}

source = (
    f"Nautobot v1.6.32 at API version {VERSION}: the keys of each list endpoint's GET serializer (opt-in fields "
    "pruned, write-only fields left out), read from the viewsets' get_serializer_class() with nbshell "
    f"(scripts/nautobot-keysets.py) on {datetime.date.today().isoformat()}."
)
with open(OUT, "w") as fh:
    json.dump({"_source": source, "endpoints": dict(sorted(endpoints.items()))}, fh, indent=2)
    fh.write("\n")
print(f"wrote {len(endpoints)} endpoints to {OUT}")
