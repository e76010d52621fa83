"""One construct per concern; ``cdk.stack`` composes them.

Import these as ``cdk.constructs.<module>``: this package must never be reachable
as a top-level ``constructs`` (that name is the jsii ``constructs`` library), which
is why ``cdk/app.py`` takes its own directory off ``sys.path``.
"""
