"""quadriga-qrl: quasimetric RL (Wang, Torralba, Isola & Zhang 2023) with BFS ground truth."""
