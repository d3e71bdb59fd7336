"""The training settings form: the preset, the main hyperparameters, the higher timeframes,
reference asset and trend windows the model reads, and the device picker. ``request()`` reads
it as the ``ml.job.TrainingRequest`` every job starts from."""

from __future__ import annotations

from dataclasses import fields

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QLineEdit,
    QSpinBox,
)

from ...ml.config import TrainConfig
from ...ml.device import DeviceChoice
from ...ml.job import TrainingRequest
from ...timeparse import format_minute, parse_time_ms

MARKS_SETTING = "train/marks"  # all | blind: which marks the trader's heads learn


class TrainingSettings(QGroupBox):
    """The preset and the main hyperparameters, and the device picker."""

    def __init__(self, parent=None, remembered: QSettings | None = None):
        """``remembered``: where the Marks choice is kept (``MARKS_SETTING``) across restarts."""
        super().__init__("Settings", parent)
        self.remembered = remembered
        form = QFormLayout(self)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.preset = QComboBox()
        self.device = QComboBox()
        for box in (self.preset, self.device):  # long device names must not widen the column
            box.setSizeAdjustPolicy(
                QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            box.setMinimumContentsLength(8)
        self.seq_len = QSpinBox()
        self.seq_len.setRange(8, 8192)
        self.seq_len.setToolTip("Candles per window the model sees")
        self.batch_size = QSpinBox()
        self.batch_size.setRange(1, 65536)
        self.lr = QDoubleSpinBox()
        self.lr.setDecimals(6)
        self.lr.setRange(1e-6, 1.0)
        self.lr.setSingleStep(1e-4)
        self.lr.setToolTip("Peak learning rate (warm-up, then cosine decay)")
        self.stride = QSpinBox()
        self.stride.setRange(0, 8192)
        self.stride.setSpecialValueText("auto")  # 0
        self.stride.setToolTip(
            f"Candles between the training windows of an epoch; auto: the most, up to the "
            f"window, that gives an epoch {TrainConfig.batches_per_epoch} batches (short series "
            f"overlap their windows)")
        self.epochs = QSpinBox()
        self.epochs.setRange(1, 100000)
        self.epochs.setToolTip("Epochs in total (Resume continues up to this many)")
        self.dropout = QDoubleSpinBox()
        self.dropout.setDecimals(2)
        self.dropout.setRange(0.0, 0.9)
        self.dropout.setSingleStep(0.05)
        self.grad_checkpointing = QCheckBox("Gradient checkpointing")
        self.grad_checkpointing.setToolTip("Recompute block activations in backward: less "
                                           "memory, more compute")
        self.mixed_precision = QCheckBox("Mixed precision (bf16, CUDA)")
        self.higher_timeframes = QLineEdit()
        self.higher_timeframes.setPlaceholderText("none (e.g. 15m,1h)")
        self.higher_timeframes.setToolTip(
            "Also feed the last closed and the forming candle of these higher timeframes, "
            "resampled from the series")
        self.reference = QLineEdit()
        self.reference.setPlaceholderText("none (e.g. BTC/USDT)")
        self.reference.setToolTip(
            "Also feed this asset's candles at the same times, from the series' own source; "
            "a missing candle is masked, never filled in")
        form.addRow("Preset", self.preset)
        form.addRow("Device", self.device)
        form.addRow("Seq len", self.seq_len)
        form.addRow("Batch size", self.batch_size)
        form.addRow("Learning rate", self.lr)
        form.addRow("Epochs", self.epochs)
        form.addRow("Window stride", self.stride)
        form.addRow("Dropout", self.dropout)
        form.addRow(self.grad_checkpointing)
        form.addRow(self.mixed_precision)
        self.trend_windows = QLineEdit()
        self.trend_windows.setPlaceholderText("none (e.g. 10,20,50,100)")
        self.trend_windows.setToolTip(
            "Also feed where the close stands against each window's average and against the "
            "channel of the highs and lows before it (candles, comma-separated); empty: none")
        self.indicator_inputs = QLineEdit()
        self.indicator_inputs.setObjectName("indicatorInputs")
        self.indicator_inputs.setPlaceholderText("none (e.g. ema 20, rsi 14, bb 20 2)")
        self.indicator_inputs.setToolTip(
            "Also feed these indicators, computed as the chart draws them (comma-separated; "
            "sma, ema, rsi, atr, bb); empty: none. \"Indicator inputs: the chart's\" in the "
            "palette copies chart 1's")
        self.level_inputs = QCheckBox("Distance to my drawn levels")
        self.level_inputs.setObjectName("levelInputs")
        self.level_inputs.setToolTip(
            "Also feed how far the close is from the nearest drawn level above and below it "
            "(in volatility units), counting each level from the close of the candle it was "
            "drawn at; off: none")
        self.train_until = QLineEdit()
        self.train_until.setPlaceholderText("every candle (e.g. 2024-05-01 12:00)")
        self.train_until.setToolTip(
            "Train and validate on candles up to this time (UTC); the later ones are held "
            "out, never trained or validated on, and are what a backtest of the run tests "
            "by default (Ctrl+U: the cursor's candle)")
        form.addRow("Higher timeframes", self.higher_timeframes)
        form.addRow("Reference asset", self.reference)
        form.addRow("Trend windows", self.trend_windows)
        form.addRow("Indicator inputs", self.indicator_inputs)
        form.addRow("Level inputs", self.level_inputs)
        form.addRow("Train until", self.train_until)
        self.marks = QComboBox()
        self.marks.setObjectName("marksChoice")
        self.marks.addItem("all marks", "all")
        self.marks.addItem("blind marks only", "blind")
        self.marks.setToolTip(
            "Which of your marks the trader's heads learn: all, or only those made in blind "
            "replay with the future hidden (Ctrl+R)")
        form.addRow("Marks", self.marks)
        if remembered is not None:
            kept = self.marks.findData(remembered.value(MARKS_SETTING, "all"))
            self.marks.setCurrentIndex(max(kept, 0))
            self.marks.currentIndexChanged.connect(self._remember_marks)
        self.preset.currentTextChanged.connect(self._preset_chosen)
        self.device.currentIndexChanged.connect(self._device_chosen)
        self.devices: list[DeviceChoice] = []
        self._has_precision_switch = False
        self.setEnabled(False)

    def fill(self, devices: list[DeviceChoice]) -> None:
        """Called once torch is loaded (device warm-up): presets, defaults and devices."""
        from ...ml.config import PRESETS
        from ...ml.features import TREND_WINDOWS

        defaults = TrainConfig()
        self.trend_windows.setText(",".join(map(str, TREND_WINDOWS)))
        self._has_precision_switch = "mixed_precision" in {f.name for f in fields(TrainConfig)}
        self.batch_size.setValue(defaults.batch_size)
        self.lr.setValue(defaults.lr)
        self.epochs.setValue(defaults.epochs)
        self.preset.clear()
        self.preset.addItems(list(PRESETS))
        self.preset.setCurrentText("tiny" if "tiny" in PRESETS else next(iter(PRESETS)))
        self._preset_chosen(self.preset.currentText())
        self.devices = list(devices)
        self.device.clear()
        for choice in devices:
            self.device.addItem(choice.label, choice.spec)
        self.setEnabled(True)
        self._device_chosen()

    def _preset_chosen(self, name: str) -> None:
        if not name:
            return
        from ...ml.config import PRESET_LR, PRESETS

        config = PRESETS[name]
        if name in PRESET_LR:
            self.lr.setValue(PRESET_LR[name])
        self.seq_len.setValue(config.seq_len)
        self.dropout.setValue(config.dropout)
        self.grad_checkpointing.setChecked(config.use_gradient_checkpointing)

    def _device_chosen(self, *_args) -> None:
        cuda = self.device_spec().startswith("cuda")
        self.mixed_precision.setEnabled(cuda and self._has_precision_switch)
        self.mixed_precision.setChecked(cuda)
        self.mixed_precision.setToolTip(
            "bf16 autocast on CUDA; CPU trains in fp32" if self._has_precision_switch else
            "The trainer always uses bf16 autocast on CUDA and fp32 on the CPU")

    def device_spec(self) -> str:
        return self.device.currentData() or "cpu"

    def device_choice(self) -> DeviceChoice | None:
        spec = self.device_spec()
        return next((d for d in self.devices if d.spec == spec), None)

    def apply_recorded(self, preset: str | None, model_config: dict, train_config: dict,
                       features: dict | None = None) -> None:
        """Take a recorded run's settings (its history's start record)."""
        features = features or {}
        self.higher_timeframes.setText(",".join(features.get("higher_timeframes") or ()))
        self.reference.setText(features.get("reference") or "")
        self.trend_windows.setText(",".join(map(str, features.get("trend_windows") or ())))
        self.indicator_inputs.setText(", ".join(features.get("indicators") or ()))
        self.level_inputs.setChecked(bool(features.get("levels")))
        if preset and self.preset.findText(preset) >= 0:
            self.preset.setCurrentText(preset)
        self.stride.setValue(0)  # a run recorded without one took the automatic stride
        for box, value in ((self.seq_len, model_config.get("seq_len")),
                           (self.batch_size, train_config.get("batch_size")),
                           (self.epochs, train_config.get("epochs")),
                           (self.stride, train_config.get("window_stride"))):
            if isinstance(value, int):
                box.setValue(value)
        for double_box, value in ((self.lr, train_config.get("lr")),
                                  (self.dropout, model_config.get("dropout"))):
            if isinstance(value, (int, float)):
                double_box.setValue(float(value))
        if isinstance(model_config.get("use_gradient_checkpointing"), bool):
            self.grad_checkpointing.setChecked(model_config["use_gradient_checkpointing"])
        if self.mixed_precision.isEnabled() and \
                isinstance(train_config.get("mixed_precision"), bool):
            self.mixed_precision.setChecked(train_config["mixed_precision"])

    def _remember_marks(self) -> None:
        assert self.remembered is not None
        self.remembered.setValue(MARKS_SETTING, self.marks.currentData())

    def set_indicator_inputs(self, texts: list[str]) -> None:
        self.indicator_inputs.setText(", ".join(texts))

    def set_train_until(self, ms: int | None) -> None:
        """Hold out the candles after ``ms`` (None: train on every candle)."""
        self.train_until.setText("" if ms is None else format_minute(ms))

    def train_until_ms(self) -> int | None:
        """The Train until time (None: every candle); a text that is no time is refused."""
        text = self.train_until.text().strip()
        return parse_time_ms(text) if text else None

    def request(self, resume_run: str | None = None,
                epochs: int | None = None) -> TrainingRequest:
        """The form as a ``TrainingRequest`` (a Train until that is no time is refused with
        ``WorkstationError``): the preset, its overrides (model, training, and
        the higher timeframes and reference asset as ``FeatureSpec`` fields, checked by
        ``ml.job.plan``) and the device. ``resume_run`` continues that run; ``epochs``
        replaces the form's Epochs (an evaluation's folds train their own)."""
        from ...ml.context import parse_higher_timeframes
        from ...ml.indicator_columns import parse_indicators
        from ...ml.trend_columns import parse_trend_windows

        model = {"seq_len": self.seq_len.value(), "dropout": round(self.dropout.value(), 4),
                 "use_gradient_checkpointing": self.grad_checkpointing.isChecked()}
        train = {"epochs": self.epochs.value() if epochs is None else epochs,
                 "batch_size": self.batch_size.value(), "lr": self.lr.value(),
                 "window_stride": self.stride.value() or None,
                 "train_until": self.train_until_ms()}
        if self._has_precision_switch:
            train["mixed_precision"] = self.mixed_precision.isChecked()
        features = {"higher_timeframes": parse_higher_timeframes(self.higher_timeframes.text()),
                    "reference": self.reference.text().strip() or None,
                    "trend_windows": parse_trend_windows(self.trend_windows.text()),
                    "indicators": parse_indicators(self.indicator_inputs.text()),
                    "levels": self.level_inputs.isChecked() or None}
        return TrainingRequest(preset=self.preset.currentText(), model_overrides=model,
                               train_overrides=train, feature_overrides=features,
                               device=self.device_spec(), resume_run=resume_run,
                               marks=str(self.marks.currentData()))
