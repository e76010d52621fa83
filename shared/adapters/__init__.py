"""Small typed boundaries over AWS APIs the events do not answer (one protocol + one boto3
implementation each; replay answers the same protocols from the scenario)."""
