"""ST-DQR (Feldman, Bates & Romano 2023): conformal regions for a multivariate y through a learned latent."""
