"""Every test tier: handlers' EMF metrics off (they would print to stdout)."""

import os

os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
