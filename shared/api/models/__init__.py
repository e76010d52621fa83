"""The API's response models: what each route answers, so that the OpenAPI document
describes responses too. Every model is built on first use (``defer_build``); a key a
response has only sometimes is ``MISSING`` when absent (never a ``null`` it did not have).
"""
