"""quadriga-value-classification: DQN value functions trained by classification (HL-Gauss, two-hot)."""
