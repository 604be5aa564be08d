"""OptCS: conformal selection with finite-sample FDR control after data-driven model choice."""
