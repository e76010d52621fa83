"""Human output of the CLI, by what it renders: ``text`` (figures, words and the table
every view uses), ``jobs``, ``analysis`` (compare, timeline, estimate) and ``reports``
(daily summary, budgets, prices)."""
