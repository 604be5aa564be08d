"""quadriga-snf: stochastic normalizing flows (Wu, Koehler & Noe 2020) on normflows."""
