"""Git Re-Basin (Ainsworth, Hayase, Srinivasa, ICLR 2023): weight and activation matching for MLPs."""
