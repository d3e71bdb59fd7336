"""Backtests after costs of the trader's marks, a run's predictions and buy & hold, and paper
trading of a model's live signals (no Qt)."""
