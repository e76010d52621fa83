"""AWS behind small interfaces: the ledger table, prices, EC2, SNS, S3, CloudWatch."""
