"""A fold told the spans it made before (``known``) gives the same fold, reusing each
known span that is equal to one it makes: refold and the alarm lifecycle pass a head's
own spans so that unchanged spans are not made anew."""

from __future__ import annotations

from datetime import timedelta

from hypothesis import given
from hypothesis import strategies as st

from shared.domain.lifecycle import SPAN_FIELDS, Notice, Span, Transition, fold
from tests.fuzz.test_costing_fuzz import FUZZ, histories


def test_the_fields_compared_are_every_field_of_a_span() -> None:
    assert tuple(Span.model_fields) == SPAN_FIELDS


def _altered(span: Span, how: int) -> Span:
    """A span with the same key that differs in one field (or not at all: ``how`` 0)."""
    changes: list[dict[str, object]] = [
        {},
        {"end": None if span.end is not None else span.start},
        {"start": span.start + timedelta(seconds=1)},
        {"end_event_id": "other"},
        {"end_state": "terminated" if span.end_state != "terminated" else "stopped"},
        {"inferred": not span.inferred},
    ]
    return span.model_copy(update=changes[how % len(changes)])


@FUZZ
@given(history=histories(), other=histories(), data=st.data())
def test_known_spans_change_nothing_but_which_objects_come_back(
    history: tuple[list[Transition], list[Notice]],
    other: tuple[list[Transition], list[Notice]],
    data: st.DataObject,
) -> None:
    transitions, notices = history
    plain = fold(transitions, notices)
    # Spans of another history share keys (event ids) with this one's, mostly unequal.
    candidates = [*plain.spans, *fold(*other).spans]
    known = {}
    for span in candidates:
        known[span.key] = _altered(span, data.draw(st.integers(0, 5)))
    told = fold(transitions, notices, known=known)
    assert told == plain
    for span, made in zip(told.spans, plain.spans, strict=True):
        same = known.get(span.key)
        if same is not None and same == made:
            assert span is same
        else:
            assert span is not same
