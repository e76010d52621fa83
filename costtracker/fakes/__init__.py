"""In-memory stand-ins for the AWS-facing interfaces other than the ledger table (the
ledger's records are always kept by the real stores over the in-memory table): what
replay answers from a scenario where moto cannot (``scenario_aws``), and the twins the
unit tests and the benchmarks wire the services to (``twins``). Local-only: no function
bundle carries them."""
