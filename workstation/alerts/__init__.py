"""Alerts (no Qt): what the trader asked to be told of (``book``: kept in a file across
restarts) and the rules that tell when it happens (``watch``)."""
