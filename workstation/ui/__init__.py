"""The Qt layer: a thin view over the Qt-free core (``market``, ``annotations``, ``ml``)."""
