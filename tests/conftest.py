"""Every test tier: handlers' EMF metrics off (they would print to stdout), and botocore's
client-side validation on for every request the adapters build (deployed functions and
local runs skip it: ``shared.adapters.accounts.client_config``)."""

import os

os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
os.environ.setdefault("COSTTRACKER_VALIDATE_REQUESTS", "1")
