"""Market data: candles, timeframes, feeds (exchange, CSV, demo) and the candle cache. No Qt."""
