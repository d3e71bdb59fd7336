"""Run histories: every training run's metrics, appended as they happen, beside its checkpoints.

``format`` (the file, its records and ``HistoryError``), ``writer`` (``RunHistory``, the
trainer's), ``reader`` (``read_history`` and the curves' points), ``listing`` (``list_runs``)
and ``export`` (TensorBoard tags, CSV, TensorBoard event files). No torch, no Qt: the window
imports these at once.
"""
