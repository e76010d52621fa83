"""Items on the embedded emulator measured once when they are built.

moto keeps an item's attributes in a dict that re-measures the whole item every time
one attribute is set, so that no item passes DynamoDB's 400 KB: building an item of
``n`` attributes measures it ``n`` times, and a ledger head (about 20 attributes, one of
them a JSON record of up to 10 KB) was measured twenty times on every Put. An item
built here is measured once, by the same sum (each name's UTF-8 bytes and moto's
``DynamoType.size`` of each value) against the same limit, and refused with moto's own
error: the sizes are positive, so the whole sum is above the limit exactly when one of
moto's partial sums is. Setting one attribute of an existing item is still moto's own
check. A string or a number value is measured, and compared, without moto's chain of
type tests. ``tests/integration/test_emulator_speedups.py`` keeps both limits and
compares sizes and comparable values with moto's own.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

# moto's LimitedSizeDict refuses an item above this many bytes (DynamoDB's 400 KB).
ITEM_LIMIT = 405000


def too_large(attrs: dict[str, Any]) -> bool:
    """Above moto's item size limit, measured as moto measures it (each name's UTF-8
    bytes and ``DynamoType.size`` of each value); ``attrs`` hold moto's typed values."""
    from moto.dynamodb.models.utilities import bytesize

    size: int = sum(bytesize(name) + value.size() for name, value in attrs.items())
    return size > ITEM_LIMIT


def patch_moto_items() -> None:
    """Install the one-pass item build once per process (idempotent)."""
    from moto.dynamodb.exceptions import ItemSizeTooLarge
    from moto.dynamodb.models.dynamo_type import DynamoType, Item, LimitedSizeDict

    if getattr(Item, "_costtracker_items", False):
        return
    original_init = Item.__init__
    moto_size = DynamoType.size

    def size(self: Any) -> int:
        """moto's measure, without its five type tests for a string or a number (what
        the ledger's items mostly hold): every Query page and every transaction's
        updated item is measured value by value."""
        kind, value = self.type, self.value
        if kind == "S" and type(value) is str:
            return len(value.encode("utf-8"))
        if kind == "N":
            return len(str(value))
        return moto_size(self)

    moto_cast = DynamoType.cast_value.fget  # type: ignore[attr-defined]

    def cast_value(self: Any) -> Any:
        """moto's comparable value, without its type tests for a string or a number: an
        index Query compares every item's key with these, and sorts by them."""
        kind = self.type
        if kind == "S":
            return self.value
        if kind == "N":
            return Decimal(self.value)
        return moto_cast(self)

    def __init__(self: Any, hash_key: Any, range_key: Any, attrs: dict[str, Any]) -> None:
        self.hash_key = hash_key
        self.range_key = range_key
        values = LimitedSizeDict()
        for name, value in attrs.items():
            dict.__setitem__(values, name, DynamoType(value))
        if too_large(values):
            raise ItemSizeTooLarge
        self.attrs = values

    __init__.__wrapped__ = original_init  # type: ignore[attr-defined]
    size.__wrapped__ = moto_size  # type: ignore[attr-defined]
    cast_value.__wrapped__ = moto_cast  # type: ignore[attr-defined]
    Item.__init__ = __init__  # type: ignore[method-assign]
    DynamoType.size = size  # type: ignore[method-assign]
    DynamoType.cast_value = property(cast_value, doc=moto_cast.__doc__)  # type: ignore[method-assign,assignment]
    Item._costtracker_items = True  # type: ignore[attr-defined]
