"""LR-QR: conformal prediction under covariate shift by likelihood-ratio regularized quantile regression."""
