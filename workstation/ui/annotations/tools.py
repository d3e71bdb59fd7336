"""The annotation tool's commands and keys; the rules live in ``annotations.editing``.

Keyboard: ``L``/``S`` open a pending long/short entry at the cursor candle's close, ``X`` (or
Enter) closes it; ``Esc`` cancels; ``M`` sets a mark and ``1``/``2``/``3`` label the candles from
the mark to the cursor as an uptrend / downtrend / range, ``4`` as reviewed (the trader looked
at them: those without a trade train as flat). ``T`` shows the trainer's labels in the lanes.
"""

from __future__ import annotations

from ...annotations.model import RegionLabel
from ..shortcuts import Command, register

ANNOTATE = "Annotate"
COMMANDS: tuple[Command, ...] = (
    Command("annotate.long", "Open long at cursor", ("L",), ANNOTATE,
            "Open a long entry at the cursor candle's close"),
    Command("annotate.short", "Open short at cursor", ("S",), ANNOTATE,
            "Open a short entry at the cursor candle's close"),
    Command("annotate.close", "Close trade at cursor", ("X", "Return", "Enter"), ANNOTATE,
            "Close the open entry at the cursor candle's close"),
    Command("annotate.cancel", "Cancel entry / mark", ("Esc",), ANNOTATE,
            "Drop the open entry (or the mark) without saving anything"),
    Command("annotate.mark", "Set mark at cursor", ("M",), ANNOTATE,
            "Start a range at the cursor candle; 1 / 2 / 3 / 4 label it"),
    Command("annotate.uptrend", "Label mark…cursor as uptrend", ("1",), ANNOTATE),
    Command("annotate.downtrend", "Label mark…cursor as downtrend", ("2",), ANNOTATE),
    Command("annotate.range", "Label mark…cursor as range", ("3",), ANNOTATE),
    Command("annotate.reviewed", "Label mark…cursor as reviewed", ("4",), ANNOTATE,
            "Say you looked at these candles: those without a trade train as flat"),
    Command("annotate.delete", "Delete annotation under cursor", ("Del", "Backspace"), ANNOTATE),
    Command("annotate.next", "Next annotation", ("N",), ANNOTATE,
            "Move the cursor to the next annotation's start"),
    Command("annotate.previous", "Previous annotation", ("P",), ANNOTATE,
            "Move the cursor to the previous annotation's start"),
    Command("annotate.notes", "Edit notes…", ("E",), ANNOTATE,
            "Edit the notes of the annotation under the cursor"),
    Command("annotate.undo", "Undo", ("Ctrl+Z",), ANNOTATE, "Undo the last annotation change"),
    Command("annotate.redo", "Redo", ("Ctrl+Shift+Z", "Ctrl+Y"), ANNOTATE,
            "Redo the annotation change undone last"),
    Command("annotate.show_labels", "Show training labels", ("T",), ANNOTATE,
            "Show in the lanes what the trainer learns here: position and regime per candle"),
    Command("annotate.click_mode", "Click to annotate", (), ANNOTATE,
            "Clicks on the chart open and close trades (first click entry, second exit)"),
    Command("annotate.export", "Export annotations…", (), ANNOTATE,
            "Write every annotation to a JSON file (all kinds) or a CSV file (trades)"),
    Command("annotate.import", "Import annotations…", (), ANNOTATE,
            "Read annotations from a JSON or CSV file; a bad file imports nothing"),
)
register(*COMMANDS)

REGION_KEYS = {"annotate.uptrend": RegionLabel.UPTREND,
               "annotate.downtrend": RegionLabel.DOWNTREND,
               "annotate.range": RegionLabel.RANGE,
               "annotate.reviewed": RegionLabel.REVIEWED}
