"""The benchmark's sections as printed: one module a section turns its measurements
(``bench.replay_bench``, ``bench.reads``, ``bench.coldstart``, ...) into the table's lines
and figures, so that what is measured and how it is shown change apart."""
