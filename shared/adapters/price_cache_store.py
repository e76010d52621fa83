"""The price cache: one item per price key (``PRICE#<key>`` / ``PRICE``), the rate as
JSON with the day it was checked (``shared.pricing.PriceCache``)."""

from __future__ import annotations

from shared.adapters.table import Item, Put, Table
from shared.domain.base import Rate


def price_key(key: str) -> tuple[str, str]:
    return (f"PRICE#{key}", "PRICE")


class PriceCacheStore:
    def __init__(self, table: Table) -> None:
        self.table = table

    def get_price(self, key: str) -> Rate | None:
        item = self.table.get(*price_key(key))
        return None if item is None else Rate.model_validate_json(item["rate"])

    def put_price(self, key: str, rate: Rate) -> None:
        pk, sk = price_key(key)
        item: Item = {
            "pk": pk,
            "sk": sk,
            "kind": "price",
            "rate": rate.model_dump_json(),
            "checked_on": rate.checked_on.isoformat(),
        }
        self.table.transact([Put(item)])
