"""The one exception type whose message is meant for the user, not for a traceback."""


class WorkstationError(Exception):
    """An error a user can act on; the CLI prints its message on one line and exits non-zero."""
