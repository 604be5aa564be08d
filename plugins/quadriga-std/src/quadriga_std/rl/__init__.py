"""The reinforcement-learning kit: vector-reward environments, exact tabular tools, return laws.

Modules (imported on use; nothing here imports torch):

- :mod:`quadriga_std.rl.tabular`: finite MDPs with exact answers (value iteration, Q*, policy
  evaluation by a linear solve, a generative-model sampler, random MDPs);
- :mod:`quadriga_std.rl.vector_env`: the correlated-sources chain, a gymnasium environment whose
  reward has ``K`` sources with tunable correlation, and its task component;
- :mod:`quadriga_std.rl.returns`: Monte-Carlo (joint) discounted returns of a policy;
- :mod:`quadriga_std.rl.particles`: a particle (distributional) DQN on quadriga-std's ``dqn`` hooks;
- :mod:`quadriga_std.rl.evaluators`: distances between return distributions and max|Q - Q*|.

Vector rewards follow mo-gymnasium's ``LinearReward`` convention: ``step`` returns the summed
(scalar) reward, and ``info["vector_reward"]`` the per-source rewards ``ndarray[K]``; the environment
has a ``reward_space`` ``Box(K)``. Every scalar learner and evaluator therefore works unchanged (on
the summed reward), and a learner that sets ``reward_sources = True`` reads the vector.
"""
