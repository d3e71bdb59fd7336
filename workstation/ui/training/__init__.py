"""The training side of the main window: the training dock (settings, commands, curves,
device gauges, live predictions, confusion matrices, walk-forward evaluation) and the worker
thread it runs training, inference and evaluation on."""
