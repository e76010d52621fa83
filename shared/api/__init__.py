"""The job-cost API: Powertools routers, one module per resource, wired by ``shared.api.app``.

Kept empty so that importing ``shared.api.access`` (the access settings, read by
``shared.config.ledger``) imports nothing of the resolver."""
