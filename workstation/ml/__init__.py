"""Machine learning core, free of Qt: features, targets, device-resident datasets, the
``TradingTransformer``, its ``Trainer`` with typed events, device and memory helpers, and
checkpoints.

``features`` and ``targets`` need only numpy; the other modules import torch.
"""
