"""Workstation: a live candlestick chart where a trader marks trades and trains a transformer."""

import os

# numpy asks the kernel for huge pages for each large array; where memory is full of page
# cache (a desktop's usual state) the kernel compacts memory first, and faulting in a year of
# one-second candles (1.5 GB) took 2.7-4.2 s instead of 0.5-0.7 s (`bench scale`, 2 cores).
# It must be set before numpy is first imported.
os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")

__version__ = "0.1.0"
