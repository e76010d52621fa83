"""Every bound that keeps a message, a record or a run the same size whatever the scale
(docs/alerts.md): the alert bodies, the stored day documents and the re-send path read
them from here, and the tests assert against these same numbers."""

from __future__ import annotations

# -- messages --------------------------------------------------------------------------
# SNS takes at most 256 KiB per message, the message attributes included.
SNS_MESSAGE_BYTES = 262_144
# Room kept for the message attributes (each at most 256 characters, a handful of them,
# plus a budget's recipients as one String.Array).
ATTRIBUTE_ROOM_BYTES = 16 * 1024
# An alert body's hard cap: far under SNS's limit less the attributes, and small enough
# that the alert's outbox record stays under ITEM_BYTES.
ALERT_BODY_BYTES = 32 * 1024
# The largest items a message names (jobs, running jobs' projections, instances, tag
# values); the rest is summed up as "and N more, $X" and is one API call away.
TOP_ITEMS = 20

# -- records ---------------------------------------------------------------------------
# Every item of the ledger table stays under this (DynamoDB's limit is 400 KB; an item
# of 64 KB costs 16 write units, so the bound is also the cost of one write).
ITEM_BYTES = 64 * 1024
# A day's document (summary, reconciliation) is stored in parts of at most this many
# bytes of JSON each, so a day of 10,000 instances is a few items, never one huge one.
DOCUMENT_PART_BYTES = 48 * 1024
# A day's document holds at most this many parts, written in one transaction (DynamoDB
# takes 100 items and 4 MB a transaction: 80 parts of 48 KiB are 3.75 MiB).
DOCUMENT_PARTS = 80
# Any list or map in a day's document (jobs, untagged instances, instances missing
# tags, a tag key's values) holds at most this many entries, the largest first; the rest
# is counted (and summed where it is money). 10,000 of each stay under DOCUMENT_PARTS.
DOCUMENT_ENTRIES = 10_000
# A day's reconciliation keeps this many jobs (about 600 bytes each), those whose
# estimate is furthest from the bill; the others are counted and summed.
RECONCILED_JOBS = 2_000

# -- delivery (the outbox's re-send path) ----------------------------------------------
# One SNS publish: connect and read timeouts (seconds) and attempts (botocore "standard"
# retries count the first one), so one publish takes at most about
# PUBLISH_ATTEMPTS * (connect + read) seconds plus botocore's short backoff.
PUBLISH_CONNECT_SECONDS = 2
PUBLISH_READ_SECONDS = 5
PUBLISH_ATTEMPTS = 2
PUBLISH_WORST_SECONDS = PUBLISH_ATTEMPTS * (PUBLISH_CONNECT_SECONDS + PUBLISH_READ_SECONDS) + 2
# One DynamoDB request of the ledger: its calls answer in milliseconds, so a request
# that hangs is retried soon and a call gives up well inside the budget tick's 55 s
# (TABLE_ATTEMPTS * (connect + read) seconds plus backoff, about 23 s at the most).
TABLE_CONNECT_SECONDS = 2
TABLE_READ_SECONDS = 5
TABLE_ATTEMPTS = 3
TABLE_WORST_SECONDS = TABLE_ATTEMPTS * (TABLE_CONNECT_SECONDS + TABLE_READ_SECONDS) + 2
# The re-send path stops starting publishes this long before its function's timeout.
DELIVERY_MARGIN_SECONDS = 5
# A refused alert is tried again after 1, 2, 4 ... minutes, at most this many minutes.
RETRY_BACKOFF_CAP_MINUTES = 8
# SNS error codes that say the message itself is wrong (the same message will never be
# accepted): after this many such refusals in a row the alert is failed for good.
# Throttles, 5xx, timeouts and KMS or permission errors (an admin can fix them) are
# retried for ever: a failed publish delays an alert, it never loses it.
REFUSED_FOR_GOOD_CODES = frozenset(
    {"InvalidParameter", "InvalidParameterValue", "ParameterValueInvalid", "ValidationError"}
)
REFUSALS_FOR_GOOD = 3
