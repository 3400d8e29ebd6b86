"""treelab.mcts."""
