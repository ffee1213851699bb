"""Fixtures of the compat suite: a pynautobot API object for the server under test (NAUTOBOT_URL, NAUTOBOT_TOKEN,
set by scripts/compat.ts), with and without threading."""
import os

import pynautobot
import pytest


@pytest.fixture(scope="session")
def url():
    return os.environ["NAUTOBOT_URL"]


@pytest.fixture(scope="session")
def token():
    return os.environ["NAUTOBOT_TOKEN"]


@pytest.fixture(scope="session")
def nb(url, token):
    return pynautobot.api(url, token=token)


@pytest.fixture(scope="session")
def nb_threaded(url, token):
    return pynautobot.api(url, token=token, threading=True)
