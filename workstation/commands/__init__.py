"""Subcommands of the ``workstation`` CLI, one module per area.

Every module here that defines ``register(subparsers)`` is picked up by ``workstation.cli``;
``register`` adds its subcommands and sets ``func`` (args -> exit status) on each.
"""
