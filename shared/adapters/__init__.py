"""AWS behind small interfaces: the ledger table, prices, EC2, SageMaker, capacity
reservations (one protocol and one boto3 implementation each; replay answers the same
protocols from the scenario)."""
