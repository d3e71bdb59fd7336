"""Which region label each of the annotation tool's labelling commands sets
(``REGION_LABELS``); ``keymap`` declares every ``annotate.*`` command and its keys, and the
rules live in ``annotations.editing``.

Keyboard: ``L``/``S`` open a pending long/short entry at the cursor candle's close, ``X`` (or
Enter) closes it; ``Esc`` cancels; ``M`` sets a mark and ``1``/``2``/``3`` label the candles from
the mark to the cursor as an uptrend / downtrend / range, ``4`` as reviewed (the trader looked
at them: those without a trade train as flat). ``T`` shows the trainer's labels in the lanes.
"""

from __future__ import annotations

from ...annotations.model import RegionLabel

REGION_LABELS = {"annotate.uptrend": RegionLabel.UPTREND,
               "annotate.downtrend": RegionLabel.DOWNTREND,
               "annotate.range": RegionLabel.RANGE,
               "annotate.reviewed": RegionLabel.REVIEWED}
