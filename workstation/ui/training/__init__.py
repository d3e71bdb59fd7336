"""The training side of the main window: the training dock (settings, commands, curves,
device gauges, live predictions) and the worker thread it runs training and inference on."""
