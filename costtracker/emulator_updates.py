"""UpdateItem on the embedded emulator without moto's expression machinery, for the
expressions this project writes.

moto validates an UpdateExpression by walking its syntax tree once per validation rule
(ten walks) on a deep copy, twice for a new item, and re-measures the whole item on every
attribute it sets: a rollup change of 15 clauses cost 10 to 15 ms, three times a bare
UpdateItem, and that dominated a replay. The ledger's adapter (``shared.adapters.table``)
writes a small, fixed grammar only:

    SET #a = :v, #b = if_not_exists(#b, :w)  ADD #c :x  REMOVE #d

This module executes exactly that grammar with moto's own values and arithmetic
(``DynamoType``: number addition, sets kept in insertion order), the adapter's
conditions (``checks_of``: ``attribute_not_exists(#n)``, ``#n = :v``,
``(attribute_not_exists(#n) OR #n < :v)`` or ``> :v``, joined by AND) compared on
moto's cast values as moto compares them (any other condition goes to moto's parser),
new items through moto's ``put_item`` (its key and type checks) and moto's 400 KB item
limit, and hands everything else (other grammar, key attributes, streams, legacy
parameters) to moto unchanged. ``tests/integration/test_emulator_speedups.py`` runs
random sequences of the adapter's updates through both paths and compares the items.
"""

from __future__ import annotations

import re
from typing import Any

from costtracker.emulator_items import too_large

_NAME, _VALUE = r"#n\d+", r":v\d+"
_SET_ITEM = re.compile(
    rf"({_NAME}) = (?:if_not_exists\(({_NAME}), ({_VALUE})\)|({_VALUE}))(?:, |$)"
)
_ADD = re.compile(rf"^({_NAME}) ({_VALUE})$")
_CLAUSES = re.compile(
    r"^(?:SET (?P<set>.+?))?\s*(?:ADD (?P<add>.+?))?\s*(?:REMOVE (?P<remove>.+?))?$"
)
_SCALARS = {"S", "N", "BOOL", "NULL"}
_SETS = {"SS", "NS"}

Action = tuple[str, str, Any]  # (kind, attribute name, value)


def _actions(expression: str, names: dict[str, str], values: dict[str, Any]) -> list[Action] | None:
    """The expression's actions, or None when it is not the adapter's grammar."""
    match = _CLAUSES.match(expression.strip())
    if match is None:
        return None
    actions: list[Action] = []
    sets = match["set"] or ""
    position = 0
    while position < len(sets):
        m = _SET_ITEM.match(sets, position)
        if m is None or (m[2] is not None and m[2] != m[1]):
            return None
        actions.append(("set_if_absent", m[1], m[3]) if m[2] else ("set", m[1], m[4]))
        position = m.end()
    for part in filter(None, (match["add"] or "").split(", ")):
        if (m := _ADD.match(part)) is None:
            return None
        actions.append(("add", m[1], m[2]))
    for part in filter(None, (match["remove"] or "").split(", ")):
        if not re.fullmatch(_NAME, part):
            return None
        actions.append(("remove", part, None))
    resolved: list[Action] = []
    seen: set[str] = set()
    for kind, name_ref, value_ref in actions:
        name = names.get(name_ref)
        if name is None or name in seen:
            return None  # moto names the error (missing name, overlapping paths)
        seen.add(name)
        if kind == "remove":
            resolved.append((kind, name, None))
            continue
        value = values.get(value_ref)
        if not isinstance(value, dict) or len(value) != 1:
            return None
        ((dtype, raw),) = value.items()
        allowed = _SCALARS | _SETS if kind == "add" else _SCALARS
        if dtype not in allowed or (kind == "add" and dtype == "S") or (dtype in _SETS and not raw):
            return None
        resolved.append((kind, name, value))
    return resolved


_CONDITION_TERM = re.compile(
    rf"attribute_not_exists\(({_NAME})\)"
    rf"|({_NAME}) = ({_VALUE})"
    rf"|\(attribute_not_exists\(({_NAME})\) OR ({_NAME}) ([<>]) ({_VALUE})\)"
)

Check = tuple[str, str, Any]  # (operator: "absent" | "=" | "<" | ">", attribute name, value)


class Unsupported(Exception):
    """Not the ledger adapter's grammar: moto decides."""


def checks_of(expression: str | None, names: dict[str, str], values: dict[str, Any]) -> list[Check]:
    """The condition's checks; raises ``Unsupported`` for any other grammar."""
    if not expression:
        return []
    checks: list[Check] = []
    for part in expression.split(" AND "):
        m = _CONDITION_TERM.fullmatch(part)
        if m is None:
            raise Unsupported
        absent, eq_name, eq_value, or_name, cmp_name, op, cmp_value = m.groups()
        if absent is not None:
            checks.append(("absent", _name(names, absent), None))
        elif eq_name is not None:
            checks.append(("=", _name(names, eq_name), _value(values, eq_value)))
        else:
            if or_name != cmp_name:
                raise Unsupported
            checks.append((op, _name(names, cmp_name), _value(values, cmp_value)))
    return checks


def _name(names: dict[str, str], ref: str) -> str:
    if ref not in names:
        raise Unsupported
    return names[ref]


def _value(values: dict[str, Any], ref: str) -> Any:
    from moto.dynamodb.models.dynamo_type import DynamoType

    raw = values.get(ref)
    if not isinstance(raw, dict) or len(raw) != 1:
        raise Unsupported
    return DynamoType(raw).cast_value


def holds(checks: list[Check], item: Any) -> bool:
    """Whether every check holds on ``item`` (moto's Item or None), as moto compares."""
    for op, name, value in checks:
        attr = item.attrs.get(name) if item is not None else None
        if op == "absent":
            if attr is not None:
                return False
            continue
        if op in ("<", ">"):
            if attr is None:
                continue  # attribute_not_exists(#n) OR ...
            try:
                ok = attr.cast_value < value if op == "<" else attr.cast_value > value
            except TypeError:
                raise Unsupported from None
            if not ok:
                return False
            continue
        if attr is None or attr.cast_value != value:
            return False
    return True


def actions_of(
    expression: str, names: dict[str, str], values: dict[str, Any]
) -> list[Action] | None:
    """The update's actions, or None (moto's own path); looked up at call time, so that a
    test can turn every fast path off by replacing ``_actions``."""
    return _actions(expression, names, values)


def updated_attributes(
    table: Any, item: Any, hash_value: Any, range_value: Any, actions: list[Action]
) -> dict[str, Any] | None:
    """The item's attributes after ``actions`` (moto's values and arithmetic), or None
    where moto must answer (an ADD on an attribute of another type)."""
    from moto.dynamodb.models.dynamo_type import DynamoType

    attrs: dict[str, Any] = (
        dict(item.attrs)
        if item is not None
        else {
            table.hash_key_attr: hash_value,
            table.range_key_attr: range_value,
        }
    )
    for kind, name, value in actions:
        if kind == "remove":
            attrs.pop(name, None)
            continue
        new = DynamoType(value)
        if kind == "set":
            attrs[name] = new
        elif kind == "set_if_absent":
            attrs.setdefault(name, new)
        elif new.type == "N":
            current = attrs.get(name, DynamoType({"N": "0"}))
            if current.type != "N":
                return None
            attrs[name] = current + new
        else:
            current = attrs.get(name)
            if current is None:
                attrs[name] = DynamoType({new.type: list(new.value)})
            elif current.type != new.type:
                return None
            else:
                merged = list(current.value)
                merged += [v for v in new.value if v not in merged]
                attrs[name] = DynamoType({new.type: merged})
    return attrs


def patch_moto_updates() -> None:
    """Install the UpdateItem fast path once per process (idempotent)."""
    from moto.dynamodb.exceptions import ConditionalCheckFailed, ItemSizeToUpdateTooLarge
    from moto.dynamodb.models import DynamoDBBackend
    from moto.dynamodb.models.dynamo_type import DynamoType, LimitedSizeDict

    if getattr(DynamoDBBackend, "_costtracker_updates", False):
        return
    original = DynamoDBBackend.update_item
    from moto.dynamodb.comparisons import create_condition_expression_parser

    def update_item(
        self: Any,
        table_name: str,
        key: dict[str, dict[str, Any]],
        update_expression: str,
        expression_attribute_names: dict[str, Any],
        expression_attribute_values: dict[str, Any],
        attribute_updates: dict[str, Any] | None = None,
        expected: dict[str, Any] | None = None,
        condition_expression: str | None = None,
        return_values_on_condition_check_failure: str | None = None,
    ) -> Any:
        def moto_path() -> Any:
            return original(
                self,
                table_name,
                key,
                update_expression,
                expression_attribute_names,
                expression_attribute_values,
                attribute_updates,
                expected,
                condition_expression,
                return_values_on_condition_check_failure,
            )

        table = self.get_table(table_name)
        actions = (
            _actions(
                update_expression,
                expression_attribute_names or {},
                expression_attribute_values or {},
            )
            if update_expression and not attribute_updates and not expected
            else None
        )
        key_names = {table.hash_key_attr, table.range_key_attr}
        if (
            actions is None
            or table.stream_shard is not None
            or not table.range_key_attr
            or set(key) != key_names
            or any(name in key_names for _, name, _ in actions)
        ):
            return moto_path()
        hash_value = DynamoType(key[table.hash_key_attr])
        range_value = DynamoType(key[table.range_key_attr])
        item = table.get_item(hash_value, range_value)
        try:
            checks = checks_of(
                condition_expression,
                expression_attribute_names or {},
                expression_attribute_values or {},
            )
            condition_holds = holds(checks, item)
        except Unsupported:
            condition_holds = (
                create_condition_expression_parser(
                    condition_expression, expression_attribute_names, expression_attribute_values
                )
                .parse()
                .expr(item)
            )
        if not condition_holds:
            if return_values_on_condition_check_failure == "ALL_OLD" and item is not None:
                raise ConditionalCheckFailed(item=item.to_json()["Attributes"])
            raise ConditionalCheckFailed
        attrs = updated_attributes(table, item, hash_value, range_value, actions)
        if attrs is None:
            return moto_path()  # moto raises its type error
        if too_large(attrs):
            raise ItemSizeToUpdateTooLarge()
        if item is None:
            table.put_item({k: v.to_json() for k, v in attrs.items()})
            return table.get_item(hash_value, range_value)
        stored = LimitedSizeDict()
        dict.update(stored, attrs)
        item.attrs = stored
        return item

    DynamoDBBackend.update_item = update_item  # type: ignore[method-assign]
    DynamoDBBackend._costtracker_updates = True  # type: ignore[attr-defined]
