"""The CLI's commands, one module per command group.

Each module has one ``add_*`` function per group (its options, registered by
``costtracker.cli.build_parser``) and one ``cmd_*`` function per command (what it does).
Heavy imports stay inside the ``cmd_*`` functions, so ``--help`` and usage errors are fast.
"""
