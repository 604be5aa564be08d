"""quadriga-minto: the MINTO target rule (min of target and online estimates) for DQN."""
