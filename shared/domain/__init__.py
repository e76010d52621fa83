"""The ledger's pure core: cost rules over frozen models, the clock passed in.

Nothing here talks to AWS or reads the time. Every figure that accrues is a
``Accrual``: fixed amounts plus linear terms over a few clocks, so that a job's
cost at any moment is a sum that rollups can keep by adding deltas.
"""
