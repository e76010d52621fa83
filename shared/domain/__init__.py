"""The ledger's pure core: cost rules over frozen models, the clock passed in.

Nothing here talks to AWS or reads the time. Every figure that accrues is a
``Accrual``: fixed amounts plus linear terms over a few clocks, so that a job's
cost at any moment is a sum that rollups can keep by adding deltas.

By concept: ``clock``, ``accrual`` (the arithmetic); ``lifecycle``, ``instance`` (EC2
life and its head record); ``rates``, ``price_rules``, ``segments`` (how a span is
priced); ``ebs``, ``checkpoint`` (storage); ``idle`` (waste and utilization);
``job``, ``job_cost``, ``day_split`` (a job's figures, in a window); ``finish_estimate``,
``budgets`` (forecast and budget model); ``tags``, ``accelerators``; ``managed/``
(SageMaker training and reserved capacity).
"""

import decimal

# Money numerators (a rate x bytes x month-clock units, a weight x a clock reading) reach
# 30 and more significant digits; Python's default context keeps 28 and would round
# them, so versions of an object would no longer add up to the whole to the last digit.
# 38 is DynamoDB's own precision: every stored numerator still fits it. Set for this
# thread and for threads started later (the local API's request threads).
MONEY_PRECISION = 38
decimal.getcontext().prec = max(decimal.getcontext().prec, MONEY_PRECISION)
decimal.DefaultContext.prec = max(decimal.DefaultContext.prec, MONEY_PRECISION)
