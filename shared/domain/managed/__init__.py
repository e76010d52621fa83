"""Managed training (SageMaker) and reserved capacity (Capacity Blocks, ODCRs): the frozen
models, their pure cost rules, and the ledger heads that accrue them."""
