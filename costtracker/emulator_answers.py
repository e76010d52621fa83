"""moto's generic answer serializer, with each attribute's possible names worked out once.

moto writes the answers of CloudWatch, EC2, S3 and most other services by walking the
operation's botocore shapes and, for every member of every structure, asking six
alias providers which names the value may have on moto's Python object (its own,
the shape's, one without the class or shape prefix, snake case...). The answer
depends only on the object's class, the shape and the member's name, yet it was
worked out again for every value: a DescribeAlarms of 200 alarms asked 40,000 times,
and that walk was most of its 36 ms. Here the names are kept per (class, shape,
member) and the value is still picked from the object by moto's own lookup
(``moto.core.utils.get_value``), in the same order, without building a picking
context per value when the answer has no response transformers. An object with a
``Meta`` of its own (not its class's) takes moto's path.
``tests/integration/test_emulator_speedups.py`` compares answers with moto's own.
"""

from __future__ import annotations

from typing import Any

# (object class, id of the shape, member name) -> (shape kept alive, possible names)
_NAMES: dict[tuple[type, int, str], tuple[Any, tuple[str, ...]]] = {}
_LIMIT = 50_000  # a bound, far above what one service's shapes need


def patch_moto_answers() -> None:
    """Install the cached alias names once per process (idempotent)."""
    from moto.core.constants import MISSING
    from moto.core.serialize import (
        AttributePickerContext,
        ResponseSerializer,
        XFormedAttributePicker,
    )
    from moto.core.utils import get_value as value_of

    if getattr(XFormedAttributePicker, "_costtracker_answers", False):
        return
    moto_names = XFormedAttributePicker.get_possible_keys
    moto_get_value = ResponseSerializer.get_value

    def get_possible_keys(self: Any, context: Any) -> Any:
        obj = context.obj
        if "Meta" in getattr(obj, "__dict__", ()):
            return moto_names(self, context)
        key = (type(obj), id(context.shape), context.key)
        found = _NAMES.get(key)
        if found is None:
            if len(_NAMES) > _LIMIT:
                _NAMES.clear()
            found = (context.shape, tuple(moto_names(self, context)))
            _NAMES[key] = found
        return found[1]

    def get_value(self: Any, value: Any, key: str, shape: Any) -> Any:
        picker = self._value_picker
        if type(picker) is not XFormedAttributePicker or picker.response_transformers:
            return moto_get_value(self, value, key, shape)
        found = _NAMES.get((type(value), id(shape), key))
        if found is None or "Meta" in getattr(value, "__dict__", ()):
            context = AttributePickerContext(obj=value, key=key, shape=shape)
            names = get_possible_keys(picker, context)
        else:
            names = found[1]
        for name in names:
            picked = value_of(value, name, MISSING)
            if picked is not MISSING:
                return picked
        return None

    get_possible_keys.__wrapped__ = moto_names  # type: ignore[attr-defined]
    get_value.__wrapped__ = moto_get_value  # type: ignore[attr-defined]
    XFormedAttributePicker.get_possible_keys = get_possible_keys  # type: ignore[method-assign]
    ResponseSerializer.get_value = get_value  # type: ignore[method-assign]
    XFormedAttributePicker._costtracker_answers = True  # type: ignore[attr-defined]
