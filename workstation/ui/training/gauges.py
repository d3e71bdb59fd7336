"""Device gauges: memory of the chosen device against its total, sampled about once a second
on a GUI timer while a run is active (never per training step), and once when it ends.

CUDA: allocated, reserved and peak memory of the torch allocator against the GPU's total
(shown too), and the GPU's utilisation from NVML when ``nvidia-ml-py`` is installed. CPU: the
process's RAM and peak RAM against the machine's total, and the process's CPU use. A value
that cannot be read shows "—". The numbers come from ``ml.device`` (counters only, no device
synchronisation: cheap on the GUI thread); this widget only shows them, and ``summary``
(also sent as ``sampled(str)``) says them in one line for the status bar.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import QGridLayout, QLabel, QProgressBar, QWidget

from ...display import NO_DATA, mebibytes, number, percent
from ...ml.device import UtilisationSampler, memory_stats

log = logging.getLogger(__name__)
INTERVAL_MS = 1000  # about once a second


class _Gauge:
    """A labelled bar: ``value`` of ``total`` MiB (or a percentage)."""

    def __init__(self, grid: QGridLayout, row: int, title: str):
        self.title = QLabel(title)
        self.bar = QProgressBar()
        self.bar.setRange(0, 1000)
        self.bar.setTextVisible(False)
        self.bar.setMaximumHeight(10)
        self.text = QLabel(NO_DATA)
        grid.addWidget(self.title, row, 0)
        grid.addWidget(self.bar, row, 1)
        grid.addWidget(self.text, row, 2)

    def set_visible(self, visible: bool) -> None:
        for widget in (self.title, self.bar, self.text):
            widget.setVisible(visible)

    def show_total(self, total: float | None) -> None:
        self.bar.setValue(1000 if total else 0)
        self.text.setText(mebibytes(total) if total else NO_DATA)

    def show_mb(self, value: float | None, total: float | None) -> None:
        if value is None or not total:
            self.clear()
            return
        self.bar.setValue(int(min(value / total, 1.0) * 1000))
        self.text.setText(f"{mebibytes(value)} ({percent(value / total, 0)})")  # of the Total row

    def show_percent(self, value: float | None) -> None:
        if value is None:
            self.clear()
            return
        self.bar.setValue(int(min(max(value, 0.0), 100.0) * 10))
        self.text.setText(number(value, ".0f", "%"))

    def clear(self) -> None:
        self.bar.setValue(0)
        self.text.setText(NO_DATA)


class DeviceGauges(QWidget):
    """See the module docstring. ``set_device`` chooses the device; ``start``/``stop`` the
    sampling; ``sample`` reads once."""

    sampled = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setVerticalSpacing(2)
        self.device_label = QLabel(f"device {NO_DATA}")
        grid.addWidget(self.device_label, 0, 0, 1, 3)
        self.allocated = _Gauge(grid, 1, "Allocated")
        self.reserved = _Gauge(grid, 2, "Reserved")
        self.peak = _Gauge(grid, 3, "Peak")
        self.total = _Gauge(grid, 4, "Total")
        self.utilisation = _Gauge(grid, 5, "Utilisation")
        grid.setColumnStretch(1, 1)
        self.summary = ""
        self.spec: str | None = None
        self.samples = 0
        self._utilisation = UtilisationSampler()
        self._timer = QTimer(self)
        self._timer.setInterval(INTERVAL_MS)
        self._timer.timeout.connect(self.sample)

    @property
    def active(self) -> bool:
        return self._timer.isActive()

    def set_device(self, spec: str, label: str) -> None:
        """Show ``spec`` (``cpu`` or ``cuda:N``) from now on."""
        self.spec = spec
        self.device_label.setText(label)
        cuda = spec.startswith("cuda")
        self.allocated.title.setText("Allocated" if cuda else "Process RAM")
        self.peak.title.setText("Peak" if cuda else "Peak RAM")
        self.total.title.setText("Total" if cuda else "Total RAM")
        self.utilisation.title.setText("GPU use" if cuda else "CPU use")
        self.reserved.set_visible(cuda)
        for gauge in self.gauges:
            gauge.clear()

    @property
    def gauges(self) -> tuple[_Gauge, ...]:
        return (self.allocated, self.reserved, self.peak, self.total, self.utilisation)

    def start(self) -> None:
        if self.spec is None:
            return
        self._utilisation.restart()
        self.sample()
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()

    def sample(self) -> None:
        """Read the device's memory counters (and utilisation) and show them."""
        if self.spec is None:
            return
        try:
            stats = memory_stats(self.spec)
        except Exception as exc:  # noqa: BLE001 - a gauge must not break the panel
            log.warning("cannot read the memory of %s: %s", self.spec, exc)
            for gauge in (self.allocated, self.reserved, self.peak, self.total):
                gauge.clear()
            return
        self.samples += 1
        self.allocated.show_mb(stats.allocated_mb, stats.total_mb)
        self.reserved.show_mb(stats.reserved_mb, stats.total_mb)
        self.peak.show_mb(stats.peak_mb, stats.total_mb)
        self.total.show_total(stats.total_mb)
        gpu_error = self._utilisation.gpu_error
        use = self._utilisation.sample(self.spec)
        self.utilisation.show_percent(use)
        if gpu_error is None and self._utilisation.gpu_error is not None:
            log.info("GPU utilisation is not shown: %s", self._utilisation.gpu_error)
        cuda = self.spec.startswith("cuda")
        memory = f"{'memory' if cuda else 'RAM'} {mebibytes(stats.allocated_mb)} / " \
                 f"{mebibytes(stats.total_mb)}"
        busy = f"{'GPU' if cuda else 'CPU'} {number(use, '.0f', '%')}" if use is not None else ""
        self.summary = " · ".join(part for part in (memory, busy) if part)
        self.sampled.emit(self.summary)
