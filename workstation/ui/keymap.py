"""The keymap: every command of the application and its keys, declared here once, as data.

A ``Command`` is something the user can do by name (the menus, the ``Ctrl+K`` palette) and,
when it has ``keys``, by key. ``KEYMAP`` lists them all in the order the ``?`` cheat sheet
shows them; its groups are the cheat sheet's headings and the palette's areas.
``command_registry`` registers them (checking that no key is claimed twice) and makes the
``QAction``s of the widgets that handle them. Nothing here imports Qt.

Keys are written as ``QKeySequence`` reads them in portable form: ``"Left"``,
``"Shift+Left"``, ``"PgUp"``, ``"+"``, ``"Ctrl+Shift+Z"``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Command:
    """A user command: ``id`` (``area.name``), menu ``text``, its ``keys`` (first is shown
    first), the cheat-sheet ``group`` and a one-line ``tooltip``."""

    id: str
    text: str
    keys: tuple[str, ...] = ()
    group: str = "General"
    tooltip: str = ""


CHART = "Chart"
CHARTS = "Charts"
ANNOTATE = "Annotate"
INDICATORS = "Indicators"
DRAWINGS = "Drawings"
ALERTS = "Alerts"
PAPER_TRADING = "Paper trading"
PREDICTIONS = "Predictions"
TRAINING = "Training"
VIEW = "View"
BACKTEST = "Backtest"
DATA = "Data"
FILE = "File"
REPLAY = "Blind replay"
LABEL_ERRORS = "Likely label errors"
REVIEW_NEXT = "Review next"
HELP = "Help"

TRAINING_TABS = ("Curves", "Live", "Confusion", "Evaluation", "Review", "Report",
                 "Runs")  # its tabs

KEYMAP: tuple[Command, ...] = (
    # -- the chart with the keyboard (``chart.ChartWidget``) ---------------------------------
    Command("chart.cursor_left", "Cursor to previous candle", ("Left",), CHART),
    Command("chart.cursor_right", "Cursor to next candle", ("Right",), CHART),
    Command("chart.cursor_left_10", "Cursor 10 candles back", ("Shift+Left",), CHART),
    Command("chart.cursor_right_10", "Cursor 10 candles forward", ("Shift+Right",), CHART),
    Command("chart.first", "Cursor to first candle", ("Home",), CHART),
    Command("chart.last", "Cursor to last candle", ("End",), CHART),
    Command("chart.zoom_in", "Zoom in", ("+", "="), CHART, "Zoom in about the cursor candle"),
    Command("chart.zoom_out", "Zoom out", ("-",), CHART, "Zoom out about the cursor candle"),
    Command("chart.page_back", "Back one screen", ("PgUp",), CHART,
            "Pan one screen back in time (the cursor moves with it)"),
    Command("chart.page_forward", "Forward one screen", ("PgDown",), CHART,
            "Pan one screen forward in time (the cursor moves with it)"),
    Command("chart.fit_all", "Fit all candles", ("F",), CHART),
    Command("chart.toggle_autoscale", "Toggle price auto-scale", ("A",), CHART,
            "Fit the price axis to the visible candles, or pin it where it is"),
    Command("chart.go_live", "Back to the live edge", ("0",), CHART,
            "Show the newest candle and follow new ones"),
    Command("chart.toggle_utc", "Toggle UTC / local time", (), CHART,
            "Show times in UTC or in the computer's time zone"),
    Command("chart.focus", "Focus chart 1", ("Ctrl+1",), CHART,
            "Bring the charts forward and give the keyboard to chart 1 from anywhere in the "
            "window, so its keys act"),
    # -- the charts of the window's centre (``chart_area.ChartArea``) ------------------------
    *(Command(f"chart.focus_{n}", f"Focus chart {n}", (f"Ctrl+{n}",), CHARTS,
              f"Bring the charts forward and make chart {n} the active one (its keys act)")
      for n in (2, 3, 4)),
    Command("chart.layout_one", "One chart", ("Alt+1",), CHARTS),
    Command("chart.layout_side_by_side", "Two charts side by side", ("Alt+2",), CHARTS),
    Command("chart.layout_stacked", "Two charts stacked", ("Alt+3",), CHARTS),
    Command("chart.layout_four", "Four charts (2x2)", ("Alt+4",), CHARTS),
    Command("chart.timeframe_down", "Shorter timeframe", ("[",), CHARTS,
            "Show the chart on the next shorter timeframe (chart 1's is the data bar's: the "
            "source opens on it)"),
    Command("chart.timeframe_up", "Longer timeframe", ("]",), CHARTS,
            "Show the chart on the next longer timeframe"),
    Command("chart.link_symbol", "Link charts: symbol", ("Ctrl+Shift+Y",), CHARTS,
            "Linked charts switch symbol together; unlinked ones keep the candles they show"),
    Command("chart.link_crosshair", "Link charts: crosshair", ("Ctrl+Shift+X",), CHARTS,
            "The crosshair on one chart marks its candle's span on the linked charts"),
    Command("chart.link_time", "Link charts: time", ("Ctrl+Shift+T",), CHARTS,
            "Linked charts centre on the time the moved chart centres on"),
    Command("chart.link_active", "Link / unlink the active chart", ("Ctrl+Shift+L",), CHARTS,
            "Put the active chart into the link group, or take it out"),
    # -- indicators on the active chart (``indicator_commands.IndicatorCommands``) -----------
    Command("indicators.edit", "Indicators…", ("I",), INDICATORS,
            "Add, change or remove the active chart's indicators: type ema 20, bb 20 2, rsi 14…"),
    *(Command(f"indicators.add_{kind}", f"Add {title}…", (), INDICATORS,
              f"Add {title} to the active chart (its settings ready to change)")
      for kind, title in (("ema", "EMA"), ("sma", "SMA"), ("vwap", "VWAP"), ("rsi", "RSI"),
                          ("atr", "ATR"), ("bb", "Bollinger bands"),
                          ("vp", "volume profile"))),
    Command("indicators.clear", "Remove all indicators", (), INDICATORS,
            "Take every indicator off the active chart"),
    Command("indicators.as_inputs", "Feed chart 1's indicators to the model", (), INDICATORS,
            "Put chart 1's indicators in the training form's Indicator inputs, so the next "
            "run reads them (VWAP and the volume profile are not inputs)"),
    # -- drawings on the active chart (``drawings.layer.DrawingLayer``) ---------------------
    Command("drawings.level", "Horizontal level", ("H",), DRAWINGS,
            "Draw a horizontal level: the cursor keys and Up / Down move it, Enter places it"),
    Command("drawings.trend", "Trend line", ("/",), DRAWINGS,
            "Draw a trend line: Enter places each of its two points (or click them)"),
    Command("drawings.vertical", "Vertical line", ("V",), DRAWINGS,
            "Draw a vertical line at a candle: Enter places it"),
    Command("drawings.box", "Price range (box)", ("B",), DRAWINGS,
            "Draw a box over a price range and a time span: Enter places its two corners"),
    Command("drawings.measure", "Measure", ("R",), DRAWINGS,
            "Measure between two points: price change, percent, candles and time"),
    Command("drawings.magnet", "Magnet (snap to open, high, low, close)", ("Shift+M",),
            DRAWINGS, "Points snap to the candle's open, high, low or close (Up / Down step "
            "between them); off, they keep their price and Up / Down move them a little"),
    Command("drawings.point_up", "Point being placed: up", ("Up",), DRAWINGS,
            "Move the point being placed up: the candle's next value with the magnet on"),
    Command("drawings.point_down", "Point being placed: down", ("Down",), DRAWINGS,
            "Move the point being placed down"),
    Command("drawings.next", "Select the next drawing", ("D",), DRAWINGS,
            "Select the chart's next drawing in time (the cursor goes to it)"),
    Command("drawings.previous", "Select the previous drawing", ("Shift+D",), DRAWINGS),
    *(Command(f"drawings.move_{way}", f"Move the selected drawing {text}", (f"Alt+{key}",),
              DRAWINGS, tip)
      for way, text, key, tip in (
          ("left", "one candle back", "Left", "Move every point of the selected drawing one "
           "candle back (Del deletes it, Esc lets it go)"),
          ("right", "one candle forward", "Right", ""),
          ("up", "up", "Up", "Move the selected drawing up a hundredth of the visible prices"),
          ("down", "down", "Down", ""))),
    Command("drawings.lock", "Lock / unlock the selected drawing", ("Shift+L",), DRAWINGS,
            "A locked drawing refuses to move or be deleted until unlocked"),
    Command("drawings.hide_all", "Hide / show all drawings", ("Shift+H",), DRAWINGS,
            "Hide every drawing on every chart, or show them again (remembered)"),
    # -- alerts (``alert_layer.AlertLayer``) ------------------------------------------------
    Command("alerts.level", "Alert when the price crosses the selected level", ("Shift+A",),
            ALERTS, "Be told (desktop notification, log) when the price crosses the selected "
            "level, either way; again: remove the alert"),
    Command("alerts.flip", "Alert when the model's position flips…", ("Ctrl+Shift+A",), ALERTS,
            "Be told when the model's suggested position on the live symbol changes with at "
            "least the confidence you give (live and paper modes); again: remove the alert"),
    Command("alerts.list", "List the alerts", (), ALERTS,
            "Say every alert, what it watches and how often it went off"),
    Command("alerts.clear", "Remove every alert", (), ALERTS),
    # -- the annotation tools (``annotations.dock.AnnotationLayer``) -------------------------
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
    Command("annotate.delete", "Delete annotation under cursor", ("Del", "Backspace"), ANNOTATE,
            "Delete the selected drawing, else the annotation under the cursor"),
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
    # -- paper trading in live mode (``training.paper_view.PaperTrading``) -------------------
    Command("train.paper", "PAPER trading (live signals)", ("Ctrl+F6",), PAPER_TRADING,
            "In live mode, trade the model's signals on a PAPER account: simulated fills at "
            "the next open with costs, kept across restarts; never sends an order"),
    # -- live predictions on the chart (``training.prediction_overlay.PredictionOverlay``) ---
    Command("predictions.outcomes", "Show prediction outcomes", ("O",), PREDICTIONS,
            "Mark each live prediction whose candle has closed: filled right, hollow wrong"),
    Command("predictions.clear", "Clear predictions", ("Shift+C",), PREDICTIONS,
            "Remove the live predictions from the chart (they stay after live mode stops)"),
    # -- training (``training.panel.TrainingPanel``) -----------------------------------------
    Command("train.start", "Start training", ("F5",), TRAINING,
            "Train a new run on the closed candles on screen"),
    Command("train.live", "Live inference", ("F6",), TRAINING,
            "Predict every new candle with the latest trained model"),
    Command("train.live_train", "Live inference + per-candle training", ("Shift+F6",), TRAINING,
            "Predict every new candle and train one step on each (saved as a new run at Stop)"),
    Command("train.stop", "Stop", ("Shift+F5",), TRAINING,
            "Stop at the next safe point and save a checkpoint"),
    Command("train.restart", "Restart run", ("Ctrl+Shift+F5",), TRAINING,
            "Stop what runs, then train a fresh model as a new run"),
    Command("train.resume", "Resume", ("Ctrl+F5",), TRAINING,
            "Continue the latest run from its checkpoint"),
    Command("train.until_cursor", "Train until the cursor's candle", ("Ctrl+U",), TRAINING,
            "Hold out every candle after the cursor's: new runs train and validate up to it, "
            "and a backtest of such a run tests the held-out span (again on the same candle: "
            "train on every candle)"),
    Command("train.report", "Did it learn my marks? (report on the run shown)", ("Shift+F7",),
            TRAINING, "The Report tab for the run shown, as `workstation report` prints it: "
            "marks by span, each trader head beside its baselines, entries and exits, and the "
            "held-out backtest"),
    Command("train.teach_rule", "Teach a rule (demo market)", (), TRAINING,
            "Put the trades of a rule (long while the 10/50 and 20/100 averages both point up, "
            "short while both point down, flat else) in place of the demo marks (yours are "
            "saved to a file first), hold out the newest 6 days, train, then report on them: "
            "the position head should show an edge"),
    Command("train.teach_shuffled", "Teach shuffled marks (demo market)", (), TRAINING,
            "The same as Teach a rule with the rule's trades shuffled in time: nothing on the "
            "candles explains them, so the report should show no edge"),
    Command("train.clear", "Clear checkpoints…", (), TRAINING,
            "Delete every saved checkpoint (asks first; stops a running run)"),
    Command("train.evaluate", "Run / stop walk-forward evaluation", ("F7",), TRAINING,
            "Train and test fold after fold on the closed candles on screen, every head "
            "beside its baselines (again: stop)"),
    # the Evaluation tab's likely label errors (``training.suspect_list.SuspectList``): on the
    # mark selected there; Enter shows it on the chart
    Command("suspects.open", "Show the suspect mark on the chart", (), LABEL_ERRORS,
            "Bring the chart forward with its cursor on the mark selected in the Evaluation "
            "tab's likely label errors (Enter there; F8 comes back)"),
    Command("suspects.keep", "Keep the suspect mark (it is right)", ("K",), LABEL_ERRORS,
            "Tag the selected mark as checked: later evaluations do not flag it again "
            "(Ctrl+Z undoes)"),
    Command("suspects.fix", "Fix the suspect mark as the model reads it", ("Shift+F",),
            LABEL_ERRORS, "Turn the trade round, delete a trade the model reads flat, or "
            "relabel the region (a blind mark becomes hindsight; Ctrl+Z undoes)"),
    Command("suspects.delete", "Delete the suspect mark", ("Shift+Del",), LABEL_ERRORS,
            "Delete the selected mark (Ctrl+Z brings it back)"),
    # the Review tab (``training.review_view.ReviewView``): what to review next
    Command("review.rank", "Rank what to review next (the run shown)", ("Shift+F8",),
            REVIEW_NEXT, "The Review tab: the stretches you have not reviewed, ranked by what "
            "the run shown would learn most from (its uncertainty, and regimes your marks "
            "barely cover)"),
    Command("review.open", "Open the stretch in blind replay", (), REVIEW_NEXT,
            "Start a blind replay at the start of the stretch selected in the Review tab "
            "(Enter there): mark it with the future hidden"),
    # the Runs tab's buttons (``training.runs.RunList``): on the run selected there
    Command("runs.open", "Open the selected run", (), TRAINING,
            "Show the selected run's recorded curves"),
    Command("runs.compare", "Overlay the selected run", (), TRAINING,
            "Draw the selected run's loss and validation accuracies beside the run shown "
            "(grey, dashed); again on the shown run: clear"),
    Command("runs.resume", "Resume the selected run", (), TRAINING,
            "Continue the selected run from its checkpoint (up to the panel's Epochs)"),
    Command("runs.restart", "Train anew with the selected run's settings", (), TRAINING,
            "Train a new run with the selected run's settings"),
    Command("runs.delete", "Delete the selected run…", (), TRAINING,
            "Delete the selected run's checkpoints and history (asks first)"),
    Command("runs.tensorboard", "Export the selected run for TensorBoard…", (), TRAINING,
            "Write the selected run's curves as TensorBoard event files into a folder"),
    Command("runs.csv", "Export the selected run as CSV…", (), TRAINING,
            "Write one row per recorded batch and epoch of the selected run to a CSV file"),
    Command("runs.refresh", "Refresh the run list", (), TRAINING,
            "List the runs of the checkpoint folder again (the list follows the panel's own "
            "runs by itself)"),
    # -- the views of the window's centre (``training.workspace``, ``backtest.view``) --------
    Command("view.training", "Chart / training workspace", ("F8",), VIEW,
            "Switch between the chart and the training workspace (in its own window: bring "
            "it forward)"),
    Command("view.training_window", "Training in its own window", (), VIEW,
            "Show the training workspace in a window of its own instead of a tab beside the "
            "chart (remembered)"),
    *(Command(f"view.training_{tab.lower()}", f"Training workspace: {tab}", (), VIEW,
              f"Bring the training workspace forward on its {tab} tab (Ctrl+Tab / "
              f"Ctrl+Shift+Tab walk its tabs)")
      for tab in TRAINING_TABS),
    Command("view.backtest", "Chart / backtest", ("F9",), VIEW,
            "Switch between the chart and the Backtest view"),
    # -- backtests (``backtest.view``) -------------------------------------------------------
    Command("backtest.run", "Run / stop the backtest", ("Ctrl+Return", "Ctrl+Enter"),
            BACKTEST, "Backtest the chosen signals after costs, beside buy & hold"),
    Command("backtest.clear", "Clear the backtest's trades from the chart", ("Shift+B",),
            BACKTEST, "Remove the backtest's entry and exit marks from the chart"),
    # the Backtest view's choices (``backtest.view.BacktestView``): each brings it forward
    Command("backtest.signals_marks", "Signals: your marked trades", (), BACKTEST,
            "Backtest your marked trades"),
    Command("backtest.signals_run", "Signals: the newest saved run", (), BACKTEST,
            "Backtest the predictions of the newest saved run"),
    Command("backtest.head_position", "Head: position", (), BACKTEST,
            "A run's signals from its position head (the suggested position)"),
    Command("backtest.head_candle", "Head: candle", (), BACKTEST,
            "A run's signals from its candle head (the next candle, held one candle)"),
    Command("backtest.confidence", "Set the confidence level…", (), BACKTEST,
            "The confidence a run's signal needs (else flat): the keyboard goes to its field"),
    Command("backtest.costs", "Set the costs (fee, slippage)…", (), BACKTEST,
            "The fee and slippage per side: the keyboard goes to the fee field"),
    Command("backtest.size", "Set the trade size…", (), BACKTEST,
            "The fraction of equity each trade takes: the keyboard goes to its field"),
    Command("backtest.fill_next_open", "Fills: next candle's open", (), BACKTEST,
            "A signal at a candle's close fills at the next candle's open"),
    Command("backtest.fill_same_close", "Fills: same candle's close (optimistic)", (),
            BACKTEST, "A signal fills at its own candle's close (optimistic, labelled so)"),
    Command("backtest.in_sample", "Allow a run's training span (IN-SAMPLE)", (), BACKTEST,
            "Backtest a run on the candles it was trained on too; every result reads "
            "IN-SAMPLE"),
    # -- blind replay (``replay_mode.ReplayMode``): the future hidden behind one clock ---------
    Command("replay.start_random", "Blind replay from a random candle", ("Ctrl+R",), REPLAY,
            "Hide every candle after a random one of the replay span and replay from there, "
            "so you cannot remember the chart; marks made now are blind"),
    Command("replay.start_cursor", "Blind replay from the cursor", ("Ctrl+Shift+R",), REPLAY,
            "Hide every candle after the cursor's and replay from there; marks made now are "
            "blind"),
    Command("replay.play", "Play / pause the replay", ("Space",), REPLAY,
            "Play the replay at its speed, or pause it"),
    Command("replay.step", "One candle forward", (".",), REPLAY,
            "Show the next candle of the replay"),
    Command("replay.step_many", "N candles forward…", ("Ctrl+.",), REPLAY,
            "Ask how many candles to show next (remembered), then show them"),
    Command("replay.faster", "Replay faster", ("Ctrl+Up",), REPLAY,
            "The next faster speed: 1x to 1000x real time, or 1 to 50 candles a second"),
    Command("replay.slower", "Replay slower", ("Ctrl+Down",), REPLAY,
            "The next slower speed"),
    Command("replay.span", "Replay span…", (), REPLAY,
            "The span (FROM..TO) random replay starts are drawn from; empty: everything"),
    Command("replay.resume", "Resume the last replay", (), REPLAY,
            "Go on with the last unfinished replay of this series where its clock stopped"),
    Command("replay.end", "End the replay", ("Ctrl+Shift+E",), REPLAY,
            "Stop replaying (the session is kept) and show the whole series again"),
    Command("replay.consistency", "Consistency check: mark labelled stretches again, blind",
            ("Shift+F9",), REPLAY,
            "Replay, one by one, stretches you labelled (drawn at random) with your old marks "
            "hidden; the fresh marks are kept apart; at a stretch's end it goes on to the next, "
            "after the last it shows how well the two agree"),
    Command("replay.consistency_report", "Consistency report", (), REPLAY,
            "Your fresh blind marks against the old ones: agreement per candle beside chance, "
            "Cohen's kappa, entries matched"),
    # -- the data bar (``data_bar.DataBar``): Enter opens, Esc goes back to the chart -------
    Command("data.source", "Choose the source", ("Ctrl+L",), DATA,
            "Type a source (demo, an exchange, cache, csv:FILE); Enter opens it, Esc goes "
            "back to the chart"),
    Command("data.symbol", "Choose the symbol", ("Ctrl+Shift+S",), DATA,
            "Type a market symbol; Enter opens it, Esc goes back to the chart"),
    Command("data.timeframe", "Choose the timeframe", ("Ctrl+Shift+I",), DATA,
            "Up / Down choose a timeframe; Enter opens it, Esc goes back to the chart"),
    # -- files, themes and the window (``main_window.MainWindow``'s menus) ------------------
    Command("file.import_candles", "Open a candle file (CSV)…", ("Ctrl+O",), FILE,
            "Open a candle CSV file (.csv, .csv.gz, .zip): it is imported into the candle "
            "cache and shown"),
    Command("file.export_candles", "Export candles…", (), FILE,
            "Write the closed candles on screen to a CSV file"),
    Command("file.quit", "Quit", ("Ctrl+Q",), FILE,
            "Stop what runs (training saves a checkpoint) and close the window"),
    Command("view.theme_dark", "Dark theme", (), VIEW, "Show the window in dark colours"),
    Command("view.theme_light", "Light theme", (), VIEW, "Show the window in light colours"),
    # -- help (``help``, the main window's Help menu) ----------------------------------------
    Command("help.shortcuts", "Keyboard shortcuts", ("?",), HELP,
            "Show every shortcut (again, or Esc: close)"),
    Command("help.palette", "Command palette…", ("Ctrl+K",), HELP,
            "Find any command by name and run it"),
    Command("help.about", "About Workstation", (), HELP,
            "The version of Workstation and of the libraries it runs on"),
)
