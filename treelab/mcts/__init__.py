"""The search: the loop over named phases, the one dispatch, UCT's and PUCT's phases, selection, scores,
proofs, options, playouts, evaluators, the move choice and the trace; one module per concept, bottom up in
docs/design.md (*The rooms of store/, mcts/ and play/training/*), each docstring saying what it owns."""
