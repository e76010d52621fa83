"""The CDK context of the app, layered and validated once (``cdk/app.py``) into
``StackSettings`` (``cdk/stack_settings.py``).

Where a setting comes from, lowest precedence first:

1. the model's default;
2. ``cdk.json`` "context" (read from the file itself, so that a ``-c`` never
   replaces a whole block it only means to change);
3. ``-c key=value`` on the CDK CLI (or any other context the app is given).

Within a layer, whole keys apply first, then dotted keys, shallowest first:
``-c ledger.budgets='[...]'`` sets one field of the ``ledger`` block and keeps the
rest; ``-c ledger='{"reconcile": {"enabled": true}}'`` is merged into the block too.
Objects merge key by key; lists and scalars replace. A string value is parsed as
JSON unless the setting is a string (``-c log_retention_days=30``); a list of
strings may also be given comma-separated (``-c finance_emails=a@x.com,b@x.com``).

Every context key is applied or rejected by name: a key that is not a setting stops
synth (CDK's own keys, ``@aws-cdk/...`` feature flags and ``aws:cdk:...``, are not
ours and are left alone).
"""

from __future__ import annotations

import copy
import difflib
import json
import re
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from cdk.stack_settings import StackSettings

# Context keys that belong to the CDK itself (feature flags, CLI settings).
CDK_OWN_PREFIXES = ("@aws-cdk/", "aws:cdk:")

SOURCE_DEFAULT = "default"
SOURCE_FILE = "cdk.json"
SOURCE_CLI = "-c"


class SettingsError(ValueError):
    """The CDK context is invalid; the message names every offending key."""


def is_cdk_own(key: str) -> bool:
    return key.startswith(CDK_OWN_PREFIXES)


@dataclass
class Resolved:
    """The merged raw settings, where each value came from, and what was rejected."""

    raw: dict[str, Any] = field(default_factory=dict)
    # dotted path -> source; a path's source is that of its longest recorded prefix.
    sources: dict[str, str] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    def source_of(self, path: str) -> str:
        """The source of ``path``'s value: the nearest recorded ancestor (or itself),
        unless a later layer set something inside it."""
        found = SOURCE_DEFAULT
        parts = path.split(".")
        for end in range(len(parts), 0, -1):
            if ".".join(parts[:end]) in self.sources:
                found = self.sources[".".join(parts[:end])]
                break
        below = {s for p, s in self.sources.items() if p.startswith(path + ".")}
        for source in (SOURCE_CLI, SOURCE_FILE):
            if source in below or found == source:
                return source
        return found


def _unwrap(annotation: Any) -> Any:
    """``X | None`` -> ``X``."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return annotation


def _is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _is_stringish(annotation: Any) -> bool:
    annotation = _unwrap(annotation)
    if annotation is str:
        return True
    if typing.get_origin(annotation) is Literal:
        return all(isinstance(a, str) for a in typing.get_args(annotation))
    return False


def _is_string_list(annotation: Any) -> bool:
    annotation = _unwrap(annotation)
    if typing.get_origin(annotation) not in (tuple, list):
        return False
    args = [a for a in typing.get_args(annotation) if a is not Ellipsis]
    return len(args) == 1 and _is_stringish(args[0])


def _walk(key: str) -> tuple[list[str], Any]:
    """The storage path and type of a (dotted) context key; ValueError when it names
    no setting. A dict-valued setting takes the rest of the key as one dict key
    (``ledger.prices.ec2.trn1.32xlarge``)."""
    parts = key.split(".")
    model: type[BaseModel] = StackSettings
    path: list[str] = []
    annotation: Any = StackSettings
    n = 0
    while n < len(parts):
        name = parts[n]
        if not _is_model(annotation):
            origin = typing.get_origin(_unwrap(annotation))
            if origin is dict:
                path.append(".".join(parts[n:]))
                return path, typing.get_args(_unwrap(annotation))[1]
            raise ValueError(
                f"{'.'.join(parts[:n])} is set as a whole (a JSON value), not by sub-key"
            )
        model = annotation
        fields = model.model_fields
        if name not in fields:
            prefix = ".".join(parts[:n])
            known = [f"{prefix}.{f}" if prefix else f for f in fields]
            guess = difflib.get_close_matches(".".join(parts[: n + 1]), known, n=1)
            hint = f" (did you mean {guess[0]}?)" if guess else ""
            raise ValueError(f"not a setting{hint}")
        path.append(name)
        annotation = _unwrap(fields[name].annotation)
        n += 1
    return path, annotation


def _coerce(value: Any, annotation: Any) -> Any:
    """A ``-c`` string as the value it stands for (JSON unless the setting is a string)."""
    if not isinstance(value, str) or _is_stringish(annotation):
        return value
    text = value.strip()
    try:
        return json.loads(text, parse_float=Decimal)
    except json.JSONDecodeError as error:
        if text[:1] in "[{":
            raise ValueError(f"not valid JSON ({error})") from None
    if _is_string_list(annotation):
        return [part.strip() for part in text.split(",") if part.strip()]
    return value  # "30", "true", "21.5": the model converts it, or names the key


def _merge(target: dict[str, Any], value: dict[str, Any]) -> None:
    for key, item in value.items():
        if isinstance(item, dict) and isinstance(target.get(key), dict):
            _merge(target[key], item)
        else:
            target[key] = item


def _record(sources: dict[str, str], path: str, value: Any, source: str, replace: bool) -> None:
    """Note ``source`` for every leaf of ``value`` set at ``path``."""
    if replace:
        for recorded in [p for p in sources if p == path or p.startswith(path + ".")]:
            del sources[recorded]
    if isinstance(value, dict) and value:
        for key, item in value.items():
            child = f"{path}.{key}"
            _record(sources, child, item, source, not isinstance(item, dict))
    else:
        sources[path] = source


def _apply(resolved: Resolved, key: str, value: Any, source: str) -> None:
    try:
        path, annotation = _walk(key)
        value = copy.deepcopy(_coerce(value, annotation))
    except ValueError as error:
        resolved.errors.append(f"{key}: {error} (from {source})")
        return
    node = resolved.raw
    for n, part in enumerate(path[:-1]):
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            where = ".".join(path[: n + 1])
            resolved.errors.append(f"{key}: cannot apply, {where} is not an object (from {source})")
            return
        node = child
    last = path[-1]
    merged = isinstance(value, dict) and isinstance(node.get(last), dict)
    if merged:
        _merge(node[last], value)
    else:
        node[last] = value
    _record(resolved.sources, ".".join(path), value, source, not merged)


def _ordered(context: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """Whole keys first, then dotted keys, shallowest first (stable otherwise)."""
    ours = [(k, v) for k, v in context.items() if not is_cdk_own(k)]
    return sorted(ours, key=lambda kv: kv[0].count("."))


def resolve_context(
    context: Mapping[str, Any], file_context: Mapping[str, Any] | None = None
) -> Resolved:
    """Layer ``file_context`` (cdk.json) and ``context`` (what the app was given, which
    for ``cdk synth`` already contains cdk.json's values, with -c replacing whole keys)."""
    resolved = Resolved()
    file_context = dict(file_context or {})
    for key, value in _ordered(file_context):
        _apply(resolved, key, value, SOURCE_FILE)
    for key, value in _ordered(context):
        if key in file_context and file_context[key] == value:
            continue  # cdk.json's own value, passed through by the CLI
        _apply(resolved, key, value, SOURCE_CLI)
    return resolved


def load_settings(
    context: Mapping[str, Any], file_context: Mapping[str, Any] | None = None
) -> StackSettings:
    """``StackSettings`` from layered context (see the module docstring).

    Raises ``SettingsError`` with one line per problem, each naming the context key
    (dotted path for nested values) and where its value came from.
    """
    return settings_with_sources(context, file_context)[0]


def settings_with_sources(
    context: Mapping[str, Any], file_context: Mapping[str, Any] | None = None
) -> tuple[StackSettings, Resolved]:
    resolved = resolve_context(context, file_context)
    if resolved.errors:
        raise SettingsError("invalid CDK context:\n" + "\n".join(f"  {e}" for e in resolved.errors))
    try:
        return StackSettings.model_validate(resolved.raw), resolved
    except ValidationError as error:
        lines = []
        for problem in error.errors():
            path = ".".join(str(part) for part in problem["loc"])
            message = str(problem["msg"])
            # A model-level check names its field: "Value error, access.team_tag_key ...".
            named = re.match(r"Value error, ([a-z_]+(?:\.[a-z_]+)+) (.*)", message, re.S)
            if named:
                path = f"{path}.{named.group(1)}" if path else named.group(1)
                message = named.group(2)
            source = resolved.source_of(path)
            got = "" if isinstance(problem["input"], dict) else f"got {_short(problem['input'])}, "
            lines.append(f"  {path or '(top level)'}: {message} ({got}from {source})")
        raise SettingsError("invalid CDK context:\n" + "\n".join(lines)) from None


def effective_settings(settings: StackSettings, resolved: Resolved) -> list[tuple[str, Any, str]]:
    """(dotted path, JSON value, source) of every leaf setting, in model order."""
    rows: list[tuple[str, Any, str]] = []

    def walk(model: BaseModel, prefix: str) -> None:
        for name in type(model).model_fields:
            value = getattr(model, name)
            path = f"{prefix}{name}"
            if isinstance(value, BaseModel):
                walk(value, path + ".")
            else:
                dumped = model.model_dump(mode="json", include={name})[name]
                rows.append((path, dumped, resolved.source_of(path)))

    walk(settings, "")
    return rows


def _short(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
