"""Values kept by a record's identity: computed once per object, never shared between
equal objects, and kept for the records still asked for when a generation is dropped."""

from dataclasses import dataclass

from shared.domain.memo import ByIdentity


@dataclass(frozen=True)
class Record:
    value: int


def counting() -> tuple[ByIdentity[Record, int], list[Record]]:
    computed: list[Record] = []

    def compute(record: Record) -> int:
        computed.append(record)
        return record.value * 10

    return ByIdentity(compute, size=2), computed


def test_a_value_is_computed_once_per_record_object() -> None:
    memo, computed = counting()
    a = Record(1)
    assert [memo(a), memo(a), memo(a)] == [10, 10, 10]
    assert computed == [a]


def test_equal_records_are_computed_each_for_itself() -> None:
    memo, computed = counting()
    a, b = Record(1), Record(1)
    assert [memo(a), memo(b)] == [10, 10]
    assert [id(r) for r in computed] == [id(a), id(b)]


def test_records_asked_for_again_outlive_a_full_generation() -> None:
    memo, computed = counting()
    kept, left = Record(1), Record(2)
    memo(kept), memo(left)  # the new generation is full
    memo(Record(3))  # it becomes the old one
    memo(kept)  # moved back to the new one, not computed again
    memo(Record(4))  # the old one (with ``left``) is dropped
    assert memo(kept) == 10 and computed.count(kept) == 1
    assert memo(left) == 20 and computed.count(left) == 2
