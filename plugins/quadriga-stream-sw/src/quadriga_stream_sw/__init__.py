"""Streaming sliced Wasserstein (Stream-SW) with KLL quantile sketches, for quadriga."""
