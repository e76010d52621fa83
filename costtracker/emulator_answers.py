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

A CloudWatch alarm's part of an answer is also kept, with every attribute of the alarm
it was written from: the hourly alarm sweep lists the same alarms again and again, and
an alarm's part is written anew only when one of its attributes changed (a new state,
actions enabled or not, or a new alarm object under the same name).
``tests/integration/test_emulator_speedups.py`` compares answers with moto's own.
"""

from __future__ import annotations

from typing import Any

# (object class, id of the shape, member name) -> (shape kept alive, possible names)
_NAMES: dict[tuple[type, int, str], tuple[Any, tuple[str, ...]]] = {}
_LIMIT = 50_000  # a bound, far above what one service's shapes need
# Structures whose written part is kept: (serializer class, id of the shape, id of the
# object) -> (shape, object and attributes it was written from, (name, written part)).
_KEPT_SHAPES = frozenset({"MetricAlarm"})
_PARTS: dict[tuple[type, int, int], tuple[Any, Any, tuple[Any, ...], tuple[str, Any]]] = {}
_PARTS_LIMIT = 20_000


def _attributes(value: Any) -> tuple[Any, ...]:
    """What a kept part depends on: every attribute (lists copied, so a change in place
    shows)."""
    return tuple((k, tuple(v) if type(v) is list else v) for k, v in vars(value).items())


def patch_moto_answers() -> None:
    """Install the cached alias names once per process (idempotent)."""
    from moto.core.constants import MISSING
    from moto.core.serialize import (
        AttributePickerContext,
        BaseJSONSerializer,
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

    moto_structure = BaseJSONSerializer._serialize_type_structure

    def structure(self: Any, serialized: Any, value: Any, shape: Any, key: str) -> None:
        picker = self._value_picker
        if (
            shape.name not in _KEPT_SHAPES
            or not key
            or not hasattr(value, "__dict__")
            or type(picker) is not XFormedAttributePicker
            or picker.response_transformers
        ):
            return moto_structure(self, serialized, value, shape, key)
        where = (type(self), id(shape), id(value))
        attributes = _attributes(value)
        kept = _PARTS.get(where)
        if kept is not None and kept[1] is value and kept[2] == attributes:
            serialized[kept[3][0]] = kept[3][1]
            return None
        written: dict[str, Any] = {}
        moto_structure(self, written, value, shape, key)
        if len(written) == 1:
            if len(_PARTS) > _PARTS_LIMIT:
                _PARTS.clear()
            _PARTS[where] = (shape, value, attributes, next(iter(written.items())))
        serialized.update(written)
        return None

    structure.__wrapped__ = moto_structure  # type: ignore[attr-defined]
    BaseJSONSerializer._serialize_type_structure = structure  # type: ignore[method-assign]
    get_possible_keys.__wrapped__ = moto_names  # type: ignore[attr-defined]
    get_value.__wrapped__ = moto_get_value  # type: ignore[attr-defined]
    XFormedAttributePicker.get_possible_keys = get_possible_keys  # type: ignore[method-assign]
    ResponseSerializer.get_value = get_value  # type: ignore[method-assign]
    XFormedAttributePicker._costtracker_answers = True  # type: ignore[attr-defined]
