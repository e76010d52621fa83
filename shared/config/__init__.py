"""The configuration models (CDK context, a replay scenario, the functions' settings): the
bottom layer, importing nothing else of the product."""
