"""The job-cost API: Powertools routers, one module per resource, wired by ``shared.api.app``.

Kept empty, so that importing one of its modules imports nothing of the resolver."""
