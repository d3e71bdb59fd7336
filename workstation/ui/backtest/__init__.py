"""The Backtest view: what the trader's marks or a run's signals would have earned after costs,
beside buy & hold (the rules are the core's, ``workstation.backtest``)."""
