"""Workstation: a live candlestick chart where a trader marks trades and trains a transformer."""

__version__ = "0.1.0"
