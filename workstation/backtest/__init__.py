"""Backtests after costs of the trader's marks, a run's predictions and buy & hold (no Qt)."""
