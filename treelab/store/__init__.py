"""The store: a tree's SQLite file (its format, opening it, saving, loading, adding trees up, every read the
other layers make) and the other files treelab reads and writes; one module per concept, bottom up in
docs/design.md (*The rooms of store/, mcts/ and play/training/*), each docstring saying what it owns."""
