"""Search (treelab.mcts): UCT and PUCT, the compiled loops, solver proofs, configs, traces, the move-choice rule."""
