"""Wiring of the Lambda functions: settings, the dependencies built once per cold start
(``runtime``), the edge that parses events, and the decorator of the event functions."""
