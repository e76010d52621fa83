"""AWS CDK app of the cost tracker (synthesized by ``cdk synth`` via ``cdk/app.py``)."""
